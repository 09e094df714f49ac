package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/internal/bench/checklog"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/sqltest"
)

// step is one statement of a client session of the check workload: a write runs with Exec,
// anything else with Query, as an application runs them.
type step struct {
	sql   string
	args  []any
	write bool
}

func q(sql string, args ...any) step { return step{sql: sql, args: args} }
func w(sql string, args ...any) step { return step{sql: sql, args: args, write: true} }

func day(s string) time.Time {
	t, err := time.ParseInLocation(time.DateTime, s, time.UTC)
	if err != nil {
		panic(err)
	}
	return t
}

// checkWorkload are the client sessions of the workload: every route class, transactions
// (explicit, under autocommit=0, bound by a static route, refused across backends), SET, USE,
// temporary tables, the previous statement's session, hints, a statement whose route cannot be
// computed, and refusals of each kind the router gives. The clock is 2025-03-15: January to
// March are hot, October to December 2024 cold. The first session runs its statements with
// arguments (prepared statements: Prepare and Execute in the general log).
func checkWorkload() [][]step {
	orders := func(n int) []step {
		return []step{
			q("SELECT name FROM items WHERE id = ?", n),
			w("INSERT INTO items (id, name) VALUES (?, ?)", 100+n, "a;b\nc"),
			q("SELECT id, amount FROM orders WHERE order_time >= ? AND order_time < ?", day("2025-03-01 00:00:00"), day("2025-03-10 00:00:00")),
			q("SELECT COUNT(*) FROM orders WHERE order_time >= ? AND order_time < ?", day("2024-12-15 00:00:00"), day("2025-01-15 00:00:00")),
			q("SELECT SUM(amount) FROM orders WHERE order_time >= ? AND order_time < ?", day("2024-10-01 00:00:00"), day("2024-11-01 00:00:00")),
			w("INSERT INTO orders (id, user_id, order_time, amount) VALUES (?, ?, ?, ?)", 1000+n, 7, day("2025-03-02 10:00:00"), 5),
			q("SELECT note FROM audit_log WHERE id = ?", n),
			q("SELECT * FROM orders WHERE user_id = ?", 7),
		}
	}
	return [][]step{
		append(orders(1), orders(2)...),
		{
			q("BEGIN"),
			w("UPDATE items SET name = 'b' WHERE id = 1"),
			q("SELECT note FROM audit_log WHERE id = 2"), // bound to hot: refused
			q("SELECT name FROM items WHERE id = 2"),
			q("COMMIT"),
			q("START TRANSACTION"),
			q("SELECT note FROM audit_log WHERE id = 3"), // binds the transaction to cold
			w("UPDATE items SET name = 'c' WHERE id = 3"),
			q("ROLLBACK"),
			q("BEGIN"),
			q("SELECT COUNT(*) FROM orders WHERE order_time >= '2024-12-20' AND order_time < '2025-01-10'"), // a first statement on two backends
			q("ROLLBACK"),
			q("SET autocommit = 0"),
			w("UPDATE items SET name = 'd' WHERE id = 4"), // opens a transaction on hot
			q("SELECT note FROM audit_log WHERE id = 4"),
			q("COMMIT"),
			q("SET autocommit = 1"),
			q("SELECT note FROM audit_log WHERE id = 4"),
		},
		{
			q("CREATE TEMPORARY TABLE scratch (a INT)"),
			w("INSERT INTO scratch VALUES (1)"),
			q("SELECT a FROM scratch"),
			q("SELECT SQL_CALC_FOUND_ROWS name FROM items LIMIT 1"),
			q("SELECT FOUND_ROWS()"),
			q("DROP TEMPORARY TABLE scratch"),
			q("SET time_zone = '+08:00'"),
			q("SELECT COUNT(*) FROM orders WHERE order_time >= NOW() - INTERVAL 2 DAY"),
			q("SET @first = 3"),
			q("SELECT name FROM items WHERE id <= @first"),
			q("USE test"),
			q("/* shadow */ SELECT name FROM items WHERE id = 1"),
			w("/*+ OBROUTE(shadow=true) */ INSERT INTO items (id, name) VALUES (200, 'shadow')"),
			q("/*+ OBROUTE(backend=cold) */ SELECT 1"),
			q("HANDLER items OPEN"),
			q("HANDLER items READ FIRST"),
			q("HANDLER items CLOSE"),
			q("SELECT id\nFROM items\nWHERE name <> ';'\nORDER BY id"),
		},
		{
			q("SELECT * FROM orders WHERE DATE(order_time) = '2025-03-01'"),
			q("/*+ OBROUTE(query_level=L1) */ SELECT id FROM orders WHERE order_time >= '2024-11-01'"),
			w("INSERT INTO orders (id, user_id, order_time, amount) VALUES (2000, 1, '2024-11-05 00:00:00', 1)"),
			q("SELECT o.id FROM orders o JOIN orders p ON p.id = o.id WHERE o.order_time >= '2025-02-01' AND p.order_time >= '2025-02-01'"),
			q("/*+ OBROUTE(nosuch=1) */ SELECT 1"),
			q("SELECT id FROM orders WHERE order_time >= '2025-03-01' AND order_time < '2025-03-05'"),
			q("SELECT id FROM orders WHERE order_time >= '2025-03-02' AND order_time < '2025-03-06'"),
			q("SELECT user_id, SUM(amount) FROM orders WHERE order_time >= '2024-11-20' GROUP BY user_id ORDER BY user_id"),
		},
	}
}

