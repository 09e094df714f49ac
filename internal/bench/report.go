package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Options sizes a report.
type Options struct {
	// Rounds is the number of alternating rounds (at least 10 for a figure worth reading).
	Rounds int
	// Scale multiplies the statements of each side in each round (1 for a full run; CI's short
	// mode uses less: it checks that everything runs, its figures mean nothing).
	Scale float64
	// Progress, when set, is told each measure as it starts.
	Progress io.Writer
	// Only, when set, runs only the measures whose name contains it (profiling one of them).
	Only string
}

func (o Options) runs(name string) bool { return o.Only == "" || strings.Contains(name, o.Only) }

// PointSQL is the point SELECT by primary key of the measures.
const PointSQL = "SELECT id, note FROM items WHERE id = ?"

// SplitSQL is the split measure's query, with SplitFrom as its argument: a range across the hot
// window's boundary, read from two tables on cold and three on hot, grouped and merged.
const SplitSQL = "SELECT user_id, COUNT(*) AS n, SUM(amount) AS total FROM orders WHERE order_time >= ? GROUP BY user_id ORDER BY user_id"

// SplitFrom is SplitSQL's argument.
const SplitFrom = "2024-12-01 00:00:00"

// PointSelect runs the point SELECT of row i%1000 on db and checks its answer.
func PointSelect(ctx context.Context, db *sql.DB, i int) error {
	var id int
	var note string
	if err := db.QueryRowContext(ctx, PointSQL, i%items).Scan(&id, &note); err != nil {
		return err
	}
	if id != i%items {
		return fmt.Errorf("bench: point SELECT of id %d read id %d", i%items, id)
	}
	return nil
}

// literalSeq makes every literal point SELECT's text new.
var literalSeq atomic.Int64

// LiteralSelect runs the point SELECT of row i%1000 with its values written in the text, a text
// never sent before, on db.
func LiteralSelect(ctx context.Context, db *sql.DB, i int) error {
	b := make([]byte, 0, 80)
	b = append(b, "SELECT id, note FROM items WHERE id = "...)
	b = strconv.AppendInt(b, int64(i%items), 10)
	b = append(b, " AND id < "...)
	b = strconv.AppendInt(b, items+literalSeq.Add(1), 10)
	var id int
	var note string
	if err := db.QueryRowContext(ctx, string(b)).Scan(&id, &note); err != nil {
		return err
	}
	if id != i%items {
		return fmt.Errorf("bench: point SELECT of id %d read id %d", i%items, id)
	}
	return nil
}

