package bench

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/routing"
	"github.com/obroute/obroute/sqltest"
)

// now is the benchmarks' clock: the hot window (current month + 2) starts on 2025-01-01.
var now = time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)

// months of the orders tables: 2024-11 and 2024-12 on cold, 2025-01..03 on hot.
var months = []time.Time{
	time.Date(2024, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC),
	time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC),
}

const rowsPerTable = 2000

type fixture struct {
	raw      map[string]*sql.DB // plain go-sql-driver/mysql, by backend
	obroute  *sql.DB
	c        *connector.Connector
	backends map[string]*sqltest.Backend
}

func timeTables() []routing.TimeTable {
	return []routing.TimeTable{{Table: "orders", ShardKey: "order_time", Window: metadata.HotWindow{Months: 2}}}
}

func shardMetadata() metadata.StaticSource {
	var src metadata.StaticSource
	for _, m := range months {
		src = append(src, metadata.Table{Name: "orders_" + m.Format("200601"), Min: m, Max: m.AddDate(0, 1, 0).Add(-time.Second), Hot: !m.Before(months[2])})
	}
	return src
}

// setup creates hot and cold databases with items (1000 rows) on hot and the monthly orders
// tables, and opens raw and obroute handles over them.
func setup(b *testing.B) *fixture {
	b.Helper()
	bs := sqltest.Shared(b, "hot", "cold")
	f := &fixture{raw: map[string]*sql.DB{}, backends: map[string]*sqltest.Backend{"hot": bs[0], "cold": bs[1]}}
	hot, cold := bs[0], bs[1]
	hot.Exec(b, "CREATE TABLE items (id INT PRIMARY KEY, note VARCHAR(64) NOT NULL)")
	var vals []string
	for i := 0; i < 1000; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 'item %d')", i, i))
	}
	hot.Exec(b, "INSERT INTO items VALUES "+strings.Join(vals, ","))
	for _, m := range months {
		be := cold
		if !m.Before(months[2]) {
			be = hot
		}
		name := "orders_" + m.Format("200601")
		be.Exec(b, "CREATE TABLE "+name+" (id INT PRIMARY KEY, user_id INT NOT NULL, amount DECIMAL(10,2) NOT NULL, order_time DATETIME NOT NULL, KEY (order_time))")
		vals = vals[:0]
		for i := 0; i < rowsPerTable; i++ {
			at := m.Add(time.Duration(i) * 20 * time.Minute)
			vals = append(vals, fmt.Sprintf("(%d, %d, %d.%02d, '%s')", i, i%50, i%97, i%100, at.Format(time.DateTime)))
		}
		be.Exec(b, "INSERT INTO "+name+" VALUES "+strings.Join(vals, ","))
	}
	cfg := &config.Config{
		Backends:   []config.Backend{{Name: "hot", Role: "hot", DSN: hot.DSN}, {Name: "cold", Role: "cold", DSN: cold.DSN}},
		TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 2}}},
	}
	c, err := connector.New(cfg, connector.WithMetadataSource(shardMetadata()), connector.WithClock(func() time.Time { return now }))
	if err != nil {
		b.Fatal(err)
	}
	f.c = c
	f.obroute = sql.OpenDB(c)
	f.obroute.SetMaxIdleConns(128)
	b.Cleanup(func() { f.obroute.Close() })
	for name, be := range f.backends {
		db, err := sql.Open("mysql", be.DSN)
		if err != nil {
			b.Fatal(err)
		}
		db.SetMaxIdleConns(128)
		b.Cleanup(func() { db.Close() })
		f.raw[name] = db
	}
	return f
}

func pointSelect(b *testing.B, db *sql.DB, i int) {
	var id int
	var note string
	if err := db.QueryRow("SELECT id, note FROM items WHERE id = ?", i%1000).Scan(&id, &note); err != nil {
		b.Fatal(err)
	}
}

