package routing

import (
	"database/sql/driver"
	"fmt"
	"strings"
	"testing"

	"github.com/obroute/obroute/config"
)

// literalShapes are statements as an application writes them with literals, %v standing for a
// literal, %[1]d for the column that makes each of 20 templates per shape its own; params are
// the same statements with ? arguments.
var literalShapes = []struct{ name, sql, params string }{
	{"point SELECT", "SELECT id, c%[1]d FROM items WHERE id = %v", "SELECT id, c%[1]d FROM items WHERE id = ?"},
	{"time-sharded hot-only SELECT", "SELECT id, amount, c%[1]d FROM orders WHERE order_time >= %v AND order_time < %v AND user_id = %v",
		"SELECT id, amount, c%[1]d FROM orders WHERE order_time >= ? AND order_time < ? AND user_id = ?"},
	{"INSERT", "INSERT INTO orders (id, order_time, c%[1]d) VALUES (%v, %v, %v)", "INSERT INTO orders (id, order_time, c%[1]d) VALUES (?, ?, ?)"},
	{"UPDATE", "UPDATE items SET c%[1]d = %v WHERE id = %v", "UPDATE items SET c%[1]d = ? WHERE id = ?"},
	{"static route", "SELECT * FROM audit_log WHERE id = %v AND note = %v AND c%[1]d IS NOT NULL", "SELECT * FROM audit_log WHERE id = ? AND note = ? AND c%[1]d IS NOT NULL"},
	{"INSERT of 10 rows", "INSERT INTO orders (id, order_time, c%[1]d) VALUES (%v, %v, %v)" + strings.Repeat(", (%v, %v, %v)", 9),
		"INSERT INTO orders (id, order_time, c%[1]d) VALUES (?, ?, ?)" + strings.Repeat(", (?, ?, ?)", 9)},
}

// literalValues returns the i-th statement's literals for a shape (never the same twice) and
// the same values as arguments: hot-window times, ids, strings.
func literalValues(shape, i int) ([]any, []driver.NamedValue) {
	at := fmt.Sprintf("2025-03-%02d %02d:%02d:%02d", 1+i%14, i/60%24, i%60, i/7%60)
	end := fmt.Sprintf("2025-03-%02d 00:00:00", 2+i%14)
	note := fmt.Sprintf("note %d", i)
	var vs []any
	switch shape {
	case 0:
		vs = []any{i}
	case 1:
		vs = []any{at, end, i}
	case 2:
		vs = []any{i, at, note}
	case 3:
		vs = []any{note, i}
	case 4:
		vs = []any{i, note}
	default:
		for r := range 10 {
			vs = append(vs, i*10+r, at, note)
		}
	}
	lits := make([]any, len(vs))
	for j, v := range vs {
		lits[j] = v
		if s, ok := v.(string); ok {
			lits[j] = "'" + s + "'"
		}
	}
	return lits, args(vs...)
}

// literalStatement is the n-th statement of template k (of the shape k modulo their number)
// with fresh literals.
func literalStatement(k, n int) string {
	sh := literalShapes[k%len(literalShapes)]
	lits, _ := literalValues(k%len(literalShapes), n)
	return fmt.Sprintf(sh.sql, append([]any{k / len(literalShapes)}, lits...)...)
}

// 100 templates, each statement with literals never seen before: every statement after its
// template's first is a cache hit, and each is routed.
func TestLiteralTemplatesHitTheCache(t *testing.T) {
	r := normRouter(t)
	const templates, statements = 100, 20000
	for n := range statements {
		k := n % templates
		p, err := r.Route(Input{Statement: r.Analyze(literalStatement(k, n))})
		if err != nil || len(p.Targets) != 1 {
			t.Fatalf("%s: %v %+v", literalStatement(k, n), err, p)
		}
	}
	s := r.CacheStats()
	t.Logf("cache %+v, hit rate %.4f", s, s.HitRate())
	if s.Misses != templates || s.Hits != statements-templates || s.HitRate() < 0.99 {
		t.Errorf("cache %+v: want one miss per template, %d hits (a hit rate of at least 99 %%)", s, statements-templates)
	}
}

// A statement with literals that hits the cache costs at most 3 allocations more than the
// same statement with ? arguments, analysis and route together, in every configuration: one
// backend, and every rule that reads literals (time-sharded tables, shadow columns, routes);
// a statement of more than 16 literals included.
func TestLiteralHitAllocations(t *testing.T) {
	plain, err := New(Config{Settings: &config.Config{Backends: []config.Backend{{Name: "hot", Role: config.RoleHot}}, Default: "hot"}})
	if err != nil {
		t.Fatal(err)
	}
	routers := []struct {
		name string
		r    *Router
	}{{"one backend", plain}, {"time, shadow and static rules", normRouter(t)}}
	for _, rc := range routers {
		for si, sh := range literalShapes {
			const runs = 200
			texts := make([]string, runs+1)
			for i := range texts {
				texts[i] = literalStatement(si, 1000+i)
			}
			params := fmt.Sprintf(sh.params, 0)
			_, a := literalValues(si, 1000)
			route := func(sql string, a []driver.NamedValue) {
				if _, err := rc.r.Route(Input{Statement: rc.r.Analyze(sql), Args: a}); err != nil {
					t.Fatal(err)
				}
			}
			route(literalStatement(si, 999), nil)
			route(params, a)
			i := 0
			lit := testing.AllocsPerRun(runs, func() {
				route(texts[i], nil)
				i++
			})
			arg := testing.AllocsPerRun(runs, func() { route(params, a) })
			t.Logf("%s, %s: %.0f allocations with literals, %.0f with ? arguments", rc.name, sh.name, lit, arg)
			if lit > arg+3 {
				t.Errorf("%s, %s: %.0f allocations with literals on a cache hit, %.0f with ? arguments: want at most 3 more", rc.name, sh.name, lit, arg)
			}
		}
	}
}

// BenchmarkLiteralHit measures analysis and route of a statement with fresh literals on a cache
// hit (lit), beside the same statement with ? arguments (args).
func BenchmarkLiteralHit(b *testing.B) {
	r := normRouter(b)
	for si, sh := range literalShapes[:3] {
		texts := make([]string, 4096)
		for i := range texts {
			texts[i] = literalStatement(si, i)
		}
		params := fmt.Sprintf(sh.params, 0)
		_, a := literalValues(si, 0)
		b.Run(sh.name+"/lit", func(b *testing.B) { routeEach(b, r, texts) })
		b.Run(sh.name+"/args", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Route(Input{Statement: r.Analyze(params), Args: a}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLiteralTemplates runs 100 templates with fresh literals on every statement and
// reports the parse-cache hit rate.
func BenchmarkLiteralTemplates(b *testing.B) {
	r := normRouter(b)
	texts := make([]string, 100*50)
	for i := range texts {
		texts[i] = literalStatement(i%100, i)
	}
	routeEach(b, r, texts)
	b.ReportMetric(r.CacheStats().HitRate()*100, "hit%")
}

// routeEach analyses and routes texts in turn, one per iteration.
func routeEach(b *testing.B, r *Router, texts []string) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := r.Route(Input{Statement: r.Analyze(texts[i%len(texts)])}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
