package connector

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"

	"github.com/obroute/obroute/routing"
)

// serverSession is one go-sql-driver connection to one backend, owned by one client session.
type serverSession struct {
	backend *backend
	conn    driver.Conn
	// applied maps each session variable name to the assignment this server session has
	// received; version is the client session's state version it has caught up with.
	applied  map[string]string
	version  uint64
	database string
	// tx is the transaction open on this server session, nil outside one.
	tx driver.Tx
	// broken is set when go-sql-driver reported the connection unusable.
	broken bool
}

func newServerSession(b *backend, conn driver.Conn) *serverSession {
	return &serverSession{backend: b, conn: conn, applied: map[string]string{}}
}

func (s *serverSession) close() error {
	return s.conn.Close()
}

// markErr records whether err left the connection unusable.
func (s *serverSession) markErr(err error) {
	if err == nil {
		return
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysqlInvalidConn) {
		s.broken = true
		return
	}
	if v, ok := s.conn.(driver.Validator); ok && !v.IsValid() {
		s.broken = true
	}
}

// exec runs a statement that returns no rows. prepared forces the binary protocol (a statement
// the application prepared); otherwise go-sql-driver decides exactly as it would on its own.
func (s *serverSession) exec(ctx context.Context, query string, args []driver.NamedValue, prepared bool) (driver.Result, error) {
	if !prepared {
		res, err := s.conn.(driver.ExecerContext).ExecContext(ctx, query, args)
		if err != driver.ErrSkip {
			s.markErr(err)
			return res, err
		}
	}
	stmt, err := s.conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		s.markErr(err)
		return nil, err
	}
	res, err := stmt.(driver.StmtExecContext).ExecContext(ctx, args)
	s.markErr(err)
	if cerr := stmt.Close(); err == nil && cerr != nil {
		s.markErr(cerr)
		err = cerr
	}
	return res, err
}

// query runs a statement that returns rows; see exec for prepared.
func (s *serverSession) query(ctx context.Context, query string, args []driver.NamedValue, prepared bool) (driver.Rows, error) {
	if !prepared {
		rows, err := s.conn.(driver.QueryerContext).QueryContext(ctx, query, args)
		if err != driver.ErrSkip {
			s.markErr(err)
			return rows, err
		}
	}
	stmt, err := s.conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		s.markErr(err)
		return nil, err
	}
	rows, err := stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		s.markErr(err)
		stmt.Close()
		return nil, err
	}
	return wrapRows(rows, stmt.Close), nil
}

// sync brings the server session's session state up to the client session's: the variables
// whose assignment differs are re-applied in one SET, then the current database.
func (s *serverSession) sync(ctx context.Context, st *sessionState) error {
	if s.version == st.version {
		return nil
	}
	var list []string
	var standalone []routing.SessionVar
	for _, v := range st.vars {
		if s.applied[v.Name] == v.Assignment {
			continue
		}
		if v.Standalone {
			standalone = append(standalone, v)
		} else {
			list = append(list, v.Assignment)
		}
	}
	if len(list) > 0 {
		if _, err := s.exec(ctx, "SET "+strings.Join(list, ", "), nil, false); err != nil {
			return err
		}
	}
	for _, v := range standalone {
		if _, err := s.exec(ctx, v.Assignment, nil, false); err != nil {
			return err
		}
	}
	if st.database != "" && st.database != s.database {
		if _, err := s.exec(ctx, "USE "+quoteIdent(st.database), nil, false); err != nil {
			return err
		}
	}
	s.caughtUp(st)
	return nil
}

// caughtUp records that the server session has every assignment of st.
func (s *serverSession) caughtUp(st *sessionState) {
	for _, v := range st.vars {
		s.applied[v.Name] = v.Assignment
	}
	if st.database != "" {
		s.database = st.database
	}
	s.version = st.version
}

func quoteIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}