// Drain runs query on db and reads every row; it returns the number of rows.
func Drain(ctx context.Context, db *sql.DB, query string, args ...any) (int, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	dest := make([]any, len(cols))
	for i := range dest {
		dest[i] = new(sql.RawBytes)
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

// Report runs every measure of f in alternating rounds and writes the table (Markdown) to w.
func Report(ctx context.Context, f *Fixture, o Options, w io.Writer) error {
	if o.Rounds < 1 {
		o.Rounds = 11
	}
	if o.Scale <= 0 {
		o.Scale = 1
	}
	size := func(n int) int { return max(int(float64(n)*o.Scale), 5) }
	raw := f.Raw["hot"]
	serial := func(db *sql.DB, stmt func(context.Context, *sql.DB, int) error) func(context.Context, int) error {
		return Serial(func(ctx context.Context, i int) error { return stmt(ctx, db, i) })
	}
	parallel := func(db *sql.DB) func(context.Context, int) error {
		return Parallel(64, func(ctx context.Context, i int) error { return PointSelect(ctx, db, i) })
	}
	t := &table{w: w, rounds: o.Rounds}
	t.header()
	perStatement := []struct {
		name        string
		extraAllocs float64
		db          *sql.DB
		stmt        func(context.Context, *sql.DB, int) error
	}{
		{"point SELECT, `?` argument, plain DSN (passthrough)", 1, f.Plain, PointSelect},
		{"point SELECT, literal text never repeated, plain DSN (passthrough)", 1, f.Plain, LiteralSelect},
		{"point SELECT, `?` argument, routed configuration (parse-cache hit)", 3, f.Routed, PointSelect},
		{"point SELECT, literal text never repeated, routed configuration", 3, f.Routed, LiteralSelect},
	}
	for _, m := range perStatement {
		if !o.runs(m.name) {
			continue
		}
		progress(o, m.name)
		s, err := Alternate(ctx, o.Rounds, size(2000), Side{"go-sql-driver", serial(raw, m.stmt)}, Side{"obroute", serial(m.db, m.stmt)})
		if err != nil {
			return fmt.Errorf("bench: %s: %w", m.name, err)
		}
		t.perStatement(m.name, m.extraAllocs, s[0], s[1])
	}
	for _, m := range []struct {
		name string
		db   *sql.DB
	}{{"64 goroutines, point SELECT, plain DSN", f.Plain}, {"64 goroutines, point SELECT, routed configuration", f.Routed}} {
		if !o.runs(m.name) {
			continue
		}
		progress(o, m.name)
		f.DropIdle()
		s, err := Alternate(ctx, o.Rounds, size(8000), Side{"go-sql-driver", parallel(raw)}, Side{"obroute", parallel(m.db)})
		if err != nil {
			return fmt.Errorf("bench: %s: %w", m.name, err)
		}
		t.throughput(m.name, s[0], s[1])
	}
	if !o.runs("split") {
		return nil
	}
	progress(o, "split")
	f.DropIdle()
	return split(ctx, f, o, size(60), t)
}

// split compares the split query through obroute with each of its sub-queries alone on its
// backend through go-sql-driver; the baseline of a round is its slower sub-query.
func split(ctx context.Context, f *Fixture, o Options, n int, t *table) error {
	// Run first: the column types it reads decide the sub-queries' text (a weight column only
	// where the type needs one), and the parts below must be the sub-queries obroute runs.
	if rows, err := Drain(ctx, f.Routed, SplitSQL, SplitFrom); err != nil || rows != 50 {
		return fmt.Errorf("bench: the split query returned %d rows (%v), want 50 (one per user)", rows, err)
	}
	plan, err := f.Connector.Explain(ctx, SplitSQL, SplitFrom)
	if err != nil {
		return err
	}
	if plan.Class != "split" || len(plan.Targets) < 2 {
		return fmt.Errorf("bench: the split query routes %s to %v, want a split", plan.Class, plan.Backends)
	}
	var sides []Side
	for i, tg := range plan.Targets {
		args := tg.Args
		db := f.Raw[tg.Backend]
		sides = append(sides, Side{fmt.Sprintf("part %d (%s)", i+1, tg.Backend), Serial(func(ctx context.Context, _ int) error {
			_, err := Drain(ctx, db, tg.SQL, args...)
			return err
		})})
	}
	parts := len(sides)
	// All the sub-queries at once through go-sql-driver, rows read and not merged: what the
	// server and the network take for the split, without obroute.
	together := sides[:parts:parts]
	sides = append(sides, Side{"parts together", Serial(func(ctx context.Context, _ int) error {
		errs := make([]error, parts)
		var wg sync.WaitGroup
		for i := range together {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = together[i].Run(ctx, 1)
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
	})})
	sides = append(sides, Side{"obroute", Serial(func(ctx context.Context, _ int) error {
		_, err := Drain(ctx, f.Routed, SplitSQL, SplitFrom)
		return err
	})})
	s, err := Alternate(ctx, o.Rounds, n, sides...)
	if err != nil {
		return fmt.Errorf("bench: split: %w", err)
	}
	slowest := make([]Sample, o.Rounds)
	for r := range slowest {
		for _, part := range s[:parts] {
			if part[r].Ns > slowest[r].Ns {
				slowest[r] = part[r]
			}
		}
	}
	name := fmt.Sprintf("query split hot + cold (%d sub-queries)", parts)
	t.split(name+" vs its slower part alone", slowest, s[parts+1], "≤ 1.1×", 1.1)
	t.split(name+" vs all its parts at once through go-sql-driver, unmerged", s[parts], s[parts+1], "—", 0)
	return nil
}

func progress(o Options, name string) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "measuring: %s (%d rounds, GOMAXPROCS %d)\n", name, o.Rounds, runtime.GOMAXPROCS(0))
	}
}
