package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/metadata"
)

// scaleLayout is a logical table aged to n physical tables: monthly tables over ten years, or
// daily tables over three.
type scaleLayout struct {
	name   string
	n      int
	daily  bool
	window config.HotWindow
}

var scaleLayouts = []scaleLayout{
	{name: "monthly_120", n: 120, window: config.HotWindow{Months: 2}},
	{name: "daily_1100", n: 1100, daily: true, window: config.HotWindow{Days: 30}},
}

// metadata lists the layout's tables, the newest holding Now, each hot when it meets the hot
// window.
func (l scaleLayout) metadata() metadata.StaticSource {
	src := make(metadata.StaticSource, 0, l.n)
	boundary := metadata.HotWindow(l.window).Boundary(Now)
	for i := l.n - 1; i >= 0; i-- {
		var from, to time.Time
		if l.daily {
			from = time.Date(Now.Year(), Now.Month(), Now.Day()-i, 0, 0, 0, 0, time.UTC)
			to = from.AddDate(0, 0, 1)
		} else {
			from = time.Date(Now.Year(), Now.Month()-time.Month(i), 1, 0, 0, 0, 0, time.UTC)
			to = from.AddDate(0, 1, 0)
		}
		layout := "200601"
		if l.daily {
			layout = "20060102"
		}
		src = append(src, metadata.Table{Name: "orders_" + from.Format(layout), Min: from, Max: to.Add(-time.Second), Hot: !to.Before(boundary.Add(time.Second))})
	}
	return src
}

// router is the routing of the layout without any server.
func (l scaleLayout) router(tb testing.TB) *routing.Router {
	snap, err := metadata.NewSnapshot(l.metadata(), Now)
	if err != nil {
		tb.Fatal(err)
	}
	r, err := routing.New(routing.Config{
		Settings: &config.Config{Backends: []config.Backend{{Name: "hot", Role: config.RoleHot}, {Name: "cold", Role: config.RoleCold}}, Default: "hot"},
		Time: &routing.TimeConfig{Tables: []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: l.window}},
			Snapshot: func() *metadata.Snapshot { return snap }, Clock: func() time.Time { return Now }},
	})
	if err != nil {
		tb.Fatal(err)
	}
	cols := map[string]routing.ShardKeyColumn{}
	for _, t := range l.metadata() {
		cols[t.Name] = routing.ShardKeyColumn{Type: routing.ShardKeyDatetime}
	}
	r.SetShardKeyColumns(cols)
	return r
}

// scaleQueries are the statements routed at each scale: one recent table (the common case),
// the whole history (a sub-query per table), each as a cache hit and with literals never
// repeated (a new text each time: the template cache, or a parse).
func scaleQueries(l scaleLayout) []struct{ name, sql string } {
	first := l.metadata()[0].Min.Format(time.DateTime)
	return []struct{ name, sql string }{
		{"recent", "SELECT id, amount FROM orders WHERE order_time >= '2025-03-14 00:00:00' AND order_time < '2025-03-15 00:00:00' AND user_id = %d"},
		{"all", "SELECT user_id, SUM(amount) FROM orders WHERE order_time >= '" + first + "' AND order_time < '2025-03-16 00:00:00' AND user_id <> %d GROUP BY user_id"},
	}
}

// BenchmarkRouteScale measures the routing decision (Analyze and Route, as the client session
// runs them for each statement) as a logical table ages to 120 monthly and 1 100 daily tables:
// for a range within one recent table and for one over the whole history, on a parse-cache hit
// (the same text) and with a new literal each time (hit/new). It reports the sub-queries' SQL
// size (sql_B) and the EXPLAIN ROUTE text's (explain_B). Goal (issue 26): at most 50 µs at
// 1 100 tables on a cache hit.
func BenchmarkRouteScale(b *testing.B) {
	for _, l := range scaleLayouts {
		for _, q := range scaleQueries(l) {
			for _, fresh := range []bool{false, true} {
				mode := "hit"
				if fresh {
					mode = "new"
				}
				b.Run(l.name+"/"+q.name+"/"+mode, func(b *testing.B) {
					r := l.router(b)
					session := &routing.SessionState{}
					route := func(i int) *routing.Plan {
						sql := fmt.Sprintf(q.sql, 7)
						if fresh {
							sql = fmt.Sprintf(q.sql, i)
						}
						p, err := r.Route(routing.Input{Statement: r.Analyze(sql), Session: session})
						if err != nil {
							b.Fatal(err)
						}
						return p
					}
					p := route(-1)
					size := 0
					for _, t := range p.Targets {
						size += len(t.SQL)
					}
					ex, err := r.Route(routing.Input{Statement: r.Analyze(fmt.Sprintf(q.sql, 7)), Session: session, Explain: true})
					if err != nil {
						b.Fatal(err)
					}
					var buf strings.Builder
					if err := routing.WriteExplain(&buf, ex.Explain(routing.ExplainOptions{})); err != nil {
						b.Fatal(err)
					}
					b.ReportAllocs()
					i := 0
					for b.Loop() {
						route(i)
						i++
					}
					b.ReportMetric(float64(size), "sql_B")
					b.ReportMetric(float64(buf.Len()), "explain_B")
				})
			}
		}
	}
}
