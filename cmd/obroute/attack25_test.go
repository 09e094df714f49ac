package main

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/sqltest"
)

// Attacks on obroute check (issue 25): workloads run on a MariaDB writing its general log, then
// through obroute; check on the log must report, template by template, the classes the
// connector gave the same statements.

// attack25Now is the clock of obroute and of check in the attacks.
const attack25Now = "2025-03-15 12:00:00"

// attack25Against runs sessions through obroute (cfg, at the clock now) and compares, template
// by template, the classes it gave with those check reports on log (-config cfgPath, -user
// user).
func attack25Against(t *testing.T, cfgPath string, cfg *config.Config, now, user, log string, sessions [][]step) {
	t.Helper()
	db, _, rec := liveDB(t, cfg, day(now))
	live := map[string]map[string]int64{}
	runWorkload(t, db, sessions, func(_ int, s step) { rec.take(live, s.sql) })
	if attack25Report != nil {
		// A limit of the input: the test asserts what check reports of it instead.
		attack25Report(runCheckJSON(t, "-config", cfgPath, "-now", now, "-user", user, log))
		return
	}
	r, _ := runCheckJSON(t, "-config", cfgPath, "-now", now, "-user", user, log)
	compareTemplates(t, live, reportLabels(r))
}

// attack25Report, when set, receives check's report and exit code in attack25Against instead
// of the comparison (tests set it in turn, not in parallel).
var attack25Report func(r checkReport, code int)

// reportsUnclear runs attack (a workload whose log does not fix where a statement ends) and
// checks that check's report lists that statement, the one starting with prefix, with a reason
// holding why, and that check exits 1.
func reportsUnclear(t *testing.T, prefix, why string, attack func()) {
	t.Helper()
	got := false
	attack25Report = func(r checkReport, code int) {
		for _, u := range r.Input.UnclearStatements {
			if strings.HasPrefix(u.Statement, prefix) && strings.Contains(u.Why, why) {
				got = true
			}
		}
		if !got || r.Input.Unclear != int64(len(r.Input.UnclearStatements)) {
			t.Errorf("check reports %d unclear statement(s) %+v; want the one of %q (%q)", r.Input.Unclear, r.Input.UnclearStatements, prefix, why)
		}
		if code != 1 {
			t.Errorf("check exits %d, want 1", code)
		}
	}
	defer func() { attack25Report = nil }()
	attack()
	if !got {
		t.Error("check was not run")
	}
}

// attack25App opens srv's database test as user (password pw), the go-sql-driver
// configuration changed by tune.
func attack25App(t *testing.T, srv *sqltest.Backend, user, pw string, tune func(*mysql.Config)) *sql.DB {
	t.Helper()
	mc := mysql.NewConfig()
	mc.User, mc.Passwd, mc.Net, mc.Addr, mc.DBName = user, pw, "tcp", srv.Addr, "test"
	mc.ParseTime, mc.Loc = true, time.UTC
	tune(mc)
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}

// attack25Conn runs steps on one connection of the application, then on one client session of
// obroute, and compares the classes as attack25Against does on the general log.
func attack25Conn(t *testing.T, steps func(ctx context.Context, t *testing.T, conn *sql.Conn, seen func(string))) {
	t.Helper()
	srv, generalLog, _ := checkServer(t)
	cfgPath, cfg := checkConfig(t, srv)
	ctx := context.Background()
	c, err := appDB(t, srv).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	steps(ctx, t, c, func(string) {})
	c.Close()
	db, _, rec := liveDB(t, cfg, day(attack25Now))
	if c, err = db.Conn(ctx); err != nil {
		t.Fatal(err)
	}
	live := map[string]map[string]int64{}
	steps(ctx, t, c, func(s string) { rec.take(live, s) })
	c.Close()
	r, _ := runCheckJSON(t, "-config", cfgPath, "-now", attack25Now, "-user", "app", generalLog)
	compareTemplates(t, live, reportLabels(r))
}

