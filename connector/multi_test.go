package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/sqltest"
)

// TestTextOfSeveralStatementsOnMariaDB sends texts of several statements (multiStatements=true)
// through two backends, audit_log routed to cold: a text whose statements all go to cold runs
// there as one, with every result set; one that would need both backends, or that sets session
// state, is refused before anything runs.
func TestTextOfSeveralStatementsOnMariaDB(t *testing.T) {
	ctx := context.Background()
	names := []string{"hot", "cold"}
	b := sqltest.Shared(t, names...)
	cfg := &config.Config{Routes: map[string]string{"audit_log": "cold"}}
	for i, be := range b {
		my, err := mysql.ParseDSN(be.DSN)
		if err != nil {
			t.Fatal(err)
		}
		my.MultiStatements = true
		cfg.Backends = append(cfg.Backends, config.Backend{Name: names[i], Role: names[i], DSN: my.FormatDSN()})
		be.Exec(t, "CREATE TABLE items (id INT PRIMARY KEY, note VARCHAR(64))")
		be.Exec(t, "CREATE TABLE audit_log (id INT PRIMARY KEY, note VARCHAR(64))")
	}
	c, err := connector.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	count := func(be *sqltest.Backend, table string) int {
		var n int
		if err := be.DB.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	if _, err := db.ExecContext(ctx, "INSERT INTO audit_log VALUES (1, 'a'); INSERT INTO audit_log VALUES (2, 'b')"); err != nil {
		t.Fatal(err)
	}
	if hot, cold := count(b[0], "audit_log"), count(b[1], "audit_log"); hot != 0 || cold != 2 {
		t.Errorf("audit_log rows: hot %d, cold %d; want 0 and 2", hot, cold)
	}

	rows, err := db.QueryContext(ctx, "SELECT note FROM audit_log WHERE id = 1; SELECT note FROM audit_log WHERE id = 2")
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for more := true; more; more = rows.NextResultSet() {
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			notes = append(notes, s)
		}
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 2 || notes[0] != "a" || notes[1] != "b" {
		t.Errorf("result sets read %q, want [a b]", notes)
	}

	// One client session, so that the time_zone read below is the session's the SET was refused in.
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, sql := range []string{
		"INSERT INTO items VALUES (1, 'x'); INSERT INTO audit_log VALUES (3, 'c')",
		"INSERT INTO audit_log VALUES (4, 'd'); SET time_zone = '+08:00'",
	} {
		if _, err := conn.ExecContext(ctx, sql); !errors.Is(err, connector.ErrMultiStatement) {
			t.Errorf("%s: err = %v, want ErrMultiStatement", sql, err)
		}
	}
	for i, be := range b {
		if n, m := count(be, "items"), count(be, "audit_log"); n != 0 || m != 2*i {
			t.Errorf("%s: %d items and %d audit_log rows after the refusals, want 0 and %d", names[i], n, m, 2*i)
		}
	}
	var tz string
	if err := conn.QueryRowContext(ctx, "SELECT @@session.time_zone").Scan(&tz); err != nil || tz == "+08:00" {
		t.Errorf("time_zone = %q (%v) after the refused SET", tz, err)
	}
}