// checkServer starts a MariaDB that writes its general and slow logs (long_query_time=0) to
// files, with performance_schema on, and the tables of both worlds in its database test: the
// application's before the switch (orders holding every row, items, audit_log), and what
// obroute's backends hold (the monthly orders tables and shard_metadata). The workload's client
// sessions connect as app, obroute's server sessions as ob.
func checkServer(t *testing.T) (srv *sqltest.Backend, generalLog, slowLog string) {
	t.Helper()
	dir := t.TempDir()
	generalLog, slowLog = filepath.Join(dir, "general.log"), filepath.Join(dir, "slow.log")
	srv = sqltest.MariaDBWith(t, sqltest.MariaDBOptions{PerformanceSchema: true, Args: []string{
		"--general-log=1", "--general-log-file=" + generalLog, "--slow-query-log=1", "--slow-query-log-file=" + slowLog,
		"--long-query-time=0", "--log-output=FILE",
	}}, "check")[0]
	for _, s := range []string{
		"CREATE USER app@'%' IDENTIFIED BY 'app-pw'", "GRANT ALL ON *.* TO app@'%'",
		"CREATE USER ob@'%' IDENTIFIED BY 'ob-pw'", "GRANT ALL ON *.* TO ob@'%'",
		"CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20))",
		"INSERT INTO items VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four')",
		"CREATE TABLE audit_log (id INT PRIMARY KEY, note VARCHAR(20))",
		"INSERT INTO audit_log VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')",
		"CREATE TABLE orders (id BIGINT PRIMARY KEY, user_id INT, order_time DATETIME NOT NULL, amount INT)",
		"CREATE TABLE shard_metadata (table_name VARCHAR(64) PRIMARY KEY, min_time DATETIME NOT NULL, max_time DATETIME NOT NULL, is_hot TINYINT NOT NULL DEFAULT 0, location VARCHAR(64))",
	} {
		srv.Exec(t, s)
	}
	for _, m := range []struct{ month, last, on string }{
		{"202410", "31", "cold"}, {"202411", "30", "cold"}, {"202412", "31", "cold"},
		{"202501", "31", "hot"}, {"202502", "28", "hot"}, {"202503", "31", "hot"},
	} {
		srv.Exec(t, "CREATE TABLE orders_"+m.month+" LIKE orders")
		first := m.month[:4] + "-" + m.month[4:] + "-01"
		srv.Exec(t, "INSERT INTO orders_"+m.month+" VALUES (?, 7, ?, 10)", m.month, first+" 12:00:00")
		srv.Exec(t, "INSERT INTO orders VALUES (?, 7, ?, 10)", m.month, first+" 12:00:00")
		srv.Exec(t, "INSERT INTO shard_metadata VALUES (?, ?, ?, ?, ?)", "orders_"+m.month, first, m.month[:4]+"-"+m.month[4:]+"-"+m.last+" 23:59:59", m.on == "hot", m.on)
	}
	return srv, generalLog, slowLog
}

