package connector

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"reflect"
	"slices"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/routing"
)

// clientSession is one driver.Conn handed to database/sql. database/sql never uses it from two
// goroutines at once, except for closing rows; the fan-out of a split query runs its own
// goroutines over distinct server sessions.
type clientSession struct {
	c *Connector
	// servers are the server sessions, at most one per backend (see serverOf, addServer,
	// dropServer). A slice, not a map: database/sql checks and resets the client session
	// around every statement, and with a handful of backends ranging over a slice and finding
	// one by name cost less than a map's.
	servers []*serverSession
	// state is the session state production set; shadowState what shadow traffic set, applied
	// over it on shadow backends only.
	state       sessionState
	shadowState sessionState
	tx          txState
	// routing is the client session's state as the router sees it, reused for every statement:
	// its LastBackend is the production backend of the last statement (for shadow traffic, the
	// backend it was mapped from), and its TempTables those of the statement's traffic.
	routing routing.SessionState
	// lastServer is the backend that ran the last statement, shadow or not.
	lastServer string
	// tempTables maps each temporary table (lower case) to the backend holding it, for production
	// [0] and shadow traffic [1]: neither sees the other's.
	tempTables [2]map[string]string
	// autocommit mirrors production's autocommit; with it off, the first statement after a
	// commit starts a transaction. shadowAutocommit is shadow traffic's own when it set one
	// (1 on, -1 off), else 0.
	autocommit       bool
	shadowAutocommit int8
	closed           bool
	// broken is set when a transaction lost with its server session has ended: like a
	// go-sql-driver connection that broke, the client session then answers driver.ErrBadConn
	// to everything, so that database/sql discards it.
	broken bool
	// ownsConnector is set for a session of openOne: closing it closes the connector.
	ownsConnector bool
	// zoneMemo is the last time_zone assignment read and the zone it gives (timezone.go).
	zoneMemo [2]string
	// probed are the column types the last probe of a split SELECT read (see learnTypes).
	probed probedTypes
	// pass is the statement passing through and its plan (passthrough.go).
	pass passed
	// statsShard is the shard of the connector's route counts this client session adds to.
	statsShard uint8
	// assigned are user variables the last statement assigned outside SET, read back before
	// the next one (readAssigned).
	assigned assignedVars
	// completion is completion_type as production [0] and shadow traffic [1] set it ("no_chain",
	// "chain", "release"; "" when it set none: the server's default, NO_CHAIN).
	completion [2]string
	// pins, locks and prepared are, for production [0] and shadow traffic [1], the server
	// session every statement goes to (control.go), the table locks held, and the SQL-level
	// prepared statements by name (lower case).
	pins     [2]pin
	locks    [2]tableLocks
	prepared [2]map[string]sqlStatement
	// funcs are where the session functions and diagnostics of the last statements are
	// (registers.go).
	funcs sessionFuncs
	// lostState is set when a server session holding state that cannot be replayed (prepared
	// statements, locks, what CALL left) was lost: as go-sql-driver's broken connection, the
	// client session then answers driver.ErrBadConn (once a transaction lost with it has ended).
	lostState bool
}

// traffic indexes the per-traffic state of a client session: 0 production, 1 shadow.
func traffic(shadow bool) int {
	if shadow {
		return 1
	}
	return 0
}

type txState struct {
	active bool
	// lost: the transaction's server session was lost; its statements fail until it ends.
	// unknown: a statement that commits implicitly was sent before, so whether the
	// transaction was committed is unknown.
	lost     bool
	unknown  bool
	explicit bool // BeginTx or BEGIN; false for an implicit transaction under autocommit=0
	backend  string
	shadow   bool
	opts     driver.TxOptions
	hints    hint.Set // the hints of BeginTx's context, in force for every statement of the tx
	// savepoints are those set while the transaction was not bound yet, in order (lower case):
	// they are set on its backend after it starts there (startTx).
	savepoints []string
	// xa is the xid of an XA transaction (XA START … XA COMMIT), "" for a local one; xaStart
	// is the XA START statement, sent when the transaction binds.
	xa, xaStart string
}

var (
	_ driver.Conn               = (*clientSession)(nil)
	_ driver.ConnPrepareContext = (*clientSession)(nil)
	_ driver.ConnBeginTx        = (*clientSession)(nil)
	_ driver.ExecerContext      = (*clientSession)(nil)
	_ driver.QueryerContext     = (*clientSession)(nil)
	_ driver.Pinger             = (*clientSession)(nil)
	_ driver.SessionResetter    = (*clientSession)(nil)
	_ driver.Validator          = (*clientSession)(nil)
	_ driver.NamedValueChecker  = (*clientSession)(nil)
	//lint:ignore SA1019 go-sql-driver's connections implement it: parity
	_ driver.Execer = (*clientSession)(nil)
	//lint:ignore SA1019 go-sql-driver's connections implement it: parity
	_ driver.Queryer = (*clientSession)(nil)
)

