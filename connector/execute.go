package connector

import (
	"context"
	"database/sql/driver"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/metadata"
)

// run executes one statement: routing, session bookkeeping, execution.
func (cs *clientSession) run(ctx context.Context, st *routing.Statement, args []driver.NamedValue, wantRows bool, prep *stmt) (driver.Result, driver.Rows, error) {
	if cs.unusable() {
		return nil, nil, driver.ErrBadConn
	}
	if st.CommentErr != nil {
		return nil, nil, st.CommentErr
	}
	if err := refuseSplitSavepoint(st.Control); err != nil {
		return nil, nil, err // SAVEPOINT obroute_split, SET STATEMENT … FOR SAVEPOINT obroute_split
	}
	if cs.assigned.s != nil {
		if err := cs.readAssigned(ctx); err != nil {
			return nil, nil, err
		}
	}
	switch st.Kind {
	case routing.KindExecute:
		if st.Control.Immediate {
			// EXECUTE IMMEDIATE of a text obroute reads runs as that text itself.
			st = cs.resolveText(st, cs.shadowByHints(st, hint.FromContext(ctx)))
			if inner, ok := runsItself(st); ok {
				ictx, err := innerHints(ctx, st)
				if err != nil {
					return nil, nil, err
				}
				return cs.run(ictx, inner, args, wantRows, nil)
			}
		}
	case routing.KindPrepare:
		st = cs.resolveText(st, cs.shadowByHints(st, hint.FromContext(ctx)))
	case routing.KindCommit, routing.KindRollback:
		if cs.tx.xa != "" && cs.tx.backend == "" && !cs.tx.lost {
			// The server answers it inside the XA transaction: start that where it would go.
			if err := cs.bindPending(ctx); err != nil {
				return nil, nil, cs.keepSession(err)
			}
		}
	}
	switch st.Kind {
	case routing.KindBegin:
		if cs.tx.lost {
			// A new BEGIN ends the lost transaction, and the client session with it.
			cs.endLostTx()
			return nil, nil, driver.ErrBadConn
		}
		// Hints on BEGIN (context or comment, e.g. /* shadow */ BEGIN) hold for the whole transaction.
		if st.HintErr != nil {
			return nil, nil, st.HintErr
		}
		hints, err := hint.Combine(hint.FromContext(ctx), st.Hints)
		if err != nil {
			return nil, nil, err
		}
		if st.ConsistentSnapshot && len(cs.c.backends) > 1 {
			return nil, nil, errorf("%w: START TRANSACTION WITH CONSISTENT SNAPSHOT reads as of the START, and obroute starts a transaction at its first statement, on that statement's backend (it cannot know which before), so its snapshot would be taken later; write START TRANSACTION and read at once, or run it on a connection to one backend", routing.ErrSessionState)
		}
		if err := cs.begin(ctx, driver.TxOptions{ReadOnly: st.ReadOnly}, hints); err != nil {
			return nil, nil, cs.keepSession(err)
		}
		return cs.noRows(wantRows)
	case routing.KindCommit, routing.KindRollback:
		if !cs.tx.active && cs.shadowByHints(st, hint.FromContext(ctx)) && !cs.c.isShadowBackend(cs.lastServer) {
			return cs.noRows(wantRows) // no shadow transaction to end, and production is not told
		}
		if err := cs.finishTx(ctx, st.Kind == routing.KindRollback, st.SQL, cs.completionOf(st)); err != nil {
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
	case routing.KindSavepoint:
		if cs.holdSavepoint(st.Control, cs.shadowByHints(st, hint.FromContext(ctx))) {
			return cs.noRows(wantRows)
		}
	case routing.KindXA:
		if st.HintErr != nil {
			return nil, nil, st.HintErr
		}
		hints, err := hint.Combine(hint.FromContext(ctx), st.Hints)
		if err != nil {
			return nil, nil, err
		}
		if err := cs.xaBackendUnknown(st, hints); err != nil {
			return nil, nil, err
		}
		if cs.runXA(st, hints) {
			return cs.noRows(wantRows)
		}
	}
	if cs.tx.lost {
		return nil, nil, cs.lostTxError("end the transaction with ROLLBACK before running more statements")
	}
	if st.CommitsTx && !cs.c.router.FansOut(st) {
		// It commits the transaction before it runs, even when it fails: there, wherever it goes.
		// (DDL on a time-sharded table is refused inside a transaction instead.)
		if err := cs.commitBefore(ctx); err != nil {
			return nil, nil, cs.keepSession(err)
		}
	}
	cs.routing.SessionBackend = ""
	written := false // the values of session functions obroute holds are written into st
	if st.SessionDependent {
		// It reads what the last statements left: there, or with the values obroute holds.
		next, at, rows, err := cs.resolveSession(ctx, st, false)
		switch {
		case err != nil:
			return nil, nil, cs.keepSession(err)
		case rows != nil && wantRows:
			return nil, rows, nil
		case rows != nil:
			return driver.RowsAffected(0), nil, rows.Close()
		}
		written = next != st
		st, cs.routing.SessionBackend = next, at
	}
	start := time.Now()
	hints, err := cs.statementHints(ctx)
	if err == nil {
		err = cs.c.loadMetadata(ctx, st, cs.shadowByHints(st, hints))
	}
	var plan *routing.Plan
	if err == nil {
		plan, err = cs.routeReading(ctx, st, hints, args, cs.c.logger.Enabled(ctx, slog.LevelDebug))
	}
	if err == nil && st.SessionDependent && st.NamesUserTables() && !cs.runsWhereSession(plan) {
		// It reads session functions and its tables live on another backend than the server
		// session holding them: their values are read there and written in, and it goes
		// where its tables are.
		var next *routing.Statement
		if next, _, _, err = cs.resolveSession(ctx, st, true); err == nil {
			written, st, cs.routing.SessionBackend = true, next, ""
			plan, err = cs.routeReading(ctx, st, hints, args, cs.c.logger.Enabled(ctx, slog.LevelDebug))
		}
	}
	if err == nil && plan.Catalog == nil {
		err = cs.unqualifiedCatalog(st, plan.Shadow)
	}
	if err != nil {
		cs.refusedCatalog(err)
		cs.c.routeRefused(ctx, st, err, start)
		return nil, nil, err
	}
	if written && plan.Class == routing.ClassDefault {
		// It read the previous statements' session, where obroute holds the values.
		plan.Type, plan.Class = routing.UseLastSession, routing.ClassForced
	}
	if st.NextTransaction != "" && cs.tx.active && cs.tx.backend == "" {
		// A BEGIN obroute holds: the server would refuse it (1568), and obroute cannot send it
		// where the transaction will be.
		return nil, nil, errorf("%w: SET TRANSACTION inside a transaction, which the server refuses (error 1568: transaction characteristics can't be changed while a transaction is in progress); set it before BEGIN, or give the characteristics to START TRANSACTION (READ ONLY, READ WRITE)", routing.ErrSessionState)
	}
	if st.NextTransaction != "" && !(cs.tx.active && cs.tx.backend != "") {
		// SET TRANSACTION … waits for the backend of the next transaction of its traffic
		// (shadow or production), unless a transaction is bound: then it goes there at once and
		// the server answers (MySQL refuses it inside a transaction).
		cs.layer(plan.Shadow).nextTx = st.NextTransaction
		return cs.noRows(wantRows)
	}
	cs.c.stats.routes.add(cs.statsShard, plan.Class)
	if plan.NoOp {
		cs.c.routeDone(ctx, plan, nil, start)
		// No server ran it: one server's diagnostics (the note 1050 "Table … already exists" of
		// CREATE TABLE IF NOT EXISTS on a logical table) are none obroute holds.
		cs.funcs.diag = diagnostics{why: "the statement before it was one obroute answered without running it on a server (CREATE TABLE IF NOT EXISTS of a logical table), where one server leaves a note"}
		return cs.noRows(wantRows)
	}
	if plan.FanOut != "" {
		// Locked against obroute migrate and prepare, and routed again by fresh metadata.
		release, next, err := cs.c.lockFanOut(ctx, plan, func() (*routing.Plan, error) {
			return cs.route(st, hints, args, cs.c.logger.Enabled(ctx, slog.LevelDebug))
		})
		if err != nil {
			cs.c.routeRefused(ctx, st, err, start)
			return nil, nil, err
		}
		defer release()
		plan = next
	}
	// DDL may add a unique key or change a column: what was read of the tables it runs on is
	// forgotten before it runs and read again after.
	cs.c.ddlBackends(st, plan, func(f *storeFacts, b string, snap *metadata.Snapshot) { f.tablesChanging(b, snap) })
	res, rows, err := cs.executeWithin(ctx, plan, wantRows, prep)
	for retry := 0; errors.Is(err, errRetyped) || errors.Is(err, errOutdated); retry++ {
		// A split SELECT read its column types: routed again, it is rendered for them. A plan
		// made before a backend's server changed is made again with what was read of it anew.
		if retry == 2 {
			if errors.Is(err, errOutdated) {
				err = errorf("%w: what obroute reads of the backends' servers changed at each of the statement's last routings (servers restarting); run it again", ErrMetadataUnavailable)
				break
			}
			err = errorf("%w: the column types of the statement's sub-queries changed at each of its last runs; run it again", routing.ErrNotMergeable)
			break
		}
		next, rerr := cs.routeReading(ctx, st, hints, args, cs.c.logger.Enabled(ctx, slog.LevelDebug))
		if rerr != nil {
			// Refused on the second routing (the shard metadata changed meanwhile): there is
			// no plan to report as done.
			cs.c.routeRefused(ctx, st, rerr, start)
			return nil, nil, rerr
		}
		plan = next
		res, rows, err = cs.executeWithin(ctx, plan, wantRows, prep)
	}
	cs.c.forgetDefinitions(st, plan)
	cs.c.ddlBackends(st, plan, func(f *storeFacts, b string, snap *metadata.Snapshot) { f.tablesChanged(ctx, b, snap) })
	err = cs.keepSession(err)
	cs.refusedCatalog(err)
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

// noRows answers a statement obroute runs itself (a BEGIN it holds …): as the server would,
// ROW_COUNT() is then 0.
func (cs *clientSession) noRows(wantRows bool) (driver.Result, driver.Rows, error) {
	cs.funcs.rowCount = heldValue(0)
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
	shadow := cs.shadowByHints(st, hints)
	rs.TempTables = cs.tempTablesOf(shadow)
	rs.TimeZone = cs.timeZone(shadow)
	rs.Timestamp = cs.timestamp(shadow)
	rs.SQLMode = cs.sqlMode(shadow)
	rs.SQLModes = [2]routing.SessionSQLMode{cs.sqlMode(false), cs.sqlMode(true)}
	rs.Databases = [2]string{cs.state.database, cs.state.database}
	if cs.shadowState.database != "" {
		rs.Databases[1] = cs.shadowState.database
	}
	rs.InTransaction = cs.tx.active
	rs.TxBackend = cs.tx.backend
	rs.TxShadow = cs.tx.shadow
	tr := traffic(shadow)
	rs.Pin, rs.PinWhy, rs.PinByLocks = cs.pins[tr].backend, cs.pins[tr].why, cs.pins[tr].locks
	if c := st.Control; c != nil && cs.pins[tr].locks && (c.Lock == routing.LockTables || c.Lock == routing.LockRead) {
		rs.Pin = "" // a new LOCK TABLES goes where its tables are, releasing the locks held
	}
	rs.Prepared = cs.preparedBackends(tr)
	return cs.c.router.Route(routing.Input{Statement: st, Hints: hints, Args: args, Session: rs, Explain: explain})
}

// execute runs a plan's targets and does the client session's bookkeeping.
func (cs *clientSession) execute(ctx context.Context, plan *routing.Plan, wantRows bool, prep *stmt) (driver.Result, driver.Rows, error) {
	st := plan.Statement
	eff := cs.effective(plan)
	first := plan.Targets[0].Backend
	// autocommit=0: a statement outside a transaction that reads or writes a table opens one on
	// its server (SET, USE, SAVEPOINT, PREPARE and a statement naming no table do not).
	opensImplicitTx := !plan.OutsideTx && !cs.autocommitFor(plan.Shadow) && !cs.tx.active && opensTx(eff)
	// A statement that opens a transaction (the first of BeginTx/BEGIN, or any under autocommit=0)
	// binds it to one backend: it cannot span several.
	if plan.FanOut != "" && (cs.tx.active || opensImplicitTx) {
		return nil, nil, errorf("%w: it runs on each physical table, each committing on its own; run it outside the transaction (with autocommit on)", routing.ErrDDLInTransaction)
	}
	if !plan.OutsideTx && (cs.tx.active && cs.tx.backend == "" || opensImplicitTx) {
		if backends := plan.Backends(); len(backends) > 1 {
			return nil, nil, errorf("%w: the first statement of the transaction needs backends %s; start the transaction with a statement on one backend",
				routing.ErrCrossBackendTx, strings.Join(backends, ", "))
		}
	}
	if len(st.UserVars) > 0 && (len(plan.Targets) > 1 || plan.Merge != nil) {
		return nil, nil, errorf("%w: the statement assigns %s while it is split across tables, where each sub-query would assign it; assign user variables with SET, or narrow the range to one table",
			routing.ErrNotMergeable, strings.Join(st.UserVars, ", "))
	}
	if wantRows && !st.Kind.IsWrite() && plan.FanOut == "" && (len(plan.Targets) > 1 || plan.Merge != nil || plan.Catalog != nil || plan.Concat) {
		if v, ok := cs.selectLimit(plan.Shadow); ok {
			return nil, nil, errorf("%w: sql_select_limit is %s in this client session, and the statement is answered from several tables or backends (a split SELECT, a catalog read merged): each server would limit the rows of its part (even under a LIMIT clause, which a part of a grouped or aggregated SELECT does not carry), which the merge cannot undo; SET sql_select_limit = DEFAULT before the statement, and give it a LIMIT clause for the rows it should answer",
				routing.ErrSessionState, v)
		}
	}
	if err := cs.beforeControl(ctx, plan); err != nil {
		return nil, nil, err
	}
	var res driver.Result
	var rows driver.Rows
	var err error
	if plan.FanOut != "" {
		res, rows, err = cs.runFanOut(ctx, plan, wantRows)
	} else if plan.Catalog != nil {
		res, rows, err = cs.runCatalog(ctx, plan, wantRows, prep)
	} else if plan.Concat {
		if rows, err = cs.concatTargets(ctx, plan); err == nil && !wantRows {
			rows.Close()
			res, rows = driver.RowsAffected(0), nil
		}
	} else if len(plan.Targets) == 1 && plan.Merge != nil && wantRows {
		// One backend, several tables: the legs of its UNION ALL still need merging.
		rows, err = cs.queryUnion(ctx, plan, prep)
	} else if len(plan.Targets) == 1 {
		counter := int64(0)
		if len(plan.Counters) > 0 {
			counter, err = cs.logicalCounter(ctx, plan)
		}
		if err == nil {
			res, rows, err = cs.runTarget(ctx, plan, plan.Targets[0], wantRows, prep)
		}
		if rows != nil && len(plan.Counters) > 0 {
			rows, err = withCounter(rows, counter)
		}
		if rows != nil && plan.Rename[0] != "" {
			rows = &renamedRows{rows: wrapRows(rows, nil), from: plan.Rename[0], to: plan.Rename[1]}
		}
	} else if wantRows && !st.Kind.IsWrite() {
		rows, err = cs.queryTargets(ctx, plan, prep != nil)
	} else if res, err = cs.execTargets(ctx, plan); err == nil && wantRows {
		res, rows = nil, emptyRows{} // a write through Query: no rows, as the server answers
	}
	if rows != nil && plan.FanOut == "" && (len(plan.Targets) > 1 || plan.Merge != nil || plan.Catalog != nil) {
		rows = cs.counted(rows) // a result obroute computed: FOUND_ROWS() is its number of rows
	}
	if err == nil || reachedServer(err) {
		switch {
		case plan.FanOut != "":
			cs.funcs.rowCount, cs.funcs.diag = heldValue(0), diagnostics{why: "the statement ran once per physical table"}
		case plan.Catalog != nil || plan.Concat:
			cs.funcs.rowCount, cs.funcs.diag = heldValue(-1), diagnostics{why: "obroute computed the answer from several statements"}
		}
	}
	if err != nil && !plan.OutsideTx && isDeadlock(err) { // err first: isDeadlock allocates
		// The server rolled the transaction back, whichever statement of it deadlocked: the
		// next statement runs outside it, as on one server (an XA transaction stays, rollback
		// only, until XA ROLLBACK).
		if cs.tx.active && !cs.tx.lost && cs.tx.xa == "" {
			cs.closeTx()
		}
		opensImplicitTx = false
	}
	if opensImplicitTx && (err == nil || reachedServer(err)) {
		// It reached its server, which now holds the transaction (a failed statement opens it
		// too) until COMMIT/ROLLBACK.
		cs.tx = txState{active: true, backend: first, shadow: plan.Shadow}
		if s := cs.serverOf(first); s != nil {
			s.inTx = true
		}
	}
	if len(plan.Targets) == 1 && (err == nil || reachedServer(err)) {
		if s := cs.serverOf(first); s != nil {
			cs.afterControl(s, plan, err)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	cs.lastServer, cs.routing.LastBackend = first, first
	if plan.Shadow {
		cs.routing.LastBackend = cs.c.productionOf(first)
	}
	if eff != nil {
		temp := cs.tempTablesOf(plan.Shadow)
		if eff.TempTableCreated != "" {
			temp[eff.TempTableCreated] = first
		}
		for _, t := range eff.TempTablesDropped {
			delete(temp, t)
		}
		for _, rn := range eff.TablesRenamed {
			// The router refused a rename it could not follow: a renamed temporary table
			// stays on its server session under its new name.
			if b, ok := temp[rn.From]; ok {
				delete(temp, rn.From)
				temp[rn.To] = b
			}
		}
		if cs.tx.active && cs.tx.backend != "" && eff.CommitsTx && cs.tx.xa == "" {
			cs.closeTx() // some, as CREATE TABLE … SELECT, also commit after they ran
		}
	}
	if st.Kind == routing.KindXA {
		cs.afterXA(st, first, plan.Shadow)
	}
	return res, rows, nil
}

// opensTx reports whether a statement opens a transaction on its server under autocommit=0:
// one that reads or writes a table, or whose effect obroute cannot see (nil: a text it could
// not read).
func opensTx(st *routing.Statement) bool {
	if st == nil {
		return true
	}
	switch {
	case st.Kind == routing.KindSet && usesTables(st):
		return true // SET @x = (SELECT … FROM t) reads t in the transaction
	case st.Kind == routing.KindSet, st.Kind == routing.KindUse, st.Kind == routing.KindSavepoint, st.Kind == routing.KindPrepare,
		st.Kind == routing.KindDeallocate, st.Kind == routing.KindXA, st.CommitsTx:
		return false // a statement that commits implicitly leaves no transaction open either
	}
	return usesTables(st) || st.Invisible
}

// usesTables reports whether st reads or writes a table it names (a SET in a subquery too).
func usesTables(st *routing.Statement) bool { return len(st.Tables) > 0 }

// preparedBackends returns, for the router, the backend of each SQL-level prepared statement:
// the traffic tr's, and the other traffic's under names tr has none of; nil when there is none.
func (cs *clientSession) preparedBackends(tr int) map[string]string {
	if len(cs.prepared[0])+len(cs.prepared[1]) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, t := range [2]int{1 - tr, tr} {
		for name, p := range cs.prepared[t] {
			m[name] = p.backend
		}
	}
	return m
}

// runTarget runs one target on its server session, binding a pending transaction to it and
// replacing a server session that was lost while idle.
func (cs *clientSession) runTarget(ctx context.Context, plan *routing.Plan, t routing.Target, wantRows bool, prep *stmt) (driver.Result, driver.Rows, error) {
	for attempt := 0; ; attempt++ {
		t.Backend = cs.readBackend(plan, t.Backend)
		s, err := cs.targetServer(ctx, plan, t.Backend)
		if err != nil {
			return nil, nil, err
		}
		res, rows, err := cs.runOn(ctx, s, targetRun{plan: plan, target: t, wantRows: wantRows, prep: prep})
		if err == nil {
			return res, rows, nil
		}
		// The transaction is lost with s when it is bound there (an implicit, autocommit=0,
		// transaction has no s.tx: whatever ran before is lost too), or when s broke on the
		// transaction's first statement after something was sent (BEGIN is sent with it).
		bound := cs.tx.backend == s.backend.name && s.inTx
		first := cs.tx.explicit && cs.tx.backend == "" && !errors.Is(err, driver.ErrBadConn) && cs.bindsTx(plan)
		lostInTx := cs.tx.active && (bound || first)
		cs.dropBroken(s)
		if s.broken && lostInTx {
			return nil, nil, cs.loseTxIn(ctx, s, plan.Statement, err)
		}
		// Retry only what provably never reached the server, and only outside a transaction
		// (or before it is bound to its backend).
		if cs.unusable() {
			return nil, nil, driver.ErrBadConn // s held what no other server session can be given
		}
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

// errOutdated is returned, before anything is sent, for a plan made with what obroute read of the
// backends' servers before one of them changed (routing.Router.Outdated): it is routed again.
var errOutdated = errors.New("obroute: internal: the plan was made before a backend's server changed, route it again")

// targetServer is cs.server for a target of plan. Opening the server session may show that the
// backend's server changed (a restart) and have what routing read of it read again: a plan made
// before is not sent (errOutdated).
func (cs *clientSession) targetServer(ctx context.Context, plan *routing.Plan, backend string) (*serverSession, error) {
	s, err := cs.server(ctx, backend)
	if err == nil && cs.c.router.Outdated(plan) {
		return nil, errOutdated
	}
	return s, err
}

// errConnectionLost stands for driver.ErrBadConn in obroute's own errors, which must not be
// mistaken by database/sql for "this client session is dead".
var errConnectionLost = errors.New("connection lost")

// reachedServer reports whether a statement that failed with err was answered by its server.
//
// Not inlined: copied into each of its many call sites it would grow every
// binary that imports the driver (see driver/import_test.go).
//
//go:noinline
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
	if !errors.Is(err, driver.ErrBadConn) || cs.unusable() {
		return err
	}
	if cs.tx.active || len(cs.tempTables[0]) > 0 || len(cs.tempTables[1]) > 0 || len(cs.servers) > 0 {
		return errorf("obroute: %w before the statement was sent; it did not run", errConnectionLost)
	}
	return err
}

func errorText(err error) string {
	if errors.Is(err, driver.ErrBadConn) {
		return errConnectionLost.Error()
	}
	return err.Error()
}

// targetRun is one target of a plan to run, and how: whether its rows are wanted, and the
// prepared statement it runs as (nil for none).
type targetRun struct {
	plan     *routing.Plan
	target   routing.Target
	wantRows bool
	prep     *stmt
}

// runOn runs r's target on s: session state sync, transaction start, the statement, state
// recording.
func (cs *clientSession) runOn(ctx context.Context, s *serverSession, r targetRun) (driver.Result, driver.Rows, error) {
	plan, t, wantRows, prep := r.plan, r.target, r.wantRows, r.prep
	st := plan.Statement
	if err := cs.sync(ctx, s); err != nil {
		return nil, nil, err
	}
	if err := cs.bindTx(ctx, s, plan); err != nil {
		return nil, nil, err
	}
	if cs.awayFromDiag(plan, s) {
		if err := cs.countBefore(ctx, s); err != nil {
			return nil, nil, err
		}
	}
	eff := cs.effective(plan)
	switch {
	case eff != nil && eff.Kind == routing.KindSet:
		res, err := s.exec(ctx, t.SQL, t.Args, false)
		cs.ranOn(plan, s, res, err)
		if err != nil {
			if reachedServer(err) {
				cs.recordFailedSet(ctx, s, eff, plan.Shadow)
			}
			return nil, nil, err
		}
		if err := cs.recordSet(ctx, s, eff, plan.Shadow); err != nil {
			return nil, nil, err
		}
		return cs.noRowsResult(res, wantRows)
	case st.Kind == routing.KindUse:
		use := t.SQL
		if db := cs.physicalDatabase(s, st.Database); db != st.Database {
			use = "USE " + quoteIdent(db) // the client session's database, on this backend
		}
		res, err := s.exec(ctx, use, nil, false)
		cs.ranOn(plan, s, res, err)
		if err != nil {
			return nil, nil, err
		}
		cs.recordUse(s, st.Database, plan.Shadow)
		return cs.noRowsResult(res, wantRows)
	}
	if err := cs.zeroInsertID(ctx, s, eff); err != nil {
		return nil, nil, err
	}
	if eff != nil && len(eff.UserVars) > 0 {
		// Read back before the next statement, once its rows are closed: whether it succeeds
		// or not, the server session holds what it assigned.
		cs.assigned = assignedVars{s: s, names: eff.UserVars, shadow: plan.Shadow}
	}
	prepared := prep != nil
	if prepared && t.SQL == st.SQL {
		res, rows, err := prep.runOn(ctx, s, t.Args, wantRows)
		cs.ranOn(plan, s, res, err)
		return res, rows, err
	}
	if wantRows {
		rows, err := s.query(ctx, t.SQL, t.Args, prepared)
		cs.ranOn(plan, s, nil, err)
		return nil, rows, err
	}
	res, err := s.exec(ctx, t.SQL, t.Args, prepared)
	cs.ranOn(plan, s, res, err)
	return res, nil, err
}

// bindTx readies s, in line with the session state, for plan's statement in the client
// session's transaction: a pending transaction binds to s (an explicit one starts there, the
// implicit one of autocommit=0 when the statement opens it) with the savepoints set while it was
// pending; a transaction bound to another backend refuses it; outside a transaction a pending
// SET TRANSACTION applies to the statement's own.
func (cs *clientSession) bindTx(ctx context.Context, s *serverSession, plan *routing.Plan) error {
	st := plan.Statement
	switch {
	case plan.OutsideTx:
		return nil // not part of the transaction: neither started nor bound by it
	case cs.tx.active && cs.tx.backend != "" && cs.tx.backend != s.backend.name:
		return errorf("%w: bound to %s, routed to %s", routing.ErrCrossBackendTx, cs.tx.backend, s.backend.name)
	case cs.tx.active && !cs.tx.explicit && cs.tx.backend == "" && opensTx(cs.effective(plan)):
		return cs.startTx(ctx, s, plan.Shadow)
	case cs.tx.active && cs.tx.explicit && !s.inTx && cs.bindsTx(plan):
		return cs.startTx(ctx, s, plan.Shadow)
	case cs.layer(plan.Shadow).nextTx != "" && (st.Kind != routing.KindSet || usesTables(st)) && st.Kind != routing.KindUse && cs.spendsNextTx(plan):
		return cs.applyNextTx(ctx, s, plan.Shadow)
	}
	return nil
}

// bindsTx reports whether plan's statement binds a pending explicit transaction (BEGIN, BeginTx)
// to its backend: one passing through (passthrough.go: it was not read), one that reads or writes a table (a SET reading one in a subquery too), whose
// effect obroute cannot see (nil: a text it could not read), an XA statement, which the server
// answers inside the transaction, or one reading whether a transaction is open
// (@@in_transaction). The others (a statement that uses no table, SET, USE, a RELEASE or
// ROLLBACK TO of a savepoint the server refuses …) mean the same outside it: they run where they
// are routed, and the transaction binds at its first statement on a table, where one server's
// transaction would first read or write.
func (cs *clientSession) bindsTx(plan *routing.Plan) bool {
	st := cs.effective(plan)
	if st == nil || plan == &cs.pass.plan {
		return true
	}
	return usesTables(st) || st.Invisible || st.Kind == routing.KindXA || strings.Contains(strings.ToLower(st.SQL), "in_transaction")
}

// spendsNextTx reports whether plan's statement, outside a transaction, spends a one-shot SET
// TRANSACTION on its server: one that runs in a transaction of its own there (a statement on a
// table, under autocommit), or commits implicitly; one that uses no table (SELECT 1, DO …)
// leaves it for the next transaction, as MariaDB does. A statement passing through spends it.
func (cs *clientSession) spendsNextTx(plan *routing.Plan) bool {
	st := cs.effective(plan)
	return plan == &cs.pass.plan || opensTx(st) || st.CommitsTx
}

// ranOn records where the session functions are after plan's statement ran on s (err: its
// error), when the server answered it.
func (cs *clientSession) ranOn(plan *routing.Plan, s *serverSession, res driver.Result, err error) {
	if err == nil || reachedServer(err) {
		cs.ran(plan, s, res)
	}
}
