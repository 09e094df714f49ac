package routing

import (
	"database/sql/driver"
	"strings"
	"time"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/merge"
)

// RouteInfoType names the rule that decided a route, in ODP's vocabulary where ODP has a word for it.
type RouteInfoType string

// Route info types.
const (
	// UseLastSession: inside a transaction, or a statement that depends on the previous
	// statement's server session (FOUND_ROWS(), SHOW WARNINGS …).
	UseLastSession RouteInfoType = "USE_LAST_SESSION"
	// UseTempTableSession: the statement names a session temporary table.
	UseTempTableSession RouteInfoType = "USE_TEMP_TABLE_SESSION"
	// UseCachedSession: the route could not be computed and enable_cached_server is on.
	UseCachedSession RouteInfoType = "USE_CACHED_SESSION"
	// UseCommentTargetDB: a backend hint named the backend.
	UseCommentTargetDB RouteInfoType = "USE_COMMENT_TARGET_DB"
	// UseRoutePolicy: a static table route or the default backend.
	UseRoutePolicy RouteInfoType = "USE_ROUTE_POLICY"
	// UsePartitionLocationLookup: a time-sharded table, routed by shard metadata.
	UsePartitionLocationLookup RouteInfoType = "USE_PARTITION_LOCATION_LOOKUP"
	// UseSessionState: a statement that only changes session state (SET, USE, BEGIN …).
	UseSessionState RouteInfoType = "USE_SESSION_STATE"
	// UsePreparedSession: EXECUTE or DEALLOCATE PREPARE of an SQL-level prepared statement,
	// on the server session that prepared it.
	UsePreparedSession RouteInfoType = "USE_PREPARED_STATEMENT_SESSION"
	// UsePinnedSession: the client session is pinned to one server session (table locks, or a
	// statement whose effect obroute cannot see), and every statement goes there.
	UsePinnedSession RouteInfoType = "USE_PINNED_SESSION"
)

// Class is the statistics bucket of a route.
type Class uint8

// Route classes.
const (
	ClassDefault  Class = iota // default backend or a static route
	ClassForced                // transaction, temporary table, last-session statement, backend hint
	ClassCached                // route not computable, cached server used
	ClassHotOnly               // time-sharded, did not touch the history store
	ClassSplit                 // time-sharded, split across hot and cold
	ClassColdOnly              // time-sharded, history store only
	ClassShadow                // shadow traffic
	numClasses
)

// NumClasses is the number of route classes, for arrays indexed by Class.
const NumClasses = int(numClasses)

var classNames = [...]string{"default", "forced", "cached", "hot_only", "split", "cold_only", "shadow"}

// String returns the class name used in stats and logs.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "unknown"
}

// Target is one statement sent to one backend.
type Target struct {
	// Backend is the backend's configured name.
	Backend string
	// SQL is the text sent, the application's own text unless the route rewrote it.
	SQL string
	// Args are the arguments for SQL's placeholders.
	Args []driver.NamedValue
	// Cold marks a sub-query sent through the history channel (tagged /* cold_query */).
	Cold bool
	// Tables are the physical tables the target reads or writes, when the route knows them.
	Tables []string
}