// checkConfig is the obroute configuration of the test: four backends, each the server's
// database test as user ob (where the data lives does not change a route).
func checkConfig(t *testing.T, srv *sqltest.Backend) (path string, cfg *config.Config) {
	t.Helper()
	dsn := fmt.Sprintf("ob:ob-pw@tcp(%s)/test?parseTime=true&loc=UTC", srv.Addr)
	path = writeFile(t, "obroute.yaml", fmt.Sprintf(`backends:
  - {name: hot, role: hot, dsn: %[1]q}
  - {name: cold, role: cold, dsn: %[1]q}
  - {name: shadow_hot, role: shadow, dsn: %[1]q}
  - {name: shadow_cold, role: shadow, dsn: %[1]q}
default: hot
routes: {audit_log: cold}
enable_cached_server: true
shadow:
  mappings:
    - {production: hot, shadow: shadow_hot}
    - {production: cold, shadow: shadow_cold}
  algorithms:
    - {name: by-hint, kind: hint}
  default_algorithm: by-hint
time_tables:
  - {table: orders, shard_key: order_time, hot_window: {months: 2}}
metadata: {backend: hot, table: shard_metadata}
`, dsn))
	cfg, err := config.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, cfg
}

// runWorkload runs the sessions on db, one client session each, a statement at a time from
// each session in turn (so that the logs interleave them); after each, seen is called with
// the session and the step. Errors are the workload's: refusals, a HANDLER read on a closed
// handler.
func runWorkload(t *testing.T, db *sql.DB, sessions [][]step, seen func(session int, s step)) {
	t.Helper()
	ctx := context.Background()
	conns := make([]*sql.Conn, len(sessions))
	for i := range sessions {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	for k := 0; ; k++ {
		ran := false
		for i, steps := range sessions {
			if k >= len(steps) {
				continue
			}
			ran = true
			s := steps[k]
			if s.write {
				_, _ = conns[i].ExecContext(ctx, s.sql, s.args...)
			} else if rows, err := conns[i].QueryContext(ctx, s.sql, s.args...); err == nil {
				for rows.Next() {
				}
				rows.Close()
			}
			seen(i, s)
		}
		if !ran {
			break
		}
	}
	for _, c := range conns {
		c.Close()
	}
}

// liveRecorder records, for each statement run through obroute, the route event the
// connector reported.
type liveRecorder struct {
	events []connector.RouteEvent
}

func (r *liveRecorder) OnRoute(_ context.Context, ev connector.RouteEvent) {
	r.events = append(r.events, ev)
}
func (r *liveRecorder) OnStateChange(connector.StateEvent) {}

// take counts, in live (template → label → statements), the statement just run through obroute
// (text as the application sent it), by its route event, and forgets the events.
func (r *liveRecorder) take(live map[string]map[string]int64, text string) {
	var ev *connector.RouteEvent
	if len(r.events) > 0 {
		ev = &r.events[0]
		text = ev.SQL
	}
	tmpl := string(routing.AppendTemplate(nil, text))
	if live[tmpl] == nil {
		live[tmpl] = map[string]int64{}
	}
	live[tmpl][liveLabel(ev)]++
	r.events = r.events[:0]
}

// liveLabel is how obroute routed a statement, from its live route event: its class (static
// for a static route's default), "refused:REASON", or "session" when obroute kept it without a
// route (no event).
func liveLabel(ev *connector.RouteEvent) string {
	if ev == nil {
		return classSession
	}
	if ev.Refusal != "" {
		return "refused:" + ev.Refusal
	}
	p := ev.Plan()
	if ev.Err != nil {
		if reason := routing.RefusalReason(ev.Err); reason != routing.RefusalReasonOther {
			return "refused:" + reason
		}
	}
	if p.Static && p.Class == "default" {
		return classStatic
	}
	return p.Class
}

// checkLabel is liveLabel's word for an outcome of the report.
func checkLabel(o outcomeRow) string {
	if o.Class == classRefused {
		return "refused:" + o.Reason
	}
	return o.Class
}

// runCheckJSON runs obroute check with -json and returns its report and exit code.
func runCheckJSON(t *testing.T, args ...string) (checkReport, int) {
	t.Helper()
	code, out, errOut := cli(t, append([]string{"check", "-json", "-quiet"}, args...)...)
	var r checkReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("check %v: exit %d, stderr %q, stdout not JSON (%v):\n%s", args, code, errOut, err, out)
	}
	return r, code
}

