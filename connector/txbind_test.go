package connector_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A statement that uses no table, or a savepoint statement the server refuses, as the first of a
// transaction does not bind it to a backend: one server would only run it, and the transaction's
// first statement on a table decides where it runs.
func TestTablelessFirstInTransaction(t *testing.T) {
	o := newOneServer(t, false, "")
	p := o.pair(t)
	p.steps(`
		BEGIN
		SELECT 1
		INSERT INTO audit_log VALUES (1, 'after SELECT 1')
		COMMIT
		BEGIN
		SET @x = 1
		INSERT INTO audit_log VALUES (2, 'after SET')
		ROLLBACK
		BEGIN
		ROLLBACK TO SAVEPOINT nosuch
		INSERT INTO audit_log VALUES (3, 'after a failed ROLLBACK TO')
		COMMIT
		BEGIN
		RELEASE SAVEPOINT nosuch
		INSERT INTO audit_log VALUES (4, 'after a failed RELEASE')
		ROLLBACK
		BEGIN
		SELECT @@in_transaction
		INSERT INTO items VALUES (5, 'after reading in_transaction')
		COMMIT
		SET autocommit = 0
		SELECT 2
		RELEASE SAVEPOINT nosuch
		INSERT INTO audit_log VALUES (6, 'implicit, after SELECT 2')
		ROLLBACK
		SET autocommit = 1
		SELECT id FROM audit_log ORDER BY id`, refusals)
	o.samePlacement(t)
}

// A one-shot SET TRANSACTION waits for the next transaction: a statement that uses no table
// does not spend it, on one server as through obroute, wherever that transaction runs; COMMIT,
// ROLLBACK and a transaction that ran nothing do.
func TestNextTransactionAfterTableless(t *testing.T) {
	o := newOneServer(t, false, "")
	p := o.pair(t)
	p.steps(`
		SET TRANSACTION ISOLATION LEVEL SERIALIZABLE
		SELECT 1
		DO 2
		BEGIN
		SELECT COUNT(*) FROM audit_log
		SELECT trx_isolation_level FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = CONNECTION_ID()
		COMMIT
		SET TRANSACTION READ ONLY
		SELECT @@time_zone
		BEGIN
		INSERT INTO audit_log VALUES (1, 'read only')
		ROLLBACK
		INSERT INTO audit_log VALUES (2, 'spent')
		SET TRANSACTION READ ONLY
		COMMIT
		INSERT INTO audit_log VALUES (3, 'spent by COMMIT')
		SET TRANSACTION READ ONLY
		ROLLBACK
		INSERT INTO audit_log VALUES (4, 'spent by ROLLBACK')
		SET TRANSACTION READ ONLY
		BEGIN
		COMMIT
		INSERT INTO audit_log VALUES (5, 'spent by BEGIN')`, refusals)
	o.samePlacement(t)
}

// DROP TEMPORARY TABLE of a table that is no temporary table drops nothing wherever it runs: in
// a transaction bound to another backend it runs there, as one server answers it (a note with IF
// EXISTS, error 1051 without).
func TestDropTemporaryNoSuchInTransaction(t *testing.T) {
	o := newOneServer(t, false, "")
	p := o.pair(t)
	p.steps(`
		BEGIN
		INSERT INTO audit_log VALUES (1, 'cold')
		DROP TEMPORARY TABLE IF EXISTS nosuch
		SHOW COUNT(*) WARNINGS
		DROP TEMPORARY TABLE nosuch
		DROP TEMPORARY TABLE IF EXISTS items
		INSERT INTO audit_log VALUES (2, 'cold')
		COMMIT
		SELECT id FROM audit_log ORDER BY id`, refusals)
	o.samePlacement(t)
}

// XA START is answered as the server answers it: under table locks by the server holding them
// (XAER_OUTSIDE), with an xid the server would not read by its syntax error; the client session
// then goes on as one server's would.
func TestXAStartAnsweredByServer(t *testing.T) {
	o := newOneServer(t, true, "")
	p := o.pair(t)
	long := "'" + strings.Repeat("x", 65) + "'"
	p.steps(`
		LOCK TABLES audit_log WRITE
		XA START 'x1'
		INSERT INTO audit_log VALUES (1, 'under the lock')
		UNLOCK TABLES
		LOCK TABLES audit_log WRITE
		XA START 'x1'
		ROLLBACK
		UNLOCK TABLES
		XA START `+long+`
		XA START 'x2', 'b', 'c'
		XA START 'x2',
		INSERT INTO audit_log VALUES (2, 'outside any transaction')
		XA START 'x3'
		INSERT INTO audit_log VALUES (3, 'xa')
		XA END 'x3'
		XA ROLLBACK 'x3'
		SELECT id FROM audit_log ORDER BY id`, refusals)
	o.samePlacement(t)
}

// The savepoint obroute sets around a split write is refused to the client in every statement
// that names it, SET STATEMENT … FOR a savepoint statement too (the server runs that as the
// savepoint statement alone).
func TestSplitSavepointRefusedUnderSetStatement(t *testing.T) {
	o := newOneServer(t, false, "")
	p := o.pair(t)
	p.steps(`
		BEGIN
		INSERT INTO audit_log VALUES (1, 'a')
		!state SAVEPOINT obroute_split
		!state SET STATEMENT max_statement_time = 10 FOR SAVEPOINT obroute_split
		!state SET STATEMENT max_statement_time = 10 FOR SAVEPOINT OBROUTE_SPLIT
		!state SET STATEMENT max_statement_time = 10 FOR RELEASE SAVEPOINT obroute_split
		!state SET STATEMENT max_statement_time = 10 FOR ROLLBACK WORK TO SAVEPOINT obroute_split
		SET STATEMENT max_statement_time = 10 FOR SAVEPOINT mine
		INSERT INTO audit_log VALUES (2, 'b')
		ROLLBACK TO SAVEPOINT mine
		COMMIT
		SELECT id FROM audit_log ORDER BY id`, refusals)
	o.samePlacement(t)
}

// obroute follows temporary tables by name in the current database: one created in another
// database, or a USE of another database while temporary tables exist, is refused, since a table
// of that name in the current database would then be taken for the temporary table (before, the
// INSERT into items after a temporary other.items made in a cold transaction went to cold).
func TestTemporaryTableInAnotherDatabase(t *testing.T) {
	o := newOneServer(t, false, "")
	other := fmt.Sprintf("obroute_tmpdb_%d", time.Now().UnixNano()%1e9)
	o.one.Exec(t, "CREATE DATABASE "+other)
	t.Cleanup(func() { o.one.DB.Exec("DROP DATABASE IF EXISTS " + other) })
	p := o.pair(t)
	p.steps(`
		BEGIN
		INSERT INTO audit_log VALUES (1, 'cold')
		!state CREATE TEMPORARY TABLE `+other+`.items (id INT PRIMARY KEY, note VARCHAR(64))
		COMMIT
		INSERT INTO items VALUES (2, 'the permanent table')
		CREATE TEMPORARY TABLE scratch (a INT)
		!state USE `+other+`
		DROP TEMPORARY TABLE scratch
		USE `+other+`
		CREATE TEMPORARY TABLE t1 (a INT)
		INSERT INTO t1 VALUES (1)
		SELECT a FROM t1
		DROP TEMPORARY TABLE t1`, refusals)
	o.samePlacement(t)
}
