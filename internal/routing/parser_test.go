package routing

import (
	"errors"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// The parser reads a few things differently from the server. A statement rewritten for its
// physical tables either keeps their meaning or is refused (ErrUnreadable), never changed.
func TestRewriteKeepsWhatTheParserMisreads(t *testing.T) {
	f := standard(t)
	const where = "where order_time >= '2025-03-02'"
	// The literals compared with columns are sent as the application wrote them (they are
	// arguments of the statement's shared analysis, see normalize.go); the others are printed.
	kept := []struct{ sql, want string }{
		// The parser drops the backslash of \% and \_; the server keeps it.
		{"select id from orders " + where + ` and note like 'a\%b\_c'`, `note like 'a\%b\_c'`},
		{`select id, 'a\%b' from orders ` + where, `select id, 'a\\%b' from orders_202503`},
		// Typed literals stay typed: as strings they would compare as strings.
		{"select id, TIMESTAMP '2025-03-02 10:00:00' = '2025-03-02 10:00:00' from orders where order_time >= TIMESTAMP '2025-03-02 00:00:00'",
			"order_time >= timestamp '2025-03-02 00:00:00'"},
		{"select id from orders " + where + " and created = DATE '2025-03-02'", "created = date '2025-03-02'"},
		{"select id from orders " + where + ` and note = "it's"`, `note = "it's"`},
		{"select id, \"it's\" from orders " + where, `select id, 'it\'s' from orders_202503`},
		{"select id from orders " + where + " and note = 'a' 'b'", "note = 'a' 'b'"},
		{"select id, 'a' 'b' from orders " + where, "select id, 'ab' from orders_202503"},
		{"select `select`, `a b` from orders " + where, "select `select`, `a b` from orders_202503"},
		// Executable comments as MariaDB reads them: /*M! … */ runs, /*!50700 … */ does not.
		{"select id /*M! , 2 */ /*!50701 , 3 */ from orders " + where, "select id, 2 from orders_202503"},
	}
	for _, c := range kept {
		p, err := f.route(c.sql, nil, Input{})
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if !strings.Contains(p.Targets[0].SQL, c.want) {
			t.Errorf("%s\n sent %s\nwant it to contain %s", c.sql, p.Targets[0].SQL, c.want)
		}
	}
	refused := []struct{ sql, says string }{
		{"select id, N'abc' from orders " + where, "N'abc'"},
		{"select id, @'v' from orders " + where, "@'v'"},
		{"select id, `a@b` from orders " + where, "@b"},
		{"select id, 0b101 from orders " + where, "0b101"},
		{"select id /*M!100600 , 2 */ from orders " + where, "/*M!100600"},
	}
	for _, c := range refused {
		_, err := f.route(c.sql, nil, Input{})
		if !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want ErrUnreadable naming %s", c.sql, err, c.says)
		}
	}
	// The range sees the typed literal's value.
	p, err := f.route("select id from orders where order_time >= TIMESTAMP '2024-12-31 00:00:00'", nil, Input{})
	if err != nil || p.Class != ClassSplit {
		t.Errorf("typed literal range: %v %+v, want a split", err, p)
	}
}

