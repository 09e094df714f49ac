package hint

import (
	"errors"
	"strings"
	"testing"
)

// parseCases is the table for ParseLeading; FuzzParseLeading is seeded from it.
var parseCases = []struct {
	name string
	sql  string
	want Set
	rest string
	err  error
	at   int // expected Error.Offset when err != nil; -1 to skip the check
}{
	{name: "no comment", sql: "SELECT 1", rest: "SELECT 1"},
	{name: "empty", sql: "", rest: ""},
	{name: "leading whitespace trimmed", sql: " \t\n SELECT 1", rest: "SELECT 1"},
	{name: "bare shadow", sql: "/* shadow */ SELECT 1", want: Set{Shadow: ShadowOn}, rest: "SELECT 1"},
	{name: "bare shadow upper case no spaces", sql: "/*SHADOW*/INSERT INTO t VALUES (1)",
		want: Set{Shadow: ShadowOn}, rest: "INSERT INTO t VALUES (1)"},
	{name: "bare cold_query", sql: "/* cold_query */ SELECT * FROM orders_202409 WHERE order_time >= '2024-09-01'",
		want: Set{ColdQuery: true}, rest: "SELECT * FROM orders_202409 WHERE order_time >= '2024-09-01'"},
	{name: "comment only", sql: "  /* shadow */  ", want: Set{Shadow: ShadowOn}, rest: ""},
	{name: "obroute all keys",
		sql:  "/*+ OBROUTE(shadow=true, query_level=L2, cold_query=true, backend=cold-replica) */ SELECT 1",
		want: Set{Shadow: ShadowOn, Level: L2, ColdQuery: true, Backend: "cold-replica"}, rest: "SELECT 1"},
	{name: "obroute case and spacing", sql: "/*+obroute ( Shadow = FALSE ,QUERY_LEVEL=l3 )*/\nDELETE FROM t",
		want: Set{Shadow: ShadowOff, Level: L3}, rest: "DELETE FROM t"},
	{name: "obroute level digit, backend keeps case", sql: "/*+ OBROUTE(query_level=1, BACKEND=Hot_1) */ SELECT 1",
		want: Set{Level: L1, Backend: "Hot_1"}, rest: "SELECT 1"},
	{name: "obroute cold_query false declares nothing", sql: "/*+ OBROUTE(cold_query=false) */ SELECT 1",
		want: Set{}, rest: "SELECT 1"},
	{name: "shardingsphere shadow", sql: "/* SHARDINGSPHERE_HINT: SHADOW=true */ INSERT INTO t_user VALUES (1)",
		want: Set{Shadow: ShadowOn}, rest: "INSERT INTO t_user VALUES (1)"},
	{name: "shardingsphere two keys", sql: "/*shardingsphere_hint:shadow=false, DATA_SOURCE_NAME=ds_1*/ SELECT 1",
		want: Set{Shadow: ShadowOff, Backend: "ds_1"}, rest: "SELECT 1"},

	// Comments that are not hints stay in rest.
	{name: "plain comment kept", sql: "/* request_id=42 */ SELECT 1", rest: "/* request_id=42 */ SELECT 1"},
	{name: "line comment kept", sql: "-- note\nSELECT 1", rest: "-- note\nSELECT 1"},
	{name: "hash comment is never a hint", sql: "# shadow\nSELECT 1", rest: "# shadow\nSELECT 1"},
	{name: "dash comment is never a hint", sql: "-- /* shadow */\nSELECT 1", rest: "-- /* shadow */\nSELECT 1"},
	{name: "empty block comment kept", sql: "/**/ /* shadow */ SELECT 1", want: Set{Shadow: ShadowOn}, rest: "/**/ SELECT 1"},
	{name: "hint after kept comment removed", sql: "/* request_id=42 */ /* shadow */ SELECT 1",
		want: Set{Shadow: ShadowOn}, rest: "/* request_id=42 */ SELECT 1"},
	{name: "optimizer hint after hint kept", sql: "/* shadow */ /*+ MAX_EXECUTION_TIME(100) */ SELECT 1",
		want: Set{Shadow: ShadowOn}, rest: "/*+ MAX_EXECUTION_TIME(100) */ SELECT 1"},
	{name: "optimizer hint before hint kept, scanning continues", sql: "/*+ MAX_EXECUTION_TIME(100) */ /* shadow */ SELECT 1",
		want: Set{Shadow: ShadowOn}, rest: "/*+ MAX_EXECUTION_TIME(100) */ SELECT 1"},
	{name: "mixed comments", sql: "/* a */\n-- b\n/*+ OBROUTE(shadow=true) */\n# c\nSELECT 1",
		want: Set{Shadow: ShadowOn}, rest: "/* a */\n-- b\n# c\nSELECT 1"},
	{name: "not our optimizer hint", sql: "/*+ OBROUTER(x) */ SELECT 1", rest: "/*+ OBROUTER(x) */ SELECT 1"},
	{name: "note mentioning shadow", sql: "/* shadow copy of prod */ SELECT 1", rest: "/* shadow copy of prod */ SELECT 1"},
	{name: "executable comment stops scanning", sql: "/*!40101 SET NAMES utf8 */ /* shadow */",
		rest: "/*!40101 SET NAMES utf8 */ /* shadow */"},
	{name: "mariadb executable comment stops scanning", sql: "/*M!100101 SET x=1 */ /* shadow */ SELECT 1",
		rest: "/*M!100101 SET x=1 */ /* shadow */ SELECT 1"},
	{name: "unterminated comment left for the server", sql: "/* shadow", rest: "/* shadow"},
	{name: "unterminated after hint", sql: "/* cold_query */ /* shadow", want: Set{ColdQuery: true}, rest: "/* shadow"},
	{name: "double dash without space is text", sql: "--/* shadow */ SELECT 1", rest: "--/* shadow */ SELECT 1"},
	{name: "double dash tab is comment", sql: "--\t/* shadow */\nSELECT 1", rest: "--\t/* shadow */\nSELECT 1"},

	// Hint-looking text that does not lead the statement is data.
	{name: "hint in string literal", sql: "SELECT '/* shadow */' FROM t", rest: "SELECT '/* shadow */' FROM t"},
	{name: "trailing comment", sql: "SELECT 1 /* shadow */", rest: "SELECT 1 /* shadow */"},
	{name: "obroute after keyword", sql: "SELECT /*+ OBROUTE(shadow=true) */ 1", rest: "SELECT /*+ OBROUTE(shadow=true) */ 1"},
	{name: "malformed hint after keyword is data", sql: "SELECT /*+ OBROUTE(shadow=yes) */ 1", rest: "SELECT /*+ OBROUTE(shadow=yes) */ 1"},

	// Repetition and conflicts.
	{name: "same hint twice", sql: "/* shadow */ /*+ OBROUTE(shadow=true) */ SELECT 1", want: Set{Shadow: ShadowOn}, rest: "SELECT 1"},
	{name: "shadow conflict", sql: "/* shadow */ /*+ OBROUTE(shadow=false) */ SELECT 1", err: ErrHintConflict, at: 25},
	{name: "shadow conflict across forms", sql: "/* SHARDINGSPHERE_HINT: SHADOW=false */ /* shadow */ SELECT 1", err: ErrHintConflict, at: 43},
	{name: "level conflict", sql: "/*+ OBROUTE(query_level=L1) */ /*+ OBROUTE(query_level=L2) */ SELECT 1", err: ErrHintConflict, at: 43},
	{name: "level same written differently", sql: "/*+ OBROUTE(query_level=L2, query_level=2) */ SELECT 1", want: Set{Level: L2}, rest: "SELECT 1"},
	{name: "cold_query conflict", sql: "/* cold_query */ /*+ OBROUTE(cold_query=false) */ SELECT 1", err: ErrHintConflict, at: 29},
	{name: "backend conflict", sql: "/*+ OBROUTE(backend=a, backend=b) */ SELECT 1", err: ErrHintConflict, at: 23},

	// Malformed and unknown hints.
	{name: "bad bool", sql: "/*+ OBROUTE(shadow=yes) */ SELECT 1", err: ErrMalformedHint, at: 12},
	{name: "bad level", sql: "/*+ OBROUTE(query_level=L4) */ SELECT 1", err: ErrMalformedHint, at: 12},
	{name: "unknown key", sql: "/*+ OBROUTE(level=L2) */ SELECT 1", err: ErrUnknownHint, at: 12},
	{name: "empty list", sql: "/*+ OBROUTE() */ SELECT 1", err: ErrMalformedHint, at: 12},
	{name: "trailing comma", sql: "/*+ OBROUTE(shadow=true,) */ SELECT 1", err: ErrMalformedHint, at: 24},
	{name: "no value", sql: "/*+ OBROUTE(shadow) */ SELECT 1", err: ErrMalformedHint, at: 12},
	{name: "no closing parenthesis", sql: "/*+ OBROUTE(shadow=true */ SELECT 1", err: ErrMalformedHint, at: 4},
	{name: "no parenthesis", sql: "/*+ OBROUTE shadow=true */ SELECT 1", err: ErrMalformedHint, at: 4},
	{name: "obroute not alone", sql: "/*+ OBROUTE(shadow=true) NO_INDEX(t) */ SELECT 1", err: ErrMalformedHint, at: 4},
	{name: "obroute not first", sql: "/*+ NO_INDEX(t) obroute(shadow=true) */ SELECT 1", err: ErrMalformedHint, at: 4},
	{name: "quoted backend", sql: "/*+ OBROUTE(backend='cold') */ SELECT 1", err: ErrMalformedHint, at: 12},
	{name: "empty backend", sql: "/*+ OBROUTE(backend=) */ SELECT 1", err: ErrMalformedHint, at: 12},
	{name: "bare hint with value", sql: "/* shadow: true */ SELECT 1", err: ErrMalformedHint, at: 3},
	{name: "bare cold_query with value", sql: "/* cold_query=1 */ SELECT 1", err: ErrMalformedHint, at: 3},
	{name: "shardingsphere unsupported key", sql: "/* SHARDINGSPHERE_HINT: WRITE_ROUTE_ONLY=true */ SELECT 1", err: ErrUnknownHint, at: 24},
	{name: "shardingsphere table sharding key", sql: "/* SHARDINGSPHERE_HINT: SHADOW=true, t_order.SHARDING_DATABASE_VALUE=10 */ SELECT 1",
		err: ErrUnknownHint, at: 37},
	{name: "shardingsphere missing colon", sql: "/* SHARDINGSPHERE_HINT SHADOW=true */ SELECT 1", err: ErrMalformedHint, at: 3},
	{name: "error after kept comment", sql: "/* a */ /*+ OBROUTE(shadow=maybe) */ SELECT 1", err: ErrMalformedHint, at: 20},
}