// Plan is the router's decision for one statement: where it goes, in what form, and how the
// results come back together.
type Plan struct {
	// Statement is the analysed statement.
	Statement *Statement
	// Type is the rule that decided the route.
	Type RouteInfoType
	// Class is the statistics bucket.
	Class Class
	// byDefault is set when the statement went to the default backend because its tables have
	// no rule: that is where they live.
	byDefault bool
	// Static is set when a static table route (Settings.Routes) chose the backend. With Class
	// ClassDefault (the bucket of static routes and of the default backend alike) it tells the
	// two apart; shadow traffic keeps it set with ClassShadow.
	Static bool
	// Hints are the hints in force: context and comment hints combined.
	Hints hint.Set
	// Level is the query level in force (declared, or derived from the time range).
	Level hint.Level
	// Shadow is set when the statement is shadow traffic.
	Shadow bool
	// InTransaction is set when the statement runs inside a transaction.
	InTransaction bool
	// Targets are the statements to run; more than one only for a split time-sharded query or write.
	Targets []Target
	// Merge says how the rows of several targets become one result; nil for one target.
	Merge *merge.Spec
	// Types is, for a split SELECT, where the column types one server reports for the
	// statement are remembered across executions (see TypesProbe); nil otherwise.
	Types *TypesCache
	// Prompts explain the decision in plain words, for EXPLAIN ROUTE and debug logs; filled only
	// when the Input asked for them (Input.Explain).
	Prompts []string
	// Budget is the time budget of the query level, zero when none is configured.
	Budget time.Duration
	// FanOut names the time-sharded table of a DDL statement run on each of its physical
	// tables: the targets, one per physical table, run one after the other outside any
	// transaction, each on its own, and the first failure stops them (the connector reports
	// which tables were changed and which not). "" for other statements.
	FanOut string
	// NoOp marks a statement that does nothing on the logical view of the tables (CREATE TABLE
	// IF NOT EXISTS of a time-sharded table that has physical tables): it has no target and
	// succeeds as one server would.
	NoOp bool
	// Concat marks a statement whose targets' rows are returned one target after the other, in
	// target order (plain EXPLAIN of a split statement); Merge is nil.
	Concat bool
	// Catalog is set for a catalog statement answered for the logical view of the tables (see
	// CatalogQuery): the one target is where the answer is computed.
	Catalog *CatalogQuery
	// Rename maps, for a statement describing a time-sharded table (DESCRIBE, SHOW CREATE TABLE
	// …), the physical table it was sent to to the logical name its answer shows; for a
	// maintenance statement (ANALYZE, CHECK, OPTIMIZE, REPAIR, CHECKSUM TABLE) of a routed table
	// on a backend whose database has another name, the table in that database to the table in
	// the client's; empty otherwise.
	Rename [2]string
	// Counters are, for SHOW CREATE TABLE of a time-sharded table, its physical tables by
	// backend (each target's Tables): the logical table's AUTO_INCREMENT is their largest
	// counter, not the newest's alone (a table made ahead starts at 1). Nil otherwise.
	Counters []Target
	// OutsideTx marks a statement that runs on its backend outside the client session's
	// transaction, without binding one: a statement of user-level lock functions and no table,
	// which goes to the backend of the locks wherever the transaction is (locks are not
	// transactional, and such a statement opens no transaction on its server).
	OutsideTx bool

	// RepeatedHours names, for a split SELECT, the session's time zone when its wall clocks may
	// repeat an hour (daylight saving, or a zone obroute does not know): the server sends a
	// TIMESTAMP column's two instants of that hour as one wall clock, which the merge would
	// compare as equal. "" in a fixed offset. KeyColumns are the result columns that are the
	// shard key itself, which routing has checked (time_stamp.go). See CheckRepeatedHours.
	RepeatedHours string
	KeyColumns    []int

	explain bool // Input.Explain: fill Prompts
	// shadowSide: the statement is shadow traffic by its hints or its transaction, routed by the
	// shadow side's shard metadata; shadowMap are the mappings that then apply (see
	// time_side.go).
	shadowSide bool
	shadowMap  map[string]string
	one        [1]Target // backing array of Targets for a single-target plan
	// split is what a split SELECT's execution needs to know about its column types.
	split *splitTypes
	// factsGen is, on a plan of a time-sharded table, the generation of the facts it was made
	// with plus one (see Router.Outdated); 0 on other plans.
	factsGen uint64
}

// splitTypes is, for a split SELECT, what TypesProbe renders (the sub-query of one of its
// tables) and how its sub-queries were rendered.
type splitTypes struct {
	mp      *mergePlan
	args    []driver.NamedValue
	l       leg
	backend string
	cold    bool
	// unknown: the sub-queries were rendered without knowing the column types (every weight
	// asked for); skipped: the columns whose weights were not asked for.
	unknown bool
	skipped []int
}

