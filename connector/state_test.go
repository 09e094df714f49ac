package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/sqltest"
)

// refusingBackends starts hot and cold with a user app that may set sql_log_bin on hot only,
// database onlyhot on hot only, and table items on hot, audit_log on cold; it opens obroute
// over them as app.
func refusingBackends(t *testing.T) (*sql.DB, *sqltest.Backend, *sqltest.Backend) {
	t.Helper()
	bs := sqltest.MariaDB(t, "hot", "cold")
	hot, cold := bs[0], bs[1]
	for _, b := range bs {
		b.Exec(t, "CREATE USER app@'%' IDENTIFIED BY 'app-pw'")
		b.Exec(t, "GRANT ALL ON test.* TO app@'%'")
		b.Exec(t, "CREATE TABLE items (id INT PRIMARY KEY)")
		b.Exec(t, "CREATE TABLE audit_log (id INT PRIMARY KEY)")
	}
	hot.Exec(t, "GRANT SUPER, BINLOG ADMIN ON *.* TO app@'%'")
	hot.Exec(t, "CREATE DATABASE onlyhot")
	hot.Exec(t, "GRANT ALL ON onlyhot.* TO app@'%'")
	hot.Exec(t, "CREATE TABLE onlyhot.items (id INT PRIMARY KEY)")
	dsn := fmt.Sprintf("obroute:backends.hot.dsn=app:app-pw@tcp(%s)/test;backends.cold.dsn=app:app-pw@tcp(%s)/test;routes.audit_log=cold", hot.Addr, cold.Addr)
	db, err := sql.Open("obroute", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, hot, cold
}

// checkRefusal fails unless err is the refusal of name by backend cold, with one of the
// server's error numbers want.
func checkRefusal(t *testing.T, err error, name string, want ...uint16) {
	t.Helper()
	var me *mysql.MySQLError
	switch {
	case !errors.Is(err, connector.ErrSessionStateRefused):
		t.Fatalf("err = %v, want ErrSessionStateRefused", err)
	case !errors.As(err, &me) || !slices.Contains(want, me.Number):
		t.Fatalf("err = %v, want the server's error %v inside", err, want)
	case !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "backend cold"):
		t.Fatalf("err = %q does not name %s and backend cold", err, name)
	}
}

// A SET that one backend takes and another refuses: the statement for the other backend fails
// with an error naming variable and backend, every time, until the application sets the
// variable back; a client session left that way never goes back to the pool.
func TestRefusedSessionVariable(t *testing.T) {
	db, hot, cold := refusingBackends(t)
	ctx := context.Background()
	t.Run("set back clears it", func(t *testing.T) {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// A SET goes to the backend of the previous statement: hot here, where app may.
		for _, q := range []string{"SELECT 1", "SET SESSION sql_log_bin = 0"} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		for i := range 3 {
			_, err := conn.ExecContext(ctx, "INSERT INTO audit_log VALUES (?)", i)
			checkRefusal(t, err, "sql_log_bin", 1227)
		}
		if n := count(t, cold, "SELECT COUNT(*) FROM audit_log"); n != 0 {
			t.Fatalf("%d refused statements ran on cold", n)
		}
		var on int
		if err := conn.QueryRowContext(ctx, "SELECT @@session.sql_log_bin").Scan(&on); err != nil || on != 0 {
			t.Fatalf("hot: sql_log_bin = %d, %v; want 0: hot keeps the session's value", on, err)
		}
		if _, err := conn.ExecContext(ctx, "SET SESSION sql_log_bin = 1"); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, "INSERT INTO audit_log VALUES (10)"); err != nil {
			t.Fatalf("after setting sql_log_bin back: %v", err)
		}
		if n := count(t, cold, "SELECT COUNT(*) FROM audit_log WHERE id = 10"); n != 1 {
			t.Fatalf("cold has %d rows with id 10, want 1", n)
		}
	})
	t.Run("set back before the other backend is used", func(t *testing.T) {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// A SET goes to the backend of the previous statement: hot here.
		for _, q := range []string{"SELECT 1", "SET SESSION sql_log_bin = 0", "INSERT INTO items VALUES (20)", "SET SESSION sql_log_bin = ON", "INSERT INTO audit_log VALUES (20)"} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	})
	t.Run("database", func(t *testing.T) {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, q := range []string{"SELECT 1", "USE onlyhot"} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		// Hinted to cold: unhinted, audit_log in onlyhot is onlyhot's own table (1146 from the
		// default backend, as from one server).
		_, err = conn.ExecContext(ctx, "/*+ OBROUTE(backend=cold) */ INSERT INTO audit_log VALUES (30)")
		checkRefusal(t, err, "database onlyhot", 1044, 1049)
		if _, err := conn.ExecContext(ctx, "USE test"); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, "INSERT INTO audit_log VALUES (30)"); err != nil {
			t.Fatalf("after USE test: %v", err)
		}
	})
	t.Run("never back to the pool", func(t *testing.T) {
		db.SetMaxOpenConns(1) // every statement below would get the same client session
		var before int64
		if err := db.QueryRow("SELECT CONNECTION_ID()").Scan(&before); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("SET SESSION sql_log_bin = 0"); err != nil {
			t.Fatal(err)
		}
		_, err := db.Exec("INSERT INTO audit_log VALUES (40)")
		checkRefusal(t, err, "sql_log_bin", 1227)
		t.Logf("refusal: %v", err)
		// The refused client session was discarded: the next statement gets a new one, with
		// none of its state.
		if _, err := db.Exec("INSERT INTO audit_log VALUES (41)"); err != nil {
			t.Fatalf("the pool handed out the refused client session again: %v", err)
		}
		var after int64
		var logBin int
		if err := db.QueryRow("SELECT CONNECTION_ID(), @@session.sql_log_bin").Scan(&after, &logBin); err != nil {
			t.Fatal(err)
		}
		if after == before || logBin != 1 {
			t.Fatalf("hot server session %d (before %d) with sql_log_bin = %d: the pool kept the refused client session", after, before, logBin)
		}
		if n := count(t, hot, "SELECT COUNT(*) FROM items"); n != 1 {
			t.Fatalf("hot has %d items, want the 1 of the second subtest", n)
		}
	})
}
