package routing

import (
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/obroute/obroute/metadata"
)

// A shard-key value with a fraction of a second finer than its column keeps (DATETIME(n),
// TIMESTAMP(n)) is stored truncated or rounded to the column's precision: MariaDB truncates
// unless the session's sql_mode has TIME_ROUND_FRACTIONAL, MySQL rounds unless it has
// TIME_TRUNCATE_FRACTIONAL. An INSERT row goes to the table that holds the value as stored, so
// routing needs the column's precision (per physical table) and the rule of the server session
// (per backend, and the client session's sql_mode). Where either is unknown, a row whose value
// could become one of another table is refused.

// Flavor is the kind of server a backend runs, as far as its rule for fractions goes.
type Flavor int

const (
	// FlavorUnknown: a server whose rule for fractions obroute does not know.
	FlavorUnknown Flavor = iota
	// FlavorMariaDB: truncates a fraction unless sql_mode has TIME_ROUND_FRACTIONAL.
	FlavorMariaDB
	// FlavorMySQL: rounds a fraction unless sql_mode has TIME_TRUNCATE_FRACTIONAL.
	FlavorMySQL
)

// ServerFlavor tells the flavour of a server from its @@version and @@version_comment:
// MariaDB names itself in its version, MySQL and Percona Server in the comment; any other
// server is FlavorUnknown.
func ServerFlavor(version, comment string) Flavor {
	switch {
	case strings.Contains(strings.ToLower(version), "mariadb"):
		return FlavorMariaDB
	case strings.Contains(comment, "MySQL"), strings.Contains(comment, "Percona"):
		if major, _, _ := strings.Cut(version, "."); major == "5" { // before 5.7 no rule can be told
			if !strings.HasPrefix(version, "5.7.") {
				return FlavorUnknown
			}
		}
		return FlavorMySQL
	}
	return FlavorUnknown
}

// SessionSQLMode is the sql_mode a client session set.
type SessionSQLMode struct {
	// Set reports that the client session set sql_mode; otherwise each backend's default holds.
	Set bool
	// Known reports that Value is the value set (SessionVar.Literal of its last SET sql_mode,
	// read back when it was an expression); a value obroute could not read is not Known.
	Known bool
	// Value is the comma-separated list of modes, when Known.
	Value string
}

// fractionRule is what a server session does with a fraction finer than a column keeps.
type fractionRule int

const (
	fractionUnknown fractionRule = iota
	fractionTruncate
	fractionRound
)

// ruleOf returns the rule of a server of flavour f in sql_mode mode.
func ruleOf(f Flavor, mode string) fractionRule {
	has := func(name string) bool {
		for _, m := range strings.Split(mode, ",") {
			if strings.EqualFold(strings.TrimSpace(m), name) {
				return true
			}
		}
		return false
	}
	switch f {
	case FlavorMariaDB:
		if has("TIME_ROUND_FRACTIONAL") {
			return fractionRound
		}
		return fractionTruncate
	case FlavorMySQL:
		if has("TIME_TRUNCATE_FRACTIONAL") {
			return fractionTruncate
		}
		return fractionRound
	}
	return fractionUnknown
}

// storeFacts are what the connector read back of the backends and the shard tables' columns;
// never modified once published.
type storeFacts struct {
	servers map[string]serverFacts    // backend → its server
	keys    map[string]ShardKeyColumn // physical table, lower case → its shard-key column
	unique  map[string]string         // physical table, lower case → a unique key without the shard key, "" for none
}

type serverFacts struct {
	flavor Flavor
	mode   string // the sql_mode a server session starts with
	// zone is the time_zone a server session starts with there (the global one, or the
	// DSN's time_zone parameter), as the server names it; "" when it was not read.
	zone string
	// modal is set when mode reads some statement text otherwise than the parser (time_mode.go).
	modal bool
}

// factsHolder publishes storeFacts: readers load them without a lock. gen counts the changes
// of what the connector read back (the facts and the default time zone): a plan made before one
// is routed again (Router.Outdated).
type factsHolder struct {
	mu  sync.Mutex // serializes writers
	p   atomic.Pointer[storeFacts]
	gen atomic.Uint64
}

func (h *factsHolder) update(f func(*storeFacts)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	next := &storeFacts{servers: map[string]serverFacts{}, keys: map[string]ShardKeyColumn{}, unique: map[string]string{}}
	cur := h.p.Load()
	if cur != nil {
		maps.Copy(next.servers, cur.servers)
		maps.Copy(next.keys, cur.keys)
		maps.Copy(next.unique, cur.unique)
	}
	f(next)
	if cur != nil && maps.Equal(next.servers, cur.servers) && maps.Equal(next.keys, cur.keys) && maps.Equal(next.unique, cur.unique) {
		return // read again as they were: plans made with them stand
	}
	h.p.Store(next)
	h.gen.Add(1)
}