// TypesUnknown reports whether a split SELECT's sub-queries need the column types one server
// reports before they run: to ask only for the weights of text columns, or because each
// combines tables with UNION ALL whose types are not one server's. The caller reads them
// (TypesProbe), stores them in Types and routes the statement again.
func (p *Plan) TypesUnknown() bool { return p.split != nil && p.split.unknown }

// SkippedWeights lists the columns whose weights the sub-queries were not asked for, their
// types not being text; a sub-query that returns text in one of them shows that the types
// changed.
func (p *Plan) SkippedWeights() []int {
	if p.split == nil {
		return nil
	}
	return p.split.skipped
}

// UnionTypesExact reports whether a sub-query combining tables with UNION ALL reports the
// column types one server reports (COUNT, and SUM and AVG of a column).
func (p *Plan) UnionTypesExact() bool { return p.split != nil && p.split.mp.unionTypesExact }

// TypesProbe returns, for a split SELECT, a statement that returns no rows but the column
// types one server reports for the statement: the sub-query of one of its tables with a false
// clamp. ok is false for any other plan.
func (p *Plan) TypesProbe() (t Target, ok bool) {
	pr := p.split
	if pr == nil {
		return Target{}, false
	}
	l := pr.l
	l.probe = true
	t0 := &pr.mp.legT
	if len(pr.mp.probeT.pieces) > 0 {
		t0 = &pr.mp.probeT
	}
	// The weights are not what the probe is for: none is asked for.
	l.skip = make([]bool, len(t0.snips))
	for i, sn := range t0.snips {
		_, weight := pr.mp.weightCols[sn.name]
		_, ordinal := pr.mp.ordinalCols[sn.name]
		l.skip[i] = weight || ordinal
	}
	return pr.target(t0, &l), true
}

// SignatureProbe returns, for a split SELECT that weighs text, a statement that returns one
// row: the signatures of the collations of the weighed expressions that are text in types (the
// column types TypesProbe read; NULL for the others), for TypesCache.Store. ok is false when
// there is none.
func (p *Plan) SignatureProbe(types []merge.ColumnType) (t Target, ok bool) {
	pr := p.split
	if pr == nil || len(pr.mp.sigNames) == 0 {
		return Target{}, false
	}
	l := pr.l
	l.none, l.skip = true, make([]bool, len(pr.mp.sigT.snips))
	any := false
	for i := range pr.mp.sigT.snips { // one per weight, in sigNames order
		text := anyText(types, pr.mp.weightCols[pr.mp.sigNames[i]])
		l.skip[i], any = !text, any || text
	}
	if !any {
		return Target{}, false
	}
	return pr.target(&pr.mp.sigT, &l), true
}

// target renders t for the probe's table with l.
func (pr *splitTypes) target(t *template, l *leg) Target {
	var b strings.Builder
	b.Grow(t.estimate(l) + len(coldPrefix))
	if pr.cold {
		b.WriteString(coldPrefix)
	}
	t.render(&b, l)
	args := t.appendArgs(make([]driver.NamedValue, 0, t.argCount(l)), pr.args, l)
	return Target{Backend: pr.backend, SQL: b.String(), Args: args, Cold: pr.cold, Tables: []string{l.table}}
}

// anyText reports whether one of cols is text in types, or of a type not known.
func anyText(types []merge.ColumnType, cols []int) bool {
	for _, c := range cols {
		if c >= len(types) || types[c].DatabaseTypeName == "" || types[c].IsText() {
			return true
		}
	}
	return false
}

// Backends lists the distinct backends of the plan's targets, in target order.
func (p *Plan) Backends() []string {
	if len(p.Targets) == 1 {
		return []string{p.Targets[0].Backend}
	}
	var out []string
	for _, t := range p.Targets {
		seen := false
		for _, b := range out {
			seen = seen || b == t.Backend
		}
		if !seen {
			out = append(out, t.Backend)
		}
	}
	return out
}
