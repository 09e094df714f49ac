package routing

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkRouteTimeHit measures a parse-cache hit plus the route of a split query with ?
// arguments: range extraction, table lookup, level, rewrite into one statement per backend.
// Target: under 2 µs and at most 10 allocations per query.
func BenchmarkRouteTimeHit(b *testing.B) {
	f := standard(b)
	const q = "SELECT id, user_id, amount FROM orders WHERE order_time >= ? AND order_time < ? AND user_id = ? ORDER BY order_time DESC LIMIT 20"
	a := args("2024-12-20 00:00:00", "2025-01-10 00:00:00", 42)
	f.r.Analyze(q)
	b.ReportAllocs()
	for b.Loop() {
		p, err := f.r.Route(Input{Statement: f.r.Analyze(q), Args: a})
		if err != nil || p.Class != ClassSplit {
			b.Fatal(err, p)
		}
	}
}

// BenchmarkRouteTimeHotOnly is the most common case: one hot table.
func BenchmarkRouteTimeHotOnly(b *testing.B) {
	f := standard(b)
	const q = "SELECT id, amount FROM orders WHERE order_time >= ? AND order_time < ? AND user_id = ?"
	a := args("2025-03-14 00:00:00", "2025-03-15 00:00:00", 42)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.r.Route(Input{Statement: f.r.Analyze(q), Args: a}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRouteTimeNow routes a relative range, NOW() - INTERVAL 7 DAY folded in the session's
// time zone, with NOW() sent to the sub-query as the statement's instant.
func BenchmarkRouteTimeNow(b *testing.B) {
	f := standard(b)
	const q = "SELECT id, amount FROM orders WHERE order_time >= NOW() - INTERVAL 7 DAY AND user_id = ?"
	a := args(42)
	sess := &SessionState{TimeZone: "+08:00"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.r.Route(Input{Statement: f.r.Analyze(q), Args: a, Session: sess}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseCacheTemplates runs a template workload: 50 statement templates with ?
// arguments, picked at random with varying arguments, as an application does. It reports the
// parse-cache hit rate (target ≥ 99 %).
func BenchmarkParseCacheTemplates(b *testing.B) {
	f := standard(b)
	shapes := []string{
		"SELECT id, amount FROM orders WHERE order_time >= ? AND order_time < ? AND user_id = %d",
		"SELECT COUNT(*) FROM orders WHERE order_time BETWEEN ? AND ? AND status = %d",
		"SELECT user_id, SUM(amount) FROM orders WHERE order_time >= ? AND order_time < ? AND shop_id = %d GROUP BY user_id",
		"SELECT id FROM orders WHERE order_time >= ? AND order_time < ? ORDER BY order_time DESC LIMIT %d",
		"UPDATE orders SET status = %d WHERE order_time >= ? AND order_time < ? AND id = 1",
	}
	var templates []string
	for i := 0; len(templates) < 50; i++ {
		templates = append(templates, fmt.Sprintf(shapes[i%len(shapes)], i))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	days := []string{"2025-03-01", "2025-03-02", "2025-03-05", "2025-03-10", "2025-03-12"}
	b.ReportAllocs()
	for b.Loop() {
		q := templates[rng.IntN(len(templates))]
		d := rng.IntN(len(days) - 1)
		if _, err := f.r.Route(Input{Statement: f.r.Analyze(q), Args: args(days[d], days[d+1])}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(f.r.CacheStats().HitRate()*100, "hit%")
}
