package routing

import (
	"cmp"
	"database/sql/driver"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/metadata"
)

// targetSet is what buildTargets renders sub-queries for.
type targetSet struct {
	args    []driver.NamedValue // the statement's arguments
	clock   *stmtClock          // the statement's one reading of the clock
	tables  []metadata.Table    // the physical tables read or written
	locs    []string            // the backend of each of tables
	to      []string            // where the sub-query of each of tables is sent (shadow traffic: locs' shadow backends)
	open    string              // the table whose span is open above (metadata.OpenAbove), "" if none
	coldAll bool                // every sub-query is sent as cold (query level L3 declared)
	key     ShardKeyType        // the shard key's column type, which the clamps are written in
}

// buildTargets renders the sub-queries of set: one per table for writes, one statement per
// backend (UNION ALL of its tables' legs) for SELECT.
func (t *timeRouter) buildTargets(p *Plan, ts *timeStatement, set targetSet) error {
	args, clock, tables, locs, to, open, coldAll := set.args, set.clock, set.tables, set.locs, set.to, set.open, set.coldAll
	if to == nil {
		to = locs
	}
	l := leg{qual: ts.qualSQL, key: ts.table.ShardKey, keyType: set.key, clock: clock, lits: p.Statement.lits}
	names := make([]string, len(tables))
	for i := range tables {
		names[i] = tables[i].Name
	}
	if len(tables) == 1 || ts.kind != KindSelect {
		p.Targets = make([]Target, len(tables))
		for i := range tables {
			l.table, l.min, l.max, l.open = tables[i].Name, tables[i].Min, tables[i].Max, tables[i].Name == open
			cold := coldAll || t.router.roles[locs[i]] == config.RoleCold
			var b strings.Builder
			b.Grow(ts.whole.estimate(&l) + len(coldPrefix))
			if cold {
				writeString(&b, coldPrefix)
			}
			ts.whole.render(&b, &l)
			p.Targets[i] = Target{Backend: locs[i], SQL: b.String(), Cold: cold, Tables: names[i : i+1 : i+1],
				Args: ts.whole.appendArgs(make([]driver.NamedValue, 0, ts.whole.argCount(&l)), args, &l)}
		}
		return nil
	}
	// SELECT across tables: legs grouped per backend, in order of first appearance.
	mp := ts.merge
	spec := &mp.spec
	// With the column types known, only text columns are weighed (see TypesCache).
	known := mp.types.known()
	sp := &splitTypes{mp: mp, args: args, backend: to[0], cold: coldAll || t.router.roles[locs[0]] == config.RoleCold}
	if known != nil {
		spec, l.skip = &known.spec, known.skip
		sp.skipped = known.skipped
	}
	if mp.limitArg >= 0 || mp.offsetArg >= 0 {
		s := *spec
		var err error
		if s.Limit, err = argRowCount(args, mp.limitArg, s.Limit, "LIMIT"); err != nil {
			return err
		}
		if s.Offset, err = argRowCount(args, mp.offsetArg, s.Offset, "OFFSET"); err != nil {
			return err
		}
		spec = &s
	}
	l.limit = addRows(spec.Offset, spec.Limit)
	if mp.distinctWeighed && (known == nil || slices.ContainsFunc(spec.Weights, func(w int) bool { return w != 0 })) {
		l.limit = math.MaxInt64
	}
	p.Merge = spec
	p.Types, p.split = &mp.types, sp
	if set.clock.zone == nil || !fixedZone(set.clock.zone) {
		p.RepeatedHours = cmp.Or(set.clock.name, "the backends' default")
		if set.clock.zone != nil && set.clock.name == "" {
			p.RepeatedHours = set.clock.zone.String()
		}
		p.KeyColumns = mp.keyCols
	}
	allUnion := true
	sp.l = l
	sp.l.table, sp.l.min, sp.l.max = tables[0].Name, tables[0].Min, tables[0].Max
	nb := 0
	var order [8]int
	first := order[:0]
	for i := range to {
		if !slices.Contains(to[:i], to[i]) {
			first = append(first, i)
			nb++
		}
	}
	p.Targets = make([]Target, nb)
	for ti, fi := range first {
		backend := to[fi]
		// The history channel's tag marks a sub-query of cold tables only: one backend may
		// hold both for shadow traffic.
		cold := true
		n, size := 0, len(coldPrefix)+len(mp.outer)+24
		lo, hi := len(tables), 0
		for i := range to {
			if to[i] == backend {
				cold = cold && t.router.roles[locs[i]] == config.RoleCold
				l.table = tables[i].Name
				size += mp.legT.estimate(&l) + 16
				n++
				lo, hi = min(lo, i), max(hi, i+1)
			}
		}
		cold = cold || coldAll
		var b strings.Builder
		b.Grow(size)
		if cold {
			writeString(&b, coldPrefix)
		}
		argv := make([]driver.NamedValue, 0, n*mp.legT.argCount(nil))
		k := 0
		for i := range to {
			if to[i] != backend {
				continue
			}
			l.table, l.min, l.max, l.open = tables[i].Name, tables[i].Min, tables[i].Max, tables[i].Name == open
			if n > 1 {
				if k > 0 {
					writeString(&b, " union all ")
				}
				writeByte(&b, '(')
			}
			mp.legT.render(&b, &l)
			if n > 1 {
				writeByte(&b, ')')
			}
			argv = mp.legT.appendArgs(argv, args, &l)
			k++
		}
		if n > 1 {
			writeString(&b, mp.outer)
			if mp.pushLimit {
				writeString(&b, " limit ")
				var buf [20]byte
				b.Write(appendInt(buf[:0], l.limit))
			}
		}
		// Tables of one backend are contiguous in Min order in the usual layout; otherwise list them.
		tn := names[lo:hi:hi]
		if hi-lo != n {
			tn = nil
			for i := range to {
				if to[i] == backend {
					tn = append(tn, names[i])
				}
			}
		}
		p.Targets[ti] = Target{Backend: backend, SQL: b.String(), Args: argv, Cold: cold, Tables: tn}
		allUnion = allUnion && n > 1
	}
	sp.unknown = known == nil && (len(mp.weightCols) > 0 || !mp.unionTypesExact && allUnion)
	return nil
}

