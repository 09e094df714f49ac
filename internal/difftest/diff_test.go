package difftest_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/difftest"
	"github.com/obroute/obroute/internal/routing"
)

// result is what one query returned: column names, database type names and rows.
type result struct {
	cols, types []string
	rows        [][]any
}

// queryer runs a query: a *sql.DB, a *sql.Conn (one session) or a *sql.Stmt's owner.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func query(ctx context.Context, db queryer, q string, args ...any) (result, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return result{}, err
	}
	var r result
	if r.cols, err = rows.Columns(); err != nil {
		rows.Close()
		return r, err
	}
	cts, err := rows.ColumnTypes()
	if err != nil {
		rows.Close()
		return r, err
	}
	for _, ct := range cts {
		typ := ct.DatabaseTypeName()
		if p, s, ok := ct.DecimalSize(); ok {
			typ += fmt.Sprintf("(%d,%d)", p, s)
		}
		if n, ok := ct.Nullable(); ok && !n {
			typ += " NOT NULL"
		}
		typ += " " + ct.ScanType().String()
		r.types = append(r.types, typ)
	}
	r.rows, err = difftest.ScanAll(rows)
	return r, err
}

// mismatch is one difference between obroute and the reference, by class: "query" (one side
// failed), "names" (column names), "types" (column type names), "rows".
type mismatch struct {
	class string
	err   error
}

// diff runs q on the reference and through obroute and returns their differences.
func (c *cluster) diff(ctx context.Context, q difftest.Query) []mismatch {
	return diffOn(ctx, c.refDB, c.db, q)
}

// diffOn runs q on the reference ref and through obroute (db) and returns their differences.
func diffOn(ctx context.Context, ref, db queryer, q difftest.Query) []mismatch {
	want, err := query(ctx, ref, q.SQL, q.Args...)
	if err != nil {
		return []mismatch{{"query", fmt.Errorf("reference: %w", err)}}
	}
	got, err := query(ctx, db, q.SQL, q.Args...)
	if err != nil {
		return []mismatch{{"query", fmt.Errorf("obroute: %w", err)}}
	}
	var out []mismatch
	if strings.Join(got.cols, ", ") != strings.Join(want.cols, ", ") {
		out = append(out, mismatch{"names", fmt.Errorf("column names %q, want %q", got.cols, want.cols)})
	}
	if strings.Join(got.types, ", ") != strings.Join(want.types, ", ") {
		out = append(out, mismatch{"types", fmt.Errorf("column types %q, want %q", got.types, want.types)})
	}
	return append(out, diffRows(want.rows, got.rows, q)...)
}

// diffRows compares the rows of the reference (want) and of obroute (got), in order when q is
// ordered, with strings folded to lower case when q says.
func diffRows(want, got [][]any, q difftest.Query) []mismatch {
	if q.FoldCase {
		fold(want)
		fold(got)
	}
	if err := difftest.Compare(want, got, q.Ordered); err != nil {
		return []mismatch{{"rows", err}}
	}
	return nil
}

func fold(rows [][]any) {
	for _, r := range rows {
		for i, v := range r {
			if s, ok := v.(string); ok {
				r[i] = strings.ToLower(s)
			}
		}
	}
}

// runDiff runs n generated queries and fails on every difference, showing a few of each class.
func runDiff(t *testing.T, c *cluster, g *difftest.Generator, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var failed, text, binary, ordered, limited int
	kinds := map[string]int{}
	classes := map[string]int{}
	for i := range n {
		q := g.Next()
		kinds[q.Kind]++
		if len(q.Args) == 0 {
			text++
		} else {
			binary++
		}
		if q.Ordered {
			ordered++
		}
		if strings.Contains(q.SQL, " LIMIT ") {
			limited++
		}
		ms := c.diff(ctx, q)
		if len(ms) > 0 {
			failed++
		}
		for _, m := range ms {
			classes[m.class]++
			if classes[m.class] <= 4 {
				t.Errorf("query %d of seed %d: %s: %v\n  sql:  %s\n  args: %v", i+1, g.Seed(), m.class, m.err, q.SQL, q.Args)
			}
		}
	}
	t.Logf("%d queries (%d text protocol, %d binary protocol with ? args; %d ordered, %d with LIMIT; kinds %v): %d differ %v",
		n, text, binary, ordered, limited, kinds, failed, classes)
}

