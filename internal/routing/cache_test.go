package routing

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// bigStatement returns a distinct statement of about size bytes, of one of four shapes: a
// multi-row INSERT into the time-sharded orders (analysed into one template per row), a
// one-row INSERT into orders with a long value, a SELECT on an unrouted table with a long IN
// list, one with a long value.
func bigStatement(i, size int) string {
	var b strings.Builder
	b.Grow(size + 256)
	switch i % 4 {
	case 0:
		fmt.Fprintf(&b, "INSERT INTO orders (id, order_time, note) VALUES (%d, '2025-03-05', 'first')", i)
		for r := 0; b.Len() < size; r++ {
			fmt.Fprintf(&b, ", (%d, '2025-03-05 10:00:00', 'row %d of statement %d')", r, r, i)
		}
	case 1:
		fmt.Fprintf(&b, "SELECT id FROM items WHERE id = %d OR note IN ('first'", i)
		for r := 0; b.Len() < size; r++ {
			fmt.Fprintf(&b, ", 'note %d of statement %d'", r, i)
		}
		b.WriteString(")")
	case 2:
		fmt.Fprintf(&b, "INSERT INTO orders (id, order_time, note) VALUES (%d, '2025-03-05', '%s')", i, strings.Repeat("x", size))
	default:
		fmt.Fprintf(&b, "SELECT id FROM items WHERE id = %d OR note = '%s'", i, strings.Repeat("y", size))
	}
	return b.String()
}

// Huge statements are analysed but not cached: 40 distinct 4 MB statements leave the heap
// under 64 MiB with the default settings (with a cache bounded by entries only, they kept
// 426 MiB).
func TestCacheKeepsHugeStatementsOut(t *testing.T) {
	f := standard(t)
	for i := range 40 {
		// The shapes whose analysis is slow (a token per value) are two of the 40.
		shape := 2 + i%2
		if i < 2 {
			shape = i
		}
		sql := bigStatement(i*4+shape, 4<<20)
		st := f.r.Analyze(sql)
		if st.ParseErr != nil || st.RouteErr != nil {
			t.Fatalf("statement %d: %v %v", i, st.ParseErr, st.RouteErr)
		}
		if _, err := f.r.Route(Input{Statement: st}); err != nil {
			t.Fatalf("statement %d: %v", i, err)
		}
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	s := f.r.CacheStats()
	t.Logf("heap after 40 statements of 4 MB: %.1f MiB; cache %+v", float64(m.HeapAlloc)/(1<<20), s)
	if m.HeapAlloc >= 64<<20 {
		t.Errorf("heap %.1f MiB after 40 distinct 4 MB statements, want under 64 MiB", float64(m.HeapAlloc)/(1<<20))
	}
	if s.Uncached != 40 || s.Entries != 0 {
		t.Errorf("cache %+v, want the 40 huge statements left out", s)
	}
	runtime.KeepAlive(f)
}

// The cache is bounded in bytes as well as in entries: many mid-sized statements evict each
// other and never keep more than the byte budget.
func TestCacheBoundedInBytes(t *testing.T) {
	f := standard(t)
	for i := range 200 {
		// SELECTs: analyses about as large as their text; the comment makes each its own
		// statement (they differ in their literals only otherwise, and share one entry).
		f.r.Analyze(bigStatement(i*4+3, 300<<10) + fmt.Sprintf(" /* %d */", i))
	}
	s := f.r.CacheStats()
	if s.Bytes > cacheBytes || s.Entries >= 200 || s.Evictions == 0 || s.Uncached != 0 {
		t.Errorf("cache %+v, want at most %d bytes kept by evicting, nothing left uncached", s, cacheBytes)
	}
	if s.Bytes < cacheBytes/2 {
		t.Errorf("cache keeps %d bytes of a %d budget: the estimate or the eviction is off", s.Bytes, cacheBytes)
	}
}

// The byte bound holds whatever part of a statement is large: a literal in the select list,
// in WHERE, on a time-sharded table or not, a comment, an optimizer hint. 40 distinct
// statements of 4 MB of each shape leave the heap under 64 MiB (issue 22, class 8: a 4 MB
// literal in the select list kept 265 MiB).
func TestCacheKeepsHugeStatementsOutAnywhere(t *testing.T) {
	big := strings.Repeat("y", 4<<20)
	shapes := []struct {
		name string
		sql  func(i int) string
	}{
		{"select list", func(i int) string { return fmt.Sprintf("SELECT %d + LENGTH('%s')", i, big) }},
		{"select list of a table", func(i int) string { return fmt.Sprintf("SELECT id, %d + LENGTH('%s') FROM items", i, big) }},
		{"select list of a split", func(i int) string {
			return fmt.Sprintf("SELECT id, %d + LENGTH('%s') FROM orders WHERE order_time >= '2024-12-20' AND order_time < '2025-01-10'", i, big)
		}},
		{"WHERE of a split", func(i int) string {
			return fmt.Sprintf("SELECT id FROM orders WHERE order_time >= '2024-12-20' AND order_time < '2025-01-10' AND (id = %d OR note = '%s')", i, big)
		}},
		{"comment", func(i int) string { return fmt.Sprintf("SELECT id /* %s */ FROM items WHERE id = %d", big, i) }},
		{"hint", func(i int) string { return fmt.Sprintf("SELECT /*+ %s */ id FROM items WHERE id = %d", big, i) }},
		{"comment of a split", func(i int) string {
			return fmt.Sprintf("SELECT COUNT(*) /* %s */ FROM orders WHERE order_time >= '2024-12-20' AND order_time < '2025-01-10' AND id > %d", big, i)
		}},
	}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			f := standard(t)
			for i := range 40 {
				st := f.r.Analyze(sh.sql(i))
				if st.ParseErr != nil || st.RouteErr != nil {
					t.Fatalf("statement %d: %v %v", i, st.ParseErr, st.RouteErr)
				}
				if _, err := f.r.Route(Input{Statement: st}); err != nil {
					t.Fatalf("statement %d: %v", i, err)
				}
			}
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			s := f.r.CacheStats()
			t.Logf("heap after 40 statements of 4 MB: %.1f MiB; cache %+v", float64(m.HeapAlloc)/(1<<20), s)
			if m.HeapAlloc >= 64<<20 {
				t.Errorf("heap %.1f MiB after 40 distinct 4 MB statements, want under 64 MiB", float64(m.HeapAlloc)/(1<<20))
			}
			if s.Bytes > cacheBytes {
				t.Errorf("cache %+v keeps more than %d bytes", s, cacheBytes)
			}
			runtime.KeepAlive(f)
		})
	}
}
