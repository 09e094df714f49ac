package difftest_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/obroute/obroute/internal/difftest"
)

// TestMigrationUnderLoad: a table moved from hot to cold (copied to cold, its
// shard_metadata row changed, dropped from hot) is followed after RefreshMetadata, with no
// restart, while 8 goroutines query across it the whole time; not one query fails or returns a
// wrong result.
func TestMigrationUnderLoad(t *testing.T) {
	seed := testSeed(t)
	c := newCluster(t, seed, 1500, false)
	ctx := context.Background()
	const moved = "orders_202501"

	queries := []difftest.Query{
		{SQL: "SELECT COUNT(*), SUM(amount), MIN(order_time), MAX(order_time) FROM orders WHERE order_time >= '2024-12-15' AND order_time < '2025-02-15'"},
		{SQL: "SELECT id, amount, status FROM orders WHERE order_time >= ? AND order_time < ? ORDER BY order_time, id", Args: []any{"2025-01-10", "2025-01-20"}, Ordered: true},
		{SQL: "SELECT user_id, COUNT(*), AVG(amount) FROM orders WHERE order_time BETWEEN '2024-11-01' AND '2025-03-31 23:59:59' GROUP BY user_id ORDER BY 1", Ordered: true},
		{SQL: "SELECT id FROM orders WHERE order_time IN (?, '2025-01-01', '2025-02-01') ORDER BY id", Args: []any{time.Date(2025, 1, 31, 23, 59, 59, 0, time.UTC)}, Ordered: true},
	}
	want := make([][][]any, len(queries))
	for i, q := range queries {
		r, err := query(ctx, c.refDB, q.SQL, q.Args...)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = r.rows
	}
	if len(want[1]) == 0 {
		t.Fatalf("no orders in %s's query range: the load would not test the move", moved)
	}

	var total, failed atomic.Int64
	var firstErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				q := queries[i%len(queries)]
				got, err := query(ctx, c.db, q.SQL, q.Args...)
				if err == nil {
					err = difftest.Compare(want[i%len(queries)], got.rows, q.Ordered)
				}
				total.Add(1)
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Errorf("%s: %w", q.SQL, err))
				}
			}
		}()
	}
	pause := func() { time.Sleep(150 * time.Millisecond) }

	pause() // load on the old layout
	// 1. Copy the table to cold.
	parts := difftest.Split(c.orders, c.tables)
	c.cold.Exec(t, fmt.Sprintf(difftest.CreateTableSQL, moved))
	for _, s := range difftest.InsertSQL(moved, parts[moved], 1000) {
		c.cold.Exec(t, s)
	}
	pause()
	// 2. Move it in the metadata, and refresh.
	c.hot.Exec(t, "UPDATE shard_metadata SET is_hot = 0, location = 'cold' WHERE table_name = ?", moved)
	pause() // still the old snapshot: the hot copy answers
	before := routeOf(t, c, queries[1])
	if err := c.conn.RefreshMetadata(ctx); err != nil {
		t.Fatal(err)
	}
	after := routeOf(t, c, queries[1])
	coldSel := c.cold.StatusCounter(t, "Com_select")
	// 3. A grace period for statements routed by the old snapshot, then drop the hot copy.
	pause()
	c.hot.Exec(t, "DROP TABLE "+moved)
	pause() // load on the new layout
	close(stop)
	wg.Wait()

	if !strings.Contains(before, "hot:"+moved) || !strings.Contains(after, "cold:"+moved) {
		t.Errorf("route of %s on %s: before the refresh %q, after %q; want it on hot, then on cold", queries[1].SQL, moved, before, after)
	}
	if c.cold.StatusCounter(t, "Com_select") <= coldSel {
		t.Error("no SELECT reached cold after the refresh")
	}
	n, f := total.Load(), failed.Load()
	t.Logf("%d queries by 8 goroutines during the migration of %s, %d failed", n, moved, f)
	if f > 0 {
		t.Errorf("%d of %d queries failed during the migration; first: %v", f, n, firstErr.Load())
	}
	if n < 80 {
		t.Errorf("only %d queries ran during the migration; the load did not overlap it", n)
	}
	// After the migration: the right rows, read from cold.
	got, err := query(ctx, c.db, queries[1].SQL, queries[1].Args...)
	if err != nil {
		t.Fatal(err)
	}
	if err := difftest.Compare(want[1], got.rows, true); err != nil {
		t.Errorf("after the migration: %v", err)
	}
}

// routeOf returns "backend:table" pairs of q's route, from EXPLAIN ROUTE.
func routeOf(t *testing.T, c *cluster, q difftest.Query) string {
	t.Helper()
	r, err := query(context.Background(), c.db, "EXPLAIN ROUTE "+q.SQL, q.Args...)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, row := range r.rows {
		for _, cell := range row {
			s, _ := cell.(string)
			b, ok1 := field(s, `backend:"`)
			tabs, ok2 := field(s, `tables:"`)
			if ok1 && ok2 {
				for _, tb := range strings.Split(tabs, ",") {
					out = append(out, b+":"+tb)
				}
			}
		}
	}
	return strings.Join(out, " ")
}

// field returns the quoted value after key in an EXPLAIN ROUTE step.
func field(s, key string) (string, bool) {
	i := strings.Index(s, key)
	if i < 0 {
		return "", false
	}
	s = s[i+len(key):]
	j := strings.IndexByte(s, '"')
	if j < 0 {
		return "", false
	}
	return s[:j], true
}
