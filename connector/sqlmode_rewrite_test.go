package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
)

// A statement on a time-sharded table is sent rewritten for its physical tables, printed as the
// default sql_mode reads it. In a session whose sql_mode reads the text otherwise (ANSI_QUOTES,
// PIPES_AS_CONCAT, NO_BACKSLASH_ESCAPES) the rewrite would mean something else than what one
// server answers: the statement is refused with ErrUnreadable naming the mode, and the same
// statement in the default mode, or one without the construct in that mode, is answered as one
// server answers it.
func TestRewriteRefusedWhereSQLModeReadsOtherwise(t *testing.T) {
	f := newTimeWrites(t, 0)
	ctx := context.Background()
	const where = " FROM orders WHERE order_time >= '2025-02-01 00:00:00'"
	cases := []struct{ mode, construct, plain string }{
		// "n" is the column n under ANSI_QUOTES (three rows), the string 'n' (0, no row) as rewritten.
		{"ANSI_QUOTES", "SELECT id" + where + ` AND "n" = 1 ORDER BY id`, "SELECT id" + where + " AND n = 1 ORDER BY id"},
		{"ANSI", "SELECT id" + where + ` AND "n" = 1 ORDER BY id`, "SELECT id, CONCAT('a', 'b')" + where + " ORDER BY id"},
		// 'a' || 'b' is 'ab', printed as 'a' or 'b': 0.
		{"PIPES_AS_CONCAT", "SELECT id, 'a' || 'b'" + where + " ORDER BY id", "SELECT id, CONCAT('a', 'b')" + where + " ORDER BY id"},
		// 'a\\b' is four characters, not three.
		// 'it''s' is written 'it\'s' by the rewrite: under NO_BACKSLASH_ESCAPES the string ends at
		// the backslash.
		{"NO_BACKSLASH_ESCAPES", "SELECT id, 'it''s'" + where + " ORDER BY id", "SELECT id, LENGTH('ab')" + where + " ORDER BY id"},
		{"NO_BACKSLASH_ESCAPES", `SELECT id, LENGTH('a\\b')` + where + " ORDER BY id", "SELECT id, LENGTH('ab')" + where + " ORDER BY id"},
	}
	for _, c := range cases {
		ob, err := f.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := f.ref.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Before the SET: the default mode reads the statement as the parser does.
		if got, want := modeRows(t, ob, c.plain), modeRows(t, ref, c.plain); !slices.Equal(got, want) {
			t.Errorf("%s, default mode: %v, one server %v", c.plain, got, want)
		}
		set := "SET sql_mode = CONCAT(@@sql_mode, '," + c.mode + "')"
		for _, conn := range []*sql.Conn{ob, ref} {
			if _, err := conn.ExecContext(ctx, set); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := ob.QueryContext(ctx, c.construct)
		if err == nil {
			got, _ := textRows(rows)
			want, refErr := connRows(ctx, ref, c.construct)
			t.Errorf("%s under %s: answered %v where one server answers %v (%v), want ErrUnreadable naming the mode", c.construct, c.mode, got, want, refErr)
		} else if !errors.Is(err, connector.ErrUnreadable) || !strings.Contains(err.Error(), "sql_mode "+c.mode) {
			t.Errorf("%s under %s: %v, want ErrUnreadable naming the mode", c.construct, c.mode, err)
		}
		if got, want := modeRows(t, ob, c.plain), modeRows(t, ref, c.plain); !slices.Equal(got, want) {
			t.Errorf("%s under %s: %v, one server %v", c.plain, c.mode, got, want)
		}
		ob.Close()
		ref.Close()
	}

	// A backend whose server sessions start in such a mode (the DSN's sql_mode) refuses it too,
	// once obroute has read that mode back.
	cfg := &config.Config{
		Backends:   []config.Backend{{Name: "hot", Role: "hot", DSN: f.hot.DSN + "&sql_mode=%27PIPES_AS_CONCAT%27"}},
		TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 2}}},
	}
	now := time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)
	c, err := connector.New(cfg, connector.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	if _, err := db.ExecContext(ctx, "SELECT id"+where); err != nil { // the first refresh reads the backend back
		t.Fatal(err)
	}
	if rows, err := db.QueryContext(ctx, "SELECT id, 'a' || 'b'"+where); err == nil {
		got, _ := textRows(rows)
		t.Errorf("|| on a backend starting in PIPES_AS_CONCAT: answered %v, want ErrUnreadable naming the mode", got)
	} else if !errors.Is(err, connector.ErrUnreadable) || !strings.Contains(err.Error(), "sql_mode PIPES_AS_CONCAT") {
		t.Errorf("|| on a backend starting in PIPES_AS_CONCAT: %v, want ErrUnreadable naming the mode", err)
	}
}

