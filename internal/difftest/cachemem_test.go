package difftest_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestParseCacheBoundThroughHandle: 40 distinct statements each carrying 4 MB somewhere (a
// literal in the select list, in WHERE, a comment, an optimizer hint; on the time-sharded
// table or not), run through obroute, leave the heap under 64 MiB after runtime.GC() with the
// handle open: the parse cache keeps at most its 32 MiB whatever part of a statement is large
// (issue 22, class 8: 40 select-list literals of 4 MB kept 265 MiB).
func TestParseCacheBoundThroughHandle(t *testing.T) {
	c := newGroupedCluster(t, 1, 200)
	bigs := func(i int) string { return fmt.Sprintf("%08d", i) + strings.Repeat("y", 4<<20) }
	const split = " FROM g WHERE t_time >= '2024-12-20' AND t_time < '2025-01-10'"
	shapes := []struct {
		name string
		sql  func(i int) string
		args []any
	}{
		{"select list with an argument", func(i int) string { return fmt.Sprintf("SELECT 7 + LENGTH('%s'), ?", bigs(i)) }, []any{5}},
		{"select list", func(i int) string { return fmt.Sprintf("SELECT 7 + LENGTH('%s')", bigs(i)) }, nil},
		{"select list of a split", func(i int) string { return fmt.Sprintf("SELECT COUNT(*), MAX(LENGTH('%s'))%s", bigs(i), split) }, nil},
		{"WHERE of a split", func(i int) string {
			return fmt.Sprintf("SELECT COUNT(*)%s AND (id = %d OR status = '%s')", split, i, bigs(i))
		}, nil},
		{"comment", func(i int) string { return fmt.Sprintf("SELECT %d /* %s */", i, bigs(i)) }, nil},
		{"comment of a split", func(i int) string { return fmt.Sprintf("SELECT COUNT(*) /* %s */%s AND id > %d", bigs(i), split, i) }, nil},
		{"hint of a split", func(i int) string { return fmt.Sprintf("SELECT /*+ %s */ COUNT(*)%s AND id > %d", bigs(i), split, i) }, nil},
	}
	ctx := context.Background()
	for k, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			if testing.Short() && k > 1 {
				t.Skip("-short: the first two shapes only")
			}
			for i := range 40 {
				rows, err := c.obDB[i%2].QueryContext(ctx, sh.sql(i), sh.args...)
				if err == nil {
					for rows.Next() {
					}
					err = rows.Close()
				}
				if err != nil {
					t.Fatalf("statement %d: %.300v", i, err)
				}
			}
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			t.Logf("heap after 40 statements of 4 MB: %.1f MiB", float64(m.HeapAlloc)/(1<<20))
			if m.HeapAlloc >= 64<<20 {
				t.Errorf("heap %.1f MiB after 40 distinct 4 MB statements, want under 64 MiB", float64(m.HeapAlloc)/(1<<20))
			}
			runtime.KeepAlive(c)
		})
	}
}