// TestCheckAgreesWithObroute: the workload runs on a MariaDB that writes its general and slow
// logs, then through obroute; obroute check on each log reports, template by template, the
// classes and refusals the live connector gave the same statements, and its counts add up to
// the connector's Stats().Routes and Rejections.
func TestCheckAgreesWithObroute(t *testing.T) {
	srv, generalLog, slowLog := checkServer(t)
	cfgPath, cfg := checkConfig(t, srv)
	sessions := checkWorkload()
	now := day("2025-03-15 12:00:00")

	// Before the switch: the application on one database, as user app, its statements logged.
	app := appDB(t, srv)
	runWorkload(t, app, sessions, func(int, step) {})
	srv.Exec(t, "FLUSH LOGS")                                              // the server writes its header into the logs again: check skips it
	t.Run("digests", func(t *testing.T) { checkDigests(t, srv, cfgPath) }) // before obroute's own statements reach the server

	// Through obroute, on the backends of the configuration: what every statement got.
	db, c, rec := liveDB(t, cfg, now)
	live := map[string]map[string]int64{} // template → label → statements
	runWorkload(t, db, sessions, func(_ int, s step) { rec.take(live, s.sql) })
	stats := c.Stats()
	for _, want := range []string{"default", "static", "forced", "cached", "hot_only", "split", "cold_only", "shadow", "session",
		"refused:no_time_range", "refused:cross_backend_tx", "refused:shard_key_function", "refused:level_violation",
		"refused:cold_write", "refused:time_sharded_join", "refused:hint_unknown"} {
		found := false
		for _, labels := range live {
			found = found || labels[want] > 0
		}
		if !found {
			t.Errorf("the workload has no statement that obroute routes as %s", want)
		}
	}

	for _, log := range []struct{ name, path string }{{"general log", generalLog}, {"slow log", slowLog}} {
		t.Run(log.name, func(t *testing.T) {
			r, code := runCheckJSON(t, "-config", cfgPath, "-now", "2025-03-15 12:00:00", "-user", "app", log.path)
			if code != 1 {
				t.Errorf("exit %d, want 1: the workload has refused statements", code)
			}
			got := map[string]map[string]int64{}
			routes, rejections := map[string]int64{}, map[string]int64{}
			for _, tr := range r.Templates {
				got[tr.Template] = map[string]int64{}
				for _, o := range tr.Outcomes {
					got[tr.Template][checkLabel(o)] += o.Count
					switch {
					case o.Class == classRefused && o.RoutedClass != "":
						routes[o.RoutedClass] += o.Count
					case o.Class == classRefused:
						rejections[o.Reason] += o.Count
					case o.Class == classStatic:
						routes["default"] += o.Count
					case o.Class != classSession:
						routes[o.Class] += o.Count
					}
				}
			}
			compareTemplates(t, live, got)
			if !maps.Equal(routes, stats.Routes) || !maps.Equal(rejections, stats.Rejections) {
				t.Errorf("check's counts: routes %v, refusals %v; the connector's Stats: routes %v, rejections %v", routes, rejections, stats.Routes, stats.Rejections)
			}
			if r.Input.ClientSessions != int64(len(sessions)) {
				t.Errorf("check followed %d client sessions, the workload has %d", r.Input.ClientSessions, len(sessions))
			}
		})
	}
}

