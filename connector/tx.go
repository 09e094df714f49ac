package connector

import (
	"context"
	"database/sql/driver"
	"errors"
	"slices"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/routing"
)

// tx is the driver.Tx of BeginTx; the work is the client session's.
type tx struct{ cs *clientSession }

var _ driver.Tx = (*tx)(nil)

// Commit implements driver.Tx. As go-sql-driver's, it sends COMMIT, which the server completes
// as completion_type says (CHAIN starts the next transaction, RELEASE ends the connection).
func (t *tx) Commit() error {
	return t.cs.finishTx(context.Background(), false, "COMMIT", t.cs.completionOf(nil))
}

// Rollback implements driver.Tx; see Commit.
func (t *tx) Rollback() error {
	return t.cs.finishTx(context.Background(), true, "ROLLBACK", t.cs.completionOf(nil))
}

// commitImplicitly and rollbackImplicitly are what obroute sends where the server would commit
// or roll back on its own (BEGIN inside a transaction, the undo of a split write …): they
// neither chain nor release, whatever completion_type says.
const (
	commitImplicitly   = "COMMIT AND NO CHAIN NO RELEASE"
	rollbackImplicitly = "ROLLBACK AND NO CHAIN NO RELEASE"
)

// completion is how a COMMIT or ROLLBACK ends: chain starts the next transaction at once, with
// the same characteristics; release ends the connection.
type completion struct{ chain, release bool }

// completionOf reads the completion of COMMIT or ROLLBACK st (nil: database/sql's Commit or
// Rollback, which send the bare verb) as the server does: its AND [NO] CHAIN and [NO] RELEASE
// clauses, else the completion_type the client session set for the traffic of its transaction.
func (cs *clientSession) completionOf(st *routing.Statement) completion {
	var c routing.Control
	if st != nil && st.Control != nil {
		c = *st.Control
	}
	ct := cs.completion[traffic(cs.tx.shadow)]
	return completion{
		chain:   c.Chain > 0 || c.Chain == 0 && c.Release <= 0 && ct == "chain",
		release: c.Release > 0 || c.Release == 0 && c.Chain <= 0 && ct == "release",
	}
}

// startTx starts the pending transaction on s, the backend of its first statement: XA START for
// an XA transaction, go-sql-driver's BeginTx with its options for an explicit one (an implicit
// one, autocommit off, starts with the statement); then the savepoints set while it was pending.
func (cs *clientSession) startTx(ctx context.Context, s *serverSession, shadow bool) error {
	if err := cs.applyNextTx(ctx, s, shadow); err != nil {
		return err
	}
	if !cs.tx.explicit {
	} else if cs.tx.xa != "" {
		if _, err := s.exec(ctx, cs.tx.xaStart, nil, false); err != nil {
			return err
		}
	} else if _, err := s.conn.(driver.ConnBeginTx).BeginTx(ctx, cs.tx.opts); err != nil {
		s.markErr(err)
		return err
	}
	s.inTx = true
	cs.tx.backend = s.backend.name
	cs.tx.shadow = shadow
	for _, sp := range cs.tx.savepoints {
		if _, err := s.exec(ctx, "SAVEPOINT "+quoteIdent(sp), nil, false); err != nil {
			return err
		}
	}
	cs.tx.savepoints = nil
	return nil
}