func newClientSession(c *Connector) *clientSession {
	cs := &clientSession{c: c, autocommit: c.autocommit, statsShard: c.stats.routes.shard()}
	cs.tempTables = [2]map[string]string{{}, {}}
	cs.prepared = [2]map[string]sqlStatement{{}, {}}
	cs.routing.TempTables = cs.tempTables[0]
	return cs
}

// unusable reports whether the client session answers driver.ErrBadConn: closed, broken, or
// its unreplayable state lost (once a transaction lost with it has ended).
//
//go:noinline
func (cs *clientSession) unusable() bool {
	return cs.closed || cs.broken || cs.lostState && !cs.tx.lost
}

// Connector returns the connector of the client session, for callers that reach it through
// (*sql.Conn).Raw.
func (cs *clientSession) Connector() *Connector { return cs.c }

// Prepare implements driver.Conn.
func (cs *clientSession) Prepare(query string) (driver.Stmt, error) {
	return cs.PrepareContext(context.Background(), query)
}

// PrepareContext implements driver.ConnPrepareContext: see prepare.
func (cs *clientSession) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if cs.unusable() {
		return nil, driver.ErrBadConn
	}
	return cs.prepare(ctx, query)
}

// Begin implements driver.Conn.
func (cs *clientSession) Begin() (driver.Tx, error) {
	return cs.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx implements driver.ConnBeginTx. Nothing is sent yet: the transaction binds to the
// backend of its first statement, where it is started with opts (see begin). A lost transaction
// still open (a text BEGIN) ends here, and the client session with it.
func (cs *clientSession) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if cs.tx.lost {
		cs.endLostTx()
	}
	if cs.unusable() {
		return nil, driver.ErrBadConn
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch sql.IsolationLevel(opts.Isolation) {
	case sql.LevelDefault, sql.LevelReadUncommitted, sql.LevelReadCommitted, sql.LevelRepeatableRead, sql.LevelSerializable:
	default:
		return nil, errorf("mysql: unsupported isolation level: %v", sql.IsolationLevel(opts.Isolation))
	}
	if err := cs.begin(ctx, opts, hint.FromContext(ctx)); err != nil {
		return nil, cs.keepSession(err)
	}
	return &tx{cs: cs}, nil
}

// ExecContext implements driver.ExecerContext.
func (cs *clientSession) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if res, _, ok, err := cs.passthrough(ctx, query, args, false); ok {
		return res, err
	}
	res, _, err := cs.run(ctx, cs.c.router.Analyze(query), args, false, nil)
	return res, err
}

// QueryContext implements driver.QueryerContext.
func (cs *clientSession) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if _, rows, ok, err := cs.passthrough(ctx, query, args, true); ok {
		return rows, err
	}
	_, rows, err := cs.run(ctx, cs.c.router.Analyze(query), args, true, nil)
	return rows, err
}

// Exec implements driver.Execer, which go-sql-driver's connections also offer.
func (cs *clientSession) Exec(query string, args []driver.Value) (driver.Result, error) {
	return cs.ExecContext(context.Background(), query, namedValues(args))
}

// Query implements driver.Queryer, which go-sql-driver's connections also offer.
func (cs *clientSession) Query(query string, args []driver.Value) (driver.Rows, error) {
	return cs.QueryContext(context.Background(), query, namedValues(args))
}

// Ping implements driver.Pinger: it pings the default backend, opening its server session.
func (cs *clientSession) Ping(ctx context.Context) error {
	if cs.unusable() {
		return driver.ErrBadConn
	}
	s, err := cs.server(ctx, cs.c.cfg.Default)
	if err != nil {
		return err
	}
	if p, ok := s.conn.(driver.Pinger); ok {
		err = p.Ping(ctx)
		s.markErr(err)
		cs.dropBroken(s)
	}
	return cs.keepSession(err)
}

