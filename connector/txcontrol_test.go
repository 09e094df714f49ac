package connector_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/sqltest"
)

var refusals = map[string]error{
	"tx":      connector.ErrCrossBackendTx,
	"state":   connector.ErrSessionState,
	"backend": connector.ErrCrossBackend,
}

// COMMIT AND CHAIN, ROLLBACK AND CHAIN and completion_type start the next transaction at once, on
// the server of the one that ended: the writes after them belong to it, and a later ROLLBACK undoes
// them. RELEASE ends the connection.
func TestCompletionChainAndRelease(t *testing.T) {
	o := newOneServer(t, false, "")
	t.Run("COMMIT AND CHAIN", func(t *testing.T) {
		p := o.pair(t)
		p.steps(`
			BEGIN
			INSERT INTO audit_log VALUES (1, 'first')
			COMMIT AND CHAIN
			INSERT INTO audit_log VALUES (2, 'chained')
			ROLLBACK
			SELECT id FROM audit_log ORDER BY id
			BEGIN
			INSERT INTO audit_log VALUES (3, 'x')
			ROLLBACK AND CHAIN
			INSERT INTO audit_log VALUES (4, 'chained after rollback')
			COMMIT WORK AND NO CHAIN NO RELEASE
			INSERT INTO audit_log VALUES (5, 'autocommit')
			ROLLBACK
			SELECT id FROM audit_log ORDER BY id`, refusals)
		o.samePlacement(t)
	})
	for _, value := range []string{"CHAIN", "'chain'", "1"} {
		t.Run("completion_type="+value, func(t *testing.T) {
			p := o.pair(t)
			p.steps(`
				SET completion_type = `+value+`
				SELECT @@completion_type
				BEGIN
				INSERT INTO audit_log VALUES (10, 'chain')
				COMMIT
				INSERT INTO audit_log VALUES (11, 'in the chained transaction')
				ROLLBACK
				BEGIN
				INSERT INTO audit_log VALUES (12, 'no chain')
				COMMIT AND NO CHAIN
				INSERT INTO audit_log VALUES (13, 'autocommit')
				ROLLBACK
				SELECT id FROM audit_log WHERE id >= 10 ORDER BY id
				SET completion_type = DEFAULT
				COMMIT
				DELETE FROM audit_log WHERE id >= 10`, refusals)
			o.samePlacement(t)
		})
	}
	t.Run("database/sql Commit under completion_type=CHAIN", func(t *testing.T) {
		// database/sql's Commit sends COMMIT as go-sql-driver does: the server chains.
		p := o.pair(t)
		p.both("SET completion_type = 'CHAIN'")
		ctx := context.Background()
		for _, c := range []*sql.Conn{p.ob, p.ref} {
			tx, err := c.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec("INSERT INTO audit_log VALUES (20, 'tx')"); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		p.steps(`
			INSERT INTO audit_log VALUES (21, 'in the chained transaction')
			ROLLBACK
			SELECT id FROM audit_log WHERE id >= 20 ORDER BY id
			SET completion_type = 0
			COMMIT`, refusals)
		o.samePlacement(t)
	})
	t.Run("database/sql BeginTx commits the chained transaction", func(t *testing.T) {
		p := o.pair(t)
		p.steps(`
			BEGIN
			INSERT INTO audit_log VALUES (25, 'first')
			COMMIT AND CHAIN
			INSERT INTO audit_log VALUES (26, 'chained, committed by BeginTx')`, refusals)
		for _, c := range []*sql.Conn{p.ob, p.ref} {
			tx, err := c.BeginTx(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec("INSERT INTO audit_log VALUES (27, 'rolled back')"); err != nil {
				t.Fatal(err)
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
		}
		o.samePlacement(t)
	})
	t.Run("RELEASE", func(t *testing.T) {
		p := o.pair(t)
		p.steps(`
			BEGIN
			INSERT INTO audit_log VALUES (30, 'released')
			COMMIT RELEASE
			SELECT 1`, refusals)
		p = o.pair(t)
		p.steps(`
			SET completion_type = RELEASE
			INSERT INTO items VALUES (31, 'autocommit')
			BEGIN
			INSERT INTO audit_log VALUES (32, 'released')
			COMMIT
			SELECT 1`, refusals)
		o.samePlacement(t)
	})
}

// SET autocommit in every spelling MariaDB accepts is read as the server reads it: the server's
// value after the SET (read on the one server) decides whether the next write opens a
// transaction. With autocommit off, a write on hot opens one there, a read of cold's table in it
// is refused, and COMMIT commits the write.
func TestAutocommitSpellings(t *testing.T) {
	o := newOneServer(t, false, "")
	for i, spelling := range []string{"0", "1", "OFF", "on", "FALSE", "true", "'OFF'", "'On'", "00", "-0", "+0", "(0)", "1 - 1",
		"IF(1, 0, 1)", "DEFAULT", "@@global.autocommit", "@off", "0 OR 0", "'of' 'f'"} {
		t.Run(spelling, func(t *testing.T) {
			p := o.pair(t)
			p.both("SET @off = 0")
			p.both("SET autocommit = 0")
			p.both("SET autocommit = " + spelling)
			on := p.both("SELECT @@autocommit").rows[0][0] == "1"
			id := 100 + i
			p.both(fmt.Sprintf("INSERT INTO items VALUES (%d, 'autocommit %s')", id, spelling))
			if on {
				p.both("SELECT COUNT(*) FROM audit_log")
			} else {
				p.refused("SELECT COUNT(*) FROM audit_log", connector.ErrCrossBackendTx)
			}
			p.both("COMMIT")
			p.both("SET autocommit = 1")
			o.samePlacement(t)
		})
	}
	t.Run("turning it on commits", func(t *testing.T) {
		p := o.pair(t)
		p.steps(`
			SET autocommit = 0
			BEGIN
			INSERT INTO audit_log VALUES (200, 'committed by SET autocommit = 1')
			SET autocommit = 'ON'
			ROLLBACK
			BEGIN
			INSERT INTO audit_log VALUES (201, 'not committed: it was on already')
			SET autocommit = 1
			ROLLBACK`, refusals)
		o.samePlacement(t)
	})
}

// A transaction whose first statements are savepoints (GORM's nested Transaction, bun's RunInTx)
// binds to the backend of its first other statement; savepoints behave there as on one server.
func TestSavepointFirstTransaction(t *testing.T) {
	o := newOneServer(t, false, "")
	t.Run("text", func(t *testing.T) {
		p := o.pair(t)
		p.steps(`
			BEGIN
			SAVEPOINT sp1
			SAVEPOINT Sp2
			RELEASE SAVEPOINT sp2
			INSERT INTO audit_log VALUES (1, 'after held savepoints')
			ROLLBACK TO SAVEPOINT sp1
			INSERT INTO audit_log VALUES (2, 'kept')
			SAVEPOINT sp3
			INSERT INTO audit_log VALUES (3, 'undone')
			ROLLBACK TO sp3
			COMMIT
			BEGIN
			SAVEPOINT a
			SAVEPOINT b
			SAVEPOINT a
			RELEASE SAVEPOINT b
			ROLLBACK
			BEGIN
			SAVEPOINT a
			ROLLBACK TO SAVEPOINT nosuch
			ROLLBACK
			SAVEPOINT outside
			ROLLBACK TO SAVEPOINT outside
			SELECT id FROM audit_log ORDER BY id`, refusals)
		o.samePlacement(t)
	})
	t.Run("GORM's nested Transaction by hand", func(t *testing.T) {
		// db.Transaction(func(tx) { tx.Transaction(func(tx2) { tx2.Create(…) }) }), the nested
		// one rolled back and then one committed, on a routed table.
		ctx := context.Background()
		for _, db := range []*sql.DB{o.db, o.ref} {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{
				"SAVEPOINT sp0x1", "INSERT INTO audit_log VALUES (10, 'nested, rolled back')", "ROLLBACK TO SAVEPOINT sp0x1",
				"SAVEPOINT sp0x2", "INSERT INTO audit_log VALUES (11, 'nested, committed')", "INSERT INTO audit_log VALUES (12, 'outer')",
			} {
				if _, err := tx.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		o.samePlacement(t)
	})
	t.Run("autocommit=0", func(t *testing.T) {
		// SAVEPOINT opens no transaction; the write after it does.
		p := o.pair(t)
		p.steps(`
			SET autocommit = 0
			SAVEPOINT x
			INSERT INTO audit_log VALUES (20, 'implicit')
			ROLLBACK TO SAVEPOINT x
			INSERT INTO audit_log VALUES (21, 'implicit')
			COMMIT
			SET autocommit = 1`, refusals)
		o.samePlacement(t)
	})
}

// The statements MariaDB's manual lists as committing implicitly commit the transaction first,
// on its backend, wherever they go; those it excepts (temporary tables …) do not. Each is checked
// against the one server's rows.
func TestImplicitCommits(t *testing.T) {
	o := newOneServer(t, true, "")
	for _, b := range []*sqltest.Backend{o.hot, o.cold, o.one} {
		b.Exec(t, "CREATE TABLE sink (a INT)")
		b.Exec(t, "CREATE TABLE mi (a INT, KEY (a)) ENGINE=MyISAM")
	}
	id := 0
	failed := false
	for _, tc := range []struct{ stmt, undo string }{
		{"CREATE TABLE made (a INT)", "DROP TABLE made"},
		{"CREATE OR REPLACE TABLE made (a INT)", "DROP TABLE made"},
		{"CREATE TEMPORARY TABLE made (a INT)", "DROP TEMPORARY TABLE made"},
		{"ALTER TABLE sink ADD COLUMN b INT", "ALTER TABLE sink DROP COLUMN b"},
		{"CREATE INDEX ia ON sink (a)", "DROP INDEX ia ON sink"},
		{"CREATE VIEW v AS SELECT 1 AS x", "DROP VIEW v"},
		{"RENAME TABLE sink TO sink2", "RENAME TABLE sink2 TO sink"},
		{"TRUNCATE TABLE sink", ""},
		{"ANALYZE TABLE sink", ""},
		{"CHECK TABLE sink", ""},
		{"CHECKSUM TABLE sink", ""},
		{"OPTIMIZE TABLE sink", ""},
		{"REPAIR TABLE sink", ""},
		{"CREATE PROCEDURE pr() SELECT 1", "DROP PROCEDURE pr"},
		{"CREATE FUNCTION fn() RETURNS INT RETURN 1", "DROP FUNCTION fn"},
		{"CREATE SEQUENCE sq", "DROP SEQUENCE sq"},
		{"CREATE USER 'u28'@'%'", "DROP USER 'u28'@'%'"},
		{"GRANT SELECT ON test.sink TO 'u28'@'%'", ""},
		{"REVOKE SELECT ON test.sink FROM 'u28'@'%'", ""},
		{"FLUSH STATUS", ""},
		{"CACHE INDEX mi IN DEFAULT", ""},
		{"LOAD INDEX INTO CACHE mi", ""},
		{"CREATE TEMPORARY SEQUENCE tsq", "DROP TEMPORARY SEQUENCE tsq"},
		{"CREATE ROLE r28", "DROP ROLE r28"},
		{"ALTER USER 'u28'@'%' ACCOUNT LOCK", ""},
		{"SET STATEMENT max_statement_time = 10 FOR CREATE TABLE made (a INT)", "DROP TABLE made"},
		{"SET STATEMENT max_statement_time = 10 FOR SELECT 1", ""},
		{"CREATE TABLE nosuchdb.made (a INT)", ""}, // fails, and commits all the same
		{"DO 1", ""},
		{"SET @v = 1", ""},
	} {
		t.Run(tc.stmt, func(t *testing.T) {
			if failed {
				t.Skip("an earlier statement left the backends unlike the one server")
			}
			defer func() { failed = failed || t.Failed() }()
			p := o.pair(t)
			id++
			p.both("BEGIN")
			p.both(fmt.Sprintf("INSERT INTO audit_log VALUES (%d, '%s')", id, strings.ReplaceAll(tc.stmt, "'", "")))
			p.both(tc.stmt)
			p.both("ROLLBACK")
			if tc.undo != "" {
				p.both(tc.undo)
			}
			o.samePlacement(t)
		})
	}
}

// XA transactions bind to the backend of their first statement; their writes belong to them.
func TestXATransactions(t *testing.T) {
	o := newOneServer(t, true, "") // xids are one namespace per server
	p := o.pair(t)
	p.steps(`
		XA START 'x1'
		INSERT INTO audit_log VALUES (1, 'xa, rolled back')
		XA END 'x1'
		SELECT COUNT(*) FROM audit_log
		XA ROLLBACK 'x1'
		XA START 'x2'
		INSERT INTO audit_log VALUES (2, 'xa, committed')
		COMMIT
		XA END 'x2'
		XA PREPARE 'x2'
		XA COMMIT 'x2'
		XA BEGIN 'x3', 'b', 7
		INSERT INTO audit_log VALUES (3, 'one phase')
		XA END 'x3', 'b', 7
		XA COMMIT 'x3', 'b', 7 ONE PHASE
		XA START 'x4'
		XA END 'x4'
		XA ROLLBACK 'x4'
		BEGIN
		XA START 'x5'
		ROLLBACK
		SELECT id FROM audit_log ORDER BY id
		!state XA RECOVER
		!state XA COMMIT 'elsewhere'
		/*+ OBROUTE(backend=cold) */ XA RECOVER`, refusals)
	o.samePlacement(t)
}

// LOCK TABLES locks on the backend of its tables, and the client session then runs there, as one
// server would; UNLOCK TABLES, a new LOCK TABLES and BEGIN release the locks where they are.
func TestTableLocks(t *testing.T) {
	o := newOneServer(t, false, "")
	p := o.pair(t)
	lock := func(q string) {
		t.Helper()
		p.both(q)
		o.sameLocks(t)
	}
	p.refused("LOCK TABLES items READ, audit_log WRITE", connector.ErrCrossBackend)
	lock("LOCK TABLES audit_log WRITE")
	p.both("INSERT INTO audit_log VALUES (1, 'locked')")
	p.both("SELECT COUNT(*) FROM items") // not locked: the server refuses it (1100)
	p.both("SELECT 1")
	lock("UNLOCK TABLES")
	lock("LOCK TABLE audit_log READ")
	lock("LOCK TABLES items WRITE") // releases audit_log's lock on cold
	p.refused("SELECT COUNT(*) FROM audit_log", connector.ErrSessionState)
	lock("BEGIN") // releases the table locks
	p.both("INSERT INTO items VALUES (2, 'after BEGIN')")
	p.both("COMMIT")
	lock("LOCK TABLES audit_log READ")
	for _, c := range []*sql.Conn{p.ob, p.ref} { // database/sql's BeginTx releases them too
		tx, err := c.BeginTx(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
	}
	o.sameLocks(t)
	p.both("BEGIN")
	lock("LOCK TABLES audit_log WRITE") // commits the transaction on hot, then locks on cold
	p.both("ROLLBACK")
	lock("UNLOCK TABLES")
	p.both("SET autocommit = 0")
	lock("LOCK TABLES audit_log WRITE")
	p.both("INSERT INTO audit_log VALUES (3, 'committed by UNLOCK TABLES')")
	lock("UNLOCK TABLES")
	p.both("ROLLBACK")
	p.both("SET autocommit = 1")
	o.samePlacement(t)
}

// User-level locks live on the default backend, for every client session and inside any
// transaction, as in one server's single namespace.
func TestUserLevelLocks(t *testing.T) {
	o := newOneServer(t, true, "")
	p, q := o.pair(t), o.pair(t)
	p.both("BEGIN")
	p.both("INSERT INTO audit_log VALUES (1, 'tx on cold')")
	p.both("SELECT GET_LOCK('l1', 0)")
	q.both("SELECT GET_LOCK('l1', 0), IS_FREE_LOCK('l1'), IS_USED_LOCK('l1') IS NOT NULL")
	p.both("COMMIT")
	p.both("SELECT RELEASE_LOCK('l1')")
	q.both("SELECT GET_LOCK('l1', 0)")
	q.both("SELECT RELEASE_ALL_LOCKS()")
	p.refused("SELECT GET_LOCK('l2', 0) FROM audit_log", connector.ErrSessionState)
	o.samePlacement(t)
	// The lock holder lost: the client session ends, as go-sql-driver's broken connection.
	ctx := context.Background()
	if _, err := p.ob.ExecContext(ctx, "DO GET_LOCK('l3', 0)"); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := p.ob.QueryRowContext(ctx, "SELECT IS_USED_LOCK('l3')").Scan(&id); err != nil {
		t.Fatal(err)
	}
	o.hot.Exec(t, fmt.Sprintf("KILL %d", id))
	if _, err := p.ob.ExecContext(ctx, "SELECT 1"); !errors.Is(err, driver.ErrBadConn) {
		t.Fatalf("after the server session holding a user-level lock was killed: %v, want driver.ErrBadConn", err)
	}
}

// SET STATEMENT … FOR runs its statement with the variables for that statement only: routed by
// the statement's tables, recording nothing; the statement commits when it would.
func TestSetStatementFor(t *testing.T) {
	o := newOneServer(t, false, "")
	p := o.pair(t)
	p.steps(`
		SET STATEMENT max_statement_time = 10 FOR INSERT INTO audit_log VALUES (1, 'for one statement')
		SET STATEMENT max_statement_time = 10 FOR SELECT @@max_statement_time, COUNT(*) FROM audit_log
		SELECT @@max_statement_time FROM audit_log
		SELECT @@max_statement_time FROM items
		BEGIN
		INSERT INTO audit_log VALUES (2, 'committed by the statement after FOR')
		SET STATEMENT max_statement_time = 10 FOR CREATE TABLE made (a INT)
		ROLLBACK
		DROP TABLE made`, refusals)
	o.samePlacement(t)
	// FOR a SET of variables: followed as that SET (TestSetStatementForSet). FOR another
	// statement that changes session state: the client session stays on that server session,
	// as after CALL.
	p = o.pair(t)
	p.steps(`
		SET STATEMENT max_statement_time = 10 FOR SET @@session.time_zone = '+06:00'
		SELECT @@time_zone
		SELECT @@time_zone FROM audit_log
		SET STATEMENT max_statement_time = 10 FOR CREATE TEMPORARY TABLE scratch (a INT)
		SELECT @@time_zone
		!state SELECT @@time_zone FROM audit_log
		SET STATEMENT max_statement_time = 10 FOR SELECT 5 INTO @w
		SELECT @w, @@time_zone FROM items`, refusals)
}

// FLUSH TABLES WITH READ LOCK locks one server: with several backends it needs a backend hint;
// the lock holds writes off that backend until UNLOCK TABLES.
func TestGlobalReadLock(t *testing.T) {
	o := newOneServer(t, true, "")
	p := o.pair(t)
	p.refused("FLUSH TABLES WITH READ LOCK", connector.ErrSessionState)
	if _, err := p.ob.ExecContext(context.Background(), "/*+ OBROUTE(backend=cold) */ FLUSH TABLES WITH READ LOCK"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ref.ExecContext(context.Background(), "FLUSH TABLES WITH READ LOCK"); err != nil {
		t.Fatal(err)
	}
	blocked := func(b *sqltest.Backend) bool {
		t.Helper()
		c, err := b.DB.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.ExecContext(context.Background(), "SET SESSION lock_wait_timeout = 1"); err != nil {
			t.Fatal(err)
		}
		_, err = c.ExecContext(context.Background(), "INSERT INTO audit_log VALUES (99, 'blocked?')")
		if err == nil {
			c.ExecContext(context.Background(), "DELETE FROM audit_log WHERE id = 99")
		}
		return err != nil
	}
	if !blocked(o.cold) || !blocked(o.one) {
		t.Fatal("FLUSH TABLES WITH READ LOCK did not hold writes off")
	}
	p.both("INSERT INTO audit_log VALUES (1, 'under the read lock')") // refused by the server: 1223
	p.both("UNLOCK TABLES")
	if blocked(o.cold) || blocked(o.one) {
		t.Fatal("UNLOCK TABLES did not release the read lock")
	}
	p.both("INSERT INTO audit_log VALUES (2, 'after UNLOCK TABLES')")
	o.samePlacement(t)
}
