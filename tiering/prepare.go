package tiering

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/metadata"
)

// maxPrepared bounds the tables one Prepare creates per logical table: more means the newest
// table is far behind the clock, which a person should look at.
const maxPrepared = 100

// Prepared is one table Prepare created.
type Prepared struct {
	// Logical is the configured time table.
	Logical string
	// Table is the new table as recorded in the shard metadata.
	Table metadata.Table
	// Backend is where it was created.
	Backend string
	// Widened names the previous newest table when its max_time was raised to meet the new
	// table (closing a gap), "" otherwise; WidenedFrom is its max_time before.
	Widened     string
	WidenedFrom time.Time
}

// Prepare creates, for every configured time table (or only logical, when not ""), the
// physical tables of the coming periods and their shard metadata rows, so that a table
// covers the period after the one holding now (the wall clock of the shard-key times) before
// it starts. Periods are read from the newest table's name (orders_202611 is a month,
// orders_20261130 a day, orders_2026 a year); each new table is created on the first backend
// of role hot with CREATE TABLE … LIKE the newest table (or its SHOW CREATE TABLE when that
// one is elsewhere), empty, spanning its whole period, hot, its location set. When the newest
// table's max_time ends before the new period, it is raised to meet it, so no time is left
// uncovered; rows of the newest table at or after the new period's start would be hidden
// once the new table exists, so Prepare refuses to go on then.
//
// Prepare is idempotent: the physical table is created first (IF NOT EXISTS), then its
// metadata row, so routing never names a table that does not exist, and a second run finds
// the periods covered and does nothing.
func (s *Store) Prepare(ctx context.Context, now time.Time, logical string) ([]Prepared, error) {
	tables := s.tables
	if logical != "" {
		i := s.tableIndex(logical)
		if i < 0 {
			return nil, fmt.Errorf("tiering: prepare: %s is not a configured time table", logical)
		}
		tables = s.tables[i : i+1]
	}
	hot := s.Backend(s.hot)
	if hot == nil {
		return nil, fmt.Errorf("tiering: prepare: no backend has role hot: new tables are created on the first backend of role hot")
	}
	withLocation, err := s.hasLocation(ctx)
	if err != nil {
		return nil, fmt.Errorf("tiering: prepare: %w", err)
	}
	var out []Prepared
	for i := range tables {
		done, err := s.prepareTable(ctx, &tables[i], hot, withLocation, now)
		out = append(out, done...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// prepareTable creates the coming tables of one logical table, holding its DDL lock: a table
// created LIKE the newest one while DDL on the logical table runs through obroute would miss
// the DDL, or be missed by it.
func (s *Store) prepareTable(ctx context.Context, tt *config.TimeTable, hot *Backend, withLocation bool, now time.Time) ([]Prepared, error) {
	release, err := s.lockDDL(ctx, tt.Table)
	if err != nil {
		return nil, fmt.Errorf("tiering: prepare %s: %w", tt.Table, err)
	}
	defer release()
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("tiering: prepare %s: %w", tt.Table, err)
	}
	tables := s.tablesOf(snap, tt)
	if len(tables) == 0 {
		return nil, fmt.Errorf("tiering: prepare %s: the shard metadata lists no table of %s; create the first one and its metadata row by hand (prepare copies the newest one)", tt.Table, tt.Table)
	}
	open := metadata.OpenAbove(tables)
	if open < 0 {
		return nil, fmt.Errorf("tiering: prepare %s: no table ends last alone (the latest spans overlap); run obroute metadata verify and fix the spans", tt.Table)
	}
	newest := tables[open]
	p, err := parsePeriod(tt.Table, newest.Name)
	if err != nil {
		return nil, fmt.Errorf("tiering: prepare %s: %w", tt.Table, err)
	}
	prefix := newest.Name[:len(tt.Table)]
	clock, err := s.clockOf(ctx, tt, snap, now)
	if err != nil {
		return nil, fmt.Errorf("tiering: prepare %s: %w", tt.Table, err)
	}
	want := p.at(clock).next() // the period after now's
	src, err := s.locate(newest)
	if err != nil {
		return nil, fmt.Errorf("tiering: prepare %s: %w", tt.Table, err)
	}
	var out []Prepared
	for end(newest).Before(want.end()) {
		if len(out) == maxPrepared {
			return out, fmt.Errorf("tiering: prepare %s: created %d tables and %s still does not cover %s; the newest table is far behind the clock: check -now, or create the tables by hand",
				tt.Table, maxPrepared, newest.Name, formatTime(want.start))
		}
		np := p.next()
		if !newest.Max.Before(np.start) {
			return out, fmt.Errorf("tiering: prepare %s: %s's max_time %s reaches into the next period (%s); lower it to %s or create the next table by hand",
				tt.Table, newest.Name, formatTime(newest.Max), np.name(prefix), formatTime(np.start.Add(-time.Second)))
		}
		if err := s.checkNoRowsFrom(ctx, src, newest, tt.ShardKey, np.start); err != nil {
			return out, err
		}
		next := metadata.Table{Name: np.name(prefix), Min: np.start, Max: np.end().Add(-time.Second), Hot: true, Location: hot.Name}
		if err := createLike(ctx, src, newest.Name, hot, next.Name, false); err != nil {
			return out, fmt.Errorf("tiering: prepare %s: %w", tt.Table, err)
		}
		done := Prepared{Logical: tt.Table, Table: next, Backend: hot.Name}
		if gapEnd := np.start.Add(-time.Second); newest.Max.Before(gapEnd) {
			done.Widened, done.WidenedFrom = newest.Name, newest.Max
		}
		if err := s.recordPrepared(ctx, done, withLocation); err != nil {
			return out, err
		}
		if !withLocation {
			done.Table.Location = ""
		}
		out = append(out, done)
		newest, p, src = next, np, hot
	}
	return out, nil
}

// checkNoRowsFrom refuses when table holds rows at or after from: they would be hidden once
// a table starting at from exists.
func (s *Store) checkNoRowsFrom(ctx context.Context, b *Backend, t metadata.Table, key string, from time.Time) error {
	var last sql.NullString
	err := b.DB.QueryRowContext(ctx, fmt.Sprintf("SELECT MAX(%s) FROM %s", quoteIdent(key), quoteIdent(t.Name))).Scan(&last)
	if err != nil {
		return fmt.Errorf("tiering: prepare: read the latest %s of %s on %s: %w", key, t.Name, b.Name, err)
	}
	if !last.Valid {
		return nil
	}
	lt, err := parseTime(last.String)
	if err != nil {
		return fmt.Errorf("tiering: prepare: the latest %s of %s on %s: %w", key, t.Name, b.Name, err)
	}
	if !lt.Before(from) {
		return fmt.Errorf("tiering: prepare: %s on %s holds rows from %s on (up to %s), which belong to the next period; a table starting there would hide them: move them into a new table by hand",
			t.Name, b.Name, formatTime(from), formatTime(lt))
	}
	return nil
}

// recordPrepared writes the metadata row of a new table, and raises the previous newest
// table's max_time when it was widened, in one transaction.
func (s *Store) recordPrepared(ctx context.Context, p Prepared, withLocation bool) error {
	tx, err := s.meta.DB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("tiering: prepare: %w", err)
	}
	defer tx.Rollback()
	meta := quoteQualified(s.metaTable)
	if p.Widened != "" {
		_, err := tx.ExecContext(ctx, "UPDATE "+meta+" SET max_time = ? WHERE table_name = ? AND max_time = ?",
			formatTime(p.Table.Min.Add(-time.Second)), p.Widened, formatTime(p.WidenedFrom))
		if err != nil {
			return fmt.Errorf("tiering: prepare: raise max_time of %s: %w", p.Widened, err)
		}
	}
	cols, vals := "table_name, min_time, max_time, is_hot", "?, ?, ?, 1"
	args := []any{p.Table.Name, formatTime(p.Table.Min), formatTime(p.Table.Max)}
	if withLocation {
		cols, vals, args = cols+", location", vals+", ?", append(args, p.Table.Location)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO "+meta+" ("+cols+") VALUES ("+vals+")", args...); err != nil {
		return fmt.Errorf("tiering: prepare: add %s to %s: %w", p.Table.Name, s.metaTable, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("tiering: prepare: %w", err)
	}
	return nil
}