// SET assignments are kept as written, so that their replay on another server session means
// the same; SET statements that are not session state are not recorded.
func TestSetAssignmentsAsWritten(t *testing.T) {
	r := newTestRouter(t, false)
	cases := []struct {
		sql    string
		kind   Kind
		global bool
		vars   []SessionVar
	}{
		{"SET NAMES utf8mb4 COLLATE utf8mb4_bin", KindSet, false, []SessionVar{{Name: "names", Assignment: "NAMES utf8mb4 COLLATE utf8mb4_bin"}}},
		{"set names 'latin1'", KindSet, false, []SessionVar{{Name: "names", Assignment: "NAMES 'latin1'"}}},
		{"SET CHARACTER SET latin1", KindSet, false, []SessionVar{{Name: "names", Assignment: "CHARACTER SET latin1"}}},
		{`SET @x = 'a\%', @@session.sql_mode = 'ANSI_QUOTES'`, KindSet, false, []SessionVar{
			// A user variable's string is read back (its character set is the connection's).
			{Name: "@x", Assignment: `@x = 'a\%'`}, {Name: "sql_mode", Assignment: "@@session.sql_mode = 'ANSI_QUOTES'", Value: "ansi_quotes"}}},
		// Strings that sql_mode reads in more than one way are read back.
		{`SET time_zone = "+01:00", lc_time_names = 'a\\b'`, KindSet, false, []SessionVar{
			{Name: "time_zone", Assignment: `time_zone = "+01:00"`}, {Name: "lc_time_names", Assignment: `lc_time_names = 'a\\b'`}}},
		{"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED, READ ONLY", KindSet, false, []SessionVar{
			{Name: "tx_isolation", Assignment: "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED, READ ONLY"},
			{Name: "tx_read_only", Assignment: "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED, READ ONLY"}}},
		{"SET LOCAL TRANSACTION READ WRITE", KindSet, false, []SessionVar{{Name: "tx_read_only", Assignment: "SET LOCAL TRANSACTION READ WRITE"}}},
		{"SET @d := DATE '2025-01-01'", KindSet, false, []SessionVar{{Name: "@d", Assignment: "@d := DATE '2025-01-01'"}}},
		{"SET @'q' = 1, @`w x` = 2", KindSet, false, []SessionVar{{Name: "@q", Assignment: "@'q' = 1", Value: "1"}, {Name: "@w x", Assignment: "@`w x` = 2", Value: "2"}}},
		{"SET SESSION a = 1, GLOBAL b = 2, c = 3, @u = 4, SESSION d = DEFAULT", KindSet, true, []SessionVar{
			{Name: "a", Assignment: "SESSION a = 1", Value: "1"}, {Name: "@u", Assignment: "@u = 4", Value: "4"}, {Name: "d", Assignment: "SESSION d = DEFAULT"}}},
		{"SET autocommit = TRUE, sql_log_bin = OFF", KindSet, false, []SessionVar{
			{Name: "autocommit", Assignment: "autocommit = TRUE", Value: "1"}, {Name: "sql_log_bin", Assignment: "sql_log_bin = OFF", Value: "off"}}},
		{"SET @@global.max_connections = 10", KindSet, true, nil},
		{"SET PASSWORD = PASSWORD('x')", KindOther, false, nil},
		{"SET ROLE admin", KindOther, false, nil},
		{"SET STATEMENT max_statement_time = 1 FOR SELECT 1", KindOther, false, nil},
		// Every spelling of a system variable the server reads.
		{"SET @@session . time_zone = '+01:00', @@LOCAL. sql_mode = ''", KindSet, false, []SessionVar{
			{Name: "time_zone", Assignment: "@@session . time_zone = '+01:00'", Value: "+01:00"}, {Name: "sql_mode", Assignment: "@@LOCAL. sql_mode = ''"}}},
		{"SET @@`Time_Zone` = '+01:00', @@session.`sql_mode` = '', @@session .'lc_time_names' = 'de_DE'", KindSet, false, []SessionVar{
			{Name: "time_zone", Assignment: "@@`Time_Zone` = '+01:00'", Value: "+01:00"}, {Name: "sql_mode", Assignment: "@@session.`sql_mode` = ''"},
			{Name: "lc_time_names", Assignment: "@@session .'lc_time_names' = 'de_DE'", Value: "de_de"}}},
		{"SET @@global . `max_connections` = 10, @a.b = 1", KindSet, true, []SessionVar{{Name: "@a.b", Assignment: "@a.b = 1", Value: "1"}}},
		// Spellings the server refuses, and a structured (key cache) variable: not read.
		{"SET @@`session`.`time_zone` = '+01:00'", KindOther, false, nil},
		{"SET @@'time_zone' = '+01:00'", KindOther, false, nil},
		{"SET SESSION @@time_zone = '+01:00'", KindOther, false, nil},
		{"SET @@kc.key_buffer_size = 0", KindOther, false, nil},
		// SET STATEMENT … FOR SET: the inner SET's variables, read back.
		{"SET STATEMENT sql_mode = '' FOR SET time_zone = '+01:00', @v = 1", KindSet, false, []SessionVar{
			{Name: "time_zone", Assignment: "time_zone = '+01:00'"}, {Name: "@v", Assignment: "@v = 1"}}},
		{"SET STATEMENT sql_mode = '' FOR SET TRANSACTION READ ONLY", KindOther, false, nil},
	}
	for _, c := range cases {
		st := r.Analyze(c.sql)
		if st.Kind != c.kind || st.GlobalSet != c.global || !equalVars(st.Vars, c.vars) {
			t.Errorf("%s:\n got %s global=%v %+v\nwant %s global=%v %+v", c.sql, st.Kind, st.GlobalSet, st.Vars, c.kind, c.global, c.vars)
		}
	}
	// What obroute cannot read as session state, nor is an account's, pins the client session.
	for sql, want := range map[string]bool{"SET ROLE admin": true, "SET @@kc.key_buffer_size = 0": true, "SET PASSWORD = PASSWORD('x')": false,
		"SET DEFAULT ROLE admin": false, "SET STATEMENT sql_mode = '' FOR SET TRANSACTION READ ONLY": true, "SET time_zone = '+01:00'": false} {
		if st := r.Analyze(sql); st.Invisible != want {
			t.Errorf("%s: Invisible = %v, want %v", sql, st.Invisible, want)
		}
	}
}

func equalVars(a, b []SessionVar) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The lexer counts placeholders as the server does: not in strings, comments or quoted names,
// but in executable comments.
func TestCountParams(t *testing.T) {
	for sql, want := range map[string]int{
		"SELECT ? FROM t WHERE a = ? AND b = '?'":          2,
		"SELECT ? /* ? */ -- ?\n, `?` # ?\n FROM t":        1,
		"SELECT 1 /*!50000 + ? */, \"?\", 'it''s ?', ?":    2,
		`SELECT 'a\'?', ?`:                                 1,
		"INSERT INTO t VALUES (?, ?) RETURNING id, ? AS x": 3,
	} {
		toks, _ := lex(sql)
		if got := countParams(toks); got != want {
			t.Errorf("%s: %d placeholders, want %d", sql, got, want)
		}
	}
}

// "--" before a character that is not a blank or a control character is two minus signs to
// MariaDB ("SELECT 5 --1" is 6) and was a comment to the parser: both read it as MariaDB does.
// "--" before DEL starts a comment.
func TestParseDoubleDashBeforeADigitIsTwoMinusSigns(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{"select 5 --1", "select 5 - -1"},
		{"select 5 --1 + 2, 3", "select 5 - -1 + 2, 3"},
		{"select 5 ---1", "select 5 - 1"}, // 5 - -(-1): the parser drops the two signs that cancel
		{"select 5 -- 1", "select 5"},
		{"select 5 --\x7f 1", "select 5"},
		{"select 5 --\t1\n, 2", "select 5, 2"},
	} {
		p, err := parse(tc.sql, nil)
		if err != nil {
			t.Errorf("%q: %v", tc.sql, err)
			continue
		}
		if got := sqlparser.String(p.ast); got != tc.want {
			t.Errorf("%q is read as %q, want %q", tc.sql, got, tc.want)
		}
	}
}
