package metadata

import (
	"context"
	"database/sql"
	"time"
)

// MarkResult is what MarkHot did.
type MarkResult struct {
	// Boundary is the start of the hot window used: w.Boundary(now).
	Boundary time.Time
	// BecameHot and BecameCold count the rows whose is_hot changed.
	BecameHot, BecameCold int
	// Hot and Cold count the rows with is_hot = 1 and 0 afterwards.
	Hot, Cold int
}

// Changed returns the number of rows whose is_hot changed.
func (r MarkResult) Changed() int { return r.BecameHot + r.BecameCold }

// MarkHot is the daily job of the hot window: in one transaction it sets
// is_hot = 1 on the rows of the metadata table (DefaultTable if table is "")
// whose max_time is at or after w.Boundary(now), and is_hot = 0 on the
// others. Only rows that change are written, so updated_at keeps the time of
// the last real change.
//
// max_time is a wall-clock time read as UTC (see Table), and the window counts
// the days and months of now's location: pass now as the wall clock of the
// shard-key times labelled UTC, time.Now().UTC() when they are UTC, so the
// window counts their calendar as the router does (in the backends' DSN loc)
// and not the machine's. Routing follows after the next metadata refresh.
func MarkHot(ctx context.Context, db *sql.DB, table string, w HotWindow, now time.Time) (MarkResult, error) {
	if err := w.Validate(); err != nil {
		return MarkResult{}, err
	}
	quoted, err := quoteTable(table)
	if err != nil {
		return MarkResult{}, err
	}
	res := MarkResult{Boundary: w.Boundary(now)}
	// A string, not a time.Time, so the DSN's loc setting cannot shift it.
	boundary := res.Boundary.UTC().Format("2006-01-02 15:04:05.999999")

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return MarkResult{}, errorf("metadata: mark hot tables in %s: %w", quoted, err)
	}
	defer tx.Rollback() // a no-op after Commit

	// is_hot <> x keeps unchanged rows out, so the counts are changes even
	// with clientFoundRows=true.
	if res.BecameHot, err = execCount(ctx, tx, "UPDATE "+quoted+" SET is_hot = 1 WHERE max_time >= ? AND is_hot <> 1", boundary); err != nil {
		return MarkResult{}, errorf("metadata: mark hot tables in %s: %w", quoted, err)
	}
	if res.BecameCold, err = execCount(ctx, tx, "UPDATE "+quoted+" SET is_hot = 0 WHERE max_time < ? AND is_hot <> 0", boundary); err != nil {
		return MarkResult{}, errorf("metadata: mark cold tables in %s: %w", quoted, err)
	}
	err = tx.QueryRowContext(ctx, "SELECT COALESCE(SUM(is_hot = 1), 0), COALESCE(SUM(is_hot = 0), 0) FROM "+quoted).Scan(&res.Hot, &res.Cold)
	if err != nil {
		return MarkResult{}, errorf("metadata: count hot tables in %s: %w", quoted, err)
	}
	if err := tx.Commit(); err != nil {
		return MarkResult{}, errorf("metadata: commit hot marks in %s: %w", quoted, err)
	}
	return res, nil
}

func execCount(ctx context.Context, tx *sql.Tx, query string, args ...any) (int, error) {
	r, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	n, err := r.RowsAffected()
	return int(n), err
}
