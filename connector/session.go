package connector

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/merge"
	"github.com/obroute/obroute/routing"
)

// clientSession is one driver.Conn handed to database/sql. database/sql never uses it from two
// goroutines at once, except for closing rows; the fan-out of a split query runs its own
// goroutines over distinct server sessions.
type clientSession struct {
	c       *Connector
	servers map[string]*serverSession // by backend name
	state   sessionState
	tx      txState
	routing routing.SessionState // reused for every statement
	// autocommit mirrors the session's autocommit; with it off, the first statement after a
	// commit starts a transaction.
	autocommit bool
	// nextTx is a one-shot SET TRANSACTION waiting for the next transaction's backend.
	nextTx string
	closed bool
	// ownsConnector is set for a session of connector.Open: closing it closes the connector.
	ownsConnector bool
}

type txState struct {
	active bool
	// lost: the transaction's server session was lost; its statements fail until it ends.
	lost     bool
	explicit bool // BeginTx or BEGIN; false for an implicit transaction under autocommit=0
	backend  string
	shadow   bool
	opts     driver.TxOptions
	hints    hint.Set // the hints of BeginTx's context, in force for every statement of the tx
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
	cs := &clientSession{c: c, servers: map[string]*serverSession{}, autocommit: c.autocommit}
	cs.routing.TempTables = map[string]string{}
	return cs
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
	if cs.closed {
		return nil, driver.ErrBadConn
	}
	return cs.prepare(ctx, query)
}

// Begin implements driver.Conn.
func (cs *clientSession) Begin() (driver.Tx, error) {
	return cs.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx implements driver.ConnBeginTx. Nothing is sent yet: the transaction binds to the
// backend of its first statement, where it is started with opts.
func (cs *clientSession) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if cs.closed {
		return nil, driver.ErrBadConn
	}
	switch sql.IsolationLevel(opts.Isolation) {
	case sql.LevelDefault, sql.LevelReadUncommitted, sql.LevelReadCommitted, sql.LevelRepeatableRead, sql.LevelSerializable:
	default:
		return nil, fmt.Errorf("mysql: unsupported isolation level: %v", sql.IsolationLevel(opts.Isolation))
	}
	if err := cs.endImplicitTx(ctx); err != nil {
		return nil, err
	}
	cs.tx = txState{active: true, explicit: true, opts: opts, hints: hint.FromContext(ctx)}
	return &tx{cs: cs}, nil
}

// ExecContext implements driver.ExecerContext.
func (cs *clientSession) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	res, _, err := cs.run(ctx, cs.c.router.Analyze(query), args, false, nil)
	return res, err
}

// QueryContext implements driver.QueryerContext.
func (cs *clientSession) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
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
	if cs.closed {
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
// replaced on next use; the client session itself stays valid.
func (cs *clientSession) ResetSession(ctx context.Context) error {
	if cs.closed {
		return driver.ErrBadConn
	}
	for _, s := range cs.servers {
		if r, ok := s.conn.(driver.SessionResetter); !ok || r.ResetSession(ctx) == nil {
			s.verified = true
			continue
		}
		s.broken = true
		cs.dropBroken(s)
		cs.replaced(ctx, s.backend, "connection lost while idle")
	}
	return nil
}

// IsValid implements driver.Validator.
func (cs *clientSession) IsValid() bool { return !cs.closed }

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
	for name, s := range cs.servers {
		if err := s.close(); err != nil && first == nil {
			first = err
		}
		delete(cs.servers, name)
	}
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
	be, ok := cs.c.backends[backend]
	if !ok {
		return nil, fmt.Errorf("%w %q", routing.ErrUnknownBackend, backend)
	}
	if s, ok := cs.servers[backend]; ok && !s.broken {
		if s, err := cs.reuse(ctx, be, s); s != nil || err != nil {
			return s, err
		}
	}
	// The server session is missing or lost. A transaction bound to it, or temporary tables
	// in it, are gone with it: never continue them on a new server session.
	if cs.tx.active && cs.tx.backend == backend {
		return nil, cs.loseTx(ctx, cs.servers[backend], errConnectionLost)
	}
	if err := cs.loseTempTables(backend); err != nil {
		return nil, err
	}
	s, err := be.open(ctx)
	if err != nil {
		return nil, err
	}
	cs.c.stats.serverOpened.Add(1)
	cs.servers[backend] = s
	return s, nil
}

