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

// SQL-level prepared statements are routed by what they prepare, as if it came alone: EXECUTE
// IMMEDIATE of a text runs as that text, PREPARE goes where its statement goes and EXECUTE where
// PREPARE went; what obroute cannot read while tables have rules is refused.
func TestSQLPreparedStatementsRouteByTheirText(t *testing.T) {
	o := newOneServer(t, false, "")
	p := o.pair(t)
	p.steps(`
		SELECT 1 FROM items
		EXECUTE IMMEDIATE 'SET time_zone = ''+05:00'''
		SELECT @@time_zone FROM audit_log UNION ALL SELECT @@time_zone
		EXECUTE IMMEDIATE 'INSERT INTO audit_log VALUES (1, ''immediate'')'
		EXECUTE IMMEDIATE 'INSERT INTO audit_log VALUES (?, ?)' USING 2, 'using'
		SET @q = 'INSERT INTO audit_log VALUES (3, ''from a variable'')'
		EXECUTE IMMEDIATE @q
		PREPARE ins FROM 'INSERT INTO audit_log VALUES (?, ''prepared'')'
		EXECUTE ins USING 4
		SET @id = 5
		EXECUTE ins USING @id
		PREPARE cnt FROM @q
		PREPARE cnt FROM 'SELECT COUNT(*) FROM audit_log'
		EXECUTE cnt
		PREPARE cnt FROM 'SELECT COUNT(*) FROM items'
		EXECUTE cnt
		DEALLOCATE PREPARE ins
		EXECUTE ins USING 6
		EXECUTE IMMEDIATE 'BEGIN'
		INSERT INTO audit_log VALUES (7, 'in a transaction begun by EXECUTE IMMEDIATE')
		EXECUTE IMMEDIATE 'ROLLBACK'
		EXECUTE IMMEDIATE 'CREATE TEMPORARY TABLE scratch (a INT)'
		INSERT INTO scratch VALUES (8)
		SELECT a FROM scratch
		PREPARE st FROM 'SET @@session.sql_mode = ''ANSI_QUOTES'''
		EXECUTE st
		SELECT @@sql_mode FROM audit_log
		SET sql_mode = DEFAULT
		EXECUTE IMMEDIATE 'PREPARE x FROM ''SELECT 1'''
		!state EXECUTE IMMEDIATE CONCAT('INSERT INTO audit_log VALUES (9, ', '''built'')')
		!state PREPARE p2 FROM 'SAVEPOINT a'
		!state PREPARE p2 FROM 'SET @v = ?'
		SELECT id FROM audit_log ORDER BY id`, refusals)
	o.samePlacement(t)
}

// CALL can set session variables, create temporary tables and open transactions where obroute
// cannot see: the client session then stays on that server session (statements for another
// backend are refused), and when it is lost the client session ends with driver.ErrBadConn.
func TestCallPinsTheClientSession(t *testing.T) {
	o := newOneServer(t, false, "")
	for _, b := range []*sqltest.Backend{o.hot, o.one} {
		b.Exec(t, "CREATE PROCEDURE shadowing() BEGIN SET time_zone = '+03:00'; CREATE TEMPORARY TABLE audit_log (id INT PRIMARY KEY, note VARCHAR(64)); END")
	}
	p := o.pair(t)
	p.steps(`
		CALL shadowing()
		SELECT @@time_zone
		INSERT INTO items VALUES (1, 'on the pinned server session')
		!state INSERT INTO audit_log VALUES (1, 'the temporary table on hot, or the table on cold?')
		SELECT @@time_zone FROM items`, refusals)
	o.samePlacement(t)
	var id int64
	if err := p.ob.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	o.hot.Exec(t, fmt.Sprintf("KILL %d", id))
	if _, err := p.ob.ExecContext(context.Background(), "SELECT 1"); !errors.Is(err, driver.ErrBadConn) {
		t.Fatalf("after the pinned server session was killed: %v, want driver.ErrBadConn", err)
	}
}

