package routing

import (
	"strings"
	"testing"
)

// readable writes a cache key with its literal marks as $s (string) and $n (number).
func readable(key []byte) string {
	return strings.NewReplacer(string(strMark), "$s", string(numMark), "$n").Replace(string(key[1:]))
}

// normCases are statements and their cache keys; "" when the statement is keyed by its text.
var normCases = []struct{ sql, key string }{
	{"SELECT * FROM items WHERE id = 42", "SELECT * FROM items WHERE id = $n"},
	{"select * from items where id = 4.5e3 and note = 'x'", "select * from items where id = $n and note = $s"},
	{`SELECT * FROM t WHERE a = "it's" AND b = 'it''s' AND c = 'a\'b'`, "SELECT * FROM t WHERE a = $s AND b = $s AND c = $s"},
	{"SELECT * FROM t WHERE a = 'x' 'y'", "SELECT * FROM t WHERE a = $s"},
	{"SELECT * FROM t WHERE a = ? AND b = 7", "SELECT * FROM t WHERE a = ? AND b = $n"},
	{"SELECT * FROM t WHERE a = ?", ""},
	{"SELECT 1", ""},
	{"SELECT 'a' AS x, COUNT(*) FROM t WHERE b = 'c' GROUP BY 1 HAVING COUNT(*) > 2 ORDER BY 2 DESC LIMIT 10, 5",
		"SELECT 'a' AS x, COUNT(*) FROM t WHERE b = $s GROUP BY 1 HAVING COUNT(*) > 2 ORDER BY 2 DESC LIMIT 10, 5"},
	{"SELECT a FROM t WHERE b IN (1, 2, 3)", "SELECT a FROM t WHERE b IN ($n, $n, $n)"},
	{"SELECT a FROM t WHERE b IN (1, 2)", "SELECT a FROM t WHERE b IN ($n, $n)"},
	{"SELECT a FROM t WHERE c > NOW() - INTERVAL 7 DAY AND d = 1", "SELECT a FROM t WHERE c > NOW() - INTERVAL 7 DAY AND d = $n"},
	{"SELECT a FROM t WHERE c > '2025-01-01' - INTERVAL -1 DAY", "SELECT a FROM t WHERE c > $s - INTERVAL -1 DAY"},
	{"SELECT a FROM t WHERE c > NOW(3) AND c < DATE_ADD('2025-01-01', INTERVAL 1 DAY) AND e = 2",
		"SELECT a FROM t WHERE c > NOW(3) AND c < DATE_ADD('2025-01-01', INTERVAL 1 DAY) AND e = $n"},
	{"SELECT a FROM t WHERE c = CAST(x AS DECIMAL(10, 2)) AND e = 2", "SELECT a FROM t WHERE c = CAST(x AS DECIMAL(10, 2)) AND e = $n"},
	{"SELECT a FROM t WHERE c = DATE '2025-01-01' AND d = TIMESTAMP '2025-01-01 00:00:00' AND e = 3",
		"SELECT a FROM t WHERE c = DATE '2025-01-01' AND d = TIMESTAMP '2025-01-01 00:00:00' AND e = $n"},
	{"SELECT a FROM t WHERE c = _utf8mb4'x' AND d = _latin1 'y' AND e = N'z' AND f = X'41' AND g = b'1' AND h = 0x1F AND i = 5",
		"SELECT a FROM t WHERE c = _utf8mb4'x' AND d = _latin1 'y' AND e = N'z' AND f = X'41' AND g = b'1' AND h = 0x1F AND i = $n"},
	{"SELECT a FROM t WHERE c = 'x' COLLATE utf8mb4_bin AND d LIKE 'a!%' ESCAPE '!'", "SELECT a FROM t WHERE c = $s COLLATE utf8mb4_bin AND d LIKE $s ESCAPE '!'"},
	{"SELECT a FROM t WHERE j->'$.x' = 1 AND j->>'$.y' = 'z'", "SELECT a FROM t WHERE j->'$.x' = $n AND j->>'$.y' = $s"},
	{"/*+ OBROUTE(query_level=L1) */ SELECT a FROM t WHERE b = 1 /* 'c' 2 */ AND d = 3 # 4\n",
		"/*+ OBROUTE(query_level=L1) */ SELECT a FROM t WHERE b = $n /* 'c' 2 */ AND d = $n # 4\n"},
	{"SELECT /*+ MAX_EXECUTION_TIME(1000) */ a FROM t WHERE b = 1", "SELECT /*+ MAX_EXECUTION_TIME(1000) */ a FROM t WHERE b = $n"},
	{"SELECT a FROM t WHERE b = 1 /*!50000 AND c = 2 */ AND d = 3", "SELECT a FROM t WHERE b = $n /*!50000 AND c = 2 */ AND d = $n"},
	{"SELECT a FROM t WHERE b = 1 /*M!100000 AND c = 'x' */", "SELECT a FROM t WHERE b = $n /*M!100000 AND c = 'x' */"},
	{"SELECT a, (SELECT 1 FROM u WHERE u.x = 'y') FROM t WHERE b IN (SELECT 2 FROM v WHERE v.z = 3)",
		"SELECT a, (SELECT 1 FROM u WHERE u.x = $s) FROM t WHERE b IN (SELECT 2 FROM v WHERE v.z = $n)"},
	{"SELECT a FROM t WHERE b = 1 UNION SELECT 'x' FROM u WHERE c = 2", "SELECT a FROM t WHERE b = $n UNION SELECT 'x' FROM u WHERE c = $n"},
	{"(SELECT a FROM t WHERE b = 1) ORDER BY 1", "(SELECT a FROM t WHERE b = $n) ORDER BY 1"},
	{"WITH c AS (SELECT a FROM t WHERE b = 1) SELECT 2 FROM c WHERE d = 3", "WITH c AS (SELECT a FROM t WHERE b = $n) SELECT 2 FROM c WHERE d = $n"},
	{"INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y') ON DUPLICATE KEY UPDATE b = 'z'", "INSERT INTO t (a, b) VALUES ($n, $s), ($n, $s) ON DUPLICATE KEY UPDATE b = $s"},
	{"INSERT INTO t (a) SELECT 1 FROM u WHERE c = 2", "INSERT INTO t (a) SELECT 1 FROM u WHERE c = $n"},
	{"REPLACE INTO t VALUES (1)", "REPLACE INTO t VALUES ($n)"},
	{"UPDATE t SET a = 1, b = b + 2.5 WHERE c = 'x' ORDER BY d LIMIT 1", "UPDATE t SET a = $n, b = b + $n WHERE c = $s ORDER BY d LIMIT 1"},
	{"DELETE FROM t WHERE a = 1 LIMIT 10", "DELETE FROM t WHERE a = $n LIMIT 10"},
	{"DELETE FROM t WHERE a = 1 RETURNING a, 'x'", "DELETE FROM t WHERE a = $n RETURNING a, 'x'"},
	{"SELECT a, ROW_NUMBER() OVER (ORDER BY b ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING) FROM t WHERE c = 3",
		"SELECT a, ROW_NUMBER() OVER (ORDER BY b ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING) FROM t WHERE c = $n"},
	{"SELECT a FROM t WHERE b = -5 AND c = +1.5", "SELECT a FROM t WHERE b = -$n AND c = +$n"},
	{"SELECT a FROM t WHERE b = 1x AND c = 2", "SELECT a FROM t WHERE b = 1x AND c = $n"},
	{"SELECT a FROM t WHERE b = @v AND c = @'x' AND d = 1", "SELECT a FROM t WHERE b = @v AND c = @'x' AND d = $n"},
	{"SELECT GROUP_CONCAT(a SEPARATOR ',') FROM t WHERE b = 1", "SELECT GROUP_CONCAT(a SEPARATOR ',') FROM t WHERE b = $n"},
	{"SELECT a FROM t WHERE MATCH (b) AGAINST ('x') AND c = 1", "SELECT a FROM t WHERE MATCH (b) AGAINST ('x') AND c = $n"},
	{"SET @a = 1", ""},
	{"SHOW TABLES LIKE 'x'", ""},
	{"CREATE TABLE t (a INT DEFAULT 1)", ""},
	{"EXPLAIN ROUTE SELECT * FROM t WHERE a = 1", ""},
	{"SELECT a FROM t WHERE b = 'unterminated", ""},
	{"SELECT a FROM t WHERE b = 'x\x00y'", ""},
	{"SELECT a FROM t WHERE b = 'x\x02y'", ""},
}

