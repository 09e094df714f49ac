package metacache

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/obroute/obroute/metadata"
)

// TestMain fails the package's tests if any goroutine outlives them, such as a Cache refresher
// that Close did not stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// at reads a test time, a date or a date and time, in UTC.
func at(t testing.TB, s string) time.Time {
	t.Helper()
	layout := time.DateTime
	if len(s) == len(time.DateOnly) {
		layout = time.DateOnly
	}
	v, err := time.ParseInLocation(layout, s, time.UTC)
	if err != nil {
		t.Fatalf("bad test time %q: %v", s, err)
	}
	return v
}

// tbl is a table spanning lo..hi.
func tbl(t testing.TB, name, lo, hi string, hot bool) metadata.Table {
	return metadata.Table{Name: name, Min: at(t, lo), Max: at(t, hi), Hot: hot}
}

// ordersTables is a logical table "orders" by month, a logical table "order_items" whose prefix
// "order" is also a prefix, and a stray table.
func ordersTables(t testing.TB) []metadata.Table {
	return []metadata.Table{
		tbl(t, "orders_202503", "2025-03-01", "2025-03-31 23:59:59", true),
		tbl(t, "orders_202501", "2025-01-01", "2025-01-31 23:59:59", true),
		tbl(t, "orders_202412", "2024-12-01", "2024-12-31 23:59:59", false),
		tbl(t, "orders_202502", "2025-02-01", "2025-02-28 23:59:59", true),
		tbl(t, "order_items_202501", "2025-01-01", "2025-01-31 23:59:59", true),
		tbl(t, "orders2_202501", "2025-01-01", "2025-01-31 23:59:59", true),
		tbl(t, "ordersx", "2020-01-01", "2020-01-01", false),
	}
}

func BenchmarkCacheSnapshotLogical(b *testing.B) {
	c, err := New(metadata.StaticSource(ordersTables(b)), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if len(c.Snapshot().Logical("orders")) != 4 {
				b.Error("wrong tables")
				return
			}
		}
	})
}

// names are the tables' names, in order.
func names(ts []metadata.Table) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}