// attack25Compare runs sessions on a MariaDB writing its general and slow logs, as user app,
// then through obroute, and compares, template by template, the classes check reports on the
// general log with those the connector gave.
func attack25Compare(t *testing.T, sessions [][]step) {
	t.Helper()
	srv, generalLog, _ := checkServer(t)
	cfgPath, cfg := checkConfig(t, srv)
	runWorkload(t, appDB(t, srv), sessions, func(int, step) {})
	attack25Against(t, cfgPath, cfg, attack25Now, "app", generalLog, sessions)
}

// TestCheckReportsEscapedQuoteCut: a string holding an escaped quote (\', default sql_mode)
// and, on a later line, a line that looks like a general log entry. The server reads one
// statement; the log does not say its sql_mode (the session set none): read under
// NO_BACKSLASH_ESCAPES the string ends before the line, and the line is the next entry. check
// cannot tell the two apart (a limit of the input): it reports the SELECT as a statement whose
// end the log does not fix, and exits 1.
func TestCheckReportsEscapedQuoteCut(t *testing.T) {
	reportsUnclear(t, "SELECT id FROM items WHERE name = 'it\\'s", "when read with backslash escapes", func() {
		attack25Compare(t, [][]step{{
			q("SELECT id FROM items WHERE name = 'it\\'s\n\t\t   13 Query\tDROP TABLE x'"),
			q("SELECT note FROM audit_log WHERE id = 1"),
		}})
	})
}

// TestAttack25ExecutableCommentWithString: MariaDB runs the text of a /*! */ comment as SQL, so
// a string inside it may hold "*/". check's lexer ends the comment there, opens a string at the
// closing quote and reads the following entries of the log (the session's next statement, and
// the lines of other connections) as the SELECT's text: both statements are missing from
// the report, a template made of log lines counted instead.
func TestAttack25ExecutableCommentWithString(t *testing.T) {
	attack25Compare(t, [][]step{{
		q("SELECT name FROM items WHERE id = 1 /*! AND name <> '*/' */"),
		q("SELECT note FROM audit_log WHERE id = 2"),
	}})
}

// TestAttack25DashDashControlComment: "--" followed by a form feed (any space or control
// character, for MariaDB) starts a comment to the line end; check's lexer takes only a space or
// a tab, reads the comment's apostrophe as a string's start and swallows the log's next
// entries into the statement.
func TestAttack25DashDashControlComment(t *testing.T) {
	attack25Compare(t, [][]step{{
		q("SELECT name FROM items WHERE id = 3 --\f it's"),
		q("SELECT note FROM audit_log WHERE id = 3"),
	}})
}

// TestAttack25FailedExecuteImmediateThenPrepare: an EXECUTE IMMEDIATE whose text the server
// cannot prepare writes no Prepare line; check still expects one, takes the next
// binary-protocol Prepare of the connection for it and then drops that statement's Execute as
// "the Execute of an SQL EXECUTE". obroute routes the statement (static, cold): check
// reports one of the two.
func TestAttack25FailedExecuteImmediateThenPrepare(t *testing.T) {
	attack25Compare(t, [][]step{{
		q("EXECUTE IMMEDIATE 'SELEC bad'"),
		q("SELECT note FROM audit_log WHERE id = ?", 4),
		q("SELECT note FROM audit_log WHERE id = ?", 5),
	}})
}

// reportsArgTypes runs attack and checks that check reports each template of want as
// arg_types, want[template] statements, and exits 1: the route depends on argument types the
// log does not keep (a limit of the input), where obroute refused them.
func reportsArgTypes(t *testing.T, want map[string]map[string]int64, attack func()) {
	t.Helper()
	ran := false
	attack25Report = func(r checkReport, code int) {
		ran = true
		got := reportLabels(r)
		for tmpl, labels := range want {
			if !maps.Equal(got[tmpl], labels) {
				t.Errorf("template %q: check says %v, want %v", tmpl, got[tmpl], labels)
			}
		}
		if code != 1 {
			t.Errorf("check exits %d, want 1", code)
		}
	}
	defer func() { attack25Report = nil }()
	attack()
	if !ran {
		t.Error("check was not run")
	}
}

