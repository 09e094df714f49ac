package connector_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/sqltest"
)

// compare runs each statement of script on obroute and on the one server and reports every
// answer that differs (t.Errorf: the script goes on, as the application would).
func (p *pair) compare(script string) {
	p.t.Helper()
	for _, q := range strings.Split(strings.TrimSpace(script), "\n") {
		q = strings.TrimSpace(q)
		if q == "" {
			continue
		}
		got, gerr := run(p.ob, q)
		want, werr := run(p.ref, q)
		if got.String() != want.String() {
			p.t.Errorf("%s:\n obroute:    %v (%v)\n one server: %v (%v)", q, got, gerr, want, werr)
		}
	}
}

// SET TRANSACTION READ ONLY is spent by the next statement that uses a table, under autocommit a
// transaction of its own: SET @z = (SELECT COUNT(*) FROM audit_log) reads audit_log, so on one
// server the INSERT after it is no longer read-only and succeeds. Through obroute the SET (run on
// cold) did not spend it, and the INSERT fails with 1792.
func TestAttack28SetWithSubquerySpendsSetTransaction(t *testing.T) {
	o := newOneServer(t, false, "")
	p := o.pair(t)
	p.compare(`
		SET TRANSACTION READ ONLY
		SET @z = (SELECT COUNT(*) FROM audit_log)
		INSERT INTO audit_log VALUES (16, 'x')
		SELECT id FROM audit_log ORDER BY id`)
	o.samePlacement(t)
}

// The same with an isolation level: SET @z = (SELECT COUNT(*) FROM items) is an autocommit
// transaction on one server and spends SET TRANSACTION ISOLATION LEVEL READ COMMITTED, so the
// transaction after it runs at the session's REPEATABLE READ. Through obroute the level was still
// pending and the transaction on cold ran at READ COMMITTED.
func TestAttack28SetWithSubquerySpendsIsolationLevel(t *testing.T) {
	o := newOneServer(t, false, "")
	p := o.pair(t)
	p.compare(`
		SET TRANSACTION ISOLATION LEVEL READ COMMITTED
		SET @z = (SELECT COUNT(*) FROM items)
		BEGIN
		INSERT INTO audit_log VALUES (3, 'x')
		SELECT trx_isolation_level FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = CONNECTION_ID()
		COMMIT`)
	o.samePlacement(t)
}

// With autocommit = 0, SET @z = (SELECT COUNT(*) FROM audit_log) reads a table and so opens a
// transaction on one server: @@in_transaction is 1 after it. Through obroute the SET opened no
// transaction: @@in_transaction is 0.
func TestAttack28SetWithSubqueryOpensImplicitTransaction(t *testing.T) {
	o := newOneServer(t, false, "")
	p := o.pair(t)
	p.compare(`
		SET autocommit = 0
		SET @z = (SELECT COUNT(*) FROM audit_log)
		SELECT @@in_transaction
		INSERT INTO audit_log VALUES (1, 'x')
		COMMIT
		SET autocommit = 1
		SELECT id FROM audit_log`)
	o.samePlacement(t)
}

// Under autocommit = 0, SET @z = (SELECT COUNT(*) FROM audit_log) opens a transaction on cold
// that holds shared locks on audit_log's rows (MariaDB locks what a SET's subquery reads), while
// obroute counts no transaction: the INSERT on hot opens one there, COMMIT goes to hot only, and
// cold's transaction stays open, its locks held. On one server the COMMIT ends it: another
// session's INSERT into audit_log then succeeds at once; on cold it waits for the lock.
func TestAttack28SetWithSubqueryLocksLeftAfterCommit(t *testing.T) {
	o := newOneServer(t, false, "")
	p := o.pair(t)
	// Fixed: the SET opens the implicit transaction on cold, so the INSERT on hot is refused as
	// spanning backends (as after BEGIN; SELECT … FROM audit_log), and COMMIT ends cold's.
	p.steps(`
		SET autocommit = 0
		SET @z = (SELECT COUNT(*) FROM audit_log)
		!tx INSERT INTO items VALUES (1, 'x')
		COMMIT`, refusals)
	insert := func(b *sqltest.Backend) error {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, err := b.DB.ExecContext(ctx, "INSERT INTO audit_log VALUES (1, 'another session')")
		return err
	}
	if err := insert(o.one); err != nil {
		t.Fatalf("another session's INSERT on the one server after COMMIT: %v", err)
	}
	if err := insert(o.cold); err != nil {
		t.Errorf("another session's INSERT into audit_log on cold after COMMIT: %v; on the one server it succeeded (the COMMIT ended the transaction holding the locks)", err)
	}
}
