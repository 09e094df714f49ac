package connector

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/routing"
)

// EXPLAIN ROUTE
//
// A statement "EXPLAIN ROUTE <statement>" sent through obroute (db.Query, sqlx, a SQL console
// behind the driver) is answered by obroute itself: nothing is sent to any backend and no state
// of the client session changes. The answer is a result set with the columns of
// routing.ExplainColumns — section, step, detail (all text) — one row per
// routing.ExplainLine of the plan (see (*routing.Plan).Explain for the rows). Arguments bound to
// EXPLAIN ROUTE are the explained statement's arguments. Inside a transaction the plan is the
// one the statement would get at that point: pinned to the transaction's backend
// (USE_LAST_SESSION, in_transaction:true). A statement the router refuses is explained too:
// an ERROR prompt with the refusal and a ROUTE_INFO step {refused:true, reason:"…"}.

// explain answers EXPLAIN ROUTE: the plan of the explained statement as rows, without running it.
func (cs *clientSession) explain(ctx context.Context, st *routing.Statement, args []driver.NamedValue) (driver.Rows, error) {
	hints, err := cs.statementHints(ctx)
	if err == nil {
		err = cs.c.loadMetadata(ctx, st, cs.shadowByHints(st, hints))
	}
	var plan *routing.Plan
	if err == nil {
		plan, err = cs.routeReading(ctx, st, hints, args, true)
	}
	lines := cs.c.explainLines(st, plan, err)
	values := make([][]driver.Value, len(lines))
	for i, l := range lines {
		values[i] = []driver.Value{l.Section, l.Step, l.Detail}
	}
	return &valueRows{columns: routing.ExplainColumns, values: values}, nil
}

// explainLines renders plan, or st's refusal err, as the lines of EXPLAIN ROUTE, without any
// password of the configuration.
func (c *Connector) explainLines(st *routing.Statement, plan *routing.Plan, err error) []routing.ExplainLine {
	var lines []routing.ExplainLine
	if err != nil {
		lines = routing.ExplainRefused(st, err, c.explainOptions())
	} else {
		lines = plan.Explain(c.explainOptions())
	}
	for i := range lines {
		lines[i].Detail = c.ScrubText(lines[i].Detail)
	}
	return lines
}

// statementHints are the hints of a statement run now: those of ctx, with those the
// transaction was begun with.
func (cs *clientSession) statementHints(ctx context.Context) (hint.Set, error) {
	hints := hint.FromContext(ctx)
	if cs.tx.active && !cs.tx.hints.IsZero() {
		return hint.Combine(cs.tx.hints, hints)
	}
	return hints, nil
}

// Explain returns the plan of query as a new client session would route it (no transaction,
// no previous statement), with the hints of ctx and args as its arguments, without running
// anything. A query written "EXPLAIN ROUTE …" is explained the same way. The error is the
// router's refusal (test it with errors.Is against this package's and hint's Err values).
// ExplainLines gives the same decision as the text of EXPLAIN ROUTE.
func (c *Connector) Explain(ctx context.Context, query string, args ...any) (*Plan, error) {
	_, plan, err := c.explain(ctx, query, args)
	if err != nil {
		return nil, err
	}
	return newPlan(plan), nil
}

// explain analyses query and routes it as Explain does, returning the analysed statement too.
func (c *Connector) explain(ctx context.Context, query string, args []any) (*routing.Statement, *routing.Plan, error) {
	st := c.router.Analyze(query)
	if st.Kind == routing.KindExplainRoute {
		st = st.Explained
	}
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return st, nil, errorf("obroute: explain: argument %d: %w", i+1, err)
		}
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	h := hint.FromContext(ctx)
	shadow := h.Shadow == hint.ShadowOn || st.Hints.Shadow == hint.ShadowOn && h.Shadow != hint.ShadowOff
	if err := c.loadMetadata(ctx, st, shadow); err != nil {
		return st, nil, err
	}
	for reads := 0; ; reads++ {
		plan, err := c.router.Route(routing.Input{Statement: st, Hints: hint.FromContext(ctx), Args: named, Session: &routing.SessionState{}, Explain: true})
		var need *routing.ColumnsNeeded
		if reads == maxDefinitionReads || !errors.As(err, &need) {
			return st, plan, err
		}
		if err := c.readDefinition(ctx, need); err != nil {
			return st, nil, err
		}
	}
}

// Plan is a statement's route, as Explain returns it and an Observer sees it: the rule that
// decided it and the statements it runs. EXPLAIN ROUTE shows the same decision as text.
type Plan struct {
	// Rule names the rule that decided the route, as EXPLAIN ROUTE's route_info_type:
	// USE_ROUTE_POLICY (a static route or the default backend), USE_PARTITION_LOCATION_LOOKUP (a
	// time-sharded table), USE_LAST_SESSION (a transaction, or a statement reading the previous
	// one's session), USE_TEMP_TABLE_SESSION, USE_CACHED_SESSION, USE_COMMENT_TARGET_DB (a
	// backend hint) or USE_SESSION_STATE (SET, USE, BEGIN …).
	Rule string
	// Class is the statistics bucket the statement counts in (StatsSnapshot.Routes): default,
	// forced, cached, hot_only, split, cold_only or shadow.
	Class string
	// Static is set when a static table route (Config.Routes) chose the backend. With Class
	// default (the bucket of static routes and of the default backend alike) it tells the two
	// apart.
	Static bool
	// Level is the query level in force: declared, or derived from the time range.
	Level hint.Level
	// Budget is the time budget of the query level, zero when none is configured.
	Budget time.Duration
	// Shadow is set when the statement is shadow traffic.
	Shadow bool
	// InTransaction is set when the statement runs inside a transaction.
	InTransaction bool
	// Targets are the statements run; more than one only for a statement split across tables
	// (Class split, or a write over several tables), whose rows obroute merges.
	Targets []Target
	// Backends are the distinct backends of Targets, in their order.
	Backends []string
	// Prompts explain the decision in plain words. Explain fills them; an Observer sees them
	// only while the connector's logger (WithLogger) is enabled at debug level.
	Prompts []string
}