// dropBroken forgets a server session go-sql-driver reported unusable.
func (cs *clientSession) dropBroken(s *serverSession) {
	if !s.broken {
		return
	}
	if cs.servers[s.backend.name] == s {
		delete(cs.servers, s.backend.name)
	}
	s.close()
}

// run executes one statement: routing, session bookkeeping, execution.
func (cs *clientSession) run(ctx context.Context, st *routing.Statement, args []driver.NamedValue, wantRows bool, prep *stmt) (driver.Result, driver.Rows, error) {
	if cs.closed {
		return nil, nil, driver.ErrBadConn
	}
	switch st.Kind {
	case routing.KindBegin:
		// Hints on BEGIN (context or comment, e.g. /* shadow */ BEGIN) hold for the whole transaction.
		if st.HintErr != nil {
			return nil, nil, st.HintErr
		}
		hints, err := hint.Combine(hint.FromContext(ctx), st.Hints)
		if err != nil {
			return nil, nil, err
		}
		if err := cs.endImplicitTx(ctx); err != nil {
			return nil, nil, err
		}
		if cs.tx.active && cs.tx.backend != "" {
			// BEGIN inside a transaction commits it first, as MySQL does.
			if err := cs.finishTx(ctx, false, "COMMIT"); err != nil {
				return nil, nil, err
			}
		}
		cs.tx = txState{active: true, explicit: true, opts: driver.TxOptions{ReadOnly: st.ReadOnly}, hints: hints}
		return cs.noRows(wantRows)
	case routing.KindCommit, routing.KindRollback:
		if err := cs.finishTx(ctx, st.Kind == routing.KindRollback, st.SQL); err != nil {
			return nil, nil, cs.keepSession(err)
		}
		return cs.noRows(wantRows)
	case routing.KindExplainRoute:
		rows, err := cs.explain(ctx, st.Explained, args)
		if err != nil || wantRows {
			return nil, rows, err
		}
		rows.Close()
		return driver.RowsAffected(0), nil, nil
	case routing.KindSet:
		// SET TRANSACTION … waits for the backend of the next transaction, unless a transaction
		// is bound: then it goes there at once and the server answers (MySQL refuses it inside a
		// transaction).
		if st.NextTransaction != "" && !(cs.tx.active && cs.tx.backend != "") {
			cs.nextTx = st.NextTransaction
			return cs.noRows(wantRows)
		}
	}
	if cs.tx.lost && st.Kind != routing.KindExplainRoute {
		return nil, nil, fmt.Errorf("%w: end the transaction with ROLLBACK before running more statements", ErrTxBackendLost)
	}
	start := time.Now()
	hints, err := cs.statementHints(ctx)
	if err == nil {
		err = cs.c.loadMetadata(ctx, st)
	}
	var plan *routing.Plan
	if err == nil {
		plan, err = cs.route(st, hints, args, cs.c.logger.Enabled(ctx, slog.LevelDebug))
	}
	if err != nil {
		cs.c.routeRefused(ctx, st, err, start)
		return nil, nil, err
	}
	cs.c.stats.routes[plan.Class].Add(1)
	res, rows, err := cs.executeWithin(ctx, plan, wantRows, prep)
	err = cs.keepSession(err)
	cs.c.routeDone(ctx, plan, err, start)
	return res, rows, err
}

// executeWithin executes plan within the time budget of its query level.
func (cs *clientSession) executeWithin(ctx context.Context, plan *routing.Plan, wantRows bool, prep *stmt) (driver.Result, driver.Rows, error) {
	if plan.Budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, plan.Budget)
		res, rows, err := cs.execute(ctx, plan, wantRows, prep)
		if err != nil || rows == nil {
			cancel()
			return res, rows, err
		}
		return res, wrapRows(rows, func() error { cancel(); return nil }), nil
	}
	return cs.execute(ctx, plan, wantRows, prep)
}

func (cs *clientSession) noRows(wantRows bool) (driver.Result, driver.Rows, error) {
	return cs.noRowsResult(driver.RowsAffected(0), wantRows)
}

// noRowsResult answers a statement without rows: res for Exec, empty rows for Query.
func (cs *clientSession) noRowsResult(res driver.Result, wantRows bool) (driver.Result, driver.Rows, error) {
	if wantRows {
		return nil, emptyRows{}, nil
	}
	return res, nil, nil
}