// The cache key of a statement replaces its value literals only: statements that differ in
// anything else (a literal that shapes the statement, a comment, an IN list's length) have
// different keys.
func TestNormalizeLiterals(t *testing.T) {
	for _, c := range normCases {
		n, ok := normalizeLiterals(c.sql, nil, nil, true)
		got := ""
		if ok {
			got = readable(n.key)
		}
		if got != c.key {
			t.Errorf("%q\n key %q\nwant %q", c.sql, got, c.key)
		}
	}
}

// The literals a key replaced are the text between its marks: the key and its literals give
// the statement back, and their placeholder indexes count the ? placeholders before them.
func TestNormalizedLiteralsGiveTheTextBack(t *testing.T) {
	n, ok := normalizeLiterals("SELECT a FROM t WHERE b = ? AND c = 'x' 'y' AND d IN (?, 5, ?) AND e = 1.5", nil, nil, true)
	if !ok {
		t.Fatal("not normalized")
	}
	var texts []string
	for _, l := range n.lits {
		texts = append(texts, l.text)
	}
	if strings.Join(texts, "|") != "'x' 'y'|5|1.5" || len(n.slots) != 3 || n.slots[0] != 1 || n.slots[1] != 3 || n.slots[2] != 5 {
		t.Errorf("literals %q at placeholders %v, want 'x' 'y', 5, 1.5 at 1, 3, 5", texts, n.slots)
	}
	if v := n.lits[0].value(); v != "xy" {
		t.Errorf("value of 'x' 'y' is %q, want xy", v)
	}
	if got := normalizedText(n.key); got != "SELECT a FROM t WHERE b = ? AND c = ? AND d IN (?, ?, ?) AND e = ?" {
		t.Errorf("normalized text %q", got)
	}
}

