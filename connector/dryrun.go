package connector

import (
	"context"
	"database/sql/driver"
	"io"
	"strings"
)

// A dry run (WithDryRun) routes every statement and keeps the client session's state exactly as
// a live client session does — transactions bound to their first statement's backend, SET and
// USE replayed, temporary tables followed, refusals — through the same code, but each server
// session is a dry one that sends nothing: every statement succeeds at once with no rows and
// no row affected, except that a variable read (SELECT @… or readBackStart …: how the client
// session reads back a SET, or a user variable a SELECT assigned) gives one row of NULL. A SET
// that gives a system variable a value only a server computes (an expression, DEFAULT, a user
// variable) fails with ErrDryRunUnknown: the client session's state is then not known, rather
// than made up. A split SELECT runs no sub-query and merges nothing. `obroute check` follows a workload's logs
// this way.

// WithDryRun makes every client session of the connector a dry run: statements are routed and
// followed as by any client session, and answered without reaching any backend (see above).
// The shard metadata and the facts read back with its first load (see WithoutReadBack) are
// still read from the backends, as a live connector reads them, unless WithMetadataSource and
// WithoutReadBack say otherwise: with both, nothing at all reaches a backend.
// Route statistics (Stats) and an Observer see each statement as they would live.
func WithDryRun() Option { return func(o *options) { o.dryRun = true } }

// dryConn is the connection of a dry server session: it answers everything at once.
type dryConn struct{}

var (
	_ driver.Conn               = dryConn{}
	_ driver.ConnBeginTx        = dryConn{}
	_ driver.ConnPrepareContext = dryConn{}
	_ driver.ExecerContext      = dryConn{}
	_ driver.QueryerContext     = dryConn{}
	_ driver.Pinger             = dryConn{}
	_ driver.SessionResetter    = dryConn{}
	_ driver.Validator          = dryConn{}
)

// Prepare implements driver.Conn.
func (dryConn) Prepare(string) (driver.Stmt, error) { return dryStmt{}, nil }

// PrepareContext implements driver.ConnPrepareContext.
func (dryConn) PrepareContext(context.Context, string) (driver.Stmt, error) { return dryStmt{}, nil }

// Close implements driver.Conn.
func (dryConn) Close() error { return nil }

// Begin implements driver.Conn.
func (dryConn) Begin() (driver.Tx, error) { return dryTx{}, nil }

// BeginTx implements driver.ConnBeginTx.
func (dryConn) BeginTx(context.Context, driver.TxOptions) (driver.Tx, error) { return dryTx{}, nil }

// ExecContext implements driver.ExecerContext: no row affected.
func (dryConn) ExecContext(context.Context, string, []driver.NamedValue) (driver.Result, error) {
	return dryResult{}, nil
}

// QueryContext implements driver.QueryerContext: no row, or one NULL for a variable read.
func (dryConn) QueryContext(_ context.Context, query string, _ []driver.NamedValue) (driver.Rows, error) {
	return dryRowsOf(query), nil
}

// Ping implements driver.Pinger.
func (dryConn) Ping(context.Context) error { return nil }

// ResetSession implements driver.SessionResetter.
func (dryConn) ResetSession(context.Context) error { return nil }

// IsValid implements driver.Validator.
func (dryConn) IsValid() bool { return true }

// dryStmt is a statement prepared on a dry server session.
type dryStmt struct{}

var (
	_ driver.StmtExecContext  = dryStmt{}
	_ driver.StmtQueryContext = dryStmt{}
)

// Close implements driver.Stmt.
func (dryStmt) Close() error { return nil }

// NumInput implements driver.Stmt: the count is left to the caller.
func (dryStmt) NumInput() int { return -1 }

// Exec implements driver.Stmt.
func (dryStmt) Exec([]driver.Value) (driver.Result, error) { return dryResult{}, nil }

// Query implements driver.Stmt.
func (dryStmt) Query([]driver.Value) (driver.Rows, error) { return &dryRows{done: true}, nil }

// ExecContext implements driver.StmtExecContext.
func (dryStmt) ExecContext(context.Context, []driver.NamedValue) (driver.Result, error) {
	return dryResult{}, nil
}

// QueryContext implements driver.StmtQueryContext.
func (dryStmt) QueryContext(context.Context, []driver.NamedValue) (driver.Rows, error) {
	return &dryRows{done: true}, nil
}

// dryTx is a transaction on a dry server session.
type dryTx struct{}

// Commit implements driver.Tx.
func (dryTx) Commit() error { return nil }

// Rollback implements driver.Tx.
func (dryTx) Rollback() error { return nil }

// dryResult is the result of a statement on a dry server session.
type dryResult struct{}

// LastInsertId implements driver.Result.
func (dryResult) LastInsertId() (int64, error) { return 0, nil }

// RowsAffected implements driver.Result.
func (dryResult) RowsAffected() (int64, error) { return 0, nil }

// dryRows are the rows of a query on a dry server session: none, or for a variable read one row
// of NULL, which is what a server that knows nothing gives.
type dryRows struct {
	columns []string
	done    bool
}

// dryRowsOf returns the rows of query on a dry server session.
func dryRowsOf(query string) *dryRows {
	if strings.HasPrefix(query, "SELECT @") || strings.HasPrefix(query, readBackStart) {
		return &dryRows{columns: []string{query[len("SELECT "):]}}
	}
	return &dryRows{done: true}
}

// Columns implements driver.Rows.
func (r *dryRows) Columns() []string { return r.columns }

// Close implements driver.Rows.
func (*dryRows) Close() error { return nil }

// Next implements driver.Rows.
func (r *dryRows) Next(dest []driver.Value) error {
	if r.done {
		return io.EOF
	}
	r.done = true
	for i := range dest {
		dest[i] = nil
	}
	return nil
}