func TestParseLeading(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			got, rest, err := ParseLeading(tc.sql)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("ParseLeading(%q) error = %v, want %v", tc.sql, err, tc.err)
				}
				var he *Error
				if !errors.As(err, &he) {
					t.Fatalf("error %v is not a *hint.Error", err)
				}
				if he.Offset != tc.at {
					t.Errorf("Offset = %d, want %d (%v)", he.Offset, tc.at, err)
				}
				if !strings.HasPrefix(tc.sql[he.Offset:], he.Hint) {
					t.Errorf("Hint %q is not the text at byte %d of %q", he.Hint, he.Offset, tc.sql)
				}
				if !got.IsZero() || rest != tc.sql {
					t.Errorf("on error got (%v, %q), want zero hints and the input", got, rest)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseLeading(%q) error: %v", tc.sql, err)
			}
			if got != tc.want {
				t.Errorf("hints = %+v, want %+v", got, tc.want)
			}
			if rest != tc.rest {
				t.Errorf("rest = %q, want %q", rest, tc.rest)
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	_, _, err := ParseLeading("/*+ OBROUTE(shadow=yes) */ SELECT 1")
	want := `hint: malformed hint "shadow=yes" at byte 12 of the statement: shadow takes true or false, e.g. shadow=true`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
	_, _, err = ParseLeading("/* SHARDINGSPHERE_HINT: WRITE_ROUTE_ONLY=true */ SELECT 1")
	if err == nil || !strings.Contains(err.Error(), "obroute does not support ShardingSphere hint key WRITE_ROUTE_ONLY") {
		t.Errorf("error = %v, want it to say the ShardingSphere key is not supported", err)
	}
	long := "/*+ OBROUTE(backend=" + strings.Repeat("x", 200) + "'" + ") */"
	_, _, err = ParseLeading(long)
	if err == nil || strings.Contains(err.Error(), strings.Repeat("x", 100)) {
		t.Errorf("error = %v, want the offending text shortened", err)
	}
}