// Target is one statement a route runs on one backend.
type Target struct {
	// Backend is the backend's configured name.
	Backend string
	// SQL is the text sent: the application's own, unless the route rewrote it (a sub-query of
	// a split, a physical table name).
	SQL string
	// Args are the arguments of SQL's placeholders, in order, as database/sql takes them:
	// db.QueryContext(ctx, t.SQL, t.Args...) runs the target alone.
	Args []any
	// Cold marks a sub-query sent to the history store tagged /* cold_query */.
	Cold bool
	// Tables are the physical tables the statement reads or writes, when the route knows them.
	Tables []string
}

// newPlan is the user's view of the router's plan p.
func newPlan(p *routing.Plan) *Plan {
	out := &Plan{Rule: string(p.Type), Class: p.Class.String(), Static: p.Static, Level: p.Level, Budget: p.Budget, Shadow: p.Shadow,
		InTransaction: p.InTransaction, Targets: make([]Target, len(p.Targets)), Backends: p.Backends(), Prompts: p.Prompts}
	n := 0
	for _, t := range p.Targets {
		n += len(t.Args)
	}
	values := make([]any, 0, n) // every target's arguments, each target a slice of them
	for i, t := range p.Targets {
		from := len(values)
		for _, a := range t.Args {
			values = append(values, a.Value)
		}
		out.Targets[i] = Target{Backend: t.Backend, SQL: t.SQL, Args: values[from:len(values):len(values)], Cold: t.Cold, Tables: t.Tables}
	}
	return out
}

// ExplainLine is one row of EXPLAIN ROUTE's answer.
type ExplainLine struct {
	// Section is "Route Prompts" (the decision in sentences) or "Route Plan" (its steps).
	Section string
	// Step is a prompt's level (INFO, WARN, ERROR), or a step's name (SQL_PARSE, HINTS,
	// ROUTE_INFO, SUB_QUERY, MERGE).
	Step string
	// Detail is the prompt's sentence, or the step's fields written {key:value, …}.
	Detail string
}

// ExplainLines returns the EXPLAIN ROUTE lines of query with args, passwords scrubbed, as the
// EXPLAIN ROUTE statement would answer. When the statement would be refused the lines say why
// and err is the refusal (errors.Is with the Err values of this package).
func (c *Connector) ExplainLines(ctx context.Context, query string, args ...any) ([]ExplainLine, error) {
	st, plan, err := c.explain(ctx, query, args)
	lines := c.explainLines(st, plan, err)
	out := make([]ExplainLine, len(lines))
	for i, l := range lines {
		out[i] = ExplainLine(l)
	}
	return out, err
}

// explainOptions are the options that render this connector's plans: backend addresses
// (host:port, or SERVICE:name for a service backend), never credentials.
func (c *Connector) explainOptions() routing.ExplainOptions {
	return routing.ExplainOptions{Address: func(backend string) string {
		if b := c.backends[backend]; b != nil {
			return b.addr
		}
		return ""
	}}
}

// ScrubText returns text without any password of the connector's configuration (config.Scrub):
// for the SQL of a Plan, and anything else that may quote a DSN.
func (c *Connector) ScrubText(text string) string { return config.Scrub(text, c.events.secrets) }

// valueRows are rows obroute answers itself; every column is text.
type valueRows struct {
	columns []string
	values  [][]driver.Value
	next    int
}

var _ driver.RowsColumnTypeDatabaseTypeName = (*valueRows)(nil)

// Columns implements driver.Rows.
func (r *valueRows) Columns() []string { return r.columns }

// Close implements driver.Rows.
func (r *valueRows) Close() error { return nil }

// ColumnTypeDatabaseTypeName implements driver.RowsColumnTypeDatabaseTypeName.
func (r *valueRows) ColumnTypeDatabaseTypeName(int) string { return "VARCHAR" }

// Next implements driver.Rows.
func (r *valueRows) Next(dest []driver.Value) error {
	if r.next >= len(r.values) {
		return io.EOF
	}
	copy(dest, r.values[r.next])
	r.next++
	return nil
}

// emptyRows answers a statement that returns no rows but was sent with Query.
type emptyRows struct{}

// Columns implements driver.Rows: no columns.
func (emptyRows) Columns() []string { return nil }

// Close implements driver.Rows.
func (emptyRows) Close() error { return nil }

// Next implements driver.Rows: there is no row.
func (emptyRows) Next(dest []driver.Value) error { return io.EOF }