// Outdated reports whether p, a plan on a time-sharded table, was made before what the connector
// reads back of the backends changed since (a server that restarted with another sql_mode, …):
// route the statement again before sending it. It is false for any other plan.
func (r *Router) Outdated(p *Plan) bool {
	if p.factsGen == 0 || r.time == nil {
		return false
	}
	t := r.time.forPlan(p)
	return t == nil || p.factsGen != t.facts.gen.Load()+1
}

// BackendStart returns what SetBackendServer recorded of backend's server: its flavour, and the
// sql_mode and time_zone a server session there starts with; ok is false when nothing was read.
func (r TimeFacts) BackendStart(backend string) (flavor Flavor, sqlMode, timeZone string, ok bool) {
	if r.time == nil {
		return 0, "", "", false
	}
	f := r.time.facts.p.Load()
	if f == nil {
		return 0, "", "", false
	}
	s, ok := f.servers[backend]
	return s.flavor, s.mode, s.zone, ok
}

// SetBackendServer records the flavour of backend's server, and the sql_mode and time_zone a
// server session there starts with (the global ones, or the DSN's sql_mode and time_zone
// parameters), as read back from it ("" for a time zone not read). Without time tables it does
// nothing.
func (r TimeFacts) SetBackendServer(backend string, flavor Flavor, sqlMode, timeZone string) {
	if r.time != nil {
		r.time.facts.update(func(f *storeFacts) {
			f.servers[backend] = serverFacts{flavor: flavor, mode: sqlMode, zone: timeZone, modal: modeReadsAny(sqlMode)}
		})
	}
}

// ForgetBackendServer forgets what SetBackendServer recorded of backend, whose server changed
// (a restart, a service's new primary): until it is given again, INSERTs whose routing needs the
// sql_mode server sessions start with there are refused. Without time tables it does nothing.
func (r TimeFacts) ForgetBackendServer(backend string) {
	if r.time != nil {
		r.time.facts.update(func(f *storeFacts) { delete(f.servers, backend) })
	}
}

// SetShardKeyColumns records the shard-key columns of physical tables (table name → its
// column), as read from the backend that holds each. A table never given is unknown. Without
// time tables it does nothing.
func (r TimeFacts) SetShardKeyColumns(cols map[string]ShardKeyColumn) {
	if r.time != nil && len(cols) > 0 {
		r.time.facts.update(func(f *storeFacts) {
			for t, c := range cols {
				f.keys[strings.ToLower(t)] = c
			}
		})
	}
}

// storedRange returns the values the shard-key value range [lo, hi] is stored as in table tb:
// exact when the column's precision and the server session's rule are known, else widened to
// every value a truncation or a rounding could give (exact false).
// fitsUnit reports whether x is a whole number of unit.
//
// Not inlined: copied into each of its many call sites it would grow every
// binary that imports the driver (see driver/import_test.go).
//
//go:noinline
func fitsUnit(x time.Time, unit time.Duration) bool { return x.Equal(x.Truncate(unit)) }

func (t *timeRouter) storedRange(tb *metadata.Table, sess *SessionState, lo, hi time.Time) (slo, shi time.Time, exact bool) {
	if fitsUnit(lo, time.Second) && fitsUnit(hi, time.Second) {
		return lo, hi, true
	}
	if f := t.facts.p.Load(); f != nil && fitsUnit(lo, time.Microsecond) && fitsUnit(hi, time.Microsecond) {
		if k, ok := f.keys[strings.ToLower(tb.Name)]; ok && k.Type != ShardKeyDate {
			unit := precisionUnit(k.Digits)
			if fitsUnit(lo, unit) && fitsUnit(hi, unit) {
				return lo, hi, true
			}
			backend, _ := t.location(tb) // a bad location is refused if the row goes there
			if s, ok := f.servers[backend]; ok {
				mode := s.mode
				if sess != nil && sess.SQLMode.Set {
					mode = sess.SQLMode.Value
					if !sess.SQLMode.Known {
						s.flavor = FlavorUnknown
					}
				}
				switch ruleOf(s.flavor, mode) {
				case fractionTruncate:
					return lo.Truncate(unit), hi.Truncate(unit), true
				case fractionRound:
					return lo.Round(unit), hi.Round(unit), true
				}
			}
		}
	}
	last := hi.Truncate(time.Second)
	if !last.Equal(hi) {
		last = last.Add(time.Second)
	}
	return lo, last, false
}

// storeKey is how a statement's shard-key values are stored: the column's type, the session's
// time zone (a TIMESTAMP's wall clocks are read in it) and its sql_mode.
type storeKey struct {
	typ  ShardKeyType
	zone *time.Location
	sess *SessionState
}

// utcNote names, after a wall clock of a TIMESTAMP key in the session's zone, the zone and
// the UTC instant at it stands for: " (time zone +09:00: '2026-10-31 20:00:00' UTC)"; nothing
// for other types.
func (k storeKey) utcNote(at time.Time) string {
	if k.typ == ShardKeyTimestamp && k.zone != nil {
		return " (time zone " + k.zone.String() + ": '" + formatTime(at) + "' UTC)"
	}
	return ""
}