// drain runs query and reads every row.
func drain(b *testing.B, db *sql.DB, query string, args ...any) int {
	rows, err := db.Query(query, args...)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	dest := make([]any, len(cols))
	for i := range dest {
		dest[i] = new(sql.RawBytes)
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}

const splitQuery = "SELECT user_id, COUNT(*) AS n, SUM(amount) AS total FROM orders WHERE order_time >= ? GROUP BY user_id ORDER BY user_id"

var splitFrom = "2024-12-01 00:00:00"

// BenchmarkOverhead compares obroute with plain go-sql-driver/mysql on the same server and query.
func BenchmarkOverhead(b *testing.B) {
	f := setup(b)
	for _, side := range []string{"raw", "obroute"} {
		db := f.obroute
		if side == "raw" {
			db = f.raw["hot"]
		}
		b.Run("point/"+side, func(b *testing.B) {
			pointSelect(b, db, 0) // warm the connection
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				pointSelect(b, db, i)
			}
		})
	}
	// The same statements alternated one by one: both sides see the same machine at the same
	// moment, so the ratio is not at the mercy of other work on a shared machine.
	b.Run("point/paired", func(b *testing.B) {
		raw, routed := f.raw["hot"], f.obroute
		pointSelect(b, raw, 0)
		pointSelect(b, routed, 0)
		rawTimes := make([]time.Duration, 0, b.N)
		routedTimes := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			first, second, firstTimes, secondTimes := raw, routed, &rawTimes, &routedTimes
			if i%2 == 1 { // alternate which goes first
				first, second, firstTimes, secondTimes = routed, raw, &routedTimes, &rawTimes
			}
			t0 := time.Now()
			pointSelect(b, first, i)
			t1 := time.Now()
			pointSelect(b, second, i)
			*firstTimes = append(*firstTimes, t1.Sub(t0))
			*secondTimes = append(*secondTimes, time.Since(t1))
		}
		// Medians: a few statements delayed by other work on the machine do not move them.
		rawMedian, routedMedian := median(rawTimes), median(routedTimes)
		b.ReportMetric(float64(rawMedian.Nanoseconds()), "raw-ns/op")
		b.ReportMetric(float64(routedMedian.Nanoseconds()), "obroute-ns/op")
		b.ReportMetric(float64(routedMedian)/float64(rawMedian), "ratio")
	})
	for _, side := range []string{"raw", "obroute"} {
		db := f.obroute
		if side == "raw" {
			db = f.raw["hot"]
		}
		b.Run("point64/"+side, func(b *testing.B) {
			b.SetParallelism((64 + testingProcs() - 1) / testingProcs())
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := rand.IntN(1000)
				for pb.Next() {
					pointSelect(b, db, i)
					i++
				}
			})
		})
	}
	// The split: each sub-query alone on its backend, then the whole through obroute.
	plan, err := f.c.Explain(context.Background(), splitQuery, splitFrom)
	if err != nil {
		b.Fatal(err)
	}
	if plan.Class != routing.ClassSplit || len(plan.Targets) < 2 {
		b.Fatalf("the split query routes %s to %v, want a split", plan.Class, plan.Backends())
	}
	want := drain(b, f.obroute, splitQuery, splitFrom)
	if want != 50 {
		b.Fatalf("the split query returned %d rows, want 50 (one per user)", want)
	}
	for i, t := range plan.Targets {
		args := make([]any, len(t.Args))
		for j, a := range t.Args {
			args[j] = a.Value
		}
		b.Run(fmt.Sprintf("split/part%d_%s", i+1, t.Backend), func(b *testing.B) {
			for n := 0; n < b.N; n++ {
				drain(b, f.raw[t.Backend], t.SQL, args...)
			}
		})
	}
	b.Run("split/obroute", func(b *testing.B) {
		for n := 0; n < b.N; n++ {
			drain(b, f.obroute, splitQuery, splitFrom)
		}
	})
}

// median returns the middle of ds (which it sorts).
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// testingProcs is GOMAXPROCS: RunParallel starts GOMAXPROCS × parallelism goroutines.
func testingProcs() int { return runtime.GOMAXPROCS(0) }

// newRouter builds the routing configuration of the fixture without any server.
func newRouter(b *testing.B) *routing.Router {
	snap, err := metadata.NewSnapshot(shardMetadata(), now)
	if err != nil {
		b.Fatal(err)
	}
	r, err := routing.New(routing.Config{
		Backends: []routing.Backend{{Name: "hot", Role: routing.RoleHot}, {Name: "cold", Role: routing.RoleCold}},
		Default:  "hot",
		Time:     &routing.TimeConfig{Tables: timeTables(), Snapshot: func() *metadata.Snapshot { return snap }, Clock: func() time.Time { return now }},
	})
	if err != nil {
		b.Fatal(err)
	}
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
