package routing

import (
	"database/sql/driver"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/metadata"
)

// timeRouter routes statements on time-sharded tables by the shard metadata's spans and the
// hot window.
type timeRouter struct {
	cfg    *TimeConfig
	router *Router
	tables map[string]*config.TimeTable // lower-case logical name → config
	// longer lists, per logical table L, the other configured logical tables named L_<digit>…
	// (lower case, with the trailing '_'): their physical tables are also named L_<digit>…
	// but are not L's.
	longer map[*config.TimeTable][]string
	// hot, cold are the first backends of role hot and cold: where tables without a location live.
	hot, cold string
	zones     zoneCache // the session time zones met
	// defaultZone replaces TimeConfig.TimeZone and SystemTimeZone once the connector has read
	// them back from a backend (SetDefaultTimeZone); nil until then.
	defaultZone atomic.Pointer[defaultZone]
	// facts are the backends' servers and the shard-key columns, as read back by the
	// connector (SetBackendServer, SetShardKeyColumns).
	facts factsHolder
	keys  keysHolder // the shard-key type of each logical table, by snapshot and facts
	// shadow routes shadow traffic: the same tables, by the shadow side's shard metadata and
	// what the connector read back of the shadow backends (see time_side.go); nil without a
	// ShadowSnapshot.
	shadow *timeRouter
}

// timeStatement is the time-sharding analysis of one statement text: computed once, cached with
// the Statement, never modified.
type timeStatement struct {
	table  *config.TimeTable
	kind   Kind
	prefix string // logical table name as configured: the metadata prefix
	key    string // shard key, lower case
	qual   string // alias of the sharded table, "" when it has none
	// derived: the sharded table is read inside a derived table or WITH of a SELECT, which
	// carries the clamp and the range.
	derived bool
	// oneTable refuses a SELECT reading the sharded table several times (a subquery on it, a
	// self-join) whose range does not lie in one table's span; nil for other statements.
	oneTable error
	// qualSQL is qual printed as an identifier for the clamp (quoted when it needs to be).
	qualSQL string
	rng     *rangeNode
	conj    bool     // rng is conjunctive: evaluated without allocating
	clocked bool     // the statement calls a clock function (NOW(), CURDATE(), …)
	whole   template // the statement itself, table and clamp marked
	merge   *mergePlan
	// mergeErr is why the statement cannot be split; it is reported only when it must be.
	mergeErr error
	insert   *insertPlan
	// splitErr refuses a write that would need more than one table (UPDATE … LIMIT, …).
	splitErr error
	// returning: the statement has a RETURNING clause; its rows come from one statement only.
	returning bool
	// keyOrder, keyGroup: a split SELECT's merge orders (ORDER BY, MIN, MAX) or groups (GROUP
	// BY, DISTINCT) values of the shard key, which a TIMESTAMP key's zone may make ambiguous.
	keyOrder, keyGroup bool
	// unionKey is, for a UNION, its column that is the shard key in every SELECT ("" if none).
	unionKey string
}

// insertPlan routes the rows of an INSERT.
type insertPlan struct {
	rows   []template // each row printed alone, with its arguments
	keys   []*texpr   // each row's shard-key value
	keyCol int
	// upsert names the duplicate-resolving form (REPLACE, ON DUPLICATE KEY UPDATE, IGNORE),
	// "" for a plain INSERT: its tables' unique keys must hold the shard key (time_upsert.go).
	upsert string
	// dupKeepsKey: the ON DUPLICATE KEY UPDATE assigns key = VALUES(key), which keeps an ON
	// UPDATE CURRENT_TIMESTAMP key from taking the server's clock (time_onupdate.go).
	dupKeepsKey bool
}

