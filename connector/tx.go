package connector

import (
	"context"
	"database/sql/driver"
	"errors"

	"github.com/obroute/obroute/internal/routing"
)

// tx is the driver.Tx of BeginTx; the work is the client session's.
type tx struct{ cs *clientSession }

var _ driver.Tx = (*tx)(nil)

// Commit implements driver.Tx.
func (t *tx) Commit() error { return t.cs.finishTx(context.Background(), false, "COMMIT") }

// Rollback implements driver.Tx.
func (t *tx) Rollback() error { return t.cs.finishTx(context.Background(), true, "ROLLBACK") }

// startTx starts the pending transaction on s, the backend of its first statement.
func (cs *clientSession) startTx(ctx context.Context, s *serverSession, shadow bool) error {
	if err := cs.applyNextTx(ctx, s, shadow); err != nil {
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
//
// When the connection breaks, the error says what is known: ErrTxBackendLost when the verb was
// never written (go-sql-driver's driver.ErrBadConn) or was a ROLLBACK, ErrCommitUnknown when a
// COMMIT was written and no answer came; the caller's context error as it is when the caller
// gave up. The client session is then discarded, as go-sql-driver's connection would be.
func (cs *clientSession) finishTx(ctx context.Context, rollback bool, verb string) error {
	if !cs.tx.active {
		// No transaction obroute knows of. The server may still have one (autocommit turned off
		// where obroute could not see it, init_connect …): send the verb to the last server
		// session, as a single connection would; with no transaction it does nothing there.
		if s := cs.serverOf(cs.lastServer); s != nil && !s.broken {
			_, err := s.exec(ctx, verb, nil, false)
			cs.dropBroken(s)
			return err
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
		cs.closeTx()
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
	var err error
	switch {
	case s.tx != nil && rollback:
		err = s.tx.Rollback()
		s.markErr(err)
	case s.tx != nil:
		err = s.tx.Commit()
		s.markErr(err)
	default:
		_, err = s.exec(ctx, verb, nil, false)
	}
	switch {
	case err == nil || reachedServer(err):
		cs.closeTx() // the server answered: the transaction is over
		return err
	case !s.broken && s.tx == nil:
		return err // nothing was sent (the caller's context had ended): the transaction goes on
	case !s.broken:
		cs.closeTx()
		return err
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

// closeTx forgets the transaction.
func (cs *clientSession) closeTx() {
	if s := cs.serverOf(cs.tx.backend); s != nil {
		s.tx = nil
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
	if commitsImplicitly(st) && !errors.Is(cause, driver.ErrBadConn) {
		cs.tx.unknown = true
	}
	return cs.loseTx(ctx, s, cause)
}

// commitsImplicitly reports whether st commits an open transaction on its server, as MySQL's
// DDL does (temporary tables aside).
func commitsImplicitly(st *routing.Statement) bool {
	return st.Kind == routing.KindDDL && st.TempTableCreated == "" && len(st.TempTablesDropped) == 0
}

// isContextError reports whether err is a context's end (cancel or deadline).
func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// endImplicitTx commits an implicit (autocommit=0) transaction before an explicit one starts,
// as MySQL does.
func (cs *clientSession) endImplicitTx(ctx context.Context) error {
	if cs.tx.active && !cs.tx.explicit {
		return cs.finishTx(ctx, false, "COMMIT")
	}
	return nil
}