func TestStatementStart(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want int
	}{
		{"", 0},
		{"SELECT 1", 0},
		{"  SELECT 1", 2},
		{"/* a */ SELECT 1", 8},
		{"/*+ MAX_EXECUTION_TIME(1) */SELECT 1", 28},
		{"-- a\n# b\n/* c */\tSELECT 1", 17},
		{"/* a */ /*!40101 SET x=1 */", 8},
		{"/*M!100101 SET x=1 */", 0},
		{"/* a */ /* unterminated", 8},
		{"--x", 0},
		{"--", 2},
		{"/* only */ -- comments\n", 23},
		{"SELECT '/* x */'", 0},
	} {
		if got := StatementStart(tc.sql); got != tc.want {
			t.Errorf("StatementStart(%q) = %d, want %d", tc.sql, got, tc.want)
		}
	}
}

func TestParseLeadingAllocations(t *testing.T) {
	for _, sql := range []string{
		"SELECT * FROM orders WHERE id = ?",
		"/* shadow */ /*+ OBROUTE(query_level=L2, backend=cold) */ SELECT 1",
		"/* request_id=42 */ SELECT 1",
	} {
		if n := testing.AllocsPerRun(100, func() { _, _, _ = ParseLeading(sql) }); n != 0 {
			t.Errorf("ParseLeading(%q) allocates %v times, want 0", sql, n)
		}
		if n := testing.AllocsPerRun(100, func() { _ = StatementStart(sql) }); n != 0 {
			t.Errorf("StatementStart(%q) allocates %v times, want 0", sql, n)
		}
	}
}

func BenchmarkParseLeading(b *testing.B) {
	for _, bc := range []struct{ name, sql string }{
		{"no comment", "SELECT * FROM orders WHERE order_time >= ? AND order_time < ?"},
		{"obroute", "/*+ OBROUTE(shadow=true, query_level=L2) */ SELECT * FROM orders WHERE order_time >= ?"},
		{"kept comment then hint", "/* request_id=42 */ /* shadow */ SELECT * FROM orders WHERE order_time >= ?"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _, _ = ParseLeading(bc.sql)
			}
		})
	}
}

func TestParseLeadingLongerWordThenObroute(t *testing.T) {
	_, _, err := ParseLeading("/*+ OBROUTER(x) OBROUTE(shadow=true) */ SELECT 1")
	if !errors.Is(err, ErrMalformedHint) {
		t.Errorf("error = %v, want ErrMalformedHint: an OBROUTE that is not alone must not be ignored", err)
	}
}
