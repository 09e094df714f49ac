package bench

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"
)

// BenchmarkSplit runs the split query of the report (SplitSQL) through obroute, and its
// sub-queries at once through go-sql-driver with their rows read and not merged: the difference
// is obroute's own cost of a split (routing, fan-out, merge).
func BenchmarkSplit(b *testing.B) {
	f := fixture(b)
	ctx := context.Background()
	// Run first: the column types it reads decide the sub-queries' text.
	if _, err := Drain(ctx, f.Routed, SplitSQL, SplitFrom); err != nil {
		b.Fatal(err)
	}
	plan, err := f.Connector.Explain(ctx, SplitSQL, SplitFrom)
	if err != nil {
		b.Fatal(err)
	}
	if plan.Class != "split" || len(plan.Targets) < 2 {
		b.Fatalf("the split query routes %s to %v, want a split", plan.Class, plan.Backends)
	}
	b.Run("obroute", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if n, err := Drain(ctx, f.Routed, SplitSQL, SplitFrom); err != nil || n != 50 {
				b.Fatalf("the split query returned %d rows (%v), want 50", n, err)
			}
		}
	})
	b.Run("parts-together", func(b *testing.B) {
		b.ReportAllocs()
		type part struct {
			db   *sql.DB
			sql  string
			args []any
		}
		var parts []part
		for _, t := range plan.Targets {
			p := part{db: f.Raw[t.Backend], sql: t.SQL, args: t.Args}
			parts = append(parts, p)
		}
		for i := 0; i < b.N; i++ {
			errs := make([]error, len(parts))
			var wg sync.WaitGroup
			for k, p := range parts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[k] = Drain(ctx, p.db, p.sql, p.args...)
				}()
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				b.Fatal(err)
			}
		}
	})
}
