package routing

import (
	"database/sql/driver"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/metadata"
)

// TimeConfig configures hot/cold time routing: which tables are split by time, where their
// shard metadata comes from, and the clock and zone the hot window is computed in.
type TimeConfig struct {
	// Tables are the time-sharded logical tables.
	Tables []TimeTable `yaml:"tables"`
	// Snapshot returns the current shard metadata snapshot; it must not block. Required.
	Snapshot func() *metadata.Snapshot `yaml:"-"`
	// Clock returns the current time; nil means time.Now. Tests inject a fixed clock. The hot
	// window is evaluated against it at every statement.
	Clock func() time.Time `yaml:"-"`
	// Location is the time zone in which the backends store shard-key times: go-sql-driver
	// sends a time.Time argument as its wall clock in the DSN's loc (UTC unless loc= says
	// otherwise), so routing reads time.Time arguments in Location too. nil means UTC. Literals
	// and string or []byte arguments are wall clock already and are read as written. The
	// shard metadata's min_time and max_time are wall clock of the same zone, and so are the
	// hot-window boundary and the default range: both are computed from the clock's instant
	// seen in Location, whatever the clock's own time zone.
	Location *time.Location `yaml:"-"`
	// TimeZone is the time_zone of a server session that has not set one, as the server names
	// it ("+08:00", "SYSTEM", "Asia/Shanghai"): the backends' default. NOW(), CURDATE() and the
	// like are read in it unless the client session set its own (SessionState.TimeZone). ""
	// means unknown: they are then read as any wall clock within 14 hours of UTC. The
	// connector reads it back from the metadata backend when it starts.
	TimeZone string `yaml:"-"`
	// SystemTimeZone is the zone "SYSTEM" stands for on the backends; nil means unknown.
	SystemTimeZone *time.Location `yaml:"-"`
	// LoadZone returns the location of a named time zone ("Asia/Shanghai"), as
	// time.LoadLocation does; nil leaves named zones unknown. Routing calls it once per name.
	LoadZone func(name string) (*time.Location, error) `yaml:"-"`
}

// TimeTable configures one time-sharded logical table. Its physical tables are the metadata
// rows named Table_ followed by a suffix that starts with a digit (orders → orders_202501,
// orders_2025_02, …; never orders_items_202501).
type TimeTable struct {
	// Table is the logical table name the application queries, e.g. "orders".
	Table string `yaml:"table"`
	// ShardKey is the DATETIME (or DATE) column the table is split by, e.g. "order_time".
	ShardKey string `yaml:"shard_key"`
	// Window is the hot window: rows at or after its boundary are hot.
	Window metadata.HotWindow `yaml:"hot_window"`
	// DefaultRange, when positive, is applied to a statement without a shard-key range: it then
	// reads [now-DefaultRange, +inf) and the route says so. Zero (the default) refuses such
	// statements with ErrNoTimeRange, since an implicit range silently drops rows.
	DefaultRange time.Duration `yaml:"default_range"`
	// RequireColdQuery refuses statements that read the history store unless they carry the
	// cold_query hint.
	RequireColdQuery bool `yaml:"require_cold_query"`
	// AllowColdWrites allows INSERT, UPDATE and DELETE on tables of the history store.
	AllowColdWrites bool `yaml:"allow_cold_writes"`
	// Budgets are the time budgets of the query levels, copied to Plan.Budget.
	Budgets LevelBudgets `yaml:"budgets"`
}

// LevelBudgets are the time budgets of the query levels; zero means no budget.
type LevelBudgets struct {
	L1 time.Duration `yaml:"l1"`
	L2 time.Duration `yaml:"l2"`
	L3 time.Duration `yaml:"l3"`
}

