package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/sqltest"
)

// fakeHeaders is a string value holding lines that look like the entries of both logs, MySQL's
// and MariaDB's: a statement's text, never an entry.
const fakeHeaders = "x\n# Time: 2025-03-15T10:00:00.123456Z\n# User@Host: app[app] @ localhost []  Id:    12\n" +
	"250315 10:00:00\t   12 Query\tSELECT 1\n\t\t   13 Query\tDROP TABLE x\n2025-03-15T10:00:00.000001Z\t   12 Quit\t"

// edgeSessions are client sessions whose logged text is hard to read back: a multi-line
// statement whose strings hold lines that look like log entries, a session under
// NO_BACKSLASH_ESCAPES whose string ends with a backslash (an open string read with backslash
// escapes), SQL PREPARE / EXECUTE, and a session whose time zone only the server knows.
func edgeSessions() [][]string {
	return [][]string{
		{
			"INSERT INTO items (id, name) VALUES (10, '" + fakeHeaders + "')",
			"SELECT name FROM items WHERE id = 10",
			"SELECT name FROM items\n-- a comment's '\nWHERE id = 10",
		},
		{
			"SET sql_mode = 'NO_BACKSLASH_ESCAPES'",
			`SELECT id FROM items WHERE name = 'C:\'`,
			"SELECT name FROM items WHERE id = 2",
			"UPDATE items SET name = 'b' WHERE id = 2",
		},
		{
			"PREPARE s1 FROM 'SELECT name FROM items WHERE id = ?'",
			"SET @id = 1",
			"EXECUTE s1 USING @id",
			"DEALLOCATE PREPARE s1",
			"SELECT name FROM items WHERE id = 1",
		},
		{
			"SET time_zone = @@global.time_zone",
			"SELECT name FROM items WHERE id = 2",
		},
	}
}

