package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/sqltest"
)

func TestDigestStatement(t *testing.T) {
	// Digest texts as MariaDB 10.11 writes them (performance_schema.events_statements_summary_by_digest).
	cases := []struct{ digest, want string }{
		{"SELECT `note` FROM `audit_log` WHERE ID = ?", "SELECT `note` FROM `audit_log` WHERE ID = ?"},
		{"INSERT INTO `orders` ( ID , `user_id` , `order_time` , `amount` ) VALUES (...)", "INSERT INTO `orders` ( ID , `user_id` , `order_time` , `amount` ) VALUES (?, ?, ?, ?)"},
		{"INSERT INTO `t` VALUES ( ?, ... , NOW ( ) )", "INSERT INTO `t` VALUES ( ?, NOW ( ) )"},
		{"INSERT INTO `audit_log` VALUES (...) /* , ... */", "INSERT INTO `audit_log` VALUES (?) /* */"},
		{"SELECT ID , NAME FROM `items` WHERE ID IN (...)", "SELECT ID , NAME FROM `items` WHERE ID IN (?)"},
		{"SELECT COUNT ( * ) FROM `orders` WHERE `order_time` >= NOW ( ) - INTERVAL ? SQL_TSI_DAY", "SELECT COUNT ( * ) FROM `orders` WHERE `order_time` >= NOW ( ) - INTERVAL ? DAY"},
		{"SELECT NAME FROM `items` WHERE ID <= @?", "SELECT NAME FROM `items` WHERE ID <= @digest_var"},
	}
	for _, c := range cases {
		if got, truncated := digestStatement(c.digest); got != c.want || truncated {
			t.Errorf("digestStatement(%q) = %q, %v; want %q", c.digest, got, truncated, c.want)
		}
	}
	if _, truncated := digestStatement("SELECT `a` , `b` , `c` FROM `t` WHERE `a` = ? AND `b` ..."); !truncated {
		t.Errorf("a digest cut short is not reported truncated")
	}
}

// checkScript is a script as the mysql client runs it: semicolons in strings and comments, a
// stored procedure, a trigger and a compound statement whose bodies hold semicolons, a function
// defined under DELIMITER, and a last statement without a semicolon.
const checkScript = `-- a script; as the mysql client runs it
CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20));
INSERT INTO items VALUES (1, 'a;b'), (2, 'it''s'), (3, "semi;colon"); /* a comment; with a semicolon */
# a hash comment; still a comment
CREATE PROCEDURE fill(IN n INT)
BEGIN
  DECLARE i INT DEFAULT 10;
  WHILE i < 10 + n DO
    INSERT INTO items VALUES (i, CONCAT('item ', i));
    SET i = i + 1;
  END WHILE;
  IF n > 2 THEN
    SELECT COUNT(*) FROM items;
  ELSE
    SELECT CASE WHEN n = 1 THEN 'one' ELSE 'few' END;
  END IF;
END;
CALL fill(3);
CREATE TRIGGER items_bi BEFORE INSERT ON items FOR EACH ROW
  IF NEW.name IS NULL THEN SET NEW.name = 'unnamed'; END IF;
INSERT INTO items (id) VALUES (100);
DELIMITER //
CREATE FUNCTION twice(x INT) RETURNS INT DETERMINISTIC
BEGIN
  RETURN x * 2;
END//
DELIMITER ;
SELECT twice(id) FROM items WHERE id = 1;
BEGIN NOT ATOMIC
  DECLARE c INT;
  SELECT COUNT(*) INTO c FROM items;
END;
START TRANSACTION;
UPDATE items SET name = 'x' WHERE id = 1;
COMMIT;
SELECT name FROM items WHERE id = 100
`