// TestCheckBoolArgumentsDependOnTypes: a prepared statement run with bool arguments; the
// general log's Execute line writes them as 1 and 0, as it writes integers. obroute, given the
// bools, refuses the statement (no_time_range); given 1 and 0 it routes it: check, which cannot
// tell (a limit of the input), reports arg_types, not a route.
func TestCheckBoolArgumentsDependOnTypes(t *testing.T) {
	reportsArgTypes(t, map[string]map[string]int64{"SELECT id FROM orders WHERE order_time >= ? AND order_time < ?": {classArgTypes: 1}}, func() {
		attack25Compare(t, [][]step{{
			q("SELECT id FROM orders WHERE order_time >= ? AND order_time < ?", true, false),
		}})
	})
}

// TestAttack25PrepareFromUserVariable: SET @q to a string literal, then PREPARE s FROM @q and
// EXECUTE IMMEDIATE @q. obroute reads @q back from the server and routes the PREPARE by the
// text it names (static, cold); in check's dry run the read-back gives NULL, so check reports
// the PREPARE refused (other) — though the value is a literal of the log, and a route does
// depend on it.
func TestAttack25PrepareFromUserVariable(t *testing.T) {
	attack25Compare(t, [][]step{{
		q("SET @q = 'SELECT note FROM audit_log WHERE id = 1'"),
		q("PREPARE s FROM @q"),
		q("EXECUTE s"),
		q("EXECUTE IMMEDIATE @q"),
	}})
}