// checkRoundTrip fails when sql's key and literals do not give sql back.
func checkRoundTrip(t *testing.T, sql string) {
	n, ok := normalizeLiterals(sql, nil, nil, true)
	if !ok {
		return
	}
	var b strings.Builder
	k := 0
	if n.key[0] != keyMark || len(n.key) > len(sql)+1 {
		t.Fatalf("%q: key %q", sql, n.key)
	}
	for _, c := range n.key[1:] {
		if c != strMark && c != numMark {
			b.WriteByte(c)
			continue
		}
		if k >= len(n.lits) || c == numMark != n.lits[k].num {
			t.Fatalf("%q: mark %d of key %q does not match its literals %v", sql, k, n.key, n.lits)
		}
		b.WriteString(n.lits[k].text)
		k++
	}

	if b.String() != sql || k != len(n.lits) || len(n.slots) != k {
		t.Fatalf("%q: key %q and literals %v give %q back", sql, n.key, n.lits, b.String())
	}
	for i := 1; i < len(n.slots); i++ {
		if n.slots[i] <= n.slots[i-1] {
			t.Fatalf("%q: placeholder indexes %v not increasing", sql, n.slots)
		}
	}
}

func FuzzNormalizeLiterals(f *testing.F) {
	for _, c := range normCases {
		f.Add(c.sql)
	}
	for _, s := range normTemplates {
		f.Add(s)
	}
	f.Fuzz(checkRoundTrip)
}

func TestAppendTemplate(t *testing.T) {
	cases := []struct{ sql, want string }{
		{"SELECT * FROM orders WHERE id = 7 AND note = 'a;b'", "SELECT * FROM orders WHERE id = ? AND note = ?"},
		{"SELECT * FROM orders WHERE id = ?", "SELECT * FROM orders WHERE id = ?"},
		{"INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y')", "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)"},
		// kept as written: the select list, LIMIT, INTERVAL, typed literals
		{"SELECT 1, 'a' FROM t WHERE d > NOW() - INTERVAL 3 DAY LIMIT 10", "SELECT 1, 'a' FROM t WHERE d > NOW() - INTERVAL 3 DAY LIMIT 10"},
		{"SELECT * FROM t WHERE d = DATE '2025-03-01' AND id = 4", "SELECT * FROM t WHERE d = DATE '2025-03-01' AND id = ?"},
		// keyed by their text
		{"SET time_zone = '+08:00'", "SET time_zone = '+08:00'"},
		{"BEGIN", "BEGIN"},
		{"SELECT 1; SELECT 2", "SELECT 1; SELECT 2"},
	}
	for _, tc := range cases {
		if got := string(AppendTemplate(nil, tc.sql)); got != tc.want {
			t.Errorf("AppendTemplate(%q) = %q, want %q", tc.sql, got, tc.want)
		}
	}
	// Two statements share a template exactly when the cache keys them alike.
	a, b := "SELECT * FROM items WHERE id = 1 AND note = 'x'", "SELECT * FROM items WHERE id = 99 AND note = 'yy'"
	na, _ := normalizeLiterals(a, nil, nil, false)
	nb, _ := normalizeLiterals(b, nil, nil, false)
	if string(na.key) != string(nb.key) || string(AppendTemplate(nil, a)) != string(AppendTemplate(nil, b)) {
		t.Errorf("templates of %q and %q differ", a, b)
	}
}