// TestStatementsFileSplitsAsTheServerReads: the statements check reads from a script, each run
// on MariaDB alone in their order, all succeed, and do what the script says (the procedure's
// loop inserted its rows, the trigger's body named the row): the server reads each as one whole
// statement.
func TestStatementsFileSplitsAsTheServerReads(t *testing.T) {
	var stmts []string
	err := readStatements(strings.NewReader(checkScript), func(e entry) error {
		stmts = append(stmts, e.text)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(stmts) != 13 {
		t.Errorf("%d statements, want 13:\n%s", len(stmts), strings.Join(stmts, "\n--\n"))
	}
	b := sqltest.Shared(t, "script")[0]
	conn, err := b.DB.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range stmts {
		rows, err := conn.QueryContext(context.Background(), s)
		if err != nil {
			t.Fatalf("the server refuses %q: %v", s, err)
		}
		for rows.Next() {
		}
		rows.Close()
	}
	var n int
	var name string
	if err := conn.QueryRowContext(context.Background(), "SELECT COUNT(*), (SELECT name FROM items WHERE id = 100) FROM items").Scan(&n, &name); err != nil || n != 7 || name != "unnamed" {
		t.Errorf("items: %d rows, id 100 named %q (%v); want 7 and unnamed", n, name, err)
	}
}

func TestStatementsFileOnePerLine(t *testing.T) {
	var stmts []string
	err := readStatements(strings.NewReader("SELECT 1\n\nSELECT 'a;b' FROM t WHERE id = 2\n-- a comment\nUPDATE t SET a = 1; UPDATE t SET a = 2\n"), func(e entry) error {
		stmts = append(stmts, e.text)
		return nil
	})
	want := []string{"SELECT 1", "SELECT 'a;b' FROM t WHERE id = 2", "UPDATE t SET a = 1", "UPDATE t SET a = 2"}
	if err != nil || !slices.Equal(stmts, want) {
		t.Errorf("statements %q (%v), want %q", stmts, err, want)
	}
}

// entries reads a log with read and returns its entries, one line each: "connect 12 app",
// "statement 12 SELECT 1", "statement 12 SELECT ? [1]" (a prepared statement's values), "quit 12".
func entries(t *testing.T, read func(sink) error) []string {
	t.Helper()
	var out []string
	if err := read(func(e entry) error {
		switch e.kind {
		case entryConnect:
			out = append(out, fmt.Sprintf("connect %d %s", e.session, e.user))
		case entryQuit:
			out = append(out, fmt.Sprintf("quit %d", e.session))
		default:
			line := fmt.Sprintf("statement %d %s %s", e.session, e.user, e.text)
			if len(e.args) > 0 {
				vals := make([]any, len(e.args))
				for i, a := range e.args {
					vals[i] = a.Value
				}
				line += fmt.Sprint(" ", vals)
			}
			out = append(out, line)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// MySQL 8 writes its logs otherwise than MariaDB (whose logs TestCheckAgreesWithObroute reads):
// a time on every general log line, the connection id in the slow log's User@Host line, and
// "# administrator command:" lines. These are written as MySQL's manual shows them.
func TestMySQLGeneralLog(t *testing.T) {
	log := "/usr/sbin/mysqld, Version: 8.0.36 (MySQL Community Server - GPL). started with:\n" +
		"Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock\n" +
		"Time                 Id Command    Argument\n" +
		"2025-03-15T10:00:00.000001Z\t   12 Connect\tapp@localhost on shop using SSL/TLS\n" +
		"2025-03-15T10:00:00.000002Z\t   12 Query\tSELECT 1\n" +
		"2025-03-15T10:00:00.000003Z\t   12 Init DB\tshop2\n" +
		"2025-03-15T10:00:00.000004Z\t   13 Connect\treport@10.0.0.9 on  using TCP/IP\n" +
		"2025-03-15T10:00:00.000005Z\t   12 Query\tSELECT a\r\nFROM t\r\nWHERE b = 'x'\r\n" +
		"2025-03-15T10:00:00.000006Z\t   13 Prepare\tSELECT ? FROM t\n" +
		"2025-03-15T10:00:00.000007Z\t   13 Execute\tSELECT 2 FROM t\n" +
		"2025-03-15T10:00:00.000008Z\t   12 Change user\tother@localhost on shop\n" +
		"2025-03-15T10:00:00.000009Z\t   12 Quit\t\n" +
		"2025-03-15T10:00:00.000010Z\t   13 Query\tSELECT 3"
	var st inputStats
	got := entries(t, func(out sink) error { return readGeneralLog(strings.NewReader(log), &st, out) })
	want := []string{"connect 12 app", "statement 12  SELECT 1", "statement 12  USE `shop2`", "connect 13 report",
		"statement 12  SELECT a\r\nFROM t\r\nWHERE b = 'x'", "statement 13  SELECT ? FROM t [2]", "connect 12 other", "quit 12", "statement 13  SELECT 3"}
	if !slices.Equal(got, want) {
		t.Errorf("entries\n%q\nwant\n%q", got, want)
	}
	if st.ignored["Prepare"] != 1 {
		t.Errorf("ignored %v, want the Prepare", st.ignored)
	}
}

func TestMySQLSlowLog(t *testing.T) {
	log := "/usr/sbin/mysqld, Version: 8.0.36 (MySQL Community Server - GPL). started with:\n" +
		"Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock\n" +
		"Time                 Id Command    Argument\n" +
		"# Time: 2025-03-15T10:00:00.123456Z\n" +
		"# User@Host: app[app] @ localhost []  Id:    12\n" +
		"# Query_time: 0.000123  Lock_time: 0.000010 Rows_sent: 1  Rows_examined: 1\n" +
		"use shop;\n" +
		"SET timestamp=1742032800;\n" +
		"SELECT 1;\n" +
		"# Time: 2025-03-15T10:00:01.123456Z\n" +
		"# User@Host: report[report] @ localhost []  Id:    14\n" +
		"# Query_time: 0.000200  Lock_time: 0.000010 Rows_sent: 2  Rows_examined: 2\n" +
		"SET timestamp=1742032801;\n" +
		"SELECT a\n# not a header: a comment of the statement\nFROM t;\n" +
		"# User@Host: app[app] @ localhost []  Id:    12\n" +
		"# Query_time: 0.000001  Lock_time: 0.000000 Rows_sent: 0  Rows_examined: 0\n" +
		"SET timestamp=1742032802;\n" +
		"SET timestamp=5;\n" +
		"# User@Host: app[app] @ localhost []  Id:    12\n" +
		"# Query_time: 0.000001  Lock_time: 0.000000 Rows_sent: 0  Rows_examined: 0\n" +
		"SET timestamp=1742032802;\n" +
		"# administrator command: Quit;\n"
	got := entries(t, func(out sink) error { return readSlowLog(strings.NewReader(log), out) })
	want := []string{"statement 12 app SELECT 1", "statement 14 report SELECT a\n# not a header: a comment of the statement\nFROM t",
		"statement 12 app SET timestamp=5", "quit 12"}
	if !slices.Equal(got, want) {
		t.Errorf("entries\n%q\nwant\n%q", got, want)
	}
}

func TestCheckProgressLine(t *testing.T) {
	c := &countingReader{}
	c.n.Store(512 << 20)
	if got, want := progressLine(10*time.Second, c, 1<<30, 1_234_567), "check: 512.0 MiB of 1.00 GiB (50%), 1 234 567 statements, 123 456 statements/s, 10s left"; got != want {
		t.Errorf("progress %q, want %q", got, want)
	}
	if got, want := progressLine(4*time.Second, nil, 0, 800), "check: 800 statements, 200 statements/s"; got != want {
		t.Errorf("progress %q, want %q", got, want)
	}
}

// TestCheckServerRejected: MySQL 8's slow log with log_slow_extra=ON (written as its manual
// shows it) gives each statement's error: a statement the server rejected did not run, so
// check neither routes it (it would count a refusal, exit 1) nor follows it (a rejected SET
// time_zone leaves the session's zone as it was); it is counted as server_error.
func TestCheckServerRejected(t *testing.T) {
	entry := func(ts, errno, stmt string) string {
		return "# Time: 2025-03-15T10:00:0" + ts + ".000000Z\n# User@Host: app[app] @ localhost []  Id:     8\n" +
			"# Query_time: 0.000245  Lock_time: 0.000000 Rows_sent: 0  Rows_examined: 0 Thread_id: 8 Errno: " + errno +
			" Killed: 0 Bytes_received: 23 Bytes_sent: 168 Read_first: 0 Read_last: 0 Read_key: 0 Read_next: 0 Read_prev: 0" +
			" Read_rnd: 0 Read_rnd_next: 0 Sort_merge_passes: 0 Sort_range_count: 0 Sort_rows: 0 Sort_scan_count: 0" +
			" Created_tmp_disk_tables: 0 Created_tmp_tables: 0 Start: 2025-03-15T10:00:0" + ts + ".000000Z End: 2025-03-15T10:00:0" + ts + ".000245Z\n" +
			"SET timestamp=174203280" + ts + ";\n" + stmt + ";\n"
	}
	log := writeFile(t, "slow.log", "/usr/sbin/mysqld, Version: 8.0.36 (MySQL Community Server - GPL). started with:\n"+
		"Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock\nTime                 Id Command    Argument\n"+
		entry("1", "0", "SET time_zone = '+08:00'")+
		entry("2", "1054", "SELECT * FROM orders WHERE nosuch = 7")+
		entry("3", "1298", "SET time_zone = 'Nowhere/Bogus'")+
		entry("4", "0", "SELECT id FROM orders WHERE order_time >= NOW() - INTERVAL 1 DAY"))
	r, code := runCheckJSON(t, "-config", "../../examples/obroute.yaml", "-metadata", "../../examples/shards.csv", "-now", "2025-03-15", log)
	got := map[string]int64{}
	for _, c := range r.Classes {
		got[c.Class] = c.Statements
	}
	if want := map[string]int64{"forced": 1, classServerError: 2, "hot_only": 1}; code != 0 || !maps.Equal(got, want) {
		t.Errorf("exit %d, classes %v; want 0 and %v", code, got, want)
	}
	labels := reportLabels(r)
	if g := labels["SET time_zone = 'Nowhere/Bogus'"]; !maps.Equal(g, map[string]int64{classServerError: 1}) {
		t.Errorf("the rejected SET time_zone: %v, want server_error", g)
	}
}

// TestCheckDeadlockVictim: in MySQL 8's slow log with log_slow_extra=ON, a statement of a
// transaction that failed with a deadlock (1213) was rolled back by the server with its whole
// transaction: the session's next statement runs outside it (a static route to cold, allowed),
// as obroute runs it after the deadlock. A lock wait timeout (1205) rolls back the statement
// only: the transaction, bound to hot, goes on and refuses the static route to cold.
// (MariaDB's logs do not say that a statement failed.)
func TestCheckDeadlockVictim(t *testing.T) {
	entry := func(id, ts, errno, stmt string) string {
		return "# Time: 2025-03-15T10:00:0" + ts + ".000000Z\n# User@Host: app[app] @ localhost []  Id:     " + id + "\n" +
			"# Query_time: 0.000245  Lock_time: 0.000000 Rows_sent: 0  Rows_examined: 0 Thread_id: " + id + " Errno: " + errno +
			" Killed: 0 Bytes_received: 23 Bytes_sent: 168 Read_first: 0 Read_last: 0 Read_key: 0 Read_next: 0 Read_prev: 0" +
			" Read_rnd: 0 Read_rnd_next: 0 Sort_merge_passes: 0 Sort_range_count: 0 Sort_rows: 0 Sort_scan_count: 0" +
			" Created_tmp_disk_tables: 0 Created_tmp_tables: 0 Start: 2025-03-15T10:00:0" + ts + ".000000Z End: 2025-03-15T10:00:0" + ts + ".000245Z\n" +
			"SET timestamp=174203280" + ts + ";\n" + stmt + ";\n"
	}
	var b strings.Builder
	b.WriteString("/usr/sbin/mysqld, Version: 8.0.36 (MySQL Community Server - GPL). started with:\n" +
		"Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock\nTime                 Id Command    Argument\n")
	for _, s := range []struct{ id, errno string }{{"8", "1213"}, {"9", "1205"}} {
		b.WriteString(entry(s.id, "1", "0", "BEGIN"))
		b.WriteString(entry(s.id, "2", "0", "UPDATE items SET price = 1 WHERE id = 1"))
		b.WriteString(entry(s.id, "3", s.errno, "UPDATE items SET price = 2 WHERE id = 2"))
		b.WriteString(entry(s.id, "4", "0", "SELECT note FROM audit_log WHERE id = "+s.id))
	}
	log := writeFile(t, "slow.log", b.String())
	r, code := runCheckJSON(t, "-config", "../../examples/obroute.yaml", "-metadata", "../../examples/shards.csv", "-now", "2025-03-15", log)
	got := reportLabels(r)["SELECT note FROM audit_log WHERE id = ?"]
	if want := map[string]int64{classStatic: 1, "refused:cross_backend_tx": 1}; code != 1 || !maps.Equal(got, want) {
		t.Errorf("exit %d; the statements after the deadlock and after the lock wait timeout: %v, want %v", code, got, want)
	}
}

// TestLogStatementLeftOpen: a statement whose string is never closed (the server rejects it)
// would make every later line of the log its text: past maxLogStatement, reading stops with an
// error naming it, rather than swallowing the log.
func TestLogStatementLeftOpen(t *testing.T) {
	defer func(n int) { maxLogStatement = n }(maxLogStatement)
	maxLogStatement = 1 << 20
	var b strings.Builder
	b.WriteString("\t\t     5 Query\tSELECT 'never closed\n")
	line := "\t\t     6 Query\tSELECT name FROM items WHERE id = 1\n"
	for b.Len() <= maxLogStatement+4096 {
		b.WriteString(line)
	}
	var st inputStats
	err := readGeneralLog(strings.NewReader(b.String()), &st, func(entry) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "statement 1 of the log is longer than 1 MiB") {
		t.Errorf("err %v, want the open statement's", err)
	}
	b.Reset()
	b.WriteString("# User@Host: app[app] @ localhost []\n# Thread_id: 5  Schema: test  QC_hit: No\nSET timestamp=1;\nSELECT 'never closed\n")
	for b.Len() <= maxLogStatement+4096 {
		b.WriteString("# User@Host: app[app] @ localhost []\n# Thread_id: 6  Schema: test  QC_hit: No\nSET timestamp=1;\nSELECT 1;\n")
	}
	if err := readSlowLog(strings.NewReader(b.String()), func(entry) error { return nil }); err == nil || !strings.Contains(err.Error(), "longer than 1 MiB") {
		t.Errorf("slow log: err %v, want the open statement's", err)
	}
}