// compareTemplates compares, template by template, the labels check gave the statements (got)
// with those obroute routed them with (live).
func compareTemplates(t *testing.T, live, got map[string]map[string]int64) {
	t.Helper()
	for _, tmpl := range slices.Sorted(maps.Keys(mergeKeys(live, got))) {
		if !maps.Equal(live[tmpl], got[tmpl]) {
			t.Errorf("template %q: check says %v, obroute routed %v", tmpl, got[tmpl], live[tmpl])
		}
	}
}

// liveDB opens cfg through obroute at the clock now, recording its route events.
func liveDB(t *testing.T, cfg *config.Config, now time.Time) (*sql.DB, *connector.Connector, *liveRecorder) {
	t.Helper()
	rec := &liveRecorder{}
	c, err := connector.New(cfg, connector.WithClock(func() time.Time { return now }), connector.WithObserver(rec))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	return db, c, rec
}

// appDB opens the application's database on srv: user app, before the switch.
func appDB(t *testing.T, srv *sqltest.Backend) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = "app", "app-pw", "tcp", srv.Addr, "test"
	cfg.ParseTime, cfg.Loc = true, time.UTC
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}

func mergeKeys(a, b map[string]map[string]int64) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// checkShardsCSV is the shard metadata of checkServer as a -metadata file.
const checkShardsCSV = `table_name,min_time,max_time,is_hot,location
orders_202410,2024-10-01,2024-10-31 23:59:59,0,cold
orders_202411,2024-11-01,2024-11-30 23:59:59,0,cold
orders_202412,2024-12-01,2024-12-31 23:59:59,0,cold
orders_202501,2025-01-01,2025-01-31 23:59:59,1,hot
orders_202502,2025-02-01,2025-02-28 23:59:59,1,hot
orders_202503,2025-03-01,2025-03-31 23:59:59,1,hot
`

