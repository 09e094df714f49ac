package connector_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/obroute/obroute/sqltest"
)

// A user variable assigned by a statement other than SET (SELECT … INTO, :=, DO) is read back
// and kept: a server session that replaces a lost one gets the value the lost one had, not the
// last SET's.
func TestUserVariableAssignedOutsideSETFollowsTheSession(t *testing.T) {
	b := sqltest.Shared(t, "uvar")[0]
	db, err := sql.Open("obroute", b.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, change := range []string{"SELECT 2 INTO @v", "SELECT @v := 2", "DO @v := 2", "SELECT 0, 2 INTO @w, @V", "SET @v = 2"} {
		t.Run(change, func(t *testing.T) {
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.ExecContext(ctx, "SET @v = 1"); err != nil {
				t.Fatal(err)
			}
			rows, err := conn.QueryContext(ctx, change)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
			var id int64
			if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
				t.Fatal(err)
			}
			if _, err := b.DB.Exec(fmt.Sprintf("KILL CONNECTION %d", id)); err != nil {
				t.Fatal(err)
			}
			var v sql.NullInt64
			var other int64
			if err := conn.QueryRowContext(ctx, "SELECT @v, CONNECTION_ID()").Scan(&v, &other); err != nil {
				t.Fatalf("after %q and the server session killed: %v", change, err)
			}
			if other == id {
				t.Fatalf("the killed server session %d answered", id)
			}
			if !v.Valid || v.Int64 != 2 {
				t.Errorf("after %q the replacing server session reads @v = %v, want 2", change, v)
			}
		})
	}
}

// A server session lost before the variables a statement assigned could be read back takes them
// with it: the client session is discarded (database/sql retries on a new one), never replayed
// with an older value.
func TestUserVariableLostWithItsSession(t *testing.T) {
	b := sqltest.Shared(t, "uvarlost")[0]
	db, err := sql.Open("obroute", b.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxIdleConns(1)
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "SET @v = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "DO @v := 2"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DB.Exec(fmt.Sprintf("KILL CONNECTION %d", id)); err != nil {
		t.Fatal(err)
	}
	var v sql.NullInt64
	err = conn.QueryRowContext(ctx, "SELECT @v").Scan(&v)
	if err == nil && v.Valid && v.Int64 == 1 {
		t.Fatalf("SELECT @v after the session that set it to 2 was lost: 1, a value the session no longer had")
	}
	if err == nil {
		t.Fatalf("SELECT @v after the session that assigned it was lost: %v, want an error (the client session is discarded)", v)
	}
}

// A user variable set on one backend and read on another holds there the value, type and
// collation it holds on one server: a DECIMAL without a fraction stays a DECIMAL, a NULL keeps
// the type of the expression that gave it, a geometry stays a geometry; strings keep their
// character set, binary strings stay binary.
func TestUserVariableTypesOnAnotherBackend(t *testing.T) {
	o := newOneServer(t, false, "")
	for _, v := range []string{"1", "'1'", "_binary '1'", "CAST(1 AS DECIMAL(10,3))", "NOW(6) - NOW(6)", "CAST(7 AS DECIMAL(5,0))",
		"_latin1 'é'", "CONVERT('é' USING latin1)", "NULL", "CAST(NULL AS SIGNED)", "CAST(NULL AS UNSIGNED)", "CAST(NULL AS DECIMAL(5,2))",
		"CAST(NULL AS DOUBLE)", "CAST(NULL AS CHAR CHARACTER SET latin1)", "IF(1, NULL, 'x')", "1.5e0", "0x41", "X'E9'",
		"18446744073709551615", "-0.0", "_utf8mb4 'a' COLLATE utf8mb4_bin", "POINT(1, 2)", "ST_GeomFromText('LINESTRING(0 0, 1 1)', 4326)"} {
		p := o.pair(t)
		p.both("SET NAMES utf8mb4")
		p.both("SET @v = " + v)
		for _, from := range []string{"audit_log", "items"} {
			p.both("SELECT (SELECT COUNT(*) FROM " + from + ") AS c, @v, HEX(@v), @v = '1', @v = 'A', @v = 'é', COLLATION(@v), CHARSET(@v), @v IS NULL, COERCIBILITY(@v), LENGTH(@v)")
			p.both("SELECT (SELECT COUNT(*) FROM " + from + ") AS c, @v + 0")
		}
	}
}

// A SET whose value fails (a subquery of two rows) leaves its user variable on the server as a
// NULL string of the connection's character set, not unset: read on another backend it is the
// same.
func TestUserVariableOfAFailedSetOnAnotherBackend(t *testing.T) {
	o := newOneServer(t, false, "")
	p := o.pair(t)
	p.steps(`
		SET NAMES utf8mb4
		SET @v = (SELECT 1 UNION SELECT 2)
		SELECT (SELECT COUNT(*) FROM audit_log), @v, COLLATION(@v), COERCIBILITY(@v), COLLATION(@never)
		SET @x = 5, @y = (SELECT 1 UNION SELECT 2)
		SELECT (SELECT COUNT(*) FROM audit_log), @x, @y, COLLATION(@y)
		SELECT (SELECT COUNT(*) FROM items), @x, @y, COLLATION(@y)`, refusals)
}