// route asks the router, with the client session's state as data; explain asks for the
// plan's prompts.
func (cs *clientSession) route(st *routing.Statement, hints hint.Set, args []driver.NamedValue, explain bool) (*routing.Plan, error) {
	rs := &cs.routing
	rs.InTransaction = cs.tx.active
	rs.TxBackend = cs.tx.backend
	rs.TxShadow = cs.tx.shadow
	return cs.c.router.Route(routing.Input{Statement: st, Hints: hints, Args: args, Session: rs, Explain: explain})
}

// execute runs a plan's targets and does the client session's bookkeeping.
func (cs *clientSession) execute(ctx context.Context, plan *routing.Plan, wantRows bool, prep *stmt) (driver.Result, driver.Rows, error) {
	st := plan.Statement
	first := plan.Targets[0].Backend
	// autocommit=0: a statement outside a transaction opens one on its server.
	opensImplicitTx := !cs.autocommit && !cs.tx.active && st.Kind != routing.KindSet && st.Kind != routing.KindUse
	// A statement that opens a transaction (the first of BeginTx/BEGIN, or any under autocommit=0)
	// binds it to one backend: it cannot span several.
	if (cs.tx.active && cs.tx.backend == "") || opensImplicitTx {
		if backends := plan.Backends(); len(backends) > 1 {
			return nil, nil, fmt.Errorf("%w: the first statement of the transaction needs backends %s; start the transaction with a statement on one backend",
				routing.ErrCrossBackendTx, strings.Join(backends, ", "))
		}
	}
	var res driver.Result
	var rows driver.Rows
	var err error
	if len(plan.Targets) == 1 {
		res, rows, err = cs.runTarget(ctx, plan, plan.Targets[0], wantRows, prep)
		if err == nil && rows != nil && plan.Merge != nil {
			// One backend, several tables: the legs of its UNION ALL still need merging.
			rows, err = merge.New(*plan.Merge, []driver.Rows{rows})
		}
	} else if wantRows {
		rows, err = cs.queryTargets(ctx, plan)
	} else {
		res, err = cs.execTargets(ctx, plan)
	}
	if opensImplicitTx && (err == nil || reachedServer(err)) {
		// It reached its server, which now holds the transaction (a failed statement opens it
		// too) until COMMIT/ROLLBACK.
		cs.tx = txState{active: true, backend: first, shadow: plan.Shadow}
	}
	if err != nil {
		return nil, nil, err
	}
	cs.routing.LastBackend = first
	if st.TempTableCreated != "" {
		cs.routing.TempTables[st.TempTableCreated] = first
	}
	for _, t := range st.TempTablesDropped {
		delete(cs.routing.TempTables, t)
	}
	if st.Kind == routing.KindDDL && st.TempTableCreated == "" && len(st.TempTablesDropped) == 0 && cs.tx.active && cs.tx.backend != "" {
		// DDL commits the transaction on the server (implicit commit).
		cs.closeTx()
	}
	return res, rows, nil
}

// runTarget runs one target on its server session, binding a pending transaction to it and
// replacing a server session that was lost while idle.
func (cs *clientSession) runTarget(ctx context.Context, plan *routing.Plan, t routing.Target, wantRows bool, prep *stmt) (driver.Result, driver.Rows, error) {
	for attempt := 0; ; attempt++ {
		t.Backend = cs.readBackend(plan, t.Backend)
		s, err := cs.server(ctx, t.Backend)
		if err != nil {
			return nil, nil, err
		}
		res, rows, err := cs.runOn(ctx, s, plan, t, wantRows, prep)
		if err == nil {
			return res, rows, nil
		}
		// An implicit (autocommit=0) transaction has no s.tx: whatever ran before is lost too.
		lostInTx := cs.tx.active && cs.tx.backend == s.backend.name && (s.tx != nil || !cs.tx.explicit)
		cs.dropBroken(s)
		if s.broken && lostInTx {
			return nil, nil, cs.loseTx(ctx, s, err)
		}
		// Retry only what provably never reached the server, and only outside a transaction
		// (or before it is bound to its backend).
		if attempt == 0 && s.broken && errors.Is(err, driver.ErrBadConn) && (!cs.tx.active || cs.tx.backend == "") {
			cs.replaced(ctx, s.backend, "connection lost")
			continue
		}
		// A write the old primary refused as read-only did nothing: after a switchover it
		// goes to the new primary.
		if attempt == 0 && !cs.tx.active && cs.awaitPrimaryChange(ctx, s, err) {
			continue
		}
		return nil, nil, err
	}
}

