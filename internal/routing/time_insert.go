package routing

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/metadata"
)

// readings are what route reads once for a statement on a time-sharded table, before it
// decides: the logical table's physical tables, the hot window's boundary at the statement's
// clock, and the context its shard-key values are evaluated in.
type readings struct {
	all      []metadata.Table
	boundary time.Time
	ec       *evalCtx
	key      ShardKeyType // the shard key's column type
}

// routeInsert routes each row of an INSERT to the table that covers its shard-key value.
func (t *timeRouter) routeInsert(p *Plan, st *Statement, hints hint.Set, in Input, r0 readings) error {
	ts, ip := st.time, st.time.insert
	all, boundary, ec := r0.all, r0.boundary, r0.ec
	owner := make([]int, len(ip.keys)) // row → index in all
	for r, x := range ip.keys {
		v, err := x.eval(ec)
		if err != nil {
			return err
		}
		switch {
		case v.null:
			return errorf("%w: row %d of the INSERT into %s has a NULL %s; every row needs a time to find its table", ErrNoTimeRange, r+1, ts.table.Table, ts.table.ShardKey)
		case v.unknown:
			return errorf("%w: row %d of the INSERT into %s gives %s a value obroute cannot read (%s); give a 'YYYY-MM-DD hh:mm:ss' literal, a time.Time argument or NOW()",
				ErrNoTimeRange, r+1, ts.table.Table, ts.table.ShardKey, unreadNote(x, ec))
		}
		// The row goes to the newest table that holds its value as stored: a fraction finer
		// than the column keeps is truncated or rounded (storedRange), and the table must hold
		// every value the row may become.
		owner[r] = -1
		var lo, last time.Time
		exact := false
		sk := storeKey{typ: r0.key, zone: ec.clock.zone, sess: in.Session}
		for i := len(all) - 1; i >= 0; i-- {
			var err error
			if lo, last, exact, err = t.stored(&all[i], sk, v); err != nil {
				return errorf("%w: row %d of the INSERT into %s gives %s %w", ErrTimeZone, r+1, ts.table.Table, ts.table.ShardKey, err)
			}
			if r0.key == ShardKeyTimestamp && (outsideTimestamp(lo) || outsideTimestamp(last)) {
				return errorf("%w: row %d of the INSERT into %s gives the TIMESTAMP %s '%s', which is %s UTC in the session's time zone %s: outside the TIMESTAMP range (%s to %s there, 1970-01-01 00:00:01 to 2038-01-19 03:14:07 UTC), which MariaDB refuses in a strict sql_mode and stores as '0000-00-00 00:00:00' otherwise, in no table's span; write a time within the range, or make the column a DATETIME",
					ErrNoTimeRange, r+1, ts.table.Table, ts.table.ShardKey, formatTime(v.lo), formatTime(lo), ec.clock.zone, formatTime(wallUTC(timestampMin.In(ec.clock.zone))), formatTime(wallUTC(timestampMax.In(ec.clock.zone))))
			}
			if covers(&all[i], lo) {
				owner[r] = i
				break
			}
		}
		if owner[r] >= 0 && exact {
			if err := t.sameStored(all, owner[r], sk, storedAs{v: v, lo: lo, hi: last}); err != nil {
				return errorf("%w: row %d of the INSERT into %s: %w", ErrNoTimeRange, r+1, ts.table.Table, err)
			}
		}
		written := v.lo
		if r0.key == ShardKeyTimestamp {
			written, _, _ = wallInstants(v.lo, ec.clock.zone)
		}
		if owner[r] < 0 { // no table holds the value as stored: name the one that holds it as written
			for i := len(all) - 1; i >= 0 && owner[r] < 0; i-- {
				if covers(&all[i], written) {
					owner[r] = i
					lo, last, exact, _ = t.stored(&all[i], sk, v)
				}
			}
		}
		if owner[r] < 0 {
			return errorf("%w: no table of %s covers %s = '%s'%s (row %d); create the tables of coming periods ahead with `obroute metadata prepare` (daily, beside mark-hot), or add or widen a table in shard_metadata", ErrNoShardTable, ts.table.Table, ts.table.ShardKey, formatTime(v.lo), sk.utcNote(written), r+1)
		}
		if o := &all[owner[r]]; !covers(o, lo) || !covers(o, last) {
			if exact && v.lo.Equal(v.hi) {
				return errorf("%w: row %d of the INSERT into %s gives %s a value that %s stores as '%s'%s (by its column's precision and the session's sql_mode), which it does not hold; write the time at the column's precision",
					ErrNoTimeRange, r+1, ts.table.Table, ts.table.ShardKey, o.Name, formatTime(sk.wall(lo)), sk.utcNote(lo))
			}
			if exact {
				return errorf("%w: row %d of the INSERT into %s gives %s a value between '%s' and '%s' (a fraction of more than six digits, which MariaDB cuts and MySQL rounds, or a clock in an unknown session time zone), which %s does not hold whole; write at most six digits, or SET time_zone first",
					ErrNoTimeRange, r+1, ts.table.Table, ts.table.ShardKey, formatTime(lo), formatTime(last), o.Name)
			}
			return errorf("%w: row %d of the INSERT into %s gives %s a value between '%s' and '%s' (a fraction of a second the server may truncate or round, by the column's precision and the session's sql_mode, which obroute does not know here; or a clock in an unknown session time zone), which %s does not hold whole; write the time with whole seconds, or SET sql_mode to a literal and time_zone first",
				ErrNoTimeRange, r+1, ts.table.Table, ts.table.ShardKey, formatTime(v.lo), formatTime(last), o.Name)
		}
		if in.Explain && (!lo.Equal(v.lo) || !last.Equal(v.hi)) {
			p.Prompts = append(p.Prompts, fmt.Sprintf("row %d: %s '%s' is stored as '%s'%s (by the column's type and precision, the session's sql_mode and time zone), which %s holds",
				r+1, ts.table.ShardKey, formatTime(v.lo), formatTime(sk.wall(lo)), sk.utcNote(lo), all[owner[r]].Name))
		}
	}
	var tables []metadata.Table
	var rowsOf [][]template
	for r, o := range owner {
		j := slices.IndexFunc(tables, func(x metadata.Table) bool { return x.Name == all[o].Name })
		if j < 0 {
			tables = append(tables, all[o])
			rowsOf = append(rowsOf, nil)
			j = len(tables) - 1
		}
		rowsOf[j] = append(rowsOf[j], ip.rows[r])
	}
	locs := make([]string, len(tables))
	coldTarget, hotTarget := false, false
	for i := range tables {
		b, err := t.location(&tables[i])
		if err != nil {
			return err
		}
		locs[i] = b
		if t.router.roles[b] == config.RoleCold {
			coldTarget = true
		} else {
			hotTarget = true
		}
	}
	switch r0.key {
	case ShardKeyUnknown:
		if err := anyTypeExact(ts.table, ec.clock.zone, tables, ""); err != nil {
			return err
		}
	case ShardKeyTimestamp:
		if err := t.stampTables(ts, in.Session, ec.clock, stampSplit{tables: tables, locs: locs}); err != nil {
			return err
		}
	}
	if coldTarget && !ts.table.AllowColdWrites {
		show := shownTimes{}
		if r0.key == ShardKeyTimestamp {
			show = shownTimes{zone: ec.clock.zone, name: ec.clock.name}
		}
		return errorf("%w: the INSERT into %s has rows for the history store; insert only rows of the hot window (from %s) or set allow_cold_writes", ErrColdWrite, ts.table.Table, show.time(boundary))
	}
	if err := checkOneBackend(ts, locs, tables); err != nil {
		return err
	}
	if ip.upsert != "" {
		if err := t.checkUpsert(ts, tables, locs); err != nil {
			return err
		}
	}
	if ip.upsert == upsertOnDup && !ip.dupKeepsKey {
		if err := t.onUpdateExact(ts, ip.upsert, tables, "", r0.key, ec.clock); err != nil {
			return err
		}
	}
	if hints.Level == hint.L1 && coldTarget {
		return errorf("%w: declared L1 (hot only) but the INSERT writes to the history store; declare query_level=L2", ErrLevelViolation)
	}
	p.Class = ClassHotOnly
	p.Level = hints.Level
	if !hotTarget {
		p.Class = ClassColdOnly
	}
	p.Budget = budgetOf(ts.table.Budgets, p.Level)
	p.Targets = make([]Target, len(tables))
	for i := range tables {
		l := leg{table: tables[i].Name, rows: rowsOf[i], clock: ec.clock, lits: st.lits}
		cold := t.router.roles[locs[i]] == config.RoleCold
		var b strings.Builder
		if cold {
			b.WriteString(coldPrefix)
		}
		ts.whole.render(&b, &l)
		p.Targets[i] = Target{Backend: locs[i], SQL: b.String(), Cold: cold, Tables: []string{tables[i].Name},
			Args: ts.whole.appendArgs(nil, in.Args, &l)}
	}
	p.Prompts = append(p.Prompts, fmt.Sprintf("INSERT of %d row(s) into %s: routed by %s to %d table(s)", len(ip.keys), ts.table.Table, ts.table.ShardKey, len(tables)))
	if in.Explain {
		explainFolding(p, ts, ec)
	}
	if !coldTarget {
		p.Prompts = append(p.Prompts, "did not touch the history store")
	}
	return nil
}

// timestampMin and timestampMax are the first and last instants a TIMESTAMP holds (to the
// microsecond).
var (
	timestampMin = time.Date(1970, 1, 1, 0, 0, 1, 0, time.UTC)
	timestampMax = time.Date(2038, 1, 19, 3, 14, 7, 999999000, time.UTC)
)

// outsideTimestamp reports whether the instant at is outside the TIMESTAMP range.
func outsideTimestamp(at time.Time) bool { return at.Before(timestampMin) || at.After(timestampMax) }
