package connector

import (
	"context"
	"database/sql/driver"
	"io"

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
		err = cs.c.loadMetadata(ctx, st)
	}
	var plan *routing.Plan
	if err == nil {
		plan, err = cs.route(st, hints, args, true)
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
		lines = routing.ExplainRefused(st, err, c.ExplainOptions())
	} else {
		lines = plan.Explain(c.ExplainOptions())
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
// router's refusal (test it with errors.Is against this package's and hint's Err values). Render
// the plan with plan.Explain(c.ExplainOptions()), or use ExplainLines.
func (c *Connector) Explain(ctx context.Context, query string, args ...any) (*Plan, error) {
	_, plan, err := c.explain(ctx, query, args)
	return plan, err
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
	if err := c.loadMetadata(ctx, st); err != nil {
		return st, nil, err
	}
	plan, err := c.router.Route(routing.Input{Statement: st, Hints: hint.FromContext(ctx), Args: named, Session: &routing.SessionState{}, Explain: true})
	return st, plan, err
}

// Plan is a statement's route: its targets, the SQL each runs, the merge of a split, the
// prompts EXPLAIN ROUTE shows (Plan.Explain renders them).
type Plan = routing.Plan

// ExplainLine is one line of EXPLAIN ROUTE: its section and its text.
type ExplainLine = routing.ExplainLine

// ExplainLines returns the EXPLAIN ROUTE lines of query with args, passwords scrubbed, as the
// EXPLAIN ROUTE statement would answer. When the statement would be refused the lines say why
// and err is the refusal (errors.Is with the Err values of this package).
func (c *Connector) ExplainLines(ctx context.Context, query string, args ...any) ([]ExplainLine, error) {
	st, plan, err := c.explain(ctx, query, args)
	return c.explainLines(st, plan, err), err
}

// ExplainOptions are the options that render this connector's plans: backend addresses
// (host:port, or SERVICE:name for a service backend), never credentials. Pass rendered text
// through ScrubText before it leaves the program, as EXPLAIN ROUTE does.
func (c *Connector) ExplainOptions() routing.ExplainOptions {
	return routing.ExplainOptions{Address: func(backend string) string {
		if b := c.backends[backend]; b != nil {
			return b.addr
		}
		return ""
	}}
}

// ScrubText returns text without any password of the connector's configuration (config.Scrub):
// for plans rendered from Explain, and anything else that may quote a DSN.
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