func newTimeRouter(cfg *TimeConfig, r *Router) (*timeRouter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &timeRouter{cfg: cfg, router: r, tables: map[string]*config.TimeTable{}}
	for i := range cfg.Tables {
		t.tables[strings.ToLower(cfg.Tables[i].Table)] = &cfg.Tables[i]
	}
	for i := range cfg.Tables {
		for j := range cfg.Tables {
			l, m := strings.ToLower(cfg.Tables[i].Table), strings.ToLower(cfg.Tables[j].Table)
			if len(m) > len(l)+1 && strings.HasPrefix(m, l+"_") && m[len(l)+1] >= '0' && m[len(l)+1] <= '9' {
				if t.longer == nil {
					t.longer = map[*config.TimeTable][]string{}
				}
				t.longer[&cfg.Tables[i]] = append(t.longer[&cfg.Tables[i]], m+"_")
			}
		}
	}
	for _, b := range r.cfg.Settings.Backends {
		if b.Role == config.RoleHot && t.hot == "" {
			t.hot = b.Name
		}
		if b.Role == config.RoleCold && t.cold == "" {
			t.cold = b.Name
		}
	}
	if cfg.ShadowSnapshot != nil {
		sc := *cfg // the same tables (the same *config.TimeTable), the shadow side's snapshot
		sc.Snapshot, sc.ShadowSnapshot = cfg.ShadowSnapshot, nil
		var err error
		if t.shadow, err = newTimeRouter(&sc, r); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// now returns the clock's reading.
func (t *timeRouter) now() time.Time {
	if t.cfg.Clock != nil {
		return t.cfg.Clock()
	}
	return time.Now()
}

// wall returns tm's wall clock in Location, labelled UTC: what go-sql-driver sends for a
// time.Time argument on a connection whose loc is Location.
func (t *timeRouter) wall(tm time.Time) time.Time {
	if t.cfg.Location == nil || t.cfg.Location == time.UTC {
		return tm.UTC()
	}
	return wallUTC(tm.In(t.cfg.Location))
}

// rangeArgs returns the arguments as the range is evaluated: time.Time values as wall clock
// in Location. The arguments sent to the backends stay as given (the driver converts them).
// It allocates only when a time.Time argument must be moved to another zone.
func (t *timeRouter) rangeArgs(args []driver.NamedValue) []driver.NamedValue {
	if t.cfg.Location == nil || t.cfg.Location == time.UTC {
		return args // argTime reads time.Time in UTC
	}
	var out []driver.NamedValue
	for i, a := range args {
		if tm, ok := a.Value.(time.Time); ok {
			if out == nil {
				out = slices.Clone(args)
			}
			out[i].Value = t.wall(tm)
		}
	}
	if out == nil {
		return args
	}
	return out
}

// location returns the backend of a physical table.
func (t *timeRouter) location(tb *metadata.Table) (string, error) {
	if tb.Location != "" {
		if !t.router.isBackend(tb.Location) {
			return "", errorf("%w %q as the location of table %s in the shard metadata: fix the metadata row or configure the backend (one of %s)", ErrUnknownBackend, tb.Location, tb.Name, t.router.backendNames())
		}
		return tb.Location, nil
	}
	b, role := t.hot, config.RoleHot
	if !tb.Hot {
		b, role = t.cold, config.RoleCold
	}
	if b == "" {
		return "", errorf("%w: table %s has no location in the shard metadata and no backend has role %s; set its location or configure a backend with role %s", ErrUnknownBackend, tb.Name, role, role)
	}
	return b, nil
}

// route fills p for a statement on a time-sharded table.
func (t *timeRouter) route(p *Plan, st *Statement, hints hint.Set, in Input) error {
	ts := st.time
	p.factsGen = t.facts.gen.Load() + 1 // before the facts are read: a change meanwhile outdates the plan
	if err := t.modeRefusal(st, in.Session); err != nil {
		return err
	}
	snap := t.cfg.Snapshot()
	if snap == nil {
		return errorf("%w: no shard metadata snapshot is loaded yet; load the metadata before routing %s", ErrNoShardTable, ts.table.Table)
	}
	all := t.own(ts.table, snap.Logical(ts.prefix))
	if len(all) == 0 {
		return errorf("%w: the shard metadata lists no table named %s_<digits>… (such as %s_202501); add the physical tables of %s to shard_metadata", ErrNoShardTable, ts.prefix, ts.prefix, ts.table.Table)
	}
	key := t.keyOf(ts.table, snap)
	if key.err != nil {
		return key.err
	}
	// One reading of the clock for the whole statement: the hot window, the clock functions
	// folded in the range and the instant sent to every sub-query. As wall clock of the
	// shard-key times, the window counts their calendar: UTC's for a TIMESTAMP, whose
	// metadata are UTC instants.
	instant := t.now()
	now := t.wall(instant)
	at := instant
	if ts.clocked {
		var ok bool
		if at, ok = sessionClock(instant, in.Session); !ok {
			return errorf("%w: the statement on %s reads the clock (NOW(), CURDATE(), …), and the session set timestamp to a value obroute does not read; SET timestamp to a number of seconds, or to DEFAULT", ErrUnreadable, ts.table.Table)
		}
	}
	clock := t.clockFor(at, in.Session)
	stamp := key.typ == ShardKeyTimestamp
	if stamp {
		if err := timestampClock(ts, &clock); err != nil {
			return err
		}
		now = instant.UTC()
	}
	boundary := metadata.HotWindow(ts.table.HotWindow).Boundary(now)
	show := shownTimes{}
	if stamp {
		show = shownTimes{zone: clock.zone, name: clock.name}
	}
	p.Type = UsePartitionLocationLookup
	ec := evalCtx{args: t.rangeArgs(in.Args), key: ts.key, clock: &clock}
	if in.Explain {
		ec.notes = &foldNotes{}
	}
	if ts.insert != nil {
		return t.routeInsert(p, st, hints, in, readings{all: all, boundary: boundary, ec: &ec, key: key.typ})
	}
	// The shard-key range.
	var (
		span   interval
		set    rangeSet
		tables []metadata.Table
		err    error
	)
	if ts.conj {
		span = everything
		if err := ts.rng.evalConj(&span, &ec); err != nil {
			return err
		}
	} else {
		var s rangeSet
		if s, _, err = ts.rng.eval(&ec); err != nil {
			return err
		}
		set, span = s, s.span()
	}
	if stamp { // wall clocks of the session's zone → the instants the metadata speaks of
		if set, span, err = stampRange(ts, clock.zone, set, span); err != nil {
			return err
		}
	}
	defaulted, fullScan := false, false
	if span.unbounded() && ts.oneTable != nil {
		return ts.oneTable // some use reads every time: no default range makes it one table's
	}
	if span.unbounded() && ts.table.AllowFullScan {
		fullScan = true // every table: the unbounded range reaches the history store and the hot window
	} else if span.unbounded() {
		// default_range narrows reads only: a write narrowed to it would leave the rows outside
		// it unchanged, silently.
		if ts.table.DefaultRange <= 0 || ts.kind != KindSelect {
			why := ts.rng.whyUnbounded()
			if u := unreadRange(ts.rng, &ec); u != "" {
				why = "a value compared with " + ts.table.ShardKey + " cannot be read exactly: " + u
			}
			switch {
			case why != "":
			case ts.rng.op == rAll:
				why = "it has no condition on " + ts.table.ShardKey
			default:
				why = "its conditions on " + ts.table.ShardKey + " together allow every time (an OR branch or a NOT leaves it open)"
			}
			where := ""
			if ts.derived {
				where = " inside the derived table or WITH that reads " + ts.table.Table + " (the range is read there: put the condition on " + ts.table.ShardKey + " there)"
			}
			if ts.kind != KindSelect {
				return errorf("%w: the %s on %s would change every table because %s; add a range such as %s >= ? AND %s < ? (default_range never applies to a write: rows outside it would silently stay unchanged), one statement per range to change them all",
					ErrNoTimeRange, ts.kind, ts.table.Table, why, ts.table.ShardKey, ts.table.ShardKey)
			}
			return errorf("%w: the statement on %s reads every table because %s; add a range such as %s >= ? AND %s < ?%s, or configure default_range",
				ErrNoTimeRange, ts.table.Table, why, ts.table.ShardKey, ts.table.ShardKey, where)
		}
		span = interval{lo: bound{t: now.Add(-ts.table.DefaultRange), set: true, incl: true}}
		set, defaulted = nil, true
	}
	if set == nil {
		tables = t.own(ts.table, overlapping(snap, ts.prefix, span))
	} else {
		for _, iv := range set {
			for _, tb := range t.own(ts.table, overlapping(snap, ts.prefix, iv)) {
				if !slices.ContainsFunc(tables, func(x metadata.Table) bool { return x.Name == tb.Name }) {
					tables = append(tables, tb)
				}
			}
		}
	}
	open := metadata.OpenAbove(all)
	if open >= 0 && reachesPast(span, all[open].Max) && !slices.ContainsFunc(tables, func(x metadata.Table) bool { return x.Name == all[open].Name }) {
		tables = append(tables, all[open]) // the latest Min: Min order is kept
	}
	emptyRange := len(tables) == 0
	if emptyRange {
		// Nothing can match: the newest table is asked, for the columns only. Its clamp and the
		// statement's own condition select nothing, and neither is a constant the server could
		// fold, so the server plans the statement (and types its columns) as one server holding
		// every row would; rows outside the table's span stay hidden, as in every other route.
		tables = all[len(all)-1:]
	}
	// Where each table lives, and what the range reaches.
	var backends [8]string
	locs := backends[:0]
	hotTarget, coldTarget, allHot := false, false, true
	for i := range tables {
		b, err := t.location(&tables[i])
		if err != nil {
			return err
		}
		locs = append(locs, b)
		if t.router.roles[b] == config.RoleCold {
			coldTarget = true
		} else {
			hotTarget = true
		}
		allHot = allHot && tables[i].Hot
	}
	// What the range reaches is decided by the range, not by the tables that happen to exist: a
	// range before the hot window reaches the history store even where no table holds it. Only a
	// range with no values at all reaches nothing.
	reachesBelow := !span.empty() && (!span.lo.set || span.lo.t.Before(boundary))
	reachesHot := !span.empty() && (!span.hi.set || span.hi.t.After(boundary) || span.hi.t.Equal(boundary) && span.hi.incl)
	// With no table in the range, the one statement sent (a false clamp) reads no table.
	readsCold, readsHot := coldTarget && !emptyRange, hotTarget && !emptyRange
	level := hints.Level
	switch level {
	case hint.L1:
		if reachesBelow || readsCold {
			return errorf("%w: declared L1 (hot only) but the range %s reaches before the hot window boundary %s (window: %s); narrow the range to %s >= %s or declare query_level=L2",
				ErrLevelViolation, show.interval(span), show.bare(boundary), metadata.HotWindow(ts.table.HotWindow), ts.table.ShardKey, show.time(boundary))
		}
	case hint.L3:
		if reachesHot {
			return errorf("%w: declared L3 (history only) but the range %s reaches the hot window starting %s; end the range before %s or declare query_level=L2",
				ErrLevelViolation, show.interval(span), show.bare(boundary), show.time(boundary))
		}
	case hint.LevelNone:
		switch {
		case !reachesBelow && !readsCold:
			level = hint.L1
		case !reachesHot && !readsHot:
			level = hint.L3
		default:
			level = hint.L2
		}
	}
	p.Level = level
	p.Budget = budgetOf(ts.table.Budgets, level)
	switch {
	case coldTarget && hotTarget:
		p.Class = ClassSplit
	case coldTarget:
		p.Class = ClassColdOnly
	default:
		p.Class = ClassHotOnly
	}
	coldAll := hints.Level == hint.L3
	if (coldTarget || coldAll || fullScan) && ts.table.RequireColdQuery && !hints.ColdQuery {
		return errorf("%w: the statement on %s reads the history store (range %s) and the configuration requires the cold_query hint for that; add /*+ OBROUTE(cold_query=true) */ or narrow the range to the hot window (from %s)",
			ErrColdQueryRequired, ts.table.Table, show.interval(span), show.time(boundary))
	}
	if ts.kind != KindSelect {
		if coldTarget && !ts.table.AllowColdWrites {
			return errorf("%w: the %s on %s would change tables of the history store; narrow the range to the hot window (from %s) or set allow_cold_writes", ErrColdWrite, ts.kind, ts.table.Table, show.time(boundary))
		}
		if err := checkOneBackend(ts, locs, tables); err != nil {
			return err
		}
		if len(tables) > 1 && ts.splitErr != nil {
			return ts.splitErr
		}
	}
	if ts.oneTable != nil && (len(tables) != 1 || emptyRange || !withinTable(span, &tables[0], open >= 0 && tables[0].Name == all[open].Name)) {
		return ts.oneTable
	}
	if len(tables) > 1 && ts.kind == KindSelect && ts.mergeErr != nil {
		return ts.mergeErr
	}
	openName := ""
	if open >= 0 {
		openName = all[open].Name
	}
	switch key.typ {
	case ShardKeyUnknown:
		if err := anyTypeExact(ts.table, clock.zone, tables, openName); err != nil {
			return err
		}
	case ShardKeyTimestamp:
		if err := t.stampTables(ts, in.Session, &clock, stampSplit{span: span, tables: tables, locs: locs, open: openName}); err != nil {
			return err
		}
	}
	if ts.kind == KindUpdate && !emptyRange {
		if err := t.onUpdateExact(ts, "UPDATE", tables, openName, key.typ, &clock); err != nil {
			return err
		}
	}
	if err := t.buildTargets(p, ts, targetSet{args: in.Args, clock: &clock, tables: tables, locs: locs, to: t.sentTo(p, locs), open: openName, coldAll: coldAll, key: key.typ}); err != nil {
		return err
	}
	if in.Explain {
		t.explain(p, ts, routeSummary{span: span, boundary: boundary, locs: locs, empty: emptyRange, defaulted: defaulted, fullScan: fullScan, hotOnly: allHot && !coldTarget, instants: stamp})
		explainFolding(p, ts, &ec)
	}
	return nil
}

// checkOneBackend refuses a write that would change tables on two backends.
//
//go:noinline
func checkOneBackend(ts *timeStatement, locs []string, tables []metadata.Table) error {
	for i := range locs {
		if locs[i] != locs[0] {
			return errorf("%w: the %s on %s would change %s on %s and %s on %s, with no transaction across them; split it into one statement per backend (by %s range)",
				ErrCrossBackendWrite, ts.kind, ts.table.Table, tables[0].Name, locs[0], tables[i].Name, locs[i], ts.table.ShardKey)
		}
	}
	return nil
}