// finishTx commits (rollback false) or rolls back the client session's transaction on its
// backend by sending verb, which ends as done says. A transaction that never ran a statement
// has nothing to finish.
//
// When the connection breaks, the error says what is known: ErrTxBackendLost when the verb was
// never written (go-sql-driver's driver.ErrBadConn) or was a ROLLBACK, ErrCommitUnknown when a
// COMMIT was written and no answer came; the caller's context error as it is when the caller
// gave up. The client session is then discarded, as go-sql-driver's connection would be.
func (cs *clientSession) finishTx(ctx context.Context, rollback bool, verb string, done completion) error {
	if !cs.tx.active {
		// No transaction obroute knows of. The server may still have one (autocommit turned off
		// where obroute could not see it, init_connect …): send the verb to the last server
		// session, as a single connection would; with no transaction it does nothing there.
		if s := cs.serverOf(cs.lastServer); s != nil && !s.broken {
			_, err := s.exec(ctx, verb, nil, false)
			cs.dropBroken(s)
			if err == nil {
				cs.layer(s.shadow).nextTx = "" // the server spends a one-shot SET TRANSACTION on it
				cs.completed(s, done)
			}
			return err
		}
		cs.state.nextTx = ""
		if done.release {
			cs.release()
		}
		return nil
	}
	if cs.tx.lost {
		err := cs.lostTxError("COMMIT is impossible")
		cs.endLostTx()
		if rollback {
			return nil // what it asks for has happened: the server rolled the transaction back
		}
		return err
	}
	if cs.tx.backend == "" {
		// Nothing ran: the transaction ends as it is, or goes on as the next one (AND CHAIN),
		// without the savepoints of the one that ended. It spent a one-shot SET TRANSACTION, as
		// one server's BEGIN does.
		cs.layer(cs.tx.hints.Shadow == hint.ShadowOn).nextTx = ""
		switch {
		case done.release:
			cs.closeTx()
			cs.release()
		case done.chain:
			cs.tx.savepoints = nil
		default:
			cs.closeTx()
		}
		return nil
	}
	s := cs.serverOf(cs.tx.backend)
	if s == nil || s.broken || !s.valid() || !s.alive(ctx) {
		// The connection was gone before the verb was written (go-sql-driver's liveness check
		// reads the socket): the server rolled the transaction back when the connection closed,
		// or never made it durable.
		backend := cs.tx.backend
		if s != nil {
			s.broken = true
			cs.dropBroken(s)
		}
		cs.endLostTx()
		cs.c.stats.serverLost.Add(1)
		return errorf("%w (backend %s)", ErrTxBackendLost, backend)
	}
	_, err := s.exec(ctx, verb, nil, false)
	switch {
	case err == nil:
		if done.chain {
			return nil // the server started the next transaction there at once
		}
		cs.closeTx()
		cs.completed(s, done)
		return nil
	case reachedServer(err):
		if cs.tx.xa == "" {
			cs.closeTx() // the server answered: the transaction is over
		}
		return err // an XA transaction refuses COMMIT and ROLLBACK and goes on
	case !s.broken:
		return err // nothing was sent (the caller's context had ended): the transaction goes on
	}
	cs.dropBroken(s)
	cs.endLostTx()
	cs.c.stats.serverLost.Add(1)
	switch {
	case isContextError(err):
		return err // as go-sql-driver returns it
	case rollback || errors.Is(err, driver.ErrBadConn):
		return errorf("%w (backend %s: %v)", ErrTxBackendLost, s.backend.name, errorText(err))
	}
	return errorf("%w (backend %s was at %s): %w", ErrCommitUnknown, s.backend.name, s.addr(), err)
}

// completed follows a COMMIT or ROLLBACK that s answered with success outside a transaction
// obroute knew of: with AND CHAIN the server has started a transaction there; with RELEASE it
// closes the connection.
func (cs *clientSession) completed(s *serverSession, done completion) {
	switch {
	case done.release:
		cs.release()
	case done.chain && !cs.tx.active:
		cs.tx = txState{active: true, explicit: true, backend: s.backend.name, shadow: s.shadow}
		s.inTx = true
	}
}

// release ends the client session after COMMIT … RELEASE: the server closes its connection, and
// with it the session; one client session stands for one, so every server session is closed and
// the client session answers driver.ErrBadConn from now on, as go-sql-driver's closed connection
// does.
func (cs *clientSession) release() {
	for _, s := range cs.servers {
		s.close()
	}
	cs.servers = nil
	cs.broken = true
}

// closeTx forgets the transaction.
//
//go:noinline
func (cs *clientSession) closeTx() {
	if s := cs.serverOf(cs.tx.backend); s != nil {
		s.inTx = false
	}
	cs.tx = txState{}
}

// endLostTx ends a transaction whose server session was lost, and the client session with it:
// from now on it answers driver.ErrBadConn, as go-sql-driver's broken connection does, so that
// database/sql replaces it.
func (cs *clientSession) endLostTx() {
	cs.closeTx()
	cs.broken = true
}