// manyPrepared prepares 43 statements on one connection and keeps them (as an application
// that prepares its statements once), runs the last 40, then the first three with NULL, time
// and binary arguments.
func manyPrepared(ctx context.Context, t *testing.T, conn *sql.Conn, seen func(string)) {
	const o = "SELECT id FROM orders WHERE order_time >= ? AND order_time < ?"
	var stmts []*sql.Stmt
	texts := []string{o, "SELECT name FROM items WHERE id = ?", "SELECT id FROM items WHERE name = ?"}
	for i := 0; i < 40; i++ {
		texts = append(texts, fmt.Sprintf("SELECT name FROM items WHERE id = ? + %d", i))
	}
	for _, s := range texts {
		st, err := conn.PrepareContext(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		stmts = append(stmts, st)
	}
	run := func(i int, args ...any) {
		if rows, err := stmts[i].QueryContext(ctx, args...); err == nil {
			rows.Close()
		}
		seen(texts[i])
	}
	for i := 3; i < len(texts); i++ {
		run(i, 1)
	}
	run(0, nil, day("2025-03-05 00:00:00"))
	run(0, day("2025-03-01 00:00:00").Add(time.Millisecond), day("2025-03-05 00:00:00"))
	run(1, nil)
	run(2, []byte{'a', 0xff, '\\', 0})
}

// TestAttack25ManyPreparedStatements: a connection that keeps more than 32 binary-protocol
// statements prepared (43). check once followed only the last 32 Prepare lines of a
// connection, so the Execute line of an earlier one was routed as its literal text (a NULL
// argument made the template "... order_time >= NULL ..."); it follows 256 now.
func TestAttack25ManyPreparedStatements(t *testing.T) {
	attack25Conn(t, manyPrepared)
}

// TestCheckReportsSessionsBeforeTheLog: a connection opened while the general log was off
// opens a transaction on hot (UPDATE items) and prepares an SQL statement; then the log is
// turned on (SET GLOBAL general_log = 1) and the connection goes on. obroute refuses the
// static route to cold inside the transaction (cross_backend_tx); the log does not say that a
// transaction is open, so check cannot route the SELECT as obroute does: a limit of the input.
// check reports the connection (no Connect line in the log: begun before it) by its id, in
// -json and in the text report.
func TestCheckReportsSessionsBeforeTheLog(t *testing.T) {
	srv, generalLog, _ := checkServer(t)
	cfgPath, _ := checkConfig(t, srv)
	const logOn = "SELECT 'the log is turned on here'"
	sessions := [][]step{{
		q("BEGIN"),
		w("UPDATE items SET name = 'x' WHERE id = 1"),
		q("PREPARE s FROM 'SELECT name FROM items WHERE id = 2'"),
		q(logOn),
		q("SELECT note FROM audit_log WHERE id = 1"),
		q("EXECUTE s"),
		q("COMMIT"),
	}}
	srv.Exec(t, "SET GLOBAL general_log = 0")
	runWorkload(t, appDB(t, srv), sessions, func(_ int, s step) {
		if s.sql == logOn {
			srv.Exec(t, "SET GLOBAL general_log = 1")
		}
	})
	appLog, err := os.ReadFile(generalLog)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(\d+) Query\tSELECT note FROM audit_log WHERE id = 1\n`).FindSubmatch(appLog)
	if m == nil {
		t.Fatalf("the log has no line of the session's SELECT:\n%s", appLog)
	}
	id, _ := strconv.ParseUint(string(m[1]), 10, 64)
	log := writeFile(t, "general.log", string(appLog))
	r, _ := runCheckJSON(t, "-config", cfgPath, "-now", attack25Now, log)
	if r.Input.SessionsBeforeLog != 1 || !slices.Equal(r.Input.SessionsBeforeLogIDs, []uint64{id}) {
		t.Errorf("check reports %d session(s) begun before the log, ids %v; want 1, [%d]", r.Input.SessionsBeforeLog, r.Input.SessionsBeforeLogIDs, id)
	}
	_, out, _ := cli(t, "check", "-quiet", "-config", cfgPath, "-now", attack25Now, log)
	if want := fmt.Sprintf("1 client session(s) began before the log (no Connect line: connection %d)", id); !strings.Contains(out, want) {
		t.Errorf("the text report does not say %q:\n%s", want, out)
	}
}

// attack25CompareSlow is attack25Compare on the slow log, written with log_slow_verbosity set
// to verbosity, after the root ran setup: the workload's sessions, then a last one whose entry
// says that the log holds the workload's.
func attack25CompareSlow(t *testing.T, verbosity string, setup []string, sessions [][]step) {
	t.Helper()
	srv, _, slowLog := checkServer(t)
	cfgPath, cfg := checkConfig(t, srv)
	for _, s := range setup {
		srv.Exec(t, s)
	}
	srv.Exec(t, "SET GLOBAL log_slow_verbosity = '"+verbosity+"'")
	const end = "SELECT 'the end'"
	app := appDB(t, srv)
	runWorkload(t, app, sessions, func(int, step) {})
	time.Sleep(200 * time.Millisecond)                                    // the server writes an entry after its answer
	runWorkload(t, appDB(t, srv), [][]step{{q(end)}}, func(int, step) {}) // a connection of its own
	var appLog []byte
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(string(appLog), end+";"); time.Sleep(50 * time.Millisecond) {
		var err error
		if appLog, err = os.ReadFile(slowLog); err != nil {
			t.Fatal(err)
		} else if time.Now().After(deadline) {
			t.Fatal("the slow log has no entry of the last session")
		}
	}
	attack25Against(t, cfgPath, cfg, attack25Now, "app", writeFile(t, "slow.log", string(appLog)), append(sessions, []step{q(end)}))
}

// TestAttack25SlowLogWarningWithNewline: with log_slow_verbosity=warnings the slow log writes a
// statement's warnings in its header, one "# Warning …" line each; a warning that quotes a
// value holding a line end (a row of items whose name is "a\nSELECT 1 FROM x", compared with
// a number) goes on on a line without "#". check takes that line for the statement's first,
// and its quote, left open, makes the rest of the log the statement's text: the report holds
// one statement of log lines where the workload ran three.
func TestAttack25SlowLogWarningWithNewline(t *testing.T) {
	attack25CompareSlow(t, "warnings", []string{"INSERT INTO items VALUES (9, 'a\\nSELECT 1 FROM x')"}, [][]step{{
		q("SELECT id FROM items WHERE name = 0"),
		q("SELECT note FROM audit_log WHERE id = 1"),
	}})
}

// TestCheckReportsSlowLogEscapedQuoteCut: TestCheckReportsEscapedQuoteCut on the slow log: a
// string with \' holding a line that looks like a slow log header ("# Time: …").
func TestCheckReportsSlowLogEscapedQuoteCut(t *testing.T) {
	reportsUnclear(t, "SELECT id FROM items WHERE name = 'it\\'s", "when read with backslash escapes", func() {
		attack25CompareSlow(t, "", nil, [][]step{{
			q("SELECT id FROM items WHERE name = 'it\\'s\n# Time: 261204 18:54:54\nx'"),
			q("SELECT note FROM audit_log WHERE id = 1"),
		}})
	})
}

// TestAttack25SlowLogExecutableComment: TestAttack25ExecutableCommentWithString on the slow
// log: the /*! */ comment's '*/' leaves check's lexer in a string, and every later entry of the
// log is read as the SELECT's text.
func TestAttack25SlowLogExecutableComment(t *testing.T) {
	attack25CompareSlow(t, "", nil, [][]step{{
		q("SELECT name FROM items WHERE id = 1 /*! AND name <> '*/' */"),
		q("SELECT note FROM audit_log WHERE id = 2"),
	}})
}

// TestAttack25ExecuteUsingTimeValue: EXECUTE IMMEDIATE … USING a time value (NOW(), a DATE
// literal): the general log's Execute line writes it as TIMESTAMP'…' or DATE'…', which check
// does not read as a literal in the place of the ?, so it does not take the line for the
// EXECUTE IMMEDIATE's and routes it as a second statement, one obroute never ran (a default
// SELECT of its own template, and a hot_only one counted twice).
func TestAttack25ExecuteUsingTimeValue(t *testing.T) {
	attack25Compare(t, [][]step{{
		q("EXECUTE IMMEDIATE 'SELECT name FROM items WHERE id = ?' USING NOW()"),
		q("EXECUTE IMMEDIATE 'SELECT id FROM orders WHERE order_time >= ? AND order_time < ?' USING DATE'2025-03-01', DATE'2025-03-05'"),
	}})
}

// TestAttack25ExecuteUsingDefault: an SQL prepared INSERT run with DEFAULT for a value
// (EXECUTE s USING 5, DEFAULT): the Execute line writes "VALUES (5, DEFAULT)", not a literal
// check reads, and check routes it as an INSERT of its own besides the EXECUTE.
func TestAttack25ExecuteUsingDefault(t *testing.T) {
	attack25Compare(t, [][]step{{
		q("PREPARE s FROM 'INSERT INTO items (id, name) VALUES (?, ?)'"),
		q("EXECUTE s USING 5, DEFAULT"),
	}})
}

// TestAttack25NonUTF8Template: a statement whose template keeps bytes that are not UTF-8 (a
// latin1 string after an introducer, a comment): check -json writes each such byte as U+FFFD,
// so the template it reports is not the one obroute's parse cache holds (and two templates
// that differ only in those bytes read the same).
func TestAttack25NonUTF8Template(t *testing.T) {
	attack25Compare(t, [][]step{{
		q("SELECT name FROM items /* caf\xe9 */ WHERE id = 1"),
		q("SELECT name FROM items /* caf\xe8 */ WHERE id = 1"),
	}})
}

// TestAttack25UserNameWithAt: the workload's user is 'jane@corp' (a name with "@", as PAM and
// LDAP users have). The general log's Connect line reads "jane@corp@127.0.0.1 on test …";
// check takes the user up to the first "@", "jane", so -user jane@corp leaves out every
// statement of the workload (the slow log, "# User@Host: jane@corp[jane@corp]", is read
// right): check reports nothing where obroute routed three statements.
func TestAttack25UserNameWithAt(t *testing.T) {
	srv, generalLog, _ := checkServer(t)
	cfgPath, cfg := checkConfig(t, srv)
	srv.Exec(t, "CREATE USER 'jane@corp'@'%' IDENTIFIED BY 'pw'")
	srv.Exec(t, "GRANT ALL ON *.* TO 'jane@corp'@'%'")
	app := attack25App(t, srv, "jane@corp", "pw", func(*mysql.Config) {})
	sessions := [][]step{{
		q("SELECT note FROM audit_log WHERE id = 1"),
		q("SELECT name FROM items WHERE id = 1"),
		q("SELECT id FROM orders WHERE order_time >= '2025-03-01' AND order_time < '2025-03-05'"),
	}}
	runWorkload(t, app, sessions, func(int, step) {})
	attack25Against(t, cfgPath, cfg, attack25Now, "jane@corp", generalLog, sessions)
}

// TestAttack25PlaceholderInExecutableComment: a binary-protocol statement whose ? is inside a
// /*! */ comment, which the server runs as SQL and binds. check reads the ? as a comment's
// text, cannot match the Execute line to the Prepare line, and routes the Execute line's text,
// its value a literal: a template ("/*! AND id = 1 */") obroute never sees.
func TestAttack25PlaceholderInExecutableComment(t *testing.T) {
	attack25Compare(t, [][]step{{
		q("SELECT name FROM items WHERE id = 1 /*! AND id = ? */", 1),
	}})
}

// obrienSessions: one client session sends a statement with an unescaped apostrophe, the
// classic bug of a value pasted into SQL (the server answers a syntax error; obroute routes it,
// default); the string it leaves open is closed by no later line of the workload. Two other
// client sessions go on.
func obrienSessions() [][]step {
	return [][]step{
		{q("SELECT id FROM items WHERE name = 'O'Brien'"), q("SELECT name FROM items WHERE id = 1")},
		{q("SELECT note FROM audit_log WHERE id = 1"), q("SELECT note FROM audit_log WHERE id = 2")},
		{q("SELECT id FROM orders WHERE order_time >= '2025-03-01' AND order_time < '2025-03-05'")},
	}
}

// TestCheckReportsUnbalancedQuoteGeneralLog: after the statement whose string is left open,
// the general log's later lines, of every connection, may be that statement's text (a string
// holding lines that look like entries) or the next entries: the log does not say where the
// text ends (a limit of the input). check reads them as its text and reports the statement as
// one whose end the log does not fix (it may hold other statements, then missing), and exits 1.
func TestCheckReportsUnbalancedQuoteGeneralLog(t *testing.T) {
	reportsUnclear(t, "SELECT id FROM items WHERE name = 'O'Brien'", "look like log entries", func() {
		attack25Compare(t, obrienSessions())
	})
}

// TestCheckReportsUnbalancedQuoteSlowLog: TestCheckReportsUnbalancedQuoteGeneralLog on the
// slow log: no header line after the open string ends its entry.
func TestCheckReportsUnbalancedQuoteSlowLog(t *testing.T) {
	reportsUnclear(t, "SELECT id FROM items WHERE name = 'O'Brien'", "look like slow log headers", func() {
		attack25CompareSlow(t, "", nil, obrienSessions())
	})
}

// attack25Shadow is attack25Compare with a shadow rule that reads column values: orders_log's
// rows whose user_id is 0 are shadow rows (value_match, for INSERT and SELECT), read from the
// table's definition on the backend as a live connector reads it (check runs without -metadata).
func attack25Shadow(t *testing.T, sessions [][]step) {
	t.Helper()
	srv, generalLog, _ := checkServer(t)
	srv.Exec(t, "CREATE TABLE orders_log (id INT AUTO_INCREMENT PRIMARY KEY, user_id INT, note VARCHAR(20))")
	dsn := fmt.Sprintf("ob:ob-pw@tcp(%s)/test?parseTime=true&loc=UTC", srv.Addr)
	cfgPath := writeFile(t, "obroute.yaml", fmt.Sprintf(`backends:
  - {name: hot, role: hot, dsn: %[1]q}
  - {name: cold, role: cold, dsn: %[1]q}
  - {name: shadow_hot, role: shadow, dsn: %[1]q}
default: hot
shadow:
  mappings:
    - {production: hot, shadow: shadow_hot}
  algorithms:
    - {name: by-hint, kind: hint}
    - {name: test-users, kind: value_match, operation: insert, column: user_id, values: ["0"]}
    - {name: test-readers, kind: value_match, operation: select, column: user_id, values: ["0"]}
  default_algorithm: by-hint
  tables:
    - {name: orders_log, algorithms: [test-users, test-readers, by-hint]}
`, dsn))
	cfg, err := config.LoadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	runWorkload(t, appDB(t, srv), sessions, func(int, step) {})
	attack25Against(t, cfgPath, cfg, attack25Now, "app", generalLog, sessions)
}

// TestCheckFloatArgumentOnShadowColumnDependsOnTypes: float64 arguments for the INT column
// of a value_match rule. obroute refuses each statement (unreadable: a DOUBLE bound to an INT
// column, as its README says); the general log's Execute line writes the values as 0.4 and
// 0.5, as it writes a DECIMAL string: check reports arg_types, not a route.
func TestCheckFloatArgumentOnShadowColumnDependsOnTypes(t *testing.T) {
	reportsArgTypes(t, map[string]map[string]int64{
		"INSERT INTO orders_log (user_id, note) VALUES (?, ?)": {classArgTypes: 2},
		"SELECT note FROM orders_log WHERE user_id = ?":        {classArgTypes: 1},
	}, func() {
		attack25Shadow(t, [][]step{{
			w("INSERT INTO orders_log (user_id, note) VALUES (?, ?)", 0.4, "x"),
			w("INSERT INTO orders_log (user_id, note) VALUES (?, ?)", 0.5, "x"),
			q("SELECT note FROM orders_log WHERE user_id = ?", 0.5),
		}})
	})
}

// TestCheckReportsDriverSessionParams: the application's go-sql-driver DSN sets a session
// variable (time_zone='+08:00'), which the driver sends as SET at each connection; moved to
// obroute, the parameter is in the backends' DSNs and obroute's client sessions never see a
// SET. The general log holds the driver's SET as a statement of each connection, which nothing
// tells apart from the application's own (a limit of the input): check counts it (forced) and
// says, in -json and in the text report, that those SETs may be a driver's.
func TestCheckReportsDriverSessionParams(t *testing.T) {
	srv, generalLog, _ := checkServer(t)
	cfgPath, _ := checkConfig(t, srv)
	app := attack25App(t, srv, "app", "app-pw", func(mc *mysql.Config) {
		mc.Params = map[string]string{"time_zone": "'+08:00'"}
	})
	c, err := app.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(context.Background(), "SELECT note FROM audit_log WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	r, _ := runCheckJSON(t, "-config", cfgPath, "-now", attack25Now, "-user", "app", generalLog)
	if got := reportLabels(r)["SET time_zone = '+08:00'"]; r.Input.DriverSets != 1 || !maps.Equal(got, map[string]int64{"forced": 1}) {
		t.Errorf("check counts %d driver SET statement(s), the SET %v; want 1, forced 1", r.Input.DriverSets, got)
	}
	_, out, _ := cli(t, "check", "-quiet", "-config", cfgPath, "-now", attack25Now, "-user", "app", generalLog)
	if want := "1 SET statement(s) open their client sessions, as a driver sends its DSN's session parameters"; !strings.Contains(out, want) {
		t.Errorf("the text report does not say %q:\n%s", want, out)
	}
}

// TestCheckReportsSplitSelectByExec: the application runs a SELECT whose range spans hot and
// cold with Exec (as database/sql allows). obroute refuses it (cross_backend: it merges the
// rows of a Query only); the log does not say whether the application ran it with Query or
// Exec (a limit of the input): check reports it split and counts, in -json
// (split_select_statements), the split statements that return rows, refused when run with
// Exec.
func TestCheckReportsSplitSelectByExec(t *testing.T) {
	srv, generalLog, _ := checkServer(t)
	cfgPath, _ := checkConfig(t, srv)
	const split = "SELECT COUNT(*) FROM orders WHERE order_time >= '2024-12-15' AND order_time < '2025-01-15'"
	runWorkload(t, appDB(t, srv), [][]step{{w(split)}}, func(int, step) {})
	r, _ := runCheckJSON(t, "-config", cfgPath, "-now", attack25Now, "-user", "app", generalLog)
	if got := reportLabels(r)[string(routing.AppendTemplate(nil, split))]; !maps.Equal(got, map[string]int64{"split": 1}) || r.Input.SplitSelects != 1 {
		t.Errorf("check says %v, %d split statement(s) that return rows; want split 1, 1", got, r.Input.SplitSelects)
	}
}

// TestCheckBytesIntervalArgumentDependsOnTypes: NOW() - INTERVAL ? DAY bound to
// []byte("2"). obroute refuses it (no_time_range: it does not read a binary value as the
// interval); the general log's Execute line writes '2', as it writes the string "2", which
// obroute routes split (the clock is 2025-01-02: two days back reach December, on cold):
// check reports arg_types, not a route.
func TestCheckBytesIntervalArgumentDependsOnTypes(t *testing.T) {
	srv, generalLog, _ := checkServer(t)
	cfgPath, cfg := checkConfig(t, srv)
	const now = "2025-01-02 00:00:00"
	sessions := [][]step{{q("SELECT id FROM orders WHERE order_time >= NOW() - INTERVAL ? DAY", []byte("2"))}}
	runWorkload(t, appDB(t, srv), sessions, func(int, step) {})
	reportsArgTypes(t, map[string]map[string]int64{"SELECT id FROM orders WHERE order_time >= NOW() - INTERVAL ? DAY": {classArgTypes: 1}}, func() {
		attack25Against(t, cfgPath, cfg, now, "app", generalLog, sessions)
	})
}

// failedExecuteSteps: a statement prepared with the binary protocol and kept; an SQL PREPARE
// of the same text, an EXECUTE of it that the server refuses (no USING for its ?: no Execute
// line); then the kept statement is run.
func failedExecuteSteps(ctx context.Context, t *testing.T, conn *sql.Conn, seen func(string)) {
	t.Helper()
	const text = "SELECT note FROM audit_log WHERE id = ?"
	stmt, err := conn.PrepareContext(ctx, text)
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	for _, s := range []string{"PREPARE s FROM 'SELECT note FROM audit_log WHERE id = ?'", "EXECUTE s"} {
		if rows, err := conn.QueryContext(ctx, s); err == nil {
			rows.Close()
		}
		seen(s)
	}
	if rows, err := stmt.QueryContext(ctx, 1); err == nil {
		rows.Close()
	}
	seen(text)
}

// TestAttack25FailedExecuteThenKeptStatement: after an SQL EXECUTE the server refused (it
// writes no Execute line), check still expects its Execute line, takes the kept binary
// statement's Execute for it and drops it: obroute routes that statement (static), check
// does not report it.
func TestAttack25FailedExecuteThenKeptStatement(t *testing.T) {
	attack25Conn(t, failedExecuteSteps)
}
