package routing

import (
	"database/sql/driver"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/hint"
)

func TestTextOfSeveralStatements(t *testing.T) {
	r := newTestRouter(t, false)
	inTx := &SessionState{InTransaction: true, TxBackend: "cold", LastBackend: "cold"}
	args := []driver.NamedValue{{Ordinal: 1, Value: int64(7)}, {Ordinal: 2, Value: int64(8)}}
	sent := []struct {
		name    string
		sql     string
		session *SessionState
		args    []driver.NamedValue
		backend string
		single  bool // one statement once empty ones are left out: routed as any statement
	}{
		{name: "both on the static route", sql: "INSERT INTO audit_log VALUES (1); DELETE FROM audit_log WHERE id = 2", backend: "cold"},
		{name: "both on the default backend", sql: "SELECT 1; SELECT 2", backend: "hot"},
		{name: "a semicolon in a string is data", sql: "SELECT ';'; SELECT * FROM items WHERE note = 'a;b'", backend: "hot"},
		{name: "a trailing semicolon", sql: "SELECT (1); SELECT 2;", backend: "hot"},
		{name: "the leading hint applies to every statement", sql: "/* shadow */ SELECT * FROM items; SELECT * FROM events", backend: "shadow_hot"},
		{name: "a transaction pins both", sql: "SELECT @@tx_isolation, ?; SELECT * FROM audit_log WHERE id = ?", session: inTx, args: args, backend: "cold"},
		{name: "one statement and a semicolon", sql: "SELECT * FROM audit_log;", backend: "cold", single: true},
		{name: "an empty statement at the end", sql: "SELECT * FROM audit_log;;", backend: "cold", single: true},
		{name: "a comment after the last", sql: "SELECT 1; SELECT 2; -- the end", backend: "hot"},
		{name: "empty statements between", sql: "INSERT INTO audit_log VALUES (1); ; DELETE FROM audit_log WHERE id = 2;;", backend: "cold"},
	}
	for _, tc := range sent {
		t.Run(tc.name, func(t *testing.T) {
			p, err := r.Route(Input{Statement: r.Analyze(tc.sql), Session: tc.session, Args: tc.args, Explain: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Targets) != 1 || p.Targets[0].Backend != tc.backend {
				t.Fatalf("targets = %+v, want one on %s", p.Targets, tc.backend)
			}
			if got := p.Targets[0]; got.SQL != tc.sql || len(got.Args) != len(tc.args) {
				t.Errorf("sent %q with %d arguments, want the application's text with its %d", got.SQL, len(got.Args), len(tc.args))
			}
			prompts := strings.Join(p.Prompts, " | ")
			routedEach := strings.Contains(prompts, "Statement 2: ") && strings.Contains(prompts, "each routed to backend "+tc.backend)
			if routedEach == tc.single {
				t.Errorf("EXPLAIN prompts %q: each statement routed = %v, want %v", prompts, routedEach, !tc.single)
			}
		})
	}

	refused := []struct {
		name, sql, why string
	}{
		{"statements on two backends", "SELECT * FROM items; SELECT * FROM audit_log", "statement 2 of 2 goes to backend cold and statement 1 to backend hot"},
		{"a SET among them", "SELECT 1; SET time_zone = '+08:00'", "statement 2 of 2 is a SET statement"},
		{"transaction control", "BEGIN; INSERT INTO audit_log VALUES (1); COMMIT", "statement 1 of 3 is a BEGIN statement"},
		{"a user variable assigned", "SELECT 2; SELECT @a := 1", "statement 2 of 2 assigns user variables"},
		{"the previous statement's session read", "INSERT INTO items VALUES (1); SELECT LAST_INSERT_ID()", "statement 2 of 2 reads the previous statement's session"},
		{"a temporary table created", "SELECT 1; CREATE TEMPORARY TABLE scratch (a INT)", "statement 2 of 2 is a DDL statement"},
		{"USE", "USE other; SELECT 1", "statement 1 of 2 is a USE statement"},
		{"ALTER TABLE first", "ALTER TABLE items ADD c INT; INSERT INTO audit_log VALUES (1)", "statement 1 of 2 is a DDL statement"},
		{"CREATE TEMPORARY TABLE first", "CREATE TEMPORARY TABLE scratch (a INT); INSERT INTO scratch VALUES (1)", "statement 1 of 2 is a DDL statement"},
		{"CREATE TABLE with a column named event", "CREATE TABLE t (event INT); SELECT 1", "statement 1 of 2 is a DDL statement"},
		{"shadow and production", "SELECT * FROM orders_log WHERE user_id = 0; SELECT * FROM orders_log WHERE user_id = 5", "statement 2 of 2 goes to backend hot and statement 1 to backend shadow_hot (shadow)"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Route(Input{Statement: r.Analyze(tc.sql)})
			if !errors.Is(err, ErrMultiStatement) || !strings.Contains(err.Error(), tc.why) || !strings.Contains(err.Error(), "send the statements one by one") {
				t.Fatalf("err = %v, want ErrMultiStatement: %s", err, tc.why)
			}
			if RefusalReason(err) != "multi_statement" {
				t.Errorf("refusal reason %q", RefusalReason(err))
			}
		})
	}

	// A piece's own refusal keeps its error, named by its place in the text.
	_, err := r.Route(Input{Statement: r.Analyze("SELECT 1; SELECT * FROM items"), Hints: hint.Set{Backend: "nope"}})
	if !errors.Is(err, ErrUnknownBackend) || !strings.HasPrefix(err.Error(), "statement 1 of 2: ") {
		t.Errorf("err = %v, want statement 1's ErrUnknownBackend", err)
	}

	// Compound statements hold semicolons of their own: the server reads them as one.
	for _, sql := range []string{
		"CREATE PROCEDURE p() BEGIN SELECT * FROM items; SELECT * FROM audit_log; END",
		"CREATE OR REPLACE DEFINER = `app`@`%` FUNCTION f() RETURNS INT BEGIN DECLARE x INT; RETURN 1; END",
		"CREATE TRIGGER t BEFORE INSERT ON items FOR EACH ROW BEGIN SET @a = 1; SET @b = 2; END",
		"ALTER EVENT e DO BEGIN DELETE FROM items; DELETE FROM audit_log; END",
		"BEGIN NOT ATOMIC SELECT 1; SELECT 2; END",
		"IF 1 THEN SELECT 1; ELSE SELECT 2; END IF",
		"WHILE 0 DO SELECT 1; END WHILE",
		"lbl: LOOP LEAVE lbl; END LOOP",
		"CASE WHEN 1 THEN SELECT 1; END CASE",
	} {
		if _, err := r.Route(Input{Statement: r.Analyze(sql)}); errors.Is(err, ErrMultiStatement) {
			t.Errorf("%s: refused as a text of several statements: %v", sql, err)
		}
	}
}

