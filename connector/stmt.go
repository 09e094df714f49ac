package connector

import (
	"context"
	"database/sql/driver"

	"github.com/obroute/obroute/internal/routing"
)

// stmt is a prepared statement of a client session. It is prepared at once on the backend it
// routes to without arguments (see prepare), and on any other server session the first time it
// runs there; each server-side statement is reused while both live.
type stmt struct {
	cs       *clientSession
	st       *routing.Statement
	prepared map[*serverSession]driver.Stmt
	// serverInputs is the server's count of placeholders for a statement obroute could not
	// parse, -1 when unknown.
	serverInputs int
}

// prepare analyses query and prepares it on the backend where it routes, so that a statement the
// server refuses fails at Prepare with the server's error, as with go-sql-driver. A route that
// depends on the arguments (a time-sharded table's range), or that is not the statement's own
// text on one backend, is left to the first execution. With a shadow rule configured, only
// shadow traffic is prepared early: a statement prepared without a shadow hint may still be run
// as shadow traffic, and shadow traffic never reaches production.
func (cs *clientSession) prepare(ctx context.Context, query string) (driver.Stmt, error) {
	s := &stmt{cs: cs, st: cs.c.router.Analyze(query), serverInputs: -1}
	switch s.st.Kind {
	case routing.KindBegin, routing.KindCommit, routing.KindRollback, routing.KindSet, routing.KindUse, routing.KindExplainRoute,
		routing.KindSavepoint, routing.KindXA:
		return s, nil // obroute runs these itself
	}
	if cs.tx.lost || s.st.HintErr != nil {
		return s, nil // refused when run
	}
	hints, err := cs.statementHints(ctx)
	if err != nil {
		return s, nil
	}
	plan, err := cs.route(s.st, hints, nil, false)
	if err != nil || len(plan.Targets) != 1 || plan.Targets[0].SQL != s.st.SQL || cs.c.cfg.Shadow != nil && !plan.Shadow {
		return s, nil
	}
	ss, err := cs.server(ctx, cs.readBackend(plan, plan.Targets[0].Backend))
	if err == nil {
		err = cs.sync(ctx, ss)
	}
	if err == nil {
		var p driver.Stmt
		if p, err = ss.conn.(driver.ConnPrepareContext).PrepareContext(ctx, s.st.SQL); err == nil {
			s.prepared = map[*serverSession]driver.Stmt{ss: p}
			if s.st.ParseErr != nil {
				s.serverInputs = p.NumInput()
			}
			return s, nil
		}
		ss.markErr(err)
		cs.dropBroken(ss)
	}
	return nil, cs.keepSession(err)
}

var (
	_ driver.Stmt             = (*stmt)(nil)
	_ driver.StmtExecContext  = (*stmt)(nil)
	_ driver.StmtQueryContext = (*stmt)(nil)
)

// NumInput implements driver.Stmt: the number of ? placeholders; for a statement obroute could
// not parse, the server's count when it was prepared at once, else -1 (database/sql then leaves
// the count to the server).
func (s *stmt) NumInput() int {
	if s.st.ParseErr != nil || s.st.Kind == routing.KindExplainRoute {
		return s.serverInputs
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
