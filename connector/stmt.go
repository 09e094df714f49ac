package connector

import (
	"context"
	"database/sql/driver"

	"github.com/obroute/obroute/routing"
)

// stmt is a prepared statement of a client session. It is prepared on a server session the
// first time it runs there, and that server-side statement is reused while both live.
type stmt struct {
	cs       *clientSession
	st       *routing.Statement
	prepared map[*serverSession]driver.Stmt
}

var (
	_ driver.Stmt             = (*stmt)(nil)
	_ driver.StmtExecContext  = (*stmt)(nil)
	_ driver.StmtQueryContext = (*stmt)(nil)
)

// NumInput implements driver.Stmt: the number of ? placeholders, -1 when the statement could
// not be parsed (database/sql then leaves the count to the server).
func (s *stmt) NumInput() int {
	if s.st.ParseErr != nil || s.st.Kind == routing.KindExplainRoute {
		return -1
	}
	return s.st.Params
}

// Close implements driver.Stmt.
func (s *stmt) Close() error {
	var first error
	for ss, p := range s.prepared {
		if err := p.Close(); err != nil && first == nil && !ss.broken {
			first = err
		}
	}
	s.prepared = nil
	return first
}

// Exec implements driver.Stmt.
func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), namedValues(args))
}

// Query implements driver.Stmt.
func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), namedValues(args))
}

// ExecContext implements driver.StmtExecContext.
func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	res, _, err := s.cs.run(ctx, s.st, args, false, s)
	return res, err
}

// QueryContext implements driver.StmtQueryContext.
func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	_, rows, err := s.cs.run(ctx, s.st, args, true, s)
	return rows, err
}

// runOn runs the statement on ss through a server-side prepared statement.
func (s *stmt) runOn(ctx context.Context, ss *serverSession, args []driver.NamedValue, wantRows bool) (driver.Result, driver.Rows, error) {
	p, ok := s.prepared[ss]
	if !ok {
		var err error
		p, err = ss.conn.(driver.ConnPrepareContext).PrepareContext(ctx, s.st.SQL)
		if err != nil {
			ss.markErr(err)
			return nil, nil, err
		}
		if s.prepared == nil {
			s.prepared = map[*serverSession]driver.Stmt{}
		}
		for old := range s.prepared {
			if old.backend == ss.backend { // a replaced server session's statement is gone
				delete(s.prepared, old)
			}
		}
		s.prepared[ss] = p
	}
	if wantRows {
		rows, err := p.(driver.StmtQueryContext).QueryContext(ctx, args)
		ss.markErr(err)
		return nil, rows, err
	}
	res, err := p.(driver.StmtExecContext).ExecContext(ctx, args)
	ss.markErr(err)
	return res, nil, err
}

func namedValues(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, v := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out
}