// TestDifferential runs generated queries through obroute over hot and cold and directly on the
// reference server holding all the data in one table, and compares column names, column types
// and rows. It also holds the hot-only and refusal tests, which need the same servers.
func TestDifferential(t *testing.T) {
	seed := testSeed(t)
	c := newCluster(t, seed, 3000, true)
	cfg := difftest.QueryConfig{Table: "orders", From: dataFrom, To: dataTo, Boundary: boundary, Times: c.times()}

	// Row queries with random time ranges across and along the boundary.
	t.Run("rows", func(t *testing.T) {
		rows := cfg
		rows.Mix = "rows"
		runDiff(t, c, difftest.NewGenerator(seed+1, rows), 500)
	})
	// Every shape: ORDER BY, LIMIT/OFFSET, aggregates, GROUP BY, HAVING, DISTINCT.
	t.Run("merge", func(t *testing.T) {
		runDiff(t, c, difftest.NewGenerator(seed+2, cfg), 1000)
	})
	t.Run("hot-only", func(t *testing.T) { testHotOnly(t, c) })
	t.Run("refusals", func(t *testing.T) { testRefusals(t, c) })
	t.Run("ranges", func(t *testing.T) { testRanges(t, c, seed+3) })
}

// testHotOnly: a range entirely inside the hot window sends nothing to the cold
// backend, counted on the cold server (Com_select and its general log), while a range that
// crosses the boundary does reach it (so the counting can fail).
func testHotOnly(t *testing.T, c *cluster) {
	ctx := context.Background()
	hotOnly := []struct {
		sql  string
		args []any
	}{
		{"SELECT id, amount FROM orders WHERE order_time >= '2025-01-01'", nil},
		{"SELECT id, amount FROM orders WHERE order_time >= ? AND order_time < ?", []any{boundary, dataTo}},
		{"SELECT COUNT(*), SUM(amount), AVG(amount) FROM orders WHERE order_time BETWEEN '2025-02-01' AND '2025-03-31 23:59:59'", nil},
		{"SELECT user_id, COUNT(*) FROM orders WHERE order_time > ? GROUP BY user_id ORDER BY 2 DESC, 1 LIMIT 5", []any{"2025-01-15 00:00:00"}},
		{"SELECT DISTINCT status FROM orders WHERE order_time IN ('2025-01-01', TIMESTAMP '2025-02-01 00:00:00', ?)", []any{"2025-03-01"}},
		{"SELECT id FROM orders WHERE (order_time >= '2025-01-01' AND order_time < '2025-01-10') OR (order_time >= '2025-03-01' AND order_time < '2025-03-02') ORDER BY order_time DESC, id LIMIT 3", nil},
	}
	crossing := "SELECT COUNT(*) FROM orders WHERE order_time >= '2024-12-31 23:59:59' AND order_time < '2025-01-02'"

	coldLog := func() int {
		n := 0
		for _, e := range c.cold.GeneralLog(t) {
			if strings.Contains(strings.ToLower(e.Text), "orders_") {
				n++
			}
		}
		return n
	}
	log0 := coldLog()
	sel0 := c.cold.StatusCounter(t, "Com_select")
	for _, q := range hotOnly {
		rows, err := c.db.QueryContext(ctx, q.sql, q.args...)
		if err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
		if _, err := difftest.ScanAll(rows); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	sel1 := c.cold.StatusCounter(t, "Com_select")
	log1 := coldLog()
	if sel1 != sel0 || log1 != log0 {
		t.Errorf("%d hot-only queries: cold Com_select +%d and %d statements on orders_… in its general log, want 0 and 0", len(hotOnly), sel1-sel0, log1-log0)
	}
	// The control: a query crossing the boundary is seen on the cold server. (Reading the
	// general log is a SELECT of its own: count from here.)
	sel1 = c.cold.StatusCounter(t, "Com_select")
	var n int64
	if err := c.db.QueryRowContext(ctx, crossing).Scan(&n); err != nil {
		t.Fatal(err)
	}
	sel2 := c.cold.StatusCounter(t, "Com_select")
	var tagged bool
	for _, e := range c.cold.GeneralLog(t) {
		tagged = tagged || strings.HasPrefix(e.Text, "/* cold_query */") && strings.Contains(e.Text, "orders_202412")
	}
	if sel2-sel1 != 1 || !tagged {
		t.Errorf("crossing query: cold Com_select +%d, /* cold_query */ on orders_202412 in the general log %v; want +1 and true", sel2-sel1, tagged)
	}
	t.Logf("%d hot-only queries: cold Com_select +0 and general log +%d; crossing query: Com_select +%d", len(hotOnly), log1-log0, sel2-sel1)
}

// testRefusals: the refusals reach the application through database/sql as
// errors.Is-able sentinels whose message says how to fix the query, and nothing is sent to a
// backend.
func testRefusals(t *testing.T, c *cluster) {
	l1 := hint.WithLevel(context.Background(), hint.L1)
	cases := []struct {
		name string
		ctx  context.Context
		sql  string
		args []any
		want error
		fix  []string // phrases the message must contain
	}{
		{"L1 across the boundary (context hint)", l1,
			"SELECT id FROM orders WHERE order_time >= '2024-12-15' AND order_time < '2025-01-15'", nil,
			routing.ErrLevelViolation, []string{"declare query_level=L2", "narrow the range to order_time >= '2025-01-01 00:00:00'"}},
		{"L1 across the boundary (comment hint, ? args)", context.Background(),
			"/*+ OBROUTE(query_level=L1) */ SELECT id FROM orders WHERE order_time BETWEEN ? AND ?", []any{"2024-12-31 23:59:59", "2025-01-01 00:00:01"},
			routing.ErrLevelViolation, []string{"declare query_level=L2"}},
		{"L1 entirely cold", l1,
			"SELECT COUNT(*) FROM orders WHERE order_time = ?", []any{time.Date(2024, 8, 1, 0, 0, 0, 0, time.UTC)},
			routing.ErrLevelViolation, []string{"declare query_level=L2"}},
		{"DATE() on the shard key", context.Background(),
			"SELECT id FROM orders WHERE DATE(order_time) = '2025-03-15'", nil,
			routing.ErrShardKeyFunction, []string{"order_time >= '2025-03-15' AND order_time < '2025-03-16'"}},
		{"function in a range", context.Background(),
			"SELECT id FROM orders WHERE YEAR(order_time) = 2025 AND order_time >= ?", []any{boundary},
			routing.ErrShardKeyFunction, []string{"compare the column itself with a range"}},
		{"no time condition", context.Background(),
			"SELECT id FROM orders WHERE user_id = 3", nil,
			routing.ErrNoTimeRange, []string{"add a range such as order_time >= ? AND order_time < ?"}},
		{"no WHERE", context.Background(),
			"SELECT COUNT(*) FROM orders", nil,
			routing.ErrNoTimeRange, []string{"add a range such as order_time >= ? AND order_time < ?"}},
	}
	hot0, cold0 := c.hot.StatusCounter(t, "Com_select"), c.cold.StatusCounter(t, "Com_select")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := c.db.QueryContext(tc.ctx, tc.sql, tc.args...)
			if err == nil {
				rows.Close()
				t.Fatalf("%s ran; want %v", tc.sql, tc.want)
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("error %v\nwant errors.Is %v", err, tc.want)
			}
			for _, f := range tc.fix {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("error %q\ndoes not say %q", err, f)
				}
			}
		})
	}
	// An L1 query inside the hot window is allowed: the refusal is about the range, not L1.
	var n int64
	if err := c.db.QueryRowContext(l1, "SELECT COUNT(*) FROM orders WHERE order_time >= ?", boundary).Scan(&n); err != nil {
		t.Errorf("L1 inside the hot window: %v", err)
	}
	hot1, cold1 := c.hot.StatusCounter(t, "Com_select"), c.cold.StatusCounter(t, "Com_select")
	if hot1-hot0 != 1 || cold1 != cold0 {
		t.Errorf("Com_select hot +%d, cold +%d; want +1 (the allowed L1 query) and +0: refused statements must not reach a backend", hot1-hot0, cold1-cold0)
	}
}

func (c *cluster) times() []time.Time {
	out := make([]time.Time, 0, len(c.orders))
	for _, o := range c.orders {
		out = append(out, o.OrderTime)
	}
	return out
}
