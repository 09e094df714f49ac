package tiering

import (
	"context"
	"fmt"
	"time"

	"github.com/obroute/obroute/metadata"
)

// Marked is what MarkHot did to one table's row.
type Marked struct {
	// Table is the physical table; Hot its is_hot by the window.
	Table string
	Hot   bool
	// Pinned is set when the row had no location and got the backend it lives on, so that
	// the change of is_hot does not move its route (the role rule would send it to the other
	// role's backend, where it is not).
	Pinned string
	// Kept is set when is_hot was left as it was: the row has no location and the metadata
	// table no location column, so the change would have moved its route without its data.
	// Move moves the table and sets is_hot with its route.
	Kept bool
}

// MarkHot is the daily job of the hot window with per-table windows: for every configured
// time table, in one transaction, it sets is_hot = 1 on the rows of its physical tables whose
// max_time is at or after the window's start at now (the wall clock of the shard-key times)
// and 0 on the others, writing only the rows that change. A changing row without a location
// gets the backend it lives on as its location when the metadata table has the column; without
// the column its is_hot is kept (Marked.Kept). is_hot is then a label of the window, and a
// table changes backend only when Move moves it.
func (s *Store) MarkHot(ctx context.Context, now time.Time) ([]Marked, error) {
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("tiering: mark hot: %w", err)
	}
	withLocation, err := s.hasLocation(ctx)
	if err != nil {
		return nil, fmt.Errorf("tiering: mark hot: %w", err)
	}
	var out []Marked
	for i := range s.tables {
		tt := &s.tables[i]
		clock, err := s.clockOf(ctx, tt, snap, now)
		if err != nil {
			return nil, fmt.Errorf("tiering: mark hot: %w", err)
		}
		boundary := metadata.HotWindow(tt.HotWindow).Boundary(clock)
		for _, t := range s.tablesOf(snap, tt) {
			hot := !t.Max.Before(boundary)
			if hot == t.Hot {
				continue
			}
			m := Marked{Table: t.Name, Hot: hot}
			if t.Location == "" && s.hot != s.cold {
				b, err := s.locate(t)
				if err != nil {
					return nil, fmt.Errorf("tiering: mark hot: %w", err)
				}
				m.Pinned, m.Kept = b.Name, !withLocation
			}
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	tx, err := s.meta.DB.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("tiering: mark hot: %w", err)
	}
	defer tx.Rollback()
	meta := quoteQualified(s.metaTable)
	for i, m := range out {
		if m.Kept {
			out[i].Pinned = ""
			continue
		}
		q, args := "UPDATE "+meta+" SET is_hot = ? WHERE table_name = ?", []any{m.Hot, m.Table}
		if m.Pinned != "" {
			q, args = "UPDATE "+meta+" SET is_hot = ?, location = ? WHERE table_name = ? AND location IS NULL", []any{m.Hot, m.Pinned, m.Table}
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return nil, fmt.Errorf("tiering: mark hot %s: %w", m.Table, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("tiering: mark hot: %w", err)
	}
	return out, nil
}