// errConnectionLost stands for driver.ErrBadConn in obroute's own errors, which must not be
// mistaken by database/sql for "this client session is dead".
var errConnectionLost = errors.New("connection lost")

// reachedServer reports whether a statement that failed with err was answered by its server.
func reachedServer(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me)
}

// keepSession turns driver.ErrBadConn (a server session lost before anything was sent) into an
// ordinary error when database/sql, which discards a client session that returns it, would
// throw away more than the lost server session: a transaction, temporary tables, the server
// sessions of other backends. Otherwise ErrBadConn stays, exactly as go-sql-driver returns it
// (database/sql then retries on a fresh client session; rejectReadOnly relies on that).
func (cs *clientSession) keepSession(err error) error {
	if !errors.Is(err, driver.ErrBadConn) {
		return err
	}
	if cs.tx.active || len(cs.routing.TempTables) > 0 || len(cs.servers) > 0 {
		return fmt.Errorf("obroute: %w before the statement was sent; it did not run", errConnectionLost)
	}
	return err
}

func errorText(err error) string {
	if errors.Is(err, driver.ErrBadConn) {
		return errConnectionLost.Error()
	}
	return err.Error()
}

// runOn runs t on s: session state sync, transaction start, the statement, state recording.
func (cs *clientSession) runOn(ctx context.Context, s *serverSession, plan *routing.Plan, t routing.Target, wantRows bool, prep *stmt) (driver.Result, driver.Rows, error) {
	st := plan.Statement
	if err := s.sync(ctx, &cs.state); err != nil {
		return nil, nil, err
	}
	if cs.tx.active && cs.tx.explicit && s.tx == nil {
		if cs.tx.backend != "" && cs.tx.backend != s.backend.name {
			return nil, nil, fmt.Errorf("%w: bound to %s, routed to %s", routing.ErrCrossBackendTx, cs.tx.backend, s.backend.name)
		}
		if err := cs.startTx(ctx, s, plan.Shadow); err != nil {
			return nil, nil, err
		}
	} else if cs.nextTx != "" && st.Kind != routing.KindSet && st.Kind != routing.KindUse {
		// SET TRANSACTION … applies to the next transaction, here the statement's own.
		if err := cs.applyNextTx(ctx, s); err != nil {
			return nil, nil, err
		}
	}
	switch st.Kind {
	case routing.KindSet:
		res, err := s.exec(ctx, t.SQL, t.Args, false)
		if err != nil {
			return nil, nil, err
		}
		if err := cs.recordSet(ctx, s, st); err != nil {
			return nil, nil, err
		}
		return cs.noRowsResult(res, wantRows)
	case routing.KindUse:
		res, err := s.exec(ctx, t.SQL, nil, false)
		if err != nil {
			return nil, nil, err
		}
		cs.state.use(st.Database)
		s.caughtUp(&cs.state)
		return cs.noRowsResult(res, wantRows)
	}
	prepared := prep != nil
	if prepared && t.SQL == st.SQL {
		return prep.runOn(ctx, s, t.Args, wantRows)
	}
	if wantRows {
		rows, err := s.query(ctx, t.SQL, t.Args, prepared)
		return nil, rows, err
	}
	res, err := s.exec(ctx, t.SQL, t.Args, prepared)
	return res, nil, err
}

// recordSet keeps the session assignments of a SET that s has just run. An assignment whose
// value is an expression is recorded with the value s computed, so that replaying it elsewhere
// gives the same value.
func (cs *clientSession) recordSet(ctx context.Context, s *serverSession, st *routing.Statement) error {
	if len(st.Vars) == 0 {
		return nil
	}
	vars, copied := st.Vars, false
	for i, v := range st.Vars {
		if v.Value != "" || v.Standalone || v.Name == "names" {
			continue
		}
		lit, err := readBack(ctx, s, v.Name)
		if err != nil {
			return err
		}
		if !copied { // st is shared by every client session: never modify it
			vars, copied = append([]routing.SessionVar(nil), st.Vars...), true
		}
		vars[i].Assignment = variableRef(v.Name) + " = " + lit
		vars[i].Value = strings.ToLower(strings.Trim(lit, "'"))
	}
	cs.state.record(vars)
	s.caughtUp(&cs.state)
	for _, v := range vars {
		if v.Name == "autocommit" {
			cs.autocommit = isOn(v.Value)
			if cs.autocommit && cs.tx.active && !cs.tx.explicit {
				cs.closeTx() // SET autocommit=1 commits the implicit transaction
			}
		}
	}
	return nil
}

