package connector

import (
	"context"
	"database/sql/driver"
	"errors"
	"strconv"

	"github.com/obroute/obroute/internal/routing"
)

// serverSession is one go-sql-driver connection to one backend, owned by one client session.
type serverSession struct {
	backend *backend
	conn    driver.Conn
	// applied are the client session's assignments this server session holds; version and
	// shadowVersion are the versions of the client session's production and shadow layers it
	// has caught up with (shadowVersion only on a shadow backend).
	applied       []routing.SessionVar
	version       uint64
	shadowVersion uint64
	database      string
	// shadow is set on a shadow backend: the server session gets the shadow layer of the
	// client session's state on top of production's.
	shadow bool
	// refused names the variable (or "database") of the client session's state the server
	// refused while catching up; "" when it has taken everything.
	refused string
	// inTx is set while the client session's transaction is open on this server session.
	inTx bool
	// holds is the state this server session holds that no other could be given: when it is
	// lost, the client session ends (see clientSession.lostState).
	holds holding
	// verified is set when the client session's ResetSession found the connection alive; the
	// next statement then skips its own liveness check.
	verified bool
	// broken is set when go-sql-driver reported the connection unusable.
	broken bool
	// catalogTag names this server session's catalog temporary tables (catalogTempName), ""
	// until its first catalog statement.
	catalogTag string
	// id is the server's connection id (for KILL QUERY), via the address the session is
	// connected to, epoch the service primary epoch it was opened in (0 without a service).
	id    uint32
	via   *mysqlTarget
	epoch uint64
	// watch tells a statement's own timeout from a dropped connection; nil when unwatched.
	watch *connWatch
	// newRun is set on the first server session opened on another run of the backend's server
	// than the sessions before it (a restart, a service's new primary): its count of changes.
	newRun uint64
}

// holding is a set of the kinds of state a server session holds that cannot be replayed on
// another: with one server, a connection that breaks loses them, and go-sql-driver's
// connection is then discarded.
type holding uint8

const (
	holdsPrepared  holding = 1 << iota // SQL-level prepared statements (PREPARE)
	holdsUserLocks                     // user-level locks (GET_LOCK)
	holdsLocks                         // table locks (LOCK TABLES, FLUSH TABLES … WITH READ LOCK)
	holdsUnknown                       // what a statement whose effect obroute cannot see left (CALL …)
)

// errStatementTimeout is the cause logged for KILL QUERY of a statement that outlived its read or
// write timeout.
var errStatementTimeout = errors.New("the statement outlived its read or write timeout (timeouts.read, timeouts.write or the DSN's readTimeout, writeTimeout)")

func newServerSession(b *backend, conn driver.Conn) *serverSession {
	return &serverSession{backend: b, conn: conn}
}

func (s *serverSession) close() error {
	return s.conn.Close()
}

// valid reports whether go-sql-driver still holds the connection open and idle.
func (s *serverSession) valid() bool {
	v, ok := s.conn.(driver.Validator)
	return !ok || v.IsValid()
}

// addr is the address the server session is connected to.
func (s *serverSession) addr() string {
	if s.via != nil {
		return s.via.addr
	}
	return s.backend.addr
}

// markErr records whether err left the connection unusable, counts backend failures and
// successes for the backend's health, and has the server stop a statement the application
// abandoned: go-sql-driver closes the connection when a context ends, or a read or write
// timeout expires, in the middle of a statement, so the server session is discarded, and KILL
// QUERY is sent on a side connection so that the server stops working on it. Neither is a
// failure of the backend: only a connection it broke is.
func (s *serverSession) markErr(err error) {
	if err == nil {
		s.backend.succeeded()
		return
	}
	valid := true
	if v, ok := s.conn.(driver.Validator); ok {
		valid = v.IsValid()
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysqlInvalidConn) || !valid {
		s.broken = true
	}
	if s.watch.wasInterrupted() {
		s.broken = true
		return // stopped on purpose by the split it belongs to (fanOut), which sends KILL QUERY
	}
	if !valid && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		s.backend.killQuery(s, err)
		return
	}
	if s.broken && s.watch.deadlineHit() {
		s.backend.killQuery(s, errStatementTimeout)
		return
	}
	s.backend.failed(err)
}

// alive reports whether an idle server session is still connected: go-sql-driver's liveness
// check, one non-blocking read on the socket, notices a connection the server closed while
// idle (KILL CONNECTION, wait_timeout, restart) before a statement is written to it.
func (s *serverSession) alive(ctx context.Context) bool {
	if s.broken {
		return false
	}
	v, ok := s.conn.(driver.Validator)
	if !ok || !v.IsValid() {
		return ok // busy (rows open) or closed: the statement will tell
	}
	if r, ok := s.conn.(driver.SessionResetter); ok && r.ResetSession(ctx) != nil {
		return false
	}
	return true
}

// readConnectionID asks the server for the session's connection id (when the handshake could
// not be watched: a custom dialer).
func (s *serverSession) readConnectionID(ctx context.Context) error {
	rows, err := s.query(ctx, "SELECT CONNECTION_ID()"+oneRow, nil, false)
	if err != nil {
		return err
	}
	defer rows.Close()
	dest := make([]driver.Value, 1)
	if err := rows.Next(dest); err != nil {
		return err
	}
	switch v := dest[0].(type) {
	case int64:
		s.id = uint32(v)
	case []byte:
		n, _ := strconv.ParseUint(string(v), 10, 32)
		s.id = uint32(n)
	}
	return nil
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
		r, err := s.conn.(driver.QueryerContext).QueryContext(ctx, query, args)
		if err != driver.ErrSkip {
			s.markErr(err)
			if err != nil {
				return nil, err
			}
			if ctx.Done() == nil {
				// A context that never ends leaves afterRows nothing to do: go-sql-driver's
				// rows as they are, one allocation and one indirection fewer per statement.
				return r, nil
			}
			return &rows{Rows: r, server: s, ctx: ctx}, nil
		}
	}
	stmt, err := s.conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		s.markErr(err)
		return nil, err
	}
	r, err := stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		s.markErr(err)
		stmt.Close()
		return nil, err
	}
	return &rows{Rows: r, server: s, ctx: ctx, stmt: stmt}, nil
}

// afterRows runs when rows of s are closed: rows abandoned because their context ended left
// go-sql-driver's connection closed; the server is told to stop the query.
func (s *serverSession) afterRows(ctx context.Context) {
	if ctx.Err() == nil {
		return
	}
	if v, ok := s.conn.(driver.Validator); ok && !v.IsValid() {
		s.markErr(ctx.Err())
	}
}