// checkDigests: obroute check -digests reads the server's statement digests, routes each as a
// template (counted COUNT_STAR times), and shows the route of a time-sharded table's range as
// needs_values: its values are the digest's ?. MariaDB's digests drop comments (the workload's
// hints are gone) and, as this server counts them, leave out the statements the workload ran
// as prepared statements; the expected counts are those of its text statements.
func checkDigests(t *testing.T, srv *sqltest.Backend, cfgPath string) {
	r, code := runCheckJSON(t, "-config", cfgPath, "-metadata", writeFile(t, "shards.csv", checkShardsCSV), "-now", "2025-03-15 12:00:00",
		"-digests", "root@tcp("+srv.Addr+")/", "-schema", "test")
	if code != 1 {
		t.Errorf("exit %d, want 1: refused digests", code)
	}
	want := map[string]string{
		"SELECT `note` FROM `audit_log` WHERE ID = ?":                                     "static 4",
		"SELECT * FROM `orders` WHERE DATE ( `order_time` ) = ?":                          "refused:shard_key_function 1",
		"SELECT ID FROM `orders` WHERE `order_time` >= ? AND `order_time` < ?":            "needs_values 2",
		"SELECT COUNT ( * ) FROM `orders` WHERE `order_time` >= NOW ( ) - INTERVAL ? DAY": "needs_values 1",
		"BEGIN": "session 2",
		"UPDATE `items` SET NAME = ? WHERE ID = ?": "default 3",
	}
	for _, tr := range r.Templates {
		w, ok := want[tr.Template]
		if !ok {
			continue
		}
		delete(want, tr.Template)
		var got []string
		for _, o := range tr.Outcomes {
			got = append(got, fmt.Sprintf("%s %d", checkLabel(o), o.Count))
		}
		if g := fmt.Sprint(got); g != "["+w+"]" {
			t.Errorf("digest %q: %s, want [%s]", tr.Template, g, w)
		}
	}
	for tmpl := range want {
		t.Errorf("no digest %q in the report", tmpl)
	}
	if r.Input.Format != "digests" || r.Input.Statements == 0 {
		t.Errorf("input %+v", r.Input)
	}

	// A schema whose digests are all needs_values: nothing is refused, nothing is known either,
	// and a CI gate must not pass it.
	srv.Exec(t, "CREATE DATABASE ranges")
	srv.Exec(t, "CREATE TABLE ranges.orders LIKE test.orders")
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "tcp", srv.Addr, "ranges"
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	for _, s := range []string{"SELECT id FROM orders WHERE order_time >= '2025-03-01' AND order_time < '2025-03-05'",
		"INSERT INTO orders (id, user_id, order_time, amount) VALUES (1, 1, '2024-11-05 00:00:00', 1)"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	r, code = runCheckJSON(t, "-config", cfgPath, "-metadata", writeFile(t, "shards.csv", checkShardsCSV), "-now", "2025-03-15 12:00:00",
		"-digests", "root@tcp("+srv.Addr+")/", "-schema", "ranges")
	if code != 1 || len(r.Classes) != 1 || r.Classes[0].Class != classNeedsValues || r.Classes[0].Statements != 2 {
		t.Errorf("schema ranges: exit %d, classes %+v; want 1 and 2 needs_values", code, r.Classes)
	}
}

// TestCheckCommand: the text report of a file of statements, read as one client session (the
// transaction bound to hot refuses the static route to cold in it), its exit status, -top, and
// the command's errors; the configuration's password appears nowhere.
func TestCheckCommand(t *testing.T) {
	dsn := "obroute:backends.hot.dsn=app:" + secret + "@tcp(127.0.0.1:1)/shop;backends.cold.dsn=app:" + secret + "@tcp(127.0.0.1:2)/shop;routes.audit_log=cold"
	script := writeFile(t, "workload.sql", "SELECT name FROM items WHERE id = 1;\nSELECT name FROM items WHERE id = 2;\n"+
		"SELECT note FROM audit_log WHERE id = 3;\nBEGIN;\nUPDATE items SET name = 'x' WHERE id = 1;\nSELECT note FROM audit_log WHERE id = 4;\nCOMMIT;\n")
	clean := writeFile(t, "clean.sql", "SELECT name FROM items WHERE id = 1\nSELECT note FROM audit_log WHERE id = 3\n")
	report := `obroute check: statements file ` + script + `
  7 statement(s) in 1 client session(s), 5 template(s) (213 bytes read in X s)

class                    statements       %  templates
default                           3   42.9%          2   the default backend
static                            1   14.3%          1   a static table route
session                           2   28.6%          2   BEGIN, COMMIT, ROLLBACK, SET TRANSACTION: kept by obroute, not routed
refused                           1   14.3%          1   refused by obroute
  cross_backend_tx                1                  1

templates by frequency
     count  class        backends         level  template
         2  default      hot              -      SELECT name FROM items WHERE id = ?
         1  static       cold             -      SELECT note FROM audit_log WHERE id = ?
         1  refused      -                -      SELECT note FROM audit_log WHERE id = ?
            cross_backend_tx: run it outside the transaction
         1  session      -                -      BEGIN
         1  session      -                -      COMMIT
         1  default      hot              -      UPDATE items SET name = ? WHERE id = ?

1 statement(s) of 1 template(s) would be refused.
`
	elapsed := regexp.MustCompile(`read in [0-9.]+ s`)
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string // the whole output ("read in X s" for its time), or with prefix its start
		prefix bool
		stderr string
	}{
		{name: "a refusal", args: []string{"-dsn", dsn, script}, code: 1, stdout: report, stderr: "obroute check: 1 statement(s) of 1 template(s) would be refused\n"},
		{name: "nothing refused, one statement per line", args: []string{"-dsn", dsn, clean}, code: 0, prefix: true,
			stdout: "obroute check: statements file " + clean + "\n  2 statement(s) in 1 client session(s), 2 template(s) (76 bytes read in X s)\n"},
		{name: "-top", args: []string{"-dsn", dsn, "-top", "1", clean}, code: 0, prefix: true,
			stdout: "obroute check: statements file " + clean + "\n  2 statement(s) in 1 client session(s), 2 template(s) (76 bytes read in X s)\n\n" +
				"class                    statements       %  templates\n" +
				"default                           1   50.0%          1   the default backend\n" +
				"static                            1   50.0%          1   a static table route\n\n" +
				"templates by frequency (the first 1 of 2; -top 0 shows all)\n"},
		{name: "no input", args: []string{"-dsn", dsn}, code: 1, stderr: "obroute check: give one log file (or -digests DSN), got 0 arguments; see obroute help check\n"},
		{name: "both inputs", args: []string{"-dsn", dsn, "-digests", "root@tcp(127.0.0.1:1)/", script}, code: 1, stderr: "obroute check: give a log file or -digests DSN, not both\n"},
		{name: "bad -format", args: []string{"-dsn", dsn, "-format", "binlog", script}, code: 1, stderr: "obroute check: -format \"binlog\": give general, slow or statements\n"},
		{name: "no configuration", args: []string{script}, code: 1, stderr: "obroute check: no configuration: give -config obroute.yaml or -dsn 'obroute:backends.hot.dsn=…'\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := cli(t, append([]string{"check", "-quiet"}, c.args...)...)
			out = elapsed.ReplaceAllString(out, "read in X s")
			if code != c.code || errOut != c.stderr {
				t.Errorf("exit %d, stderr %q; want %d, %q", code, errOut, c.code, c.stderr)
			}
			if c.prefix && !strings.HasPrefix(out, c.stdout) || !c.prefix && out != c.stdout {
				t.Errorf("stdout:\n%s\nwant (prefix %v):\n%s", out, c.prefix, c.stdout)
			}
			if strings.Contains(out+errOut, secret) {
				t.Errorf("the backend password appears in the output")
			}
		})
	}
}