// lostTxError is the error of a statement of a lost transaction.
func (cs *clientSession) lostTxError(what string) error {
	if cs.tx.unknown {
		return errorf("%w: %s", ErrCommitUnknown, what)
	}
	return errorf("%w: %s", ErrTxBackendLost, what)
}

// loseTxIn ends the transaction whose server session s broke while running st. When st commits
// implicitly and may have reached the server, whether the transaction committed is unknown.
func (cs *clientSession) loseTxIn(ctx context.Context, s *serverSession, st *routing.Statement, cause error) error {
	if st.CommitsTx && !errors.Is(cause, driver.ErrBadConn) {
		cs.tx.unknown = true
	}
	return cs.loseTx(ctx, s, cause)
}

// isContextError reports whether err is a context's end (cancel or deadline).
func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// begin starts a transaction, as BEGIN, START TRANSACTION and database/sql's BeginTx do on the
// server: the transaction open is committed (an XA transaction's server refuses it), the table
// locks of LOCK TABLES are released; the new one binds at its first statement.
func (cs *clientSession) begin(ctx context.Context, opts driver.TxOptions, hints hint.Set) error {
	if cs.tx.xa != "" && cs.tx.backend == "" && !cs.tx.lost {
		if err := cs.bindPending(ctx); err != nil { // the server answers XAER_RMFAIL there
			return err
		}
	}
	if cs.tx.active && (cs.tx.backend != "" || !cs.tx.explicit) {
		if err := cs.finishTx(ctx, false, commitImplicitly, completion{}); err != nil {
			return err
		}
	}
	if err := cs.releaseTableLocks(ctx); err != nil {
		return err
	}
	cs.tx = txState{active: true, explicit: true, opts: opts, hints: hints}
	return nil
}

// commitBefore commits the transaction before a statement that commits implicitly (st.CommitsTx)
// runs, as the server would, on the transaction's backend wherever the statement goes; an XA
// transaction is left to the server, which refuses such statements in it.
func (cs *clientSession) commitBefore(ctx context.Context) error {
	switch {
	case !cs.tx.active || cs.tx.lost || cs.tx.xa != "":
		return nil
	case cs.tx.backend == "":
		cs.closeTx() // nothing ran: nothing to commit
		return nil
	}
	return cs.finishTx(ctx, false, commitImplicitly, completion{})
}

// holdSavepoint keeps a savepoint statement of a transaction that is not bound yet, as the
// server would keep its savepoints (a list, oldest first: SAVEPOINT moves a name to its end,
// RELEASE drops the savepoint and those after it, ROLLBACK TO those after it), and reports
// whether it did: a transaction whose first statements are SAVEPOINT (nested transactions of
// GORM and bun) binds to the backend of its first other statement, where the savepoints are
// then set. RELEASE SAVEPOINT and ROLLBACK TO SAVEPOINT of a savepoint it does not hold are not
// kept: sent, the server answers them.
func (cs *clientSession) holdSavepoint(c *routing.Control, shadow bool) bool {
	if !cs.tx.active && !cs.autocommitFor(shadow) {
		// With autocommit off the server keeps savepoints before the transaction's first
		// statement: the transaction is pending, bound by its first statement on a table.
		cs.tx = txState{active: true, shadow: shadow}
	}
	if !cs.tx.active || cs.tx.backend != "" || cs.tx.lost {
		return false
	}
	sp := cs.tx.savepoints
	i := slices.Index(sp, c.Name)
	switch c.Savepoint {
	case routing.SavepointSet:
		// A savepoint set again moves to the end: the server sets it anew.
		if i >= 0 {
			sp = slices.Delete(sp, i, i+1)
		}
		sp = append(sp, c.Name)
	case routing.SavepointRelease:
		if i < 0 {
			return false
		}
		sp = sp[:i]
	case routing.SavepointRollbackTo:
		if i < 0 {
			return false
		}
		sp = sp[:i+1] // nothing ran since: only the later savepoints go
	}
	cs.tx.savepoints = sp
	return true
}
