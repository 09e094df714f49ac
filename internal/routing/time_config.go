package routing

import (
	"fmt"
	"strings"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/metadata"
)

// TimeConfig configures hot/cold time routing: which tables are split by time, where their
// shard metadata comes from, and the clock and zone the hot window is computed in.
type TimeConfig struct {
	// Tables are the time-sharded logical tables, as configured. A statement on one without a
	// shard-key range and without a DefaultRange is refused with ErrNoTimeRange; a table's
	// Budgets are copied to Plan.Budget.
	Tables []config.TimeTable
	// Snapshot returns the current shard metadata snapshot; it must not block. Required.
	Snapshot func() *metadata.Snapshot
	// ShadowSnapshot returns the snapshot of the shadow side's shard metadata, which routes
	// shadow traffic (read from the shadow backend of the metadata backend: shadow traffic
	// never reads production's); nil when there is none, and shadow traffic on a time-sharded
	// table is then refused.
	ShadowSnapshot func() *metadata.Snapshot
	// Clock returns the current time; nil means time.Now. Tests inject a fixed clock. The hot
	// window is evaluated against it at every statement.
	Clock func() time.Time
	// Location is the time zone in which the backends store shard-key times: go-sql-driver
	// sends a time.Time argument as its wall clock in the DSN's loc (UTC unless loc= says
	// otherwise), so routing reads time.Time arguments in Location too. nil means UTC. Literals
	// and string or []byte arguments are wall clock already and are read as written. The
	// shard metadata's min_time and max_time are wall clock of the same zone, and so are the
	// hot-window boundary and the default range: both are computed from the clock's instant
	// seen in Location, whatever the clock's own time zone.
	Location *time.Location
	// TimeZone is the time_zone of a server session that has not set one, as the server names
	// it ("+08:00", "SYSTEM", "Asia/Shanghai"): the backends' default. NOW(), CURDATE() and the
	// like are read in it unless the client session set its own (SessionState.TimeZone). ""
	// means unknown: they are then read as any wall clock within 14 hours of UTC. The
	// connector reads it back from the metadata backend when it starts.
	TimeZone string
	// SystemTimeZone is the zone "SYSTEM" stands for on the backends; nil means unknown.
	SystemTimeZone *time.Location
	// LoadZone returns the location of a named time zone ("Asia/Shanghai"), as
	// time.LoadLocation does; nil leaves named zones unknown. Routing calls it once per name.
	LoadZone func(name string) (*time.Location, error)
}

// budgetOf returns the time budget of level l in b; zero means no budget.
func budgetOf(b config.Budgets, l hint.Level) time.Duration {
	switch l {
	case hint.L1:
		return b.L1
	case hint.L2:
		return b.L2
	case hint.L3:
		return b.L3
	}
	return 0
}

// Validate checks the configuration and says what to fix.
func (c *TimeConfig) Validate() error {
	if c.Snapshot == nil {
		return errorf("%w: Snapshot is nil; give a function returning the shard metadata snapshot (the connector's metadata cache)", ErrTimeConfig)
	}
	seen := map[string]bool{}
	for i, t := range c.Tables {
		where := fmt.Sprintf("time table %d (%q)", i+1, t.Table)
		switch {
		case !plainIdentifier(t.Table):
			return errorf("%w: %s: table must be a plain identifier (letters, digits, _)", ErrTimeConfig, where)
		case !plainIdentifier(t.ShardKey):
			return errorf("%w: %s: shard_key %q must be a plain column name, e.g. order_time", ErrTimeConfig, where, t.ShardKey)
		case seen[strings.ToLower(t.Table)]:
			return errorf("%w: %s is configured twice; keep one entry", ErrTimeConfig, where)
		case t.DefaultRange > 0 && t.AllowFullScan:
			return errorf("%w: %s: default_range and allow_full_scan both say what a statement without a range reads; keep one", ErrTimeConfig, where)
		case t.DefaultRange < 0:
			return errorf("%w: %s: default_range %s is negative; use 0 to refuse statements without a range", ErrTimeConfig, where, t.DefaultRange)
		case t.Budgets.L1 < 0 || t.Budgets.L2 < 0 || t.Budgets.L3 < 0:
			return errorf("%w: %s: a level budget is negative; use 0 for no budget", ErrTimeConfig, where)
		}
		if err := metadata.HotWindow(t.HotWindow).Validate(); err != nil {
			return errorf("%w: %s: hot_window: %w", ErrTimeConfig, where, err)
		}
		seen[strings.ToLower(t.Table)] = true
	}
	return nil
}

func plainIdentifier(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '$') {
			return false
		}
	}
	return true
}