// TestCheckSyntheticLog is the short version of the scale benchmark (internal/bench/cmd/checklog):
// check routes every statement of a synthetic general log of many interleaved client sessions,
// and refuses only the statements the generator writes to be refused.
func TestCheckSyntheticLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "general.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := checklog.Write(f, checklog.Options{Size: 2 << 20, Sessions: 200, Seed: 7})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	r, code := runCheckJSON(t, "-config", "../../examples/obroute.yaml", "-metadata", "../../examples/shards.csv", "-now", "2025-03-15", path)
	if code != 1 || r.Input.Statements != st.Statements || r.Input.ClientSessions != st.Sessions {
		t.Errorf("exit %d, %d statements in %d client sessions; want 1 (refusals), %d in %d", code, r.Input.Statements, r.Input.ClientSessions, st.Statements, st.Sessions)
	}
	for _, rc := range r.Refusals {
		if rc.Reason != "no_time_range" && rc.Reason != "shard_key_function" && rc.Reason != "cross_backend_tx" {
			t.Errorf("%d statements refused as %s", rc.Statements, rc.Reason)
		}
	}
}

func BenchmarkCheckGeneralLog(b *testing.B) {
	path := filepath.Join(b.TempDir(), "general.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	st, err := checklog.Write(f, checklog.Options{Size: 16 << 20, Sessions: 2000, Seed: 1})
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Bytes)
	for b.Loop() {
		run(context.Background(), []string{"check", "-config", "../../examples/obroute.yaml", "-metadata", "../../examples/shards.csv", "-now", "2025-03-15", "-json", "-quiet", path}, io.Discard, io.Discard)
	}
	b.ReportMetric(float64(st.Statements)*float64(b.N)/b.Elapsed().Seconds(), "statements/s")
}

// TestREADMECheckExample: the README's obroute check example prints what the command prints.
func TestREADMECheckExample(t *testing.T) {
	t.Chdir("../..")
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	const prompt = "$ obroute check "
	start := strings.Index(string(readme), prompt)
	end := strings.Index(string(readme), "$ echo $?\n1\n")
	if start < 0 || end < start {
		t.Fatal("the README has no obroute check example ending with its exit status")
	}
	example := string(readme[start:end])
	command, want, _ := strings.Cut(example, "\n")
	code, out, errOut := cli(t, strings.Fields(strings.TrimPrefix(command, "$ obroute "))...)
	got := regexp.MustCompile(`read in [0-9.]+ s`).ReplaceAllString(out, "read in 0.0 s") + errOut
	if code != 1 || got != want {
		t.Errorf("exit %d; the command prints\n%s\nthe README says\n%s", code, got, want)
	}
}