// TestSeveralStatementsAreKeyedByText checks that texts of several statements differing only in
// literals do not share an analysis: each statement is routed by its own values.
func TestSeveralStatementsAreKeyedByText(t *testing.T) {
	r := newTestRouter(t, false)
	for _, v := range []string{"0", "5"} {
		sql := "SELECT * FROM orders_log WHERE user_id = " + v + "; SELECT * FROM orders_log WHERE user_id = " + v
		p, err := r.Route(Input{Statement: r.Analyze(sql)})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"0": "shadow_hot", "5": "hot"}[v]
		if got := p.Targets[0]; got.Backend != want || got.SQL != sql {
			t.Errorf("user_id = %s: sent %q to %s, want the text to %s", v, got.SQL, got.Backend, want)
		}
	}
}

// TestSeveralStatementsUnderOneBudget checks that a text whose statements have different query
// levels or time budgets is refused: the text runs under one context, with one budget.
func TestSeveralStatementsUnderOneBudget(t *testing.T) {
	tt := ordersTable()
	tt.Budgets = config.Budgets{L1: 100 * time.Millisecond, L2: 2 * time.Second}
	f := newFixture(t, tt, monthlyTables("2024-07-01", "2025-03-01", "2025-01-01"), "2025-03-15 12:00:00")
	for _, sql := range []string{
		"SELECT * FROM orders WHERE order_time = '2025-03-03'; SELECT SLEEP(5)",
		"SELECT SLEEP(5); SELECT * FROM orders WHERE order_time = '2025-03-03'",
	} {
		if _, err := f.route(sql, nil, Input{}); !errors.Is(err, ErrMultiStatement) || !strings.Contains(err.Error(), "a text runs under one budget") {
			t.Errorf("%s: err = %v, want ErrMultiStatement for two budgets", sql, err)
		}
	}
	sql := "SELECT * FROM orders WHERE order_time = '2025-03-03'; SELECT * FROM orders WHERE order_time = '2025-03-04'"
	p, err := f.route(sql, nil, Input{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Level != hint.L1 || p.Budget != 100*time.Millisecond || len(p.Targets) != 1 || p.Targets[0].Backend != "hot" {
		t.Errorf("level %s, budget %v, targets %+v; want L1, 100ms, one on hot", p.Level, p.Budget, p.Targets)
	}
	// Each statement is sent as time routing rewrote it: the physical table, the clamp of its span.
	const sent = "select * from orders_202503 where order_time = '2025-03-03' and orders_202503.order_time >= '2025-03-01 00:00:00'; " +
		"select * from orders_202503 where order_time = '2025-03-04' and orders_202503.order_time >= '2025-03-01 00:00:00'"
	if tg := p.Targets[0]; tg.SQL != sent || len(tg.Tables) != 1 || tg.Tables[0] != "orders_202503" {
		t.Errorf("sent %q on tables %v, want %q on orders_202503", tg.SQL, tg.Tables, sent)
	}
	// A statement written as is before a rewritten one keeps its text, and each keeps its own
	// arguments, in order (no budgets, one declared level: nothing else sets them apart).
	f = newFixture(t, ordersTable(), monthlyTables("2024-07-01", "2025-03-01", "2025-01-01"), "2025-03-15 12:00:00")
	sql = "SELECT ? FROM dual; SELECT * FROM orders WHERE order_time = '2025-03-04' AND id = ?"
	p, err = f.route(sql, []driver.NamedValue{{Ordinal: 1, Value: int64(7)}, {Ordinal: 2, Value: int64(8)}}, Input{Hints: hint.Set{Level: hint.L1}})
	if err != nil {
		t.Fatal(err)
	}
	const mixed = "SELECT ? FROM dual; select * from orders_202503 where order_time = '2025-03-04' and id = ? and orders_202503.order_time >= '2025-03-01 00:00:00'"
	if tg := p.Targets[0]; tg.SQL != mixed || len(tg.Args) != 2 || tg.Args[0].Value != int64(7) || tg.Args[1].Value != int64(8) {
		t.Errorf("sent %q with %v, want %q with 7 and 8", tg.SQL, tg.Args, mixed)
	}
}

// TestSetAmongSeveralStatementsOnOneBackend: with one backend a text of several statements is
// sent as it is (a plain DSN with multiStatements=true), and a leading SET in it is not recorded
// as session state: its assignment would hold the statements after it, and replaying it on a new
// server session would run them again.
func TestSetAmongSeveralStatementsOnOneBackend(t *testing.T) {
	r, err := New(Config{Settings: &config.Config{Backends: []config.Backend{{Name: "hot", Role: config.RoleHot}}, Default: "hot"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		"SET time_zone = '+08:00'; INSERT INTO items VALUES (1)",
		"SET @a = 1; SET @b = 2",
		"set names utf8mb4; delete from items",
	} {
		st := r.Analyze(sql)
		if st.Kind == KindSet || len(st.Vars) != 0 || st.NextTransaction != "" {
			t.Errorf("%s: analysed as a SET (kind %v, vars %+v): it would be recorded and replayed", sql, st.Kind, st.Vars)
		}
		p, err := r.Route(Input{Statement: st})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if len(p.Targets) != 1 || p.Targets[0].Backend != "hot" || p.Targets[0].SQL != sql {
			t.Errorf("%s: targets %+v, want the text as it is on hot", sql, p.Targets)
		}
	}
	// Alone, with or without its semicolon, a SET is still session state.
	for _, sql := range []string{"SET time_zone = '+08:00';", "SET time_zone = ';'"} {
		if st := r.Analyze(sql); st.Kind != KindSet || len(st.Vars) != 1 || st.Vars[0].Name != "time_zone" {
			t.Errorf("%s: kind %v, vars %+v; want one time_zone assignment", sql, st.Kind, st.Vars)
		}
	}
}

// TestSeveralStatementsCountInTheCacheBytes: the analysis of a text of several statements keeps
// each statement's analysis, so the cache's byte bound counts them: the text weighs at least
// what its statements weigh cached one by one.
func TestSeveralStatementsCountInTheCacheBytes(t *testing.T) {
	tt := ordersTable()
	tables := monthlyTables("2024-07-01", "2025-03-01", "2025-01-01")
	a := "SELECT * FROM orders WHERE order_time >= '2025-02-03' ORDER BY order_time LIMIT 10"
	b := "SELECT user_id, COUNT(*) FROM orders WHERE order_time >= '2024-12-04' GROUP BY user_id"
	alone := newFixture(t, tt, tables, "2025-03-15 12:00:00")
	alone.r.Analyze(a)
	alone.r.Analyze(b)
	together := newFixture(t, tt, tables, "2025-03-15 12:00:00")
	together.r.Analyze(a + "; " + b)
	if one, both := alone.r.CacheStats(), together.r.CacheStats(); one.Entries != 2 || both.Entries != 1 || both.Bytes < one.Bytes {
		t.Errorf("cached one by one: %d entries, %d bytes; as one text: %d entries, %d bytes (want at least as many)", one.Entries, one.Bytes, both.Entries, both.Bytes)
	}
}

func TestSplitScript(t *testing.T) {
	proc := "CREATE PROCEDURE p(IN n INT)\nBEGIN\n  DECLARE i INT DEFAULT 0;\n  IF n > 0 THEN\n    SELECT IF(n > 1, 'many', 'one'), REPEAT('x', n);\n  ELSEIF n < 0 THEN SELECT CASE WHEN n < -1 THEN 'a' ELSE 'b' END;\n  END IF;\n" +
		"  lbl: LOOP\n    SET i = i + 1;\n    IF i > n THEN LEAVE lbl; END IF;\n  END LOOP lbl;\n  WHILE i > 0 DO SET i = i - 1; END WHILE;\n  REPEAT SET i = i + 1; UNTIL i > 3 END REPEAT;\n" +
		"  SELECT * FROM t WHERE id = i FOR UPDATE;\n  CASE n WHEN 1 THEN SELECT 1; ELSE SELECT 2; END CASE;\nEND"
	trigger := "CREATE TRIGGER trg BEFORE INSERT ON t FOR EACH ROW IF NEW.id < 0 THEN SET NEW.id = 0; END IF"
	cases := []struct {
		name, script string
		want         []string
		rest         string
	}{
		{"one per semicolon", "SELECT 1;\nSELECT 2;\n", []string{"SELECT 1", "SELECT 2"}, "\n"},
		{"semicolons in strings, identifiers and comments", "SELECT ';', `a;b` FROM t; -- c;d\nINSERT INTO t VALUES ('x;y') /* ; */;", []string{"SELECT ';', `a;b` FROM t", "-- c;d\nINSERT INTO t VALUES ('x;y') /* ; */"}, ""},
		{"an unfinished statement stays in rest", "SELECT 1; SELECT 'a;", []string{"SELECT 1"}, " SELECT 'a;"},
		{"a comment left open", "SELECT 1; /* SELECT 2;", []string{"SELECT 1"}, " /* SELECT 2;"},
		{"no final semicolon", "SELECT 1; SELECT 2", []string{"SELECT 1"}, " SELECT 2"},
		{"empty statements", "SELECT 1;; ;SELECT 2;", []string{"SELECT 1", "SELECT 2"}, ""},
		{"a stored procedure's body", "DROP PROCEDURE IF EXISTS p;\n" + proc + ";\nCALL p(2);", []string{"DROP PROCEDURE IF EXISTS p", proc, "CALL p(2)"}, ""},
		{"a procedure not yet ended", "SELECT 1;\nCREATE PROCEDURE p() BEGIN SELECT 1;", []string{"SELECT 1"}, "\nCREATE PROCEDURE p() BEGIN SELECT 1;"},
		{"a trigger's body without BEGIN", trigger + "; SELECT 3;", []string{trigger, "SELECT 3"}, ""},
		{"a function of one statement", "CREATE FUNCTION f() RETURNS INT DETERMINISTIC RETURN 1; SELECT f();", []string{"CREATE FUNCTION f() RETURNS INT DETERMINISTIC RETURN 1", "SELECT f()"}, ""},
		{"an anonymous block", "BEGIN NOT ATOMIC SELECT 1; SELECT 2; END; SELECT 3;", []string{"BEGIN NOT ATOMIC SELECT 1; SELECT 2; END", "SELECT 3"}, ""},
		{"a compound IF outside a program", "IF 1 THEN SELECT 1; END IF; SELECT 2;", []string{"IF 1 THEN SELECT 1; END IF", "SELECT 2"}, ""},
		{"transaction statements", "BEGIN; UPDATE t SET a = 1; COMMIT; START TRANSACTION; ROLLBACK;", []string{"BEGIN", "UPDATE t SET a = 1", "COMMIT", "START TRANSACTION", "ROLLBACK"}, ""},
		{"BEGIN WORK", "BEGIN WORK; SELECT 1;", []string{"BEGIN WORK", "SELECT 1"}, ""},
		{"an event", "CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO BEGIN DELETE FROM t; INSERT INTO t VALUES (1); END; SELECT 4;", []string{"CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO BEGIN DELETE FROM t; INSERT INTO t VALUES (1); END", "SELECT 4"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, rest, open := SplitScript(tc.script)
			if strings.Join(got, "\n--\n") != strings.Join(tc.want, "\n--\n") || rest != tc.rest {
				t.Errorf("SplitScript(%q)\n = %q, rest %q\nwant %q, rest %q", tc.script, got, rest, tc.want, tc.rest)
			}
			if wantOpen := strings.Contains(tc.name, "open") || strings.Contains(tc.rest, "'a;"); open != wantOpen {
				t.Errorf("SplitScript(%q): open = %v", tc.script, open)
			}
		})
	}
}

func TestTextOfSeveralStatementsWithAProgram(t *testing.T) {
	// The body's semicolons do not split the text: the definition is one statement of it.
	r := newTestRouter(t, false)
	_, err := r.Route(Input{Statement: r.Analyze("SELECT 1; CREATE PROCEDURE p() BEGIN SELECT 2; SELECT 3; END")})
	if !errors.Is(err, ErrMultiStatement) || !strings.Contains(err.Error(), "statement 2 of 2 is a DDL statement") {
		t.Fatalf("err = %v, want statement 2 of 2, the procedure, refused as DDL", err)
	}
}