// isOn reads a boolean system variable's value as MySQL does (1, ON, TRUE).
func isOn(v string) bool { return v != "0" && v != "off" && v != "false" }

func variableRef(name string) string {
	if strings.HasPrefix(name, "@") {
		return name
	}
	return "@@session." + name
}

// readBack reads a variable's current value on s as an SQL literal.
func readBack(ctx context.Context, s *serverSession, name string) (string, error) {
	rows, err := s.query(ctx, "SELECT "+variableRef(name), nil, false)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	dest := make([]driver.Value, 1)
	if err := rows.Next(dest); err != nil {
		return "", fmt.Errorf("obroute: reading back %s after SET: %w", name, err)
	}
	numeric := false
	if ct, ok := rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		switch ct.ColumnTypeDatabaseTypeName(0) {
		case "BIGINT", "INT", "DECIMAL", "DOUBLE", "FLOAT", "TINYINT", "SMALLINT", "MEDIUMINT":
			numeric = true
		}
	}
	return sqlLiteral(dest[0], numeric), nil
}

func sqlLiteral(v driver.Value, numeric bool) string {
	var text string
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		text = string(x)
	case string:
		text = x
	default:
		return fmt.Sprint(x)
	}
	if numeric {
		return text
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(text) + "'"
}

// applyNextTx sends a pending one-shot SET TRANSACTION to s, where the next transaction runs.
func (cs *clientSession) applyNextTx(ctx context.Context, s *serverSession) error {
	if cs.nextTx == "" {
		return nil
	}
	next := cs.nextTx
	cs.nextTx = "" // applied, or refused by the server: either way it is spent
	_, err := s.exec(ctx, next, nil, false)
	return err
}

// startTx starts the pending transaction on s, the backend of its first statement.
func (cs *clientSession) startTx(ctx context.Context, s *serverSession, shadow bool) error {
	if err := cs.applyNextTx(ctx, s); err != nil {
		return err
	}
	tx, err := s.conn.(driver.ConnBeginTx).BeginTx(ctx, cs.tx.opts)
	if err != nil {
		s.markErr(err)
		return err
	}
	s.tx = tx
	cs.tx.backend = s.backend.name
	cs.tx.shadow = shadow
	return nil
}

// finishTx commits (rollback false) or rolls back the client session's transaction on its
// backend; verb is the statement text to send where no go-sql-driver transaction carries it. A
// transaction that never ran a statement has nothing to finish.
func (cs *clientSession) finishTx(ctx context.Context, rollback bool, verb string) error {
	if !cs.tx.active {
		// No transaction obroute knows of. The server may still have one (autocommit turned off
		// where obroute could not see it, init_connect …): send the verb to the last server
		// session, as a single connection would; with no transaction it does nothing there.
		if s := cs.servers[cs.routing.LastBackend]; s != nil && !s.broken {
			_, err := s.exec(ctx, verb, nil, false)
			cs.dropBroken(s)
			return err
		}
		return nil
	}
	if cs.tx.lost {
		cs.closeTx()
		if rollback {
			return nil // what it asks for has happened: the server rolled the transaction back
		}
		return fmt.Errorf("%w: COMMIT is impossible", ErrTxBackendLost)
	}
	s := cs.servers[cs.tx.backend]
	defer cs.closeTx()
	if cs.tx.backend == "" {
		return nil
	}
	if s == nil {
		cs.c.stats.serverLost.Add(1)
		return fmt.Errorf("%w (backend %s)", ErrTxBackendLost, cs.tx.backend)
	}
	var err error
	switch {
	case s.tx != nil && rollback:
		err = s.tx.Rollback()
	case s.tx != nil:
		err = s.tx.Commit()
	default:
		_, err = s.exec(ctx, verb, nil, false)
	}
	if err != nil {
		s.markErr(err)
		if s.broken {
			cs.dropBroken(s)
			cs.c.stats.serverLost.Add(1)
			return fmt.Errorf("%w (backend %s: %v)", ErrTxBackendLost, s.backend.name, errorText(err))
		}
	}
	return err
}

// closeTx forgets the transaction.
func (cs *clientSession) closeTx() {
	if s := cs.servers[cs.tx.backend]; s != nil {
		s.tx = nil
	}
	cs.tx = txState{}
}