// modeRows reads query's rows on conn as text, one string a row.
func modeRows(t *testing.T, conn *sql.Conn, query string) []string {
	t.Helper()
	out, err := connRows(context.Background(), conn, query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

// Under ANSI_QUOTES a "double-quoted" text is a name: obroute, which reads it as a string,
// would not see the routed table in SELECT … FROM "audit_log" and would send the statement to
// the default backend. Such a statement is refused while the session's sql_mode, or a backend
// DSN's, reads it so; the table written plainly is routed as before, and nothing lands on the
// wrong backend.
func TestDoubleQuotedNamesRefusedUnderANSIQuotes(t *testing.T) {
	o := newOneServer(t, false, "")
	mustExec(t, o.ref, "INSERT INTO audit_log VALUES (1, 'one'), (2, 'two')")
	mustExec(t, o.db, "INSERT INTO audit_log VALUES (1, 'one'), (2, 'two')")
	ctx := context.Background()
	for _, mode := range []string{"ANSI_QUOTES", "ANSI"} {
		p := o.pair(t)
		for _, c := range []*sql.Conn{p.ob, p.ref} {
			if _, err := c.ExecContext(ctx, "SET sql_mode = '"+mode+"'"); err != nil {
				t.Fatal(err)
			}
		}
		for _, q := range []string{
			`SELECT COUNT(*) FROM "audit_log"`,
			`INSERT INTO "audit_log" VALUES (3, 'ansi')`,
			`UPDATE "audit_log" SET note = 'x' WHERE id = 1`,
			`DELETE FROM "audit_log" WHERE id = 2`,
			`SET @n = (SELECT COUNT(*) FROM "audit_log")`,
		} {
			if _, err := p.ob.ExecContext(ctx, q); !errors.Is(err, connector.ErrUnreadable) || !strings.Contains(err.Error(), "sql_mode "+mode) {
				t.Errorf("%s under %s: %v, want ErrUnreadable naming the mode", q, mode, err)
			}
		}
		// A SET without a subquery names no table: the server reads a name there as the value.
		for _, c := range []*sql.Conn{p.ob, p.ref} {
			if _, err := c.ExecContext(ctx, `SET time_zone = "+02:00"`); err != nil {
				t.Errorf(`SET time_zone = "+02:00" under %s: %v`, mode, err)
			}
		}
		const plain = "SELECT id, note FROM audit_log ORDER BY id"
		if got, want := modeRows(t, p.ob, plain), modeRows(t, p.ref, plain); !slices.Equal(got, want) {
			t.Errorf("%s under %s: %v, one server %v", plain, mode, got, want)
		}
	}
	// Nothing reached hot's audit_log.
	if got := rowsOf(t, o.hot.DB, "SELECT COUNT(*) FROM audit_log"); !slices.Equal(got, []string{"0"}) {
		t.Errorf("hot's audit_log holds %v rows, want 0", got)
	}
	// A backend DSN starting its server sessions in ANSI_QUOTES: the same.
	db, err := sql.Open("obroute", "obroute:backends.hot.dsn="+o.hot.DSN+"&sql_mode=%27ANSI_QUOTES%27;backends.cold.dsn="+o.cold.DSN+"&sql_mode=%27ANSI_QUOTES%27;routes.audit_log=cold")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `INSERT INTO "audit_log" VALUES (4, 'dsn')`); !errors.Is(err, connector.ErrUnreadable) {
		t.Errorf(`INSERT INTO "audit_log" with the DSNs in ANSI_QUOTES: %v, want ErrUnreadable`, err)
	}
	if got := rowsOf(t, db, "SELECT COUNT(*) FROM audit_log"); !slices.Equal(got, []string{"2"}) {
		t.Errorf("audit_log through the ANSI_QUOTES DSNs: %v, want 2", got)
	}
}

// A client session's SET timestamp is its clock: NOW() and CURDATE() in a statement on a
// time-sharded table are read at that instant, as one server reads them, not at obroute's
// clock; SET timestamp = DEFAULT (or 0) gives the clock back.
func TestSessionTimestampIsTheClock(t *testing.T) {
	f := newTimeWrites(t, 0)
	ctx := context.Background()
	ob, err := f.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	ref, err := f.ref.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	both := func(q string) {
		t.Helper()
		for _, c := range []*sql.Conn{ob, ref} {
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	both("SET time_zone = '+00:00'")
	// obroute's clock is 2025-03-15 12:00 UTC; the session's is 2025-02-20 and then 2025-03-10 20:00.
	for _, stamp := range []string{"UNIX_TIMESTAMP('2025-02-20 00:00:00')", "1741636800.25"} {
		both("SET timestamp = " + stamp)
		for _, q := range []string{
			"SELECT id FROM orders WHERE order_time >= '2025-01-01 00:00:00' AND order_time < NOW() ORDER BY id",
			"SELECT id FROM orders WHERE order_time >= NOW() - INTERVAL 30 DAY ORDER BY id",
			"SELECT COUNT(*) FROM orders WHERE order_time >= CURDATE() - INTERVAL 1 DAY",
		} {
			if got, want := modeRows(t, ob, q), modeRows(t, ref, q); !slices.Equal(got, want) {
				t.Errorf("SET timestamp = %s; %s: %v, one server %v", stamp, q, got, want)
			}
		}
	}
	both("SET timestamp = DEFAULT")
	const q = "SELECT id FROM orders WHERE order_time >= '2025-01-01 00:00:00' AND order_time < NOW() ORDER BY id"
	if got, want := modeRows(t, ob, q), modeRows(t, ref, q); !slices.Equal(got, want) { // all rows before either clock
		t.Errorf("SET timestamp = DEFAULT; %s: %v, one server %v", q, got, want)
	}
}