// With a plain DSN, state obroute follows (EXECUTE IMMEDIATE of a SET) survives a lost idle
// server session; state it cannot (CALL, PREPARE) ends the client session with driver.ErrBadConn,
// as go-sql-driver's connection.
func TestPlainDSNLostStateEndsTheClientSession(t *testing.T) {
	b := sqltest.MariaDB(t, "only")[0]
	b.Exec(t, "CREATE PROCEDURE zone() SET time_zone = '+04:00'")
	db, err := sql.Open("obroute", b.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	kill := func(c *sql.Conn) {
		t.Helper()
		var id int64
		if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		b.Exec(t, fmt.Sprintf("KILL %d", id))
	}
	t.Run("followed", func(t *testing.T) {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.ExecContext(ctx, "EXECUTE IMMEDIATE 'SET time_zone = ''+02:00'''"); err != nil {
			t.Fatal(err)
		}
		kill(c)
		var tz string
		if err := c.QueryRowContext(ctx, "SELECT @@time_zone").Scan(&tz); err != nil || tz != "+02:00" {
			t.Fatalf("after the server session was replaced: time_zone %q, %v; want +02:00", tz, err)
		}
	})
	for _, q := range []string{"CALL zone()", "PREPARE s FROM 'SELECT 1'", "SELECT GET_LOCK('l', 0)"} {
		t.Run(q, func(t *testing.T) {
			c, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
			kill(c)
			if _, err := c.ExecContext(ctx, "SELECT @@time_zone"); !errors.Is(err, driver.ErrBadConn) {
				t.Fatalf("after the server session was killed: %v, want driver.ErrBadConn", err)
			}
		})
	}
}

// A shadow-table INSERT through EXECUTE IMMEDIATE or PREPARE/EXECUTE goes to shadow, decided by
// the statement it runs, and never reaches production: counted on production's general logs.
func TestShadowThroughSQLPreparedStatements(t *testing.T) {
	prod := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{GeneralLog: true}, "hot", "cold")
	shadows := sqltest.MariaDB(t, "shadow_hot", "shadow_cold")
	for _, b := range append(append([]*sqltest.Backend{}, prod...), shadows...) {
		b.Exec(t, "CREATE TABLE t_order (id INT PRIMARY KEY, user_id INT, note VARCHAR(64))")
	}
	dsn := fmt.Sprintf("obroute:backends.hot.dsn=%s;backends.cold.dsn=%s;backends.shadow_hot.dsn=%s;backends.shadow_hot.role=shadow;"+
		"backends.shadow_cold.dsn=%s;backends.shadow_cold.role=shadow;shadow.mappings.hot.shadow=shadow_hot;shadow.mappings.cold.shadow=shadow_cold;"+
		"shadow.algorithms.test_user.kind=value_match;shadow.algorithms.test_user.column=user_id;shadow.algorithms.test_user.operation=insert;"+
		"shadow.algorithms.test_user.values=0;shadow.tables.t_order.algorithms=test_user",
		prod[0].DSN, prod[1].DSN, shadows[0].DSN, shadows[1].DSN)
	db, err := sql.Open("obroute", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, q := range []string{
		"EXECUTE IMMEDIATE 'INSERT INTO t_order (id, user_id, note) VALUES (1, 0, ''shadow-immediate'')'",
		"SET @q = 'INSERT INTO t_order (id, user_id, note) VALUES (2, 0, ''shadow-variable'')'",
		"EXECUTE IMMEDIATE @q",
		"PREPARE s FROM 'INSERT INTO t_order (id, user_id, note) VALUES (3, 0, ''shadow-prepared'')'",
		"EXECUTE s",
		"EXECUTE IMMEDIATE 'INSERT INTO t_order (id, user_id, note) VALUES (4, 7, ''production'')'",
	} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, q := range []string{
		"PREPARE s2 FROM 'INSERT INTO t_order (id, user_id, note) VALUES (?, ?, ''shadow-argument'')'",
		"EXECUTE IMMEDIATE 'INSERT INTO t_order (id, user_id, note) VALUES (?, ?, ''shadow-using'')' USING 5, 0",
	} {
		if _, err := c.ExecContext(ctx, q); !errors.Is(err, connector.ErrSessionState) {
			t.Errorf("%s: %v, want ErrSessionState", q, err)
		}
	}
	for _, b := range prod {
		for _, e := range b.GeneralLog(t) {
			// SET @q is production's session state: the variable holds a text, nothing runs.
			if strings.Contains(e.Text, "shadow-") && !strings.HasPrefix(e.Text, "SET @q") {
				t.Errorf("production backend %s received %s %q", b.Name, e.Command, e.Text)
			}
		}
	}
	if n := count(t, shadows[0], "SELECT COUNT(*) FROM t_order WHERE user_id = 0"); n != 3 {
		t.Errorf("shadow_hot holds %d shadow rows, want 3", n)
	}
	if n := count(t, prod[0], "SELECT COUNT(*) FROM t_order"); n != 1 {
		t.Errorf("hot holds %d rows, want the 1 production row", n)
	}
}

// With a plain DSN, the statements obroute answers itself (a BEGIN it holds) and the SELECT it
// sends to read a SET's values back leave ROW_COUNT() and FOUND_ROWS() as one connection to the
// server would.
func TestPlainDSNSessionFunctions(t *testing.T) {
	b := sqltest.Shared(t, "only")[0]
	b.Exec(t, "CREATE TABLE items (id INT PRIMARY KEY)")
	b.Exec(t, "INSERT INTO items VALUES (1), (2), (3)")
	o := &oneServer{one: b}
	var err error
	if o.db, err = sql.Open("obroute", b.DSN); err != nil {
		t.Fatal(err)
	}
	defer o.db.Close()
	if o.ref, err = sql.Open("mysql", b.DSN); err != nil {
		t.Fatal(err)
	}
	defer o.ref.Close()
	p := o.pair(t)
	p.steps(`
		UPDATE items SET id = id + 10
		BEGIN
		SELECT ROW_COUNT()
		COMMIT
		SELECT id FROM items
		SET @v = CONCAT('read', ' back')
		SELECT FOUND_ROWS(), ROW_COUNT()
		SELECT FOUND_ROWS()`, nil)
}
