package bench

import (
	"context"
	"database/sql"
	"testing"

	"github.com/obroute/obroute/sqltest"
)

// fixture loads the measures' tables into two throwaway databases of the shared server and
// opens the handles over them.
func fixture(tb testing.TB) *Fixture {
	tb.Helper()
	bs := sqltest.Shared(tb, "hot", "cold")
	if err := Load(context.Background(), bs[0].DB, bs[1].DB); err != nil {
		tb.Fatal(err)
	}
	f, err := Open(bs[0].DSN, bs[1].DSN)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(f.Close)
	return f
}

// allocsPer is the heap allocations of one stmt on db, averaged over 200 runs after a warm-up
// (connections open, caches filled). Allocations do not depend on timing: the count is the
// same from run to run.
func allocsPer(t *testing.T, db *sql.DB, stmt func(context.Context, *sql.DB, int) error) float64 {
	t.Helper()
	ctx := context.Background()
	i := 0
	run := func() {
		if err := stmt(ctx, db, i); err != nil {
			t.Fatal(err)
		}
		i++
	}
	for range 20 {
		run()
	}
	return testing.AllocsPerRun(200, run)
}

// The allocation budgets of obroute over go-sql-driver, statement by statement, against the
// shared MariaDB: a plain DSN (one backend, no rule) passes statements through with at most one
// allocation more than go-sql-driver, and runs a prepared statement with at most one more; a
// routed configuration's statement whose analysis is in the parse cache costs at most three more.
func TestAllocationBudgets(t *testing.T) {
	f := fixture(t)
	for _, c := range []struct {
		name   string
		db     *sql.DB
		stmt   func(context.Context, *sql.DB, int) error
		budget float64
	}{
		{"plain DSN, ? argument", f.Plain, PointSelect, 1},
		{"plain DSN, literal text never repeated", f.Plain, LiteralSelect, 1},
		{"routed, ? argument, parse-cache hit", f.Routed, PointSelect, 3},
		{"routed, literal text never repeated (normalized parse-cache hit)", f.Routed, LiteralSelect, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			within(t, allocsPer(t, f.Raw["hot"], c.stmt), allocsPer(t, c.db, c.stmt), c.budget)
		})
	}
	t.Run("plain DSN, prepared statement", func(t *testing.T) {
		within(t, allocsPer(t, f.Raw["hot"], prepared(t, f.Raw["hot"])), allocsPer(t, f.Plain, prepared(t, f.Plain)), 1)
	})
}

// within fails t when obroute's allocations per statement exceed go-sql-driver's by more than
// budget.
func within(t *testing.T, base, got, budget float64) {
	t.Helper()
	t.Logf("go-sql-driver %.0f allocations per statement, obroute %.0f", base, got)
	if got-base > budget {
		t.Errorf("obroute allocates %.0f times per statement, go-sql-driver %.0f: %+.0f, budget %+.0f", got, base, got-base, budget)
	}
}

// prepared prepares the point SELECT on db and returns a statement running it.
func prepared(t *testing.T, db *sql.DB) func(context.Context, *sql.DB, int) error {
	st, err := db.Prepare(PointSQL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return func(ctx context.Context, _ *sql.DB, i int) error {
		var id int
		var note string
		return st.QueryRowContext(ctx, i%items).Scan(&id, &note)
	}
}
