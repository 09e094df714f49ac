package bench

import (
	"database/sql/driver"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/metadata"
)

// newRouter builds the routing configuration of the fixture without any server.
func newRouter(b *testing.B) *routing.Router {
	snap, err := metadata.NewSnapshot(ShardMetadata(), Now)
	if err != nil {
		b.Fatal(err)
	}
	r, err := routing.New(routing.Config{
		Settings: &config.Config{Backends: []config.Backend{{Name: "hot", Role: config.RoleHot}, {Name: "cold", Role: config.RoleCold}}, Default: "hot"},
		Time:     &routing.TimeConfig{Tables: TimeTables(), Snapshot: func() *metadata.Snapshot { return snap }, Clock: func() time.Time { return Now }},
	})
	if err != nil {
		b.Fatal(err)
	}
	r.SetShardKeyColumns(map[string]routing.ShardKeyColumn{ShardMetadata()[0].Name: {Type: routing.ShardKeyDatetime}})
	return r
}

// BenchmarkRoute measures the routing decision alone on a parse-cache hit: Analyze (a cache
// hit) and Route, as the client session does for every statement.
func BenchmarkRoute(b *testing.B) {
	cases := []struct {
		name string
		sql  string
		args []driver.NamedValue
		hint hint.Set
	}{
		{"point", "SELECT id, note FROM items WHERE id = ?", []driver.NamedValue{{Ordinal: 1, Value: int64(7)}}, hint.Set{}},
		{"hot_only", "SELECT id, amount FROM orders WHERE order_time >= ? AND user_id = ?",
			[]driver.NamedValue{{Ordinal: 1, Value: "2025-02-10 00:00:00"}, {Ordinal: 2, Value: int64(7)}}, hint.Set{Level: hint.L1}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			r := newRouter(b)
			session := &routing.SessionState{}
			if _, err := r.Route(routing.Input{Statement: r.Analyze(c.sql), Hints: c.hint, Args: c.args, Session: session}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := r.Route(routing.Input{Statement: r.Analyze(c.sql), Hints: c.hint, Args: c.args, Session: session}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// workload is a realistic statement stream: 120 templates with ? placeholders, picked with a
// Zipf distribution (a few hot statements, a long tail), and 0.5 % ad-hoc statements with
// inlined literals (a console user, a report tool), each a new text.
func workload(n int) []string {
	var templates []string
	for i := 0; i < 30; i++ {
		templates = append(templates,
			fmt.Sprintf("SELECT id, note FROM items WHERE id = ? /* q%d */", i),
			fmt.Sprintf("UPDATE items SET note = ? WHERE id = ? /* q%d */", i),
			fmt.Sprintf("INSERT INTO items (id, note) VALUES (?, ?) /* q%d */", i),
			fmt.Sprintf("SELECT user_id, SUM(amount) FROM orders WHERE order_time >= ? AND order_time < ? AND user_id = ? GROUP BY user_id /* q%d */", i))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.1, 1, uint64(len(templates)-1))
	out := make([]string, n)
	for i := range out {
		if rng.IntN(200) == 0 {
			out[i] = fmt.Sprintf("SELECT id, note FROM items WHERE id = %d", rng.IntN(1_000_000))
			continue
		}
		out[i] = templates[zipf.Uint64()]
	}
	return out
}

// BenchmarkParseCache reports the parse-cache hit rate (hit%) over 50,000 statements of the
// workload; one op is the whole workload on a fresh router.
func BenchmarkParseCache(b *testing.B) {
	stream := workload(50_000)
	var rate float64
	for i := 0; i < b.N; i++ {
		r := newRouter(b)
		for _, sql := range stream {
			r.Analyze(sql)
		}
		rate = r.CacheStats().HitRate()
	}
	b.ReportMetric(100*rate, "hit%")
}