// edgeServer starts a MariaDB writing its general log and its slow log (every statement, with
// log_slow_verbosity=query_plan,explain: the plan's lines in each header), runs edgeSessions
// on it as user app, one statement of each session in turn, and returns the logs.
func edgeServer(t *testing.T) (generalLog, slowLog string) {
	t.Helper()
	dir := t.TempDir()
	generalLog, slowLog = filepath.Join(dir, "general.log"), filepath.Join(dir, "slow.log")
	srv := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{Args: []string{
		"--general-log=1", "--general-log-file=" + generalLog, "--slow-query-log=1", "--slow-query-log-file=" + slowLog,
		"--long-query-time=0", "--log-output=FILE", "--log-slow-verbosity=query_plan,explain",
	}}, "edges")[0]
	for _, s := range []string{
		"CREATE USER app@'%' IDENTIFIED BY 'app-pw'", "GRANT ALL ON *.* TO app@'%'",
		"CREATE TABLE items (id INT PRIMARY KEY, name TEXT)", "INSERT INTO items VALUES (1, 'one'), (2, 'two')",
	} {
		srv.Exec(t, s)
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "app", "app-pw", "tcp", srv.Addr, "test"
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	ctx := context.Background()
	sessions := edgeSessions()
	conns := make([]*sql.Conn, len(sessions))
	for i := range conns {
		if conns[i], err = db.Conn(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for k := 0; ; k++ {
		ran := false
		for i, stmts := range sessions {
			if k < len(stmts) {
				ran = true
				if _, err := conns[i].ExecContext(ctx, stmts[k]); err != nil {
					t.Fatalf("%q: %v", stmts[k], err)
				}
			}
		}
		if !ran {
			break
		}
	}
	for _, c := range conns {
		c.Close()
	}
	// The server writes a statement's slow log entry after its answer: wait for the last ones.
	total := strings.Count(fakeHeaders, "# User@Host: app[app]") // in the INSERT's string
	for _, stmts := range sessions {
		total += len(stmts)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, err := os.ReadFile(slowLog)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "# User@Host: app[app]"); n >= total {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the slow log holds %d of the %d statements of user app", n, total)
		}
	}
	return generalLog, slowLog
}

// appStatements reads a log with read and returns the statements of user app's client
// sessions, each session's in its order, the sessions in the order of their first statement.
func appStatements(t *testing.T, read func(sink) error) [][]string {
	t.Helper()
	users := map[uint64]string{}
	index := map[uint64]int{}
	var out [][]string
	if err := read(func(e entry) error {
		if e.user != "" {
			users[e.session] = e.user
		}
		if e.kind != entryStatement || users[e.session] != "app" {
			return nil
		}
		i, ok := index[e.session]
		if !ok {
			i = len(out)
			index[e.session] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], e.text)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCheckReadsRealLogsWhole: the statements check reads from the general and the slow log
// MariaDB wrote are the statements the client sessions sent, each whole: lines inside a string
// that look like log entries (of either log, MariaDB's or MySQL's) do not split a statement,
// a string left open only when read with backslash escapes does not swallow the next entry,
// the plan lines of log_slow_verbosity are not read as statement text, and the Execute line the
// server writes after an SQL EXECUTE is not a second statement. Each log's format is detected,
// though the general log holds a line that looks like a slow log's header.
func TestCheckReadsRealLogsWhole(t *testing.T) {
	generalLog, slowLog := edgeServer(t)
	want := edgeSessions()
	for _, log := range []struct{ name, path, format string }{{"general", generalLog, "general_log"}, {"slow", slowLog, "slow_log"}} {
		t.Run(log.name, func(t *testing.T) {
			f, err := os.Open(log.path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			br := bufio.NewReader(f)
			format, err := logFormat("", br)
			if err != nil || format != log.format {
				t.Errorf("format %q (%v), want %q", format, err, log.format)
			}
			var st inputStats
			got := appStatements(t, func(out sink) error {
				if log.format == "general_log" {
					return readGeneralLog(br, &st, out)
				}
				return readSlowLog(br, out)
			})
			want := slices.Clone(want)
			if log.format == "slow_log" {
				// The slow log writes the statement an EXECUTE ran, not the EXECUTE.
				want[2] = slices.Clone(want[2])
				want[2][2] = "SELECT name FROM items WHERE id = 1"
			}
			if len(got) != len(want) {
				t.Fatalf("%d client sessions, want %d:\n%q", len(got), len(want), got)
			}
			// The slow log writes a statement when it ends: the sessions' order may differ.
			byFirst := func(a, b []string) int { return strings.Compare(a[0], b[0]) }
			slices.SortFunc(got, byFirst)
			slices.SortFunc(want, byFirst)
			for i := range want {
				if !slices.Equal(got[i], want[i]) {
					t.Errorf("session %d: statements\n%q\nwant\n%q", i, got[i], want[i])
				}
			}
			if log.format == "general_log" && st.ignored["Execute of an SQL EXECUTE"] != 1 {
				t.Errorf("ignored %v: want the Execute line of the SQL EXECUTE", st.ignored)
			}
		})
	}
}

// edgeDSN is an obroute configuration for the edge sessions' logs, with -metadata: nothing
// reaches its backends.
const edgeDSN = "obroute:backends.hot.dsn=app:pw@tcp(127.0.0.1:1)/test;backends.cold.dsn=app:pw@tcp(127.0.0.1:1)/test;" +
	"time_tables.orders.shard_key=order_time;time_tables.orders.shard_key_type=datetime;time_tables.orders.hot_window.months=2"

// reportLabels returns, template by template, the statements of each outcome label.
func reportLabels(r checkReport) map[string]map[string]int64 {
	got := map[string]map[string]int64{}
	for _, tr := range r.Templates {
		got[tr.Template] = map[string]int64{}
		for _, o := range tr.Outcomes {
			got[tr.Template][checkLabel(o)] += o.Count
		}
	}
	return got
}

// TestCheckUnknownSessionState: in the logs MariaDB wrote, a client session sets its time zone
// to a value only the server knows (SET time_zone = @@global.time_zone): check reports that
// statement and every later one of the session as unknown, not routed with a made-up zone,
// and exits 1; the other sessions' statements are routed.
func TestCheckUnknownSessionState(t *testing.T) {
	generalLog, slowLog := edgeServer(t)
	shards := writeFile(t, "shards.csv", checkShardsCSV)
	for _, log := range []string{generalLog, slowLog} {
		routed := int64(3) // the slow log writes the statement the EXECUTE ran: a fourth
		if log == slowLog {
			routed = 4
		}
		r, code := runCheckJSON(t, "-dsn", edgeDSN, "-metadata", shards, "-now", "2025-03-15", "-user", "app", log)
		got := reportLabels(r)
		if code != 1 {
			t.Errorf("%s: exit %d, want 1", log, code)
		}
		if g := got["SET time_zone = @@global.time_zone"]; !maps.Equal(g, map[string]int64{classUnknown: 1}) {
			t.Errorf("%s: SET time_zone = @@global.time_zone: %v, want unknown", log, g)
		}
		if g := got["SELECT name FROM items WHERE id = ?"]; g[classUnknown] != 1 || g["default"] != routed {
			t.Errorf("%s: SELECT name FROM items WHERE id = ?: %v, want 1 unknown (after the SET) and %d default", log, g, routed)
		}
	}
}

// TestCheckTimeZone: a workload on a MariaDB whose server sessions start at +08:00
// (default_time_zone) reads a table whose shard key is a TIMESTAMP: its literals are instants
// of +08:00, so '2025-01-01 03:00:00' is in December 2024 (UTC), on cold. obroute on that server
// (which reads the zone back with the metadata) routes each statement so; check on the
// general log, given the shard metadata as a file and -time-zone +08:00, reports the classes
// obroute gave.
func TestCheckTimeZone(t *testing.T) {
	dir := t.TempDir()
	generalLog := filepath.Join(dir, "general.log")
	srv := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{Args: []string{
		"--general-log=1", "--general-log-file=" + generalLog, "--log-output=FILE", "--default-time-zone=+08:00",
	}}, "zone")[0]
	srv.Exec(t, "CREATE USER app@'%' IDENTIFIED BY 'app-pw'")
	srv.Exec(t, "GRANT ALL ON *.* TO app@'%'")
	srv.Exec(t, "CREATE TABLE events (id INT PRIMARY KEY, ts TIMESTAMP NOT NULL)")
	srv.Exec(t, "CREATE TABLE shard_metadata (table_name VARCHAR(64) PRIMARY KEY, min_time DATETIME NOT NULL, max_time DATETIME NOT NULL, is_hot TINYINT NOT NULL DEFAULT 0, location VARCHAR(64))")
	var csv strings.Builder
	csv.WriteString("table_name,min_time,max_time,is_hot,location\n")
	for _, m := range []struct{ month, first, last, on string }{
		{"202411", "2024-11-01", "2024-11-30 23:59:59", "cold"}, {"202412", "2024-12-01", "2024-12-31 23:59:59", "cold"},
		{"202501", "2025-01-01", "2025-01-31 23:59:59", "hot"}, {"202502", "2025-02-01", "2025-02-28 23:59:59", "hot"},
		{"202503", "2025-03-01", "2025-03-31 23:59:59", "hot"},
	} {
		srv.Exec(t, "CREATE TABLE events_"+m.month+" LIKE events")
		srv.Exec(t, "INSERT INTO shard_metadata VALUES (?, ?, ?, ?, ?)", "events_"+m.month, m.first, m.last, m.on == "hot", m.on)
		fmt.Fprintf(&csv, "events_%s,%s,%s,%d,%s\n", m.month, m.first, m.last, map[bool]int{true: 1}[m.on == "hot"], m.on)
	}
	statements := []string{
		"SELECT id FROM events WHERE ts >= '2025-01-01 03:00:00' AND ts < '2025-01-01 07:00:00'", // Dec 31 UTC: cold
		"SELECT id FROM events WHERE ts >= '2025-01-01 09:00:00' AND ts < '2025-01-01 12:00:00'", // Jan 1 UTC: hot
		"SELECT id FROM events WHERE ts >= '2025-01-01 06:00:00' AND ts < '2025-01-01 09:00:00'", // across: split
	}
	dsn := fmt.Sprintf("app:app-pw@tcp(%s)/test", srv.Addr)
	app, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	for _, s := range statements {
		rows, err := app.Query(s)
		if err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}

	cfgText := fmt.Sprintf(`backends:
  - {name: hot, role: hot, dsn: %[1]q}
  - {name: cold, role: cold, dsn: %[1]q}
time_tables:
  - {table: events, shard_key: ts, shard_key_type: timestamp, hot_window: {months: 2}}
metadata: {backend: hot, table: shard_metadata}
`, dsn+"?parseTime=true&loc=UTC")
	cfgPath := writeFile(t, "obroute.yaml", cfgText)
	cfg, err := config.LoadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	db, _, rec := liveDB(t, cfg, day("2025-03-15 12:00:00"))
	// The statements are one template: compare them one log at a time.
	shards := writeFile(t, "shards.csv", csv.String())
	for i, s := range statements {
		rec.events = rec.events[:0]
		rows, err := db.Query(s)
		if err == nil {
			rows.Close()
		}
		want := liveLabel(&rec.events[0])
		one := writeFile(t, fmt.Sprintf("general%d.log", i), logOf(t, generalLog, s))
		r, _ := runCheckJSON(t, "-config", cfgPath, "-metadata", shards, "-now", "2025-03-15 12:00:00", "-time-zone", "+08:00", one)
		if len(r.Templates) != 1 || len(r.Templates[0].Outcomes) != 1 || checkLabel(r.Templates[0].Outcomes[0]) != want {
			t.Errorf("%s: check says %+v, obroute routed it %s", s, r.Templates, want)
		}
	}
	if want := []string{"cold_only", "hot_only", "split"}; !slices.Equal(liveLabels(t, db, rec, statements), want) {
		t.Errorf("obroute routed the statements %v, want %v: the workload does not cover both sides", liveLabels(t, db, rec, statements), want)
	}
}

// liveLabels returns the label obroute routes each statement with.
func liveLabels(t *testing.T, db *sql.DB, rec *liveRecorder, statements []string) []string {
	var out []string
	for _, s := range statements {
		rec.events = rec.events[:0]
		if rows, err := db.Query(s); err == nil {
			rows.Close()
		}
		out = append(out, liveLabel(&rec.events[0]))
	}
	return out
}

// logOf returns the general log's lines up to its column names, and the line of the entry whose
// statement is s with its connection's Connect line: a log of that one statement.
func logOf(t *testing.T, path, s string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var head, out []string
	connects := map[uint64]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if len(head) < 3 {
			head = append(head, line)
			continue
		}
		id, cmd, arg, ok := generalEntry([]byte(line))
		switch {
		case ok && cmd == "Connect":
			connects[id] = line
		case ok && cmd == "Query" && string(arg) == s:
			out = append(out, connects[id], line)
		}
	}
	if len(out) != 2 {
		t.Fatalf("the general log holds %d lines for %q", len(out), s)
	}
	return strings.Join(append(head, out...), "\n") + "\n"
}

// TestStatementsFileDelimiterAsTheClient: files of statements with DELIMITER — several
// statements on one line, a delimiter inside a string, a stored procedure, DELIMITER written in
// lower case, a file whose DELIMITER comes after a comment with no line ending with ";" — are
// read into the statements the mariadb client sends for them, as the server's general log
// shows.
func TestStatementsFileDelimiterAsTheClient(t *testing.T) {
	client, err := exec.LookPath("mariadb")
	if err != nil {
		if client, err = exec.LookPath("mysql"); err != nil {
			t.Skip("no mariadb client")
		}
	}
	files := []string{
		"SELECT 1;\nDELIMITER $$\nSELECT 2$$ SELECT 3$$\nSELECT '$$', \"x$$\"$$\n" +
			"CREATE PROCEDURE p() BEGIN SELECT 4; SELECT 5; END$$\nSELECT 6\n$$\ndelimiter ;\nSELECT 7; SELECT 8;\n",
		"-- a file of one procedure\nDELIMITER //\nCREATE PROCEDURE q() BEGIN SELECT 9; END//\nDELIMITER ;\n",
	}
	for i, text := range files {
		dir := t.TempDir()
		generalLog := filepath.Join(dir, "general.log")
		srv := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{Args: []string{"--general-log=1", "--general-log-file=" + generalLog, "--log-output=FILE"}}, "client")[0]
		path := writeFile(t, fmt.Sprintf("script%d.sql", i), text)
		host, port, _ := strings.Cut(srv.Addr, ":")
		cmd := exec.Command(client, "--no-defaults", "-h", host, "-P", port, "-u", "root", "--comments", "test")
		cmd.Stdin = strings.NewReader(text)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", client, err, out)
		}
		// The client's statements: the Query lines of its connection (the last to connect).
		var st inputStats
		var sent []string
		last := uint64(0)
		f, err := os.Open(generalLog)
		if err != nil {
			t.Fatal(err)
		}
		var all []entry
		if err := readGeneralLog(f, &st, func(e entry) error {
			if e.kind == entryConnect {
				last = e.session
			}
			all = append(all, e)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		f.Close()
		for _, e := range all {
			if e.session == last && e.kind == entryStatement && !strings.HasPrefix(e.text, "select @@version_comment") && e.text != "USE `test`" &&
				!strings.HasPrefix(e.text, "-- ") { // a comment alone (--comments): no statement
				sent = append(sent, e.text)
			}
		}
		pf, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var read []string
		if err := readStatements(pf, func(e entry) error { read = append(read, e.text); return nil }); err != nil {
			t.Fatal(err)
		}
		pf.Close()
		if !slices.Equal(read, sent) {
			t.Errorf("file %d: check reads\n%q\nthe client sent\n%q", i, read, sent)
		}
	}
}

// preparedSteps is a client session that runs prepared statements and texts whose general log
// lines are hard to read back: a failed EXECUTE of an unknown prepared statement followed at
// once by the Execute of a prepared statement, EXECUTE IMMEDIATE (a Prepare and an Execute line
// after its Query line), NULL and binary values of placeholders (the Execute line writes them as
// literals), and a statement written with "\r\n" line ends.
func preparedSteps(ctx context.Context, t *testing.T, conn *sql.Conn, seen func(text string)) {
	t.Helper()
	stmt, err := conn.PrepareContext(ctx, "SELECT name FROM items WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	run := func(s string, query func() (*sql.Rows, error)) {
		if rows, err := query(); err == nil {
			for rows.Next() {
			}
			rows.Close()
		}
		seen(s)
	}
	text := func(s string, args ...any) {
		run(s, func() (*sql.Rows, error) { return conn.QueryContext(ctx, s, args...) })
	}
	text("EXECUTE nosuch") // the server: unknown prepared statement; no Execute line
	run("SELECT name FROM items WHERE id = ?", func() (*sql.Rows, error) { return stmt.QueryContext(ctx, 1) })
	text("EXECUTE IMMEDIATE 'SELECT name FROM items WHERE id = 2'")
	text("SELECT name FROM items WHERE id = ?", nil)
	text("SELECT id FROM items WHERE name = ?", []byte{0, 1, '\'', 0xff, '\r', '\n', 'z'})
	text("SELECT id FROM orders WHERE order_time >= ? AND order_time < ?", nil, day("2025-03-10 00:00:00"))
	text("SELECT id FROM orders WHERE order_time >= ? AND order_time < ?", day("2025-03-01 00:00:00"), day("2025-03-10 00:00:00"))
	text("SELECT name\r\nFROM items\r\nWHERE id = 3")
	text("SELECT 'a\r\nb' FROM items WHERE id = 4")
}

// TestCheckPreparedAsObroute: preparedSteps run on a MariaDB writing its general log, then
// through obroute: check on the general log reports, template by template, the classes the
// connector gave the same statements — the Execute after a failed EXECUTE counted, EXECUTE
// IMMEDIATE once, a statement run with NULL or binary values as its prepared text with those
// values, a "\r\n" inside a statement kept.
func TestCheckPreparedAsObroute(t *testing.T) {
	srv, generalLog, _ := checkServer(t)
	cfgPath, cfg := checkConfig(t, srv)
	ctx := context.Background()
	c, err := appDB(t, srv).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	preparedSteps(ctx, t, c, func(string) {})
	c.Close()

	db, _, rec := liveDB(t, cfg, day("2025-03-15 12:00:00"))
	if c, err = db.Conn(ctx); err != nil {
		t.Fatal(err)
	}
	live := map[string]map[string]int64{}
	preparedSteps(ctx, t, c, func(s string) { rec.take(live, s) })
	c.Close()

	r, _ := runCheckJSON(t, "-config", cfgPath, "-now", "2025-03-15 12:00:00", "-user", "app", generalLog)
	compareTemplates(t, live, reportLabels(r))
}

// TestCheckSlowLogMultiStatements: texts of several statements (multiStatements=true), sent to
// a MariaDB writing both logs, are read from the general log whole, as obroute routes them, and
// from the slow log as the server wrote them, one entry per statement: the text after a
// semicolon that starts with a line looking like a slow log header is the next statement's, a
// tail of comments only is no statement, and a "\r\n" inside a string is kept. Which entries
// were one text the slow log does not say (nothing in an entry tells): the report says that
// they are routed one by one.
func TestCheckSlowLogMultiStatements(t *testing.T) {
	dir := t.TempDir()
	generalLog, slowLog := filepath.Join(dir, "general.log"), filepath.Join(dir, "slow.log")
	srv := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{Args: []string{
		"--general-log=1", "--general-log-file=" + generalLog, "--slow-query-log=1", "--slow-query-log-file=" + slowLog,
		"--long-query-time=0", "--log-output=FILE",
	}}, "multi")[0]
	srv.Exec(t, "CREATE USER app@'%' IDENTIFIED BY 'app-pw'")
	srv.Exec(t, "GRANT ALL ON *.* TO app@'%'")
	srv.Exec(t, "CREATE TABLE items (id INT PRIMARY KEY, name TEXT)")
	texts := []string{
		"SELECT name FROM items WHERE id = 1; SELECT id FROM items WHERE id = 2",
		"SELECT 7;\n# Time: 261204 18:54:54\nSELECT 8",
		"SELECT 7;\n# User@Host: app[app] @  [127.0.0.1]\nSELECT 8",
		"SELECT 1; -- done",
		"SELECT 'a\r\nb'",
	}
	slowWant := []string{
		"SELECT name FROM items WHERE id = 1", "SELECT id FROM items WHERE id = 2",
		"SELECT 7", "# Time: 261204 18:54:54\nSELECT 8",
		"SELECT 7", "# User@Host: app[app] @  [127.0.0.1]\nSELECT 8",
		"SELECT 1",
		"SELECT 'a\r\nb'",
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "app", "app-pw", "tcp", srv.Addr, "test"
	cfg.MultiStatements = true
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range texts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
	}
	db.Close()
	// The server writes a statement's slow log entry after its answer: wait for the last one.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, err := os.ReadFile(slowLog)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), texts[len(texts)-1]+";\n") {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the slow log has no entry of %q", texts[len(texts)-1])
		}
	}
	for _, log := range []struct {
		path string
		want []string
	}{{generalLog, texts}, {slowLog, slowWant}} {
		got := appStatements(t, func(out sink) error {
			f, err := os.Open(log.path)
			if err != nil {
				return err
			}
			defer f.Close()
			if log.path == generalLog {
				return readGeneralLog(f, &inputStats{}, out)
			}
			return readSlowLog(f, out)
		})
		if len(got) != 1 || !slices.Equal(got[0], log.want) {
			t.Errorf("%s: statements\n%q\nwant\n%q", filepath.Base(log.path), got, log.want)
		}
	}
	// Which entries were one text the slow log does not say: the report says so.
	_, out, _ := cli(t, "check", "-quiet", "-dsn", edgeDSN, "-metadata", writeFile(t, "shards.csv", checkShardsCSV), "-now", "2025-03-15", slowLog)
	if !strings.Contains(out, "each statement of a text of several (multiStatements) as an entry of its own") {
		t.Errorf("the slow log's report does not say that a text of several statements is routed one by one:\n%s", out)
	}
}
