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
	{name: "shardingsphere alias prefix and key", sql: "/* ShardingSphere hint: shadow=TRUE, dataSourceName=ds_1 */ SELECT 1",
		want: Set{Shadow: ShadowOn, Backend: "ds_1"}, rest: "SELECT 1"},
	{name: "shardingsphere newlines and spacing", sql: "/*\n  SHARDINGSPHERE_HINT :\n\tSHADOW = true ,\n DATA_SOURCE_NAME=ds_1\n*/\nSELECT 1",
		want: Set{Shadow: ShadowOn, Backend: "ds_1"}, rest: "SELECT 1"},
	{name: "bare shadow on its own lines", sql: "/*\n\tShadow\n*/\nSELECT 1", want: Set{Shadow: ShadowOn}, rest: "SELECT 1"},

	// Optimizer-hint comments, read as MariaDB reads them.
	{name: "obroute after other hints", sql: "/*+ MAX_EXECUTION_TIME(1000) OBROUTE (shadow=true) */ INSERT INTO t VALUES (1)",
		want: Set{Shadow: ShadowOn}, rest: "/*+ MAX_EXECUTION_TIME(1000) */ INSERT INTO t VALUES (1)"},
	{name: "obroute before other hints", sql: "/*+ obroute(shadow=true) NO_INDEX(t idx) */ SELECT 1",
		want: Set{Shadow: ShadowOn}, rest: "/*+ NO_INDEX(t idx) */ SELECT 1"},
	{name: "obroute between hints on several lines", sql: "/*+\n  BKA(t1)\n\tObRoute\n(\n shadow = TRUE ,\n query_level = l2\n)\n  NO_ICP(t2@qb1 `i x`)\n*/ SELECT 1",
		want: Set{Shadow: ShadowOn, Level: L2}, rest: "/*+\n  BKA(t1)\n\tNO_ICP(t2@qb1 `i x`)\n*/ SELECT 1"},
	{name: "two obroute hints in one comment", sql: "/*+ OBROUTE(shadow=true) SET_VAR(sql_mode='a,b)') OBROUTE(cold_query=true) */ SELECT 1",
		want: Set{Shadow: ShadowOn, ColdQuery: true}, rest: "/*+ SET_VAR(sql_mode='a,b)') */ SELECT 1"},
	{name: "obroute alone among spaces", sql: "/*+\tOBROUTE(shadow=true)\n*/SELECT 1", want: Set{Shadow: ShadowOn}, rest: "SELECT 1"},
	{name: "obroute among hints after a kept comment", sql: "/* a */ /*+ NO_ICP(t) OBROUTE(shadow=true) */ SELECT 1",
		want: Set{Shadow: ShadowOn}, rest: "/* a */ /*+ NO_ICP(t) */ SELECT 1"},

	// Comments that are not hints stay in rest.
	{name: "plain comment kept", sql: "/* request_id=42 */ SELECT 1", rest: "/* request_id=42 */ SELECT 1"},
	{name: "line comment kept", sql: "-- note\nSELECT 1", rest: "-- note\nSELECT 1"},
	{name: "line comment note kept", sql: "# shadowed by nothing\nSELECT 1", rest: "# shadowed by nothing\nSELECT 1"},
	{name: "empty block comment kept", sql: "/**/ /* shadow */ SELECT 1", want: Set{Shadow: ShadowOn}, rest: "/**/ SELECT 1"},
	{name: "hint after kept comment removed", sql: "/* request_id=42 */ /* shadow */ SELECT 1",
		want: Set{Shadow: ShadowOn}, rest: "/* request_id=42 */ SELECT 1"},
	{name: "optimizer hint after hint kept", sql: "/* shadow */ /*+ MAX_EXECUTION_TIME(100) */ SELECT 1",
		want: Set{Shadow: ShadowOn}, rest: "/*+ MAX_EXECUTION_TIME(100) */ SELECT 1"},
	{name: "optimizer hint before hint kept, scanning continues", sql: "/*+ MAX_EXECUTION_TIME(100) */ /* shadow */ SELECT 1",
		want: Set{Shadow: ShadowOn}, rest: "/*+ MAX_EXECUTION_TIME(100) */ SELECT 1"},
	{name: "mixed comments", sql: "/* a */\n-- b\n/*+ OBROUTE(shadow=true) */\n# c\nSELECT 1",
		want: Set{Shadow: ShadowOn}, rest: "/* a */\n-- b\n# c\nSELECT 1"},
	{name: "note with shadow later", sql: "/* copy of prod: shadow */ SELECT 1", err: ErrMalformedHint, at: 3},
	{name: "shadow after a word", sql: "/* note: shadow */ SELECT 1", err: ErrMalformedHint, at: 3},
	{name: "cold_query after a word", sql: "/* note cold_query */ SELECT 1", err: ErrMalformedHint, at: 3},
	{name: "shadow after a word in the text", sql: "SELECT 1 /* note: shadow */", err: ErrMalformedHint, at: 9},
	{name: "long s", sql: "/* \u017fhadow */ SELECT 1", err: ErrMalformedHint, at: 0},
	{name: "long s in ShardingSphere's", sql: "/* \u017fHARDINGSPHERE_HINT: SHADOW=true */ SELECT 1", err: ErrMalformedHint, at: 3},
	{name: "long s in ShardingSphere's key", sql: "/* SHARDINGSPHERE_HINT: \u017fHADOW=true */ SELECT 1", err: ErrUnknownHint, at: 24},
	{name: "dotless i in ShardingSphere's", sql: "/* Shard\u0131ngSphere h\u0131nt: shadow=true */ SELECT 1", err: ErrMalformedHint, at: 3},
	{name: "long s in ShardingSphere's, no other hint word", sql: "/* \u017fHARDINGSPHERE_HINT: DATA_SOURCE_NAME=cold */ SELECT 1", err: ErrMalformedHint, at: 0},
	{name: "kelvin sign in a key", sql: "/*+ OBROUTE(bac\u212aend=cold) */ SELECT 1", err: ErrUnknownHint, at: 12},
	{name: "long s in the text", sql: "/* note */ SELECT 1 /* \u017fhadow */", err: ErrMalformedHint, at: 20},
	{name: "long s in a string", sql: "/* shadow */ SELECT '\u017fhadow'", want: Set{Shadow: ShadowOn}, rest: "SELECT '\u017fhadow'"},
	{name: "long s in a note", sql: "/* \u017fome note */ SELECT 1", rest: "/* \u017fome note */ SELECT 1"},
	{name: "note with a longer word", sql: "/* shadowed rows */ SELECT 1", rest: "/* shadowed rows */ SELECT 1"},
	{name: "note naming obroute later", sql: "/* sent through obroute */ SELECT 1", err: ErrMalformedHint, at: 3},
	{name: "unreadable optimizer hints of the server's", sql: "/*+ BKA(t1), NO_BKA(t2) */ SELECT 1", rest: "/*+ BKA(t1), NO_BKA(t2) */ SELECT 1"},
	{name: "optimizer hint argument named obroute", sql: "/*+ NO_INDEX(obroute idx) */ SELECT 1", err: ErrMalformedHint, at: 4},
	{name: "executable comment stops scanning", sql: "/*!40101 SET NAMES utf8 */ /* request */",
		rest: "/*!40101 SET NAMES utf8 */ /* request */"},
	{name: "hint after an executable comment", sql: "/*!40101 SET NAMES utf8 */ /* shadow */", err: ErrMalformedHint, at: 27},
	{name: "mariadb hint after an executable comment", sql: "/*M!100101 SET x=1 */ /* shadow */ SELECT 1", err: ErrMalformedHint, at: 22},
	{name: "hint inside an executable comment", sql: "/*! /*+ OBROUTE(shadow=true) */ */ SELECT 1", err: ErrMalformedHint, at: 0},
	{name: "hint inside a versioned executable comment", sql: "/*!999999 /* shadow */ */ SELECT 1", err: ErrMalformedHint, at: 10},
	{name: "versioned executable comment naming a hint", sql: "/*!999999 shadow */ SELECT 1", err: ErrMalformedHint, at: 0},
	{name: "optimizer hint written as executable comment", sql: "/*!INSERT*/ /*+ OBROUTE(shadow=true) */ INTO t VALUES (1)", err: ErrMalformedHint, at: 12},
	{name: "unterminated comment left for the server", sql: "/* shadow", rest: "/* shadow"},
	{name: "unterminated after hint", sql: "/* cold_query */ /* shadow", want: Set{ColdQuery: true}, rest: "/* shadow"},
	{name: "double dash without space is text", sql: "--/* note */ SELECT 1", rest: "--/* note */ SELECT 1"},
	{name: "hint after double dash without space", sql: "--/* shadow */ SELECT 1", err: ErrMalformedHint, at: 2},
	{name: "double dash tab is comment", sql: "--\tnote\nSELECT 1", rest: "--\tnote\nSELECT 1"},

	// Comments whose extent or first word the reader must read as MariaDB does.
	{name: "double dash control character is comment", sql: "--\x01note\n/* shadow */ SELECT 1", want: Set{Shadow: ShadowOn}, rest: "--\x01note\nSELECT 1"},
	{name: "hint in a double dash control character comment", sql: "--\x01/* shadow */\nINSERT INTO t VALUES (1)", err: ErrMalformedHint, at: 2},
	{name: "hint in a double dash control character comment to the end", sql: "--\x01/* shadow */ INSERT INTO t VALUES (1)", err: ErrMalformedHint, at: 2},
	{name: "hint in a double dash delete character comment", sql: "--\x7fshadow\nSELECT 1", err: ErrMalformedHint, at: 2},
	{name: "hint in a hash comment after a control character", sql: "#\x01shadow\nSELECT 1", err: ErrMalformedHint, at: 1},
	{name: "hint later in a line comment", sql: "-- note /* shadow */\nSELECT 1", err: ErrMalformedHint, at: 3},
	{name: "line comment note with a block comment", sql: "-- note /* request_id=1 */\nSELECT 1", rest: "-- note /* request_id=1 */\nSELECT 1"},
	{name: "NUL ends a line comment", sql: "-- note\x00/* shadow */\nINSERT INTO t VALUES (1)", err: ErrMalformedHint, at: 8},
	{name: "hint in a double-star comment", sql: "/** shadow */ INSERT INTO t VALUES (1)", err: ErrMalformedHint, at: 2},
	{name: "hint in a double-star comment without spaces", sql: "/**shadow*/ SELECT 1", err: ErrMalformedHint, at: 2},
	{name: "hint after a control character", sql: "/*\x01shadow*/ SELECT 1", err: ErrMalformedHint, at: 2},
	{name: "hint between stars", sql: "/* *shadow* */ SELECT 1", err: ErrMalformedHint, at: 3},
	{name: "cold_query between dashes", sql: "/*-cold_query-*/ SELECT 1", err: ErrMalformedHint, at: 2},
	{name: "double-star note kept", sql: "/** note */ /* shadow */ SELECT 1", want: Set{Shadow: ShadowOn}, rest: "/** note */ SELECT 1"},
	{name: "double-star hint after keyword", sql: "INSERT /** shadow */ INTO t VALUES (1)", err: ErrMalformedHint, at: 7},
	{name: "trailing double-star hint", sql: "SELECT 1 /**shadow*/", err: ErrMalformedHint, at: 9},
	{name: "trailing control character dash comment", sql: "SELECT 1 --\x01 shadow", err: ErrMalformedHint, at: 9},

	// Hint-looking text that does not lead the statement is data.
	{name: "hint in string literal", sql: "SELECT '/* shadow */' FROM t", rest: "SELECT '/* shadow */' FROM t"},
	{name: "trailing comment", sql: "SELECT 1 /* note */", rest: "SELECT 1 /* note */"},
	{name: "trailing hint", sql: "SELECT 1 /* shadow */", err: ErrMalformedHint, at: 9},
	{name: "trailing optimizer hint", sql: "INSERT INTO t VALUES (1) /*+ OBROUTE(shadow=true) */", err: ErrMalformedHint, at: 25},
	{name: "trailing line comment", sql: "INSERT INTO t VALUES (1) -- obroute(shadow=true)", err: ErrMalformedHint, at: 25},
	{name: "trailing hash comment", sql: "INSERT INTO t VALUES (1) # OBROUTE shadow", err: ErrMalformedHint, at: 25},
	{name: "hint in a parenthesised select", sql: "(/* shadow */ SELECT 1)", err: ErrMalformedHint, at: 1},
	{name: "hint in a string is data", sql: "SELECT '/* shadow */', \"/*+ OBROUTE(shadow=true) */\", `-- obroute`", rest: "SELECT '/* shadow */', \"/*+ OBROUTE(shadow=true) */\", `-- obroute`"},
	{name: "hint after an escaped quote", sql: "SELECT 'a\\' /* shadow */ '", err: ErrMalformedHint, at: 12},
	{name: "note naming obroute in the text", sql: "SELECT 1 /* via OBROUTE */", err: ErrMalformedHint, at: 9},
	{name: "optimizer hint after keyword is the server's", sql: "SELECT /*+ MAX_EXECUTION_TIME(5) */ 1", rest: "SELECT /*+ MAX_EXECUTION_TIME(5) */ 1"},
	{name: "hint later in the statement", sql: "SELECT 1, /*+ OBROUTE(shadow=true) */ 2", err: ErrMalformedHint, at: 10},
	{name: "hint in a subquery", sql: "INSERT INTO t SELECT /* shadow */ 1", err: ErrMalformedHint, at: 21},

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
	{name: "obroute between commas", sql: "/*+ MAX_EXECUTION_TIME(1000), OBROUTE(shadow=true) */ SELECT 1", err: ErrMalformedHint, at: 4},
	{name: "obroute without parentheses among hints", sql: "/*+ NO_ICP(t) OBROUTE */ SELECT 1", err: ErrMalformedHint, at: 4},
	{name: "obroute nested", sql: "/*+ BKA(OBROUTE(shadow=true)) */ SELECT 1", err: ErrMalformedHint, at: 4},
	{name: "unclosed quote before obroute", sql: "/*+ QB_NAME(`q) OBROUTE(shadow=true) */ SELECT 1", err: ErrMalformedHint, at: 4},
	{name: "misspelt obroute", sql: "/*+ OBROUTER(shadow=true) */ SELECT 1", err: ErrUnknownHint, at: 4},
	{name: "misspelt obroute among hints", sql: "/*+ NO_ICP(t) NO_OBROUTE(shadow=true) */ SELECT 1", err: ErrUnknownHint, at: 14},
	{name: "shadow as an optimizer hint", sql: "/*+ SHADOW(true) */ SELECT 1", err: ErrUnknownHint, at: 4},
	{name: "bare shadow in an optimizer-hint comment", sql: "/*+ shadow */ SELECT 1", err: ErrMalformedHint, at: 4},
	{name: "shardingsphere hint written as optimizer hint", sql: "/*+ SHARDINGSPHERE_HINT: SHADOW=true */ SELECT 1", err: ErrMalformedHint, at: 4},
	{name: "obroute without plus", sql: "/* OBROUTE(shadow=true) */ SELECT 1", err: ErrMalformedHint, at: 3},
	{name: "bad value among hints", sql: "/*+ NO_ICP(t) OBROUTE(shadow=1) */ SELECT 1", err: ErrMalformedHint, at: 22},
	{name: "conflict within one comment", sql: "/*+ OBROUTE(shadow=true) OBROUTE(shadow=false) */ SELECT 1", err: ErrHintConflict, at: 33},
	{name: "hint comment after keyword", sql: "SELECT /*+ OBROUTE(shadow=true) */ 1", err: ErrMalformedHint, at: 7},
	{name: "malformed hint after keyword", sql: "INSERT /*+ OBROUTE(shadow=yes) */ INTO t VALUES (1)", err: ErrMalformedHint, at: 7},
	{name: "bare hint after keyword", sql: "update /* shadow */ t SET a = 1", err: ErrMalformedHint, at: 7},
	{name: "obroute among hints after keyword", sql: "DELETE /*+ NO_ICP(t) OBROUTE(shadow=true) */ FROM t", err: ErrMalformedHint, at: 7},
	{name: "hint in a line comment", sql: "-- /*+ OBROUTE(shadow=true) */\nSELECT 1", err: ErrMalformedHint, at: 3},
	{name: "bare hint in a hash comment", sql: "# shadow\nSELECT 1", err: ErrMalformedHint, at: 2},
	{name: "bare hint in a dash comment", sql: "--\t/* SHADOW */\nSELECT 1", err: ErrMalformedHint, at: 3},
	{name: "shardingsphere hint in a line comment", sql: "-- SHARDINGSPHERE_HINT: SHADOW=true\nSELECT 1", err: ErrMalformedHint, at: 3},
	{name: "quoted backend", sql: "/*+ OBROUTE(backend='cold') */ SELECT 1", err: ErrMalformedHint, at: 12},
	{name: "empty backend", sql: "/*+ OBROUTE(backend=) */ SELECT 1", err: ErrMalformedHint, at: 12},
	{name: "bare hint with value", sql: "/* shadow: true */ SELECT 1", err: ErrMalformedHint, at: 3},
	{name: "bare cold_query with value", sql: "/* cold_query=1 */ SELECT 1", err: ErrMalformedHint, at: 3},
	{name: "bare hint with more words", sql: "/* shadow traffic */ SELECT 1", err: ErrMalformedHint, at: 3},
	{name: "bare hint with a dash", sql: "/* Shadow-test */ SELECT 1", err: ErrMalformedHint, at: 3},
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
	if !errors.Is(err, ErrUnknownHint) {
		t.Errorf("error = %v, want ErrUnknownHint: a misspelt OBROUTE must not be ignored", err)
	}
}
