package tiering

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/metadata"
)

// The clock of MarkHot, Prepare and Move is given as the wall clock of the backends' loc
// (the first backend's DSN), labelled UTC: the calendar of a DATETIME or DATE key's metadata.
// A TIMESTAMP key's metadata are UTC instants, and routing counts its hot window on UTC's
// calendar: its periods and window are counted there too, from the instant the wall clock
// stands for (clockOf).

// clockOf returns now as the wall clock of tt's shard-key times: now itself, or for a
// TIMESTAMP key (declared, or read from information_schema.COLUMNS of its newest table) the
// UTC instant now's wall clock in s.loc stands for.
func (s *Store) clockOf(ctx context.Context, tt *config.TimeTable, snap *metadata.Snapshot, now time.Time) (time.Time, error) {
	if s.loc == nil || s.loc == time.UTC {
		return now, nil
	}
	typ := strings.ToLower(tt.ShardKeyType)
	if typ == "" {
		tables := s.tablesOf(snap, tt)
		if len(tables) == 0 {
			return now, nil
		}
		newest := tables[len(tables)-1]
		b, err := s.locate(newest)
		if err != nil {
			return now, err
		}
		if err := b.DB.QueryRowContext(ctx, "SELECT LOWER(DATA_TYPE) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?",
			newest.Name, tt.ShardKey).Scan(&typ); err != nil {
			return now, fmt.Errorf("reading the type of %s.%s on %s: %w", newest.Name, tt.ShardKey, b.Name, err)
		}
	}
	if typ != "timestamp" {
		return now, nil
	}
	y, m, d := now.Date()
	return time.Date(y, m, d, now.Hour(), now.Minute(), now.Second(), now.Nanosecond(), s.loc).UTC(), nil
}