func (b LevelBudgets) of(l hint.Level) time.Duration {
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
		return fmt.Errorf("%w: Snapshot is nil; give a function returning the shard metadata snapshot (e.g. a metadata.Cache's)", ErrTimeConfig)
	}
	seen := map[string]bool{}
	for i, t := range c.Tables {
		where := fmt.Sprintf("time table %d (%q)", i+1, t.Table)
		switch {
		case !plainIdentifier(t.Table):
			return fmt.Errorf("%w: %s: table must be a plain identifier (letters, digits, _)", ErrTimeConfig, where)
		case !plainIdentifier(t.ShardKey):
			return fmt.Errorf("%w: %s: shard_key %q must be a plain column name, e.g. order_time", ErrTimeConfig, where, t.ShardKey)
		case seen[strings.ToLower(t.Table)]:
			return fmt.Errorf("%w: %s is configured twice; keep one entry", ErrTimeConfig, where)
		case t.DefaultRange < 0:
			return fmt.Errorf("%w: %s: default_range %s is negative; use 0 to refuse statements without a range", ErrTimeConfig, where, t.DefaultRange)
		case t.Budgets.L1 < 0 || t.Budgets.L2 < 0 || t.Budgets.L3 < 0:
			return fmt.Errorf("%w: %s: a level budget is negative; use 0 for no budget", ErrTimeConfig, where)
		}
		if err := t.Window.Validate(); err != nil {
			return fmt.Errorf("%w: %s: hot_window: %w", ErrTimeConfig, where, err)
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

type timeRouter struct {
	cfg    *TimeConfig
	router *Router
	tables map[string]*TimeTable // lower-case logical name → config
	// longer lists, per logical table L, the other configured logical tables named L_<digit>…
	// (lower case, with the trailing '_'): their physical tables are also named L_<digit>…
	// but are not L's.
	longer map[*TimeTable][]string
	// hot, cold are the first backends of role hot and cold: where tables without a location live.
	hot, cold string
	zones     zoneCache // the session time zones met
	// defaultZone replaces TimeConfig.TimeZone and SystemTimeZone once the connector has read
	// them back from a backend (SetDefaultTimeZone); nil until then.
	defaultZone atomic.Pointer[defaultZone]
	// facts are the backends' servers and the shard-key columns' precisions, as read back by
	// the connector (SetBackendServer, SetShardKeyPrecision).
	facts factsHolder
}

// timeStatement is the time-sharding analysis of one statement text: computed once, cached with
// the Statement, never modified.
type timeStatement struct {
	table  *TimeTable
	kind   Kind
	prefix string // logical table name as configured: the metadata prefix
	key    string // shard key, lower case
	qual   string // alias of the sharded table, "" when it has none
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
}

// insertPlan routes the rows of an INSERT.
type insertPlan struct {
	rows   []template // each row printed alone, with its arguments
	keys   []*texpr   // each row's shard-key value
	keyCol int
}

func newTimeRouter(cfg *TimeConfig, r *Router) (*timeRouter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &timeRouter{cfg: cfg, router: r, tables: map[string]*TimeTable{}}
	for i := range cfg.Tables {
		t.tables[strings.ToLower(cfg.Tables[i].Table)] = &cfg.Tables[i]
	}
	for i := range cfg.Tables {
		for j := range cfg.Tables {
			l, m := strings.ToLower(cfg.Tables[i].Table), strings.ToLower(cfg.Tables[j].Table)
			if len(m) > len(l)+1 && strings.HasPrefix(m, l+"_") && m[len(l)+1] >= '0' && m[len(l)+1] <= '9' {
				if t.longer == nil {
					t.longer = map[*TimeTable][]string{}
				}
				t.longer[&cfg.Tables[i]] = append(t.longer[&cfg.Tables[i]], m+"_")
			}
		}
	}
	for _, b := range r.cfg.Backends {
		if b.Role == RoleHot && t.hot == "" {
			t.hot = b.Name
		}
		if b.Role == RoleCold && t.cold == "" {
			t.cold = b.Name
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
			return "", fmt.Errorf("%w %q as the location of table %s in the shard metadata: fix the metadata row or configure the backend (one of %s)", ErrUnknownBackend, tb.Location, tb.Name, t.router.backendNames())
		}
		return tb.Location, nil
	}
	b, role := t.hot, RoleHot
	if !tb.Hot {
		b, role = t.cold, RoleCold
	}
	if b == "" {
		return "", fmt.Errorf("%w: table %s has no location in the shard metadata and no backend has role %s; set its location or configure a backend with role %s", ErrUnknownBackend, tb.Name, role, role)
	}
	return b, nil
}

// route fills p for a statement on a time-sharded table.
func (t *timeRouter) route(p *Plan, st *Statement, hints hint.Set, in Input) error {
	ts := st.time
	snap := t.cfg.Snapshot()
	if snap == nil {
		return fmt.Errorf("%w: no shard metadata snapshot is loaded yet; load the metadata before routing %s", ErrNoShardTable, ts.table.Table)
	}
	all := t.own(ts.table, snap.Logical(ts.prefix))
	if len(all) == 0 {
		return fmt.Errorf("%w: the shard metadata lists no table named %s_<digits>… (such as %s_202501); add the physical tables of %s to shard_metadata", ErrNoShardTable, ts.prefix, ts.prefix, ts.table.Table)
	}
	// One reading of the clock for the whole statement: the hot window, the clock functions
	// folded in the range and the instant sent to every sub-query. As wall clock of the
	// shard-key times, the window counts their calendar.
	instant := t.now()
	now := t.wall(instant)
	boundary := ts.table.Window.Boundary(now)
	p.Type = UsePartitionLocationLookup
	clock := t.clockFor(instant, in.Session)
	ec := evalCtx{args: t.rangeArgs(in.Args), key: ts.key, clock: &clock}
	if in.Explain {
		ec.notes = &foldNotes{}
	}
	if ts.insert != nil {
		return t.routeInsert(p, st, ts, hints, in, &ec, all, boundary)
	}
	// The shard-key range.
	var (
		span   interval
		set    rangeSet
		tables []metadata.Table
	)
	if ts.conj {
		span = everything
		if err := ts.rng.evalConj(&span, &ec); err != nil {
			return err
		}
	} else {
		s, _, err := ts.rng.eval(&ec)
		if err != nil {
			return err
		}
		set, span = s, s.span()
	}
	defaulted := false
	if span.unbounded() {
		if ts.table.DefaultRange <= 0 {
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
			return fmt.Errorf("%w: the statement on %s reads every table because %s; add a range such as %s >= ? AND %s < ?, or configure default_range",
				ErrNoTimeRange, ts.table.Table, why, ts.table.ShardKey, ts.table.ShardKey)
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
		if t.router.roles[b] == RoleCold {
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
			return fmt.Errorf("%w: declared L1 (hot only) but the range %s reaches before the hot window boundary %s (window: %s); narrow the range to %s >= '%s' or declare query_level=L2",
				ErrLevelViolation, span, formatTime(boundary), ts.table.Window, ts.table.ShardKey, formatTime(boundary))
		}
	case hint.L3:
		if reachesHot {
			return fmt.Errorf("%w: declared L3 (history only) but the range %s reaches the hot window starting %s; end the range before '%s' or declare query_level=L2",
				ErrLevelViolation, span, formatTime(boundary), formatTime(boundary))
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
	p.Budget = ts.table.Budgets.of(level)
	switch {
	case coldTarget && hotTarget:
		p.Class = ClassSplit
	case coldTarget:
		p.Class = ClassColdOnly
	default:
		p.Class = ClassHotOnly
	}
	coldAll := hints.Level == hint.L3
	if (coldTarget || coldAll) && ts.table.RequireColdQuery && !hints.ColdQuery {
		return fmt.Errorf("%w: the statement on %s reads the history store (range %s) and the configuration requires the cold_query hint for that; add /*+ OBROUTE(cold_query=true) */ or narrow the range to the hot window (from '%s')",
			ErrColdQueryRequired, ts.table.Table, span, formatTime(boundary))
	}
	if ts.kind != KindSelect {
		if coldTarget && !ts.table.AllowColdWrites {
			return fmt.Errorf("%w: the %s on %s would change tables of the history store; narrow the range to the hot window (from '%s') or set allow_cold_writes", ErrColdWrite, ts.kind, ts.table.Table, formatTime(boundary))
		}
		if err := checkOneBackend(ts, locs, tables); err != nil {
			return err
		}
		if len(tables) > 1 && ts.splitErr != nil {
			return ts.splitErr
		}
	}
	if len(tables) > 1 && ts.kind == KindSelect && ts.mergeErr != nil {
		return ts.mergeErr
	}
	openName := ""
	if open >= 0 {
		openName = all[open].Name
	}
	if err := t.buildTargets(p, ts, in.Args, &clock, tables, locs, openName, coldAll); err != nil {
		return err
	}
	if in.Explain {
		t.explain(p, ts, span, boundary, locs, emptyRange, defaulted, allHot && !coldTarget)
		explainFolding(p, ts, &ec)
	}
	return nil
}

// explain writes the route's prompt with one allocation for the text.
func (t *timeRouter) explain(p *Plan, ts *timeStatement, span interval, boundary time.Time, locs []string, empty, defaulted, hotOnly bool) {
	b := make([]byte, 0, 256)
	if defaulted {
		b = append(b, "no range on "...)
		b = append(b, ts.table.ShardKey...)
		b = append(b, ": applied the configured default range ("...)
		b = append(b, ts.table.DefaultRange.String()...)
		b = append(b, " back from now); "...)
	}
	b = append(b, "range "...)
	b = appendInterval(b, span)
	b = append(b, " on "...)
	b = append(b, ts.table.ShardKey...)
	b = append(b, ": "...)
	cold := countCold(t, locs)
	switch {
	case empty:
		b = append(b, "no table holds it, the statement returns no rows"...)
	case cold > 0 && cold < len(locs):
		b = append(b, "crosses the hot window boundary "...)
		b = appendTime(b, boundary)
		b = append(b, ": split into "...)
		b = appendInt(b, int64(len(locs)-cold))
		b = append(b, " hot and "...)
		b = appendInt(b, int64(cold))
		b = append(b, " cold sub-queries"...)
	default:
		b = appendInt(b, int64(len(locs)))
		if cold > 0 {
			b = append(b, " cold"...)
		} else {
			b = append(b, " hot"...)
		}
		b = append(b, " table(s), level "...)
		b = append(b, p.Level.String()...)
	}
	if hotOnly {
		p.Prompts = append(p.Prompts, string(b), "did not touch the history store")
	} else {
		p.Prompts = append(p.Prompts, string(b))
	}
}

func countCold(t *timeRouter, locs []string) int {
	n := 0
	for _, b := range locs {
		if t.router.roles[b] == RoleCold {
			n++
		}
	}
	return n
}

// checkOneBackend refuses a write that would change tables on two backends.
func checkOneBackend(ts *timeStatement, locs []string, tables []metadata.Table) error {
	for i := range locs {
		if locs[i] != locs[0] {
			return fmt.Errorf("%w: the %s on %s would change %s on %s and %s on %s, with no transaction across them; split it into one statement per backend (by %s range)",
				ErrCrossBackendWrite, ts.kind, ts.table.Table, tables[0].Name, locs[0], tables[i].Name, locs[i], ts.table.ShardKey)
		}
	}
	return nil
}

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
func (t *timeRouter) own(tt *TimeTable, ts []metadata.Table) []metadata.Table {
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

// wallUTC reads t's wall clock as a UTC time, the form of metadata times.
func wallUTC(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// buildTargets renders the sub-queries: one per table for writes, one statement per backend
// (UNION ALL of its tables' legs) for SELECT. open names the table whose span is open above
// (metadata.OpenAbove), "" if none.
func (t *timeRouter) buildTargets(p *Plan, ts *timeStatement, args []driver.NamedValue, clock *stmtClock, tables []metadata.Table, locs []string, open string, coldAll bool) error {
	l := leg{qual: ts.qualSQL, key: ts.table.ShardKey, clock: clock}
	names := make([]string, len(tables))
	for i := range tables {
		names[i] = tables[i].Name
	}
	if len(tables) == 1 || ts.kind != KindSelect {
		p.Targets = make([]Target, len(tables))
		for i := range tables {
			l.table, l.min, l.max, l.open = tables[i].Name, tables[i].Min, tables[i].Max, tables[i].Name == open
			cold := coldAll || t.router.roles[locs[i]] == RoleCold
			var b strings.Builder
			b.Grow(ts.whole.estimate(&l) + len(coldPrefix))
			if cold {
				b.WriteString(coldPrefix)
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
	sp := &splitTypes{mp: mp, args: args, backend: locs[0], cold: coldAll || t.router.roles[locs[0]] == RoleCold}
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
	allUnion := true
	sp.l = l
	sp.l.table, sp.l.min, sp.l.max = tables[0].Name, tables[0].Min, tables[0].Max
	nb := 0
	var order [8]int
	first := order[:0]
	for i := range locs {
		if !slices.Contains(locs[:i], locs[i]) {
			first = append(first, i)
			nb++
		}
	}
	p.Targets = make([]Target, nb)
	for ti, fi := range first {
		backend := locs[fi]
		cold := coldAll || t.router.roles[backend] == RoleCold
		n, size := 0, len(coldPrefix)+len(mp.outer)+24
		lo, hi := len(tables), 0
		for i := range locs {
			if locs[i] == backend {
				l.table = tables[i].Name
				size += mp.legT.estimate(&l) + 16
				n++
				lo, hi = min(lo, i), max(hi, i+1)
			}
		}
		var b strings.Builder
		b.Grow(size)
		if cold {
			b.WriteString(coldPrefix)
		}
		argv := make([]driver.NamedValue, 0, n*mp.legT.argCount(nil))
		k := 0
		for i := range locs {
			if locs[i] != backend {
				continue
			}
			l.table, l.min, l.max, l.open = tables[i].Name, tables[i].Min, tables[i].Max, tables[i].Name == open
			if n > 1 {
				if k > 0 {
					b.WriteString(" union all ")
				}
				b.WriteByte('(')
			}
			mp.legT.render(&b, &l)
			if n > 1 {
				b.WriteByte(')')
			}
			argv = mp.legT.appendArgs(argv, args, &l)
			k++
		}
		if n > 1 {
			b.WriteString(mp.outer)
			if mp.pushLimit {
				b.WriteString(" limit ")
				var buf [20]byte
				b.Write(appendInt(buf[:0], l.limit))
			}
		}
		// Tables of one backend are contiguous in Min order in the usual layout; otherwise list them.
		tn := names[lo:hi:hi]
		if hi-lo != n {
			tn = nil
			for i := range locs {
				if locs[i] == backend {
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

// argRowCount reads the i-th argument as the row count of a LIMIT or OFFSET (what names which);
// def is returned when the clause has no argument (i < 0). Every integer type and decimal
// digits in a string or []byte are accepted; a count beyond int64 means "no practical limit"
// (MaxInt64, as MySQL's LIMIT 18446744073709551615). Anything else, negative or not an integer,
// refuses the statement: read as 0 it would silently return no rows.
func argRowCount(args []driver.NamedValue, i int, def int64, what string) (int64, error) {
	if i < 0 {
		return def, nil
	}
	if i >= len(args) {
		return 0, fmt.Errorf("%w: the statement has more ? placeholders than the %d arguments given; pass one argument per ?", ErrBadLimit, len(args))
	}
	bad := func(v any) error {
		return fmt.Errorf("%w: argument %d (%v) for %s is not a row count; pass a non-negative integer", ErrBadLimit, i+1, v, what)
	}
	var u uint64
	switch v := args[i].Value.(type) {
	case int64:
		if v < 0 {
			return 0, bad(v)
		}
		return v, nil
	case int:
		return rowCountInt(int64(v), bad)
	case int32:
		return rowCountInt(int64(v), bad)
	case int16:
		return rowCountInt(int64(v), bad)
	case int8:
		return rowCountInt(int64(v), bad)
	case uint64:
		u = v
	case uint:
		u = uint64(v)
	case uint32:
		u = uint64(v)
	case uint16:
		u = uint64(v)
	case uint8:
		u = uint64(v)
	case string:
		n, ok := parseRowCount(v)
		if !ok {
			return 0, bad(strconv.Quote(v))
		}
		return n, nil
	case []byte:
		n, ok := parseRowCount(string(v))
		if !ok {
			return 0, bad(strconv.Quote(string(v)))
		}
		return n, nil
	case nil:
		return 0, fmt.Errorf("%w: argument %d for %s is NULL; pass a non-negative integer", ErrBadLimit, i+1, what)
	default:
		return 0, fmt.Errorf("%w: argument %d for %s is a %T; pass a non-negative integer", ErrBadLimit, i+1, what, v)
	}
	return int64(min(u, math.MaxInt64)), nil
}

func rowCountInt(n int64, bad func(any) error) (int64, error) {
	if n < 0 {
		return 0, bad(n)
	}
	return n, nil
}

// parseRowCount reads decimal digits (no sign, no fraction) as a row count, saturated at
// MaxInt64.
func parseRowCount(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	u, err := strconv.ParseUint(s, 10, 64)
	if err != nil { // beyond uint64: still only digits
		return math.MaxInt64, true
	}
	return int64(min(u, math.MaxInt64)), true
}

// addRows adds two row counts, saturating at MaxInt64 instead of overflowing.
func addRows(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func appendInt(b []byte, n int64) []byte {
	if n == 0 {
		return append(b, '0')
	}
	var tmp [20]byte
	i := len(tmp)
	for n > 0 {
		i--
		tmp[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, tmp[i:]...)
}

// routeInsert routes each row of an INSERT to the table that covers its shard-key value.
func (t *timeRouter) routeInsert(p *Plan, st *Statement, ts *timeStatement, hints hint.Set, in Input, ec *evalCtx, all []metadata.Table, boundary time.Time) error {
	ip := ts.insert
	owner := make([]int, len(ip.keys)) // row → index in all
	for r, x := range ip.keys {
		v, err := x.eval(ec)
		if err != nil {
			return err
		}
		switch {
		case v.null:
			return fmt.Errorf("%w: row %d of the INSERT into %s has a NULL %s; every row needs a time to find its table", ErrNoTimeRange, r+1, ts.table.Table, ts.table.ShardKey)
		case v.unknown:
			return fmt.Errorf("%w: row %d of the INSERT into %s gives %s a value obroute cannot read (%s); give a 'YYYY-MM-DD hh:mm:ss' literal, a time.Time argument or NOW()",
				ErrNoTimeRange, r+1, ts.table.Table, ts.table.ShardKey, unreadNote(x, ec))
		}
		// The row goes to the newest table that holds its value as stored: a fraction finer
		// than the column keeps is truncated or rounded (storedRange), and the table must hold
		// every value the row may become.
		owner[r] = -1
		var lo, last time.Time
		exact := false
		for i := len(all) - 1; i >= 0; i-- {
			lo, last, exact = t.storedRange(&all[i], in.Session, v.lo, v.hi)
			if covers(&all[i], lo) {
				owner[r] = i
				break
			}
		}
		if owner[r] >= 0 && exact {
			if err := t.sameStored(all, owner[r], in.Session, v, lo, last); err != nil {
				return fmt.Errorf("%w: row %d of the INSERT into %s: %w", ErrNoTimeRange, r+1, ts.table.Table, err)
			}
		}
		if owner[r] < 0 { // no table holds the value as stored: name the one that holds it as written
			for i := len(all) - 1; i >= 0 && owner[r] < 0; i-- {
				if covers(&all[i], v.lo) {
					owner[r] = i
					lo, last, exact = t.storedRange(&all[i], in.Session, v.lo, v.hi)
				}
			}
		}
		if owner[r] < 0 {
			return fmt.Errorf("%w: no table of %s covers %s = '%s' (row %d); create the tables of coming periods ahead with `obroute metadata prepare` (daily, beside mark-hot), or add or widen a table in shard_metadata", ErrNoShardTable, ts.table.Table, ts.table.ShardKey, formatTime(v.lo), r+1)
		}
		if o := &all[owner[r]]; !covers(o, lo) || !covers(o, last) {
			if exact && v.lo.Equal(v.hi) {
				return fmt.Errorf("%w: row %d of the INSERT into %s gives %s a value that %s stores as '%s' (by its column's precision and the session's sql_mode), which it does not hold; write the time at the column's precision",
					ErrNoTimeRange, r+1, ts.table.Table, ts.table.ShardKey, o.Name, formatTime(lo))
			}
			if exact {
				return fmt.Errorf("%w: row %d of the INSERT into %s gives %s a value between '%s' and '%s' (a clock in an unknown session time zone), which %s does not hold whole; SET time_zone first",
					ErrNoTimeRange, r+1, ts.table.Table, ts.table.ShardKey, formatTime(lo), formatTime(last), o.Name)
			}
			return fmt.Errorf("%w: row %d of the INSERT into %s gives %s a value between '%s' and '%s' (a fraction of a second the server may truncate or round, by the column's precision and the session's sql_mode, which obroute does not know here; or a clock in an unknown session time zone), which %s does not hold whole; write the time with whole seconds, or SET sql_mode to a literal and time_zone first",
				ErrNoTimeRange, r+1, ts.table.Table, ts.table.ShardKey, formatTime(v.lo), formatTime(last), o.Name)
		}
		if in.Explain && (!lo.Equal(v.lo) || !last.Equal(v.hi)) {
			p.Prompts = append(p.Prompts, fmt.Sprintf("row %d: %s '%s' is stored as '%s' (by the column's precision and the session's sql_mode), which %s holds",
				r+1, ts.table.ShardKey, formatTime(v.lo), formatTime(lo), all[owner[r]].Name))
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
		if t.router.roles[b] == RoleCold {
			coldTarget = true
		} else {
			hotTarget = true
		}
	}
	if coldTarget && !ts.table.AllowColdWrites {
		return fmt.Errorf("%w: the INSERT into %s has rows for the history store; insert only rows of the hot window (from '%s') or set allow_cold_writes", ErrColdWrite, ts.table.Table, formatTime(boundary))
	}
	if err := checkOneBackend(ts, locs, tables); err != nil {
		return err
	}
	if hints.Level == hint.L1 && coldTarget {
		return fmt.Errorf("%w: declared L1 (hot only) but the INSERT writes to the history store; declare query_level=L2", ErrLevelViolation)
	}
	p.Class = ClassHotOnly
	p.Level = hints.Level
	if !hotTarget {
		p.Class = ClassColdOnly
	}
	p.Budget = ts.table.Budgets.of(p.Level)
	p.Targets = make([]Target, len(tables))
	for i := range tables {
		l := leg{table: tables[i].Name, rows: rowsOf[i], clock: ec.clock}
		cold := t.router.roles[locs[i]] == RoleCold
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