// wall is the instant at of a TIMESTAMP key as the session's wall clock, which messages give
// (with utcNote); other types' times as they are.
func (k storeKey) wall(at time.Time) time.Time {
	if k.typ == ShardKeyTimestamp && k.zone != nil {
		return wallUTC(at.In(k.zone))
	}
	return at
}

// stored returns the values the shard-key value v is stored as in table tb, as the metadata
// speaks of them (storedRange): a DATE keeps the day, a TIMESTAMP the instant of the stored
// wall clock in the session's zone (the earlier one in a repeated hour, as MariaDB stores it).
// A wall clock the zone skips is an error.
func (t *timeRouter) stored(tb *metadata.Table, k storeKey, v tval) (lo, hi time.Time, exact bool, err error) {
	if k.typ == ShardKeyDate {
		return dateOf(v.lo), dateOf(v.hi), true, nil
	}
	lo, hi, exact = t.storedRange(tb, k.sess, v.lo, v.hi)
	if k.typ != ShardKeyTimestamp {
		return lo, hi, exact, nil
	}
	var n int
	for _, w := range [2]*time.Time{&lo, &hi} {
		wall := *w
		if *w, _, n = wallInstants(wall, k.zone); n == 0 {
			return lo, hi, exact, errorf("a time that does not exist in time zone %s: '%s' is in the hour its clocks skip (to %s UTC), which MariaDB refuses in a strict sql_mode and moves otherwise; write a time outside it, or SET time_zone to an offset",
				k.zone, formatTime(wall), formatTime(*w))
		}
	}
	return lo, hi, exact, nil
}

// storedAs is a shard-key value v and the range [lo, hi] one table stores it as.
type storedAs struct {
	v      tval
	lo, hi time.Time
}

// sameStored checks that the value s.v, which table all[owner] stores as s's range, is stored
// alike by every other table that could hold it: when the tables' shard-key columns differ in
// precision (or one's is unknown), where the row belongs would depend on the table chosen.
func (t *timeRouter) sameStored(all []metadata.Table, owner int, k storeKey, s storedAs) error {
	v, lo, hi := s.v, s.lo, s.hi
	if v.lo.Equal(v.lo.Truncate(time.Second)) && v.hi.Equal(v.hi.Truncate(time.Second)) {
		return nil // whole seconds are stored as written everywhere
	}
	for j := range all {
		if j == owner {
			continue
		}
		jlo, jhi, exact, err := t.stored(&all[j], k, v)
		if err != nil {
			return err
		}
		if (covers(&all[j], jlo) || covers(&all[j], jhi)) && (!exact || !jlo.Equal(lo) || !jhi.Equal(hi)) {
			if !exact {
				return errorf("%s would store the value as '%s', and %s, whose shard-key column obroute has not read (is the table missing on its backend?), may store it between '%s' and '%s'; write the time with whole seconds, or create the table and refresh the metadata",
					all[owner].Name, formatTime(lo), all[j].Name, formatTime(jlo), formatTime(jhi))
			}
			return errorf("%s would store the value as '%s' and %s as '%s' (their shard-key columns differ in precision), so where it belongs depends on the table; write the time at the precision of both, or give the tables one precision",
				all[owner].Name, formatTime(lo), all[j].Name, formatTime(jlo))
		}
	}
	return nil
}

// KeyColumn is the shard-key column of one physical table and the backend that holds it.
type KeyColumn struct {
	Backend, Table, Column string
}

// UnknownKeyColumns lists the shard-key columns of snap's physical tables never given
// (SetShardKeyColumns), for the connector to read; tables without a valid location are left
// out (statements on them are refused anyway).
func (r TimeFacts) UnknownKeyColumns(snap *metadata.Snapshot) []KeyColumn {
	return r.keyColumns(snap, "")
}

// KeyColumnsOn lists the shard-key columns of snap's physical tables that live on backend, read
// or not (the connector reads them again when the backend's server changed).
func (r TimeFacts) KeyColumnsOn(snap *metadata.Snapshot, backend string) []KeyColumn {
	return r.keyColumns(snap, backend)
}

// keyColumns lists the shard-key columns of snap's physical tables on backend, or, for backend
// "", those whose precision is unknown.
func (r TimeFacts) keyColumns(snap *metadata.Snapshot, backend string) []KeyColumn {
	if r.time == nil || snap == nil {
		return nil
	}
	f := r.time.facts.p.Load()
	var out []KeyColumn
	for i := range r.time.cfg.Tables {
		tt := &r.time.cfg.Tables[i]
		for _, tb := range r.time.own(tt, snap.Logical(tt.Table)) {
			if f != nil && backend == "" {
				if _, ok := f.keys[strings.ToLower(tb.Name)]; ok {
					continue
				}
			}
			if b, err := r.time.location(&tb); err == nil && (backend == "" || b == backend) {
				out = append(out, KeyColumn{Backend: b, Table: tb.Name, Column: tt.ShardKey})
			}
		}
	}
	return out
}
