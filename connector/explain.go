package connector

import (
	"context"
	"database/sql/driver"
	"io"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/routing"
)

// explain answers EXPLAIN ROUTE: the plan of the explained statement as rows, without running it.
func (cs *clientSession) explain(ctx context.Context, st *routing.Statement, args []driver.NamedValue) (driver.Rows, error) {
	plan, err := cs.route(st, hint.FromContext(ctx), args)
	if err != nil {
		return nil, err
	}
	lines := [][]driver.Value{}
	for _, p := range plan.Prompts {
		lines = append(lines, []driver.Value{"prompt", p})
	}
	for _, t := range plan.Targets {
		lines = append(lines, []driver.Value{"route", string(plan.Type) + " " + t.Backend + " " + t.SQL})
	}
	return &valueRows{columns: []string{"kind", "info"}, values: lines}, nil
}

// valueRows are rows obroute answers itself.
type valueRows struct {
	columns []string
	values  [][]driver.Value
	next    int
}

func (r *valueRows) Columns() []string { return r.columns }
func (r *valueRows) Close() error      { return nil }
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

func (emptyRows) Columns() []string              { return nil }
func (emptyRows) Close() error                   { return nil }
func (emptyRows) Next(dest []driver.Value) error { return io.EOF }