const coldPrefix = "/* cold_query */ "

// overlapping returns the tables whose span meets iv. A table holds the whole second of its
// max_time (DATETIME, no fraction), as its clamp does: [min_time, max_time + 1s).
func overlapping(snap *metadata.Snapshot, prefix string, iv interval) []metadata.Table {
	if iv.empty() {
		return nil
	}
	var from, to time.Time
	if iv.lo.set {
		// A table whose max_time is the second of from (or after) holds values from on, even
		// for an exclusive bound: from < max_time + 1s.
		from = iv.lo.t.Truncate(time.Second)
	}
	if iv.hi.set {
		to = iv.hi.t
	}
	return snap.Overlapping(prefix, from, to, iv.hi.incl)
}

// own drops from ts the tables of a longer configured logical name (stats_5min_202501 is not a
// table of stats when stats_5min is configured too). It allocates only then.
func (t *timeRouter) own(tt *config.TimeTable, ts []metadata.Table) []metadata.Table {
	longer := t.longer[tt]
	if len(longer) == 0 {
		return ts
	}
	var out []metadata.Table
	for _, tb := range ts {
		name := strings.ToLower(tb.Name)
		if !slices.ContainsFunc(longer, func(p string) bool {
			return len(name) > len(p) && strings.HasPrefix(name, p) && name[len(p)] >= '0' && name[len(p)] <= '9'
		}) {
			out = append(out, tb)
		}
	}
	return out
}

// covers reports whether table tb holds the shard-key value tm: min_time <= tm < max_time + 1s.
func covers(tb *metadata.Table, tm time.Time) bool {
	return !tb.Min.After(tm) && !tb.Max.Before(tm.Truncate(time.Second))
}
