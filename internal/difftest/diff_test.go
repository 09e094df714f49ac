package difftest_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/internal/difftest"
)

// result is what one query returned: column names, database type names and rows.
type result struct {
	cols, types []string
	rows        [][]any
}

func query(ctx context.Context, db *sql.DB, q string, args ...any) (result, error) {
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
		r.types = append(r.types, ct.DatabaseTypeName())
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
	want, err := query(ctx, c.refDB, q.SQL, q.Args...)
	if err != nil {
		return []mismatch{{"query", fmt.Errorf("reference: %w", err)}}
	}
	got, err := query(ctx, c.db, q.SQL, q.Args...)
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
	if q.FoldCase {
		fold(want.rows)
		fold(got.rows)
	}
	if err := difftest.Compare(want.rows, got.rows, q.Ordered); err != nil {
		out = append(out, mismatch{"rows", err})
	}
	return out
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

	// Issue 4 DW1: row queries with random time ranges across and along the boundary.
	t.Run("rows", func(t *testing.T) {
		rows := cfg
		rows.Mix = "rows"
		runDiff(t, c, difftest.NewGenerator(seed+1, rows), 500)
	})
	// Issue 5 DW1: ORDER BY, LIMIT/OFFSET, aggregates, GROUP BY, HAVING, DISTINCT.
	t.Run("merge", func(t *testing.T) {
		runDiff(t, c, difftest.NewGenerator(seed+2, cfg), 1000)
	})
}

func (c *cluster) times() []time.Time {
	out := make([]time.Time, 0, len(c.orders))
	for _, o := range c.orders {
		out = append(out, o.OrderTime)
	}
	return out
}
