package main

import (
	"bufio"
	"context"
	"database/sql"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-sql-driver/mysql"

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