// ResetSession implements driver.SessionResetter. A server session found dead is dropped and
// replaced on next use; the client session itself stays valid unless IsValid says otherwise.
func (cs *clientSession) ResetSession(ctx context.Context) error {
	if !cs.IsValid() {
		return driver.ErrBadConn
	}
	for i := len(cs.servers) - 1; i >= 0; i-- { // backwards: dropBroken removes s
		s := cs.servers[i]
		if r, ok := s.conn.(driver.SessionResetter); !ok || r.ResetSession(ctx) == nil {
			s.verified = true
			continue
		}
		s.broken = true
		cs.dropBroken(s)
		if cs.unusable() {
			return driver.ErrBadConn // it held what cannot be given to another server session
		}
		cs.replaced(ctx, s.backend, "connection lost while idle")
	}
	return nil
}

// IsValid implements driver.Validator. A broken client session, or one that a backend refused
// to bring in line with its session state, is not handed out again. One whose transaction is
// lost stays until the application ends that transaction, so that no statement the application
// meant for it runs elsewhere.
func (cs *clientSession) IsValid() bool {
	return !cs.unusable() && !cs.outOfLine()
}

// CheckNamedValue implements driver.NamedValueChecker with go-sql-driver's conversions:
// unsigned integers (uint64 with the high bit set included) and json.RawMessage pass as they
// are; everything else gets database/sql's default conversion, as go-sql-driver gives it.
func (cs *clientSession) CheckNamedValue(nv *driver.NamedValue) error {
	switch v := nv.Value.(type) {
	case json.RawMessage:
		return nil
	case uint64, uint, uint32, uint16, uint8:
		nv.Value = reflect.ValueOf(v).Uint()
		return nil
	}
	return driver.ErrSkip
}

// Close implements driver.Conn: it closes every server session; an unfinished transaction is
// rolled back by its server.
func (cs *clientSession) Close() error {
	if cs.closed {
		return nil
	}
	cs.closed = true
	var first error
	for _, s := range cs.servers {
		if err := s.close(); err != nil && first == nil {
			first = err
		}
	}
	cs.servers = nil
	if cs.ownsConnector {
		if err := cs.c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// server returns the client session's server session to backend, opening it if needed.
// An idle server session found dead, or opened on a service primary that has since moved, is
// replaced; one whose backend is marked down is dropped and ErrBackendDown returned at once.
func (cs *clientSession) server(ctx context.Context, backend string) (*serverSession, error) {
	if cs.unusable() {
		return nil, driver.ErrBadConn // a server session lost state no other can be given
	}
	be, ok := cs.c.backends[backend]
	if !ok {
		return nil, errorf("%w %q", routing.ErrUnknownBackend, backend)
	}
	if s := cs.serverOf(backend); s != nil && !s.broken {
		if s, err := cs.reuse(ctx, be, s); s != nil || err != nil {
			return s, err
		}
		if cs.unusable() {
			return nil, driver.ErrBadConn
		}
	}
	// The server session is missing or lost. A transaction bound to it, or temporary tables
	// in it, are gone with it: never continue them on a new server session.
	if cs.tx.active && cs.tx.backend == backend {
		return nil, cs.loseTx(ctx, cs.serverOf(backend), errConnectionLost)
	}
	if err := cs.loseTempTables(backend); err != nil {
		return nil, err
	}
	s, err := be.open(ctx)
	if err != nil {
		return nil, err
	}
	if s.newRun == 0 {
		cs.c.startChanged(ctx, be, s)
	}
	if s.newRun > 0 {
		cs.c.serverChanged(ctx, be, s.newRun)
	}
	s.shadow = cs.c.isShadowBackend(backend)
	cs.c.stats.serverOpened.Add(1)
	cs.addServer(s)
	return s, nil
}

// serverOf returns the client session's server session to backend, nil when it has none.
//
//go:noinline
func (cs *clientSession) serverOf(backend string) *serverSession {
	for _, s := range cs.servers {
		if s.backend.name == backend {
			return s
		}
	}
	return nil
}

// addServer keeps s as the client session's server session to its backend.
func (cs *clientSession) addServer(s *serverSession) {
	if old := cs.serverOf(s.backend.name); old != nil {
		cs.dropServer(old)
	}
	cs.servers = append(cs.servers, s)
}

// dropServer forgets s.
func (cs *clientSession) dropServer(s *serverSession) {
	if i := slices.Index(cs.servers, s); i >= 0 {
		cs.servers = slices.Delete(cs.servers, i, i+1)
	}
}

// dropBroken forgets a server session go-sql-driver reported unusable. When it held state no
// other server session can be given, the client session ends with it (lostState).
func (cs *clientSession) dropBroken(s *serverSession) {
	if !s.broken {
		return
	}
	if s.holds != 0 && cs.serverOf(s.backend.name) == s {
		cs.lostState = true
	}
	cs.dropServer(s)
	s.close()
}