// endImplicitTx commits an implicit (autocommit=0) transaction before an explicit one starts,
// as MySQL does.
func (cs *clientSession) endImplicitTx(ctx context.Context) error {
	if cs.tx.active && !cs.tx.explicit {
		return cs.finishTx(ctx, false, "COMMIT")
	}
	return nil
}

// queryTargets runs the targets of a split query concurrently, one per backend, and merges
// their rows. The first error cancels the others.
func (cs *clientSession) queryTargets(ctx context.Context, plan *routing.Plan) (driver.Rows, error) {
	servers := make([]*serverSession, len(plan.Targets))
	for i, t := range plan.Targets {
		s, err := cs.server(ctx, t.Backend)
		if err != nil {
			return nil, err
		}
		for _, other := range servers[:i] {
			if other == s {
				return nil, fmt.Errorf("obroute: internal error: plan sends two row streams to backend %s", t.Backend)
			}
		}
		if err := s.sync(ctx, &cs.state); err != nil {
			return nil, err
		}
		servers[i] = s
	}
	qctx, cancel := context.WithCancel(ctx)
	results := make([]driver.Rows, len(plan.Targets))
	errs := make([]error, len(plan.Targets))
	var wg sync.WaitGroup
	for i := range plan.Targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := plan.Targets[i]
			results[i], errs[i] = servers[i].query(qctx, t.SQL, t.Args, false)
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for i, r := range results {
			if r != nil {
				r.Close()
			}
			cs.dropBroken(servers[i])
		}
		cancel()
		return nil, firstError(errs)
	}
	spec := merge.Spec{Limit: -1}
	if plan.Merge != nil {
		spec = *plan.Merge
	}
	merged, err := merge.New(spec, results)
	if err != nil {
		cancel()
		return nil, err
	}
	return wrapRows(merged, func() error { cancel(); return nil }), nil
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// undoTimeout bounds the undo of a failed split write.
const undoTimeout = 5 * time.Second

// execTargets runs the targets of a split write. The router only splits a write across tables
// of one backend; the parts land together or not at all: outside a transaction in a local one,
// inside the client's transaction behind a savepoint.
func (cs *clientSession) execTargets(ctx context.Context, plan *routing.Plan) (driver.Result, error) {
	backends := plan.Backends()
	if len(backends) > 1 {
		return nil, fmt.Errorf("%w: a write to backends %s would not be atomic; write to each separately", routing.ErrCrossBackend, strings.Join(backends, ", "))
	}
	s, err := cs.server(ctx, backends[0])
	if err != nil {
		return nil, err
	}
	if err := s.sync(ctx, &cs.state); err != nil {
		return nil, err
	}
	if cs.tx.active && cs.tx.explicit && s.tx == nil {
		if err := cs.startTx(ctx, s, plan.Shadow); err != nil {
			return nil, err
		}
	}
	inTx := cs.tx.active
	begin, undo, done := "SAVEPOINT obroute_split", "ROLLBACK TO SAVEPOINT obroute_split", "RELEASE SAVEPOINT obroute_split"
	if !inTx {
		begin, undo, done = "START TRANSACTION", "ROLLBACK", "COMMIT"
	}
	// fail ends the attempt: the parts are undone (even when ctx is done: the undo must run), or
	// the transaction is lost with its session.
	fail := func(err error) (driver.Result, error) {
		if !s.broken {
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
			_, uerr := s.exec(uctx, undo, nil, false)
			cancel()
			if uerr == nil {
				return nil, err
			}
			s.broken = true
		}
		if inTx {
			return nil, cs.loseTx(ctx, s, err)
		}
		cs.dropBroken(s)
		return nil, err
	}
	if _, err := s.exec(ctx, begin, nil, false); err != nil {
		if s.broken && inTx {
			return nil, cs.loseTx(ctx, s, err)
		}
		cs.dropBroken(s)
		return nil, err // nothing to undo
	}
	var total int64
	for _, t := range plan.Targets {
		res, err := s.exec(ctx, t.SQL, t.Args, false)
		if err == nil {
			var n int64
			n, err = res.RowsAffected()
			total += n
		}
		if err != nil {
			return fail(err)
		}
	}
	if _, err := s.exec(ctx, done, nil, false); err != nil {
		return fail(err)
	}
	return driver.RowsAffected(total), nil
}
