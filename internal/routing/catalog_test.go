package routing

import "testing"

// lookupEdits marks as compared in the names' case exactly the comparisons the server reads as
// tables to look up.
func TestLookupEdits(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT 1 FROM T WHERE TABLE_NAME = 'x'", "SELECT 1 FROM T WHERE binary TABLE_NAME = 'x'"},
		{"SELECT 1 FROM T WHERE TABLE_SCHEMA = DATABASE() AND t.TABLE_NAME = ?", "SELECT 1 FROM T WHERE binary TABLE_SCHEMA = DATABASE() AND binary t.TABLE_NAME = ?"},
		{"SELECT 1 FROM T WHERE 'x' = TABLE_NAME", "SELECT 1 FROM T WHERE 'x' = binary TABLE_NAME"},
		{"SELECT 1 FROM T WHERE TABLE_NAME <=> 'x'", "SELECT 1 FROM T WHERE binary TABLE_NAME <=> 'x'"},
		{"SELECT 1 FROM T WHERE TABLE_NAME IN ('x')", "SELECT 1 FROM T WHERE binary TABLE_NAME IN ('x')"},
		{"SELECT 1 FROM T WHERE TABLE_NAME IN ('x', 'y')", "SELECT 1 FROM T WHERE TABLE_NAME IN ('x', 'y')"},
		{"SELECT 1 FROM T WHERE ((TABLE_NAME = 'x') AND 1)", "SELECT 1 FROM T WHERE ((binary TABLE_NAME = 'x') AND 1)"},
		{"SELECT 1 FROM T WHERE a BETWEEN 1 AND 2 AND TABLE_NAME = 'x'", "SELECT 1 FROM T WHERE a BETWEEN 1 AND 2 AND binary TABLE_NAME = 'x'"},
		{"SELECT 1 FROM T WHERE TABLE_NAME = 'x' OR TABLE_NAME = 'y'", "SELECT 1 FROM T WHERE TABLE_NAME = 'x' OR TABLE_NAME = 'y'"},
		{"SELECT 1 FROM T WHERE TABLE_SCHEMA = 'd' AND (TABLE_NAME = 'x' OR 0)", "SELECT 1 FROM T WHERE binary TABLE_SCHEMA = 'd' AND (TABLE_NAME = 'x' OR 0)"},
		{"SELECT 1 FROM T WHERE TABLE_NAME = 'x' XOR 0", "SELECT 1 FROM T WHERE TABLE_NAME = 'x' XOR 0"},
		{"SELECT 1 FROM T a JOIN C c ON c.TABLE_NAME = a.TABLE_NAME WHERE a.TABLE_NAME = 'x'", "SELECT 1 FROM T a JOIN C c ON c.TABLE_NAME = a.TABLE_NAME WHERE binary a.TABLE_NAME = 'x'"},
		{"SELECT 1 FROM T a JOIN C c ON c.TABLE_NAME = 'x' WHERE 1", "SELECT 1 FROM T a JOIN C c ON binary c.TABLE_NAME = 'x' WHERE 1"},
		{"SELECT 1 FROM T a LEFT OUTER JOIN C c ON c.TABLE_NAME = 'x' WHERE 1", "SELECT 1 FROM T a LEFT OUTER JOIN C c ON c.TABLE_NAME = 'x' WHERE 1"},
		{"SELECT 1 FROM T WHERE TABLE_NAME = (SELECT 'x')", "SELECT 1 FROM T WHERE binary TABLE_NAME = (SELECT 'x')"},
		{"SELECT 1 FROM T WHERE NOT TABLE_NAME = 'x'", "SELECT 1 FROM T WHERE NOT TABLE_NAME = 'x'"},
		{"SELECT 1 FROM T WHERE NOT (TABLE_NAME <> 'x')", "SELECT 1 FROM T WHERE NOT (binary TABLE_NAME <> 'x')"},
		{"SELECT 1 FROM T WHERE 1 AND !('x' != t.TABLE_NAME)", "SELECT 1 FROM T WHERE 1 AND !('x' != binary t.TABLE_NAME)"},
		{"SELECT 1 FROM T WHERE NOT (TABLE_NAME LIKE 'x')", "SELECT 1 FROM T WHERE NOT (TABLE_NAME LIKE 'x')"},
		{"SELECT 1 FROM T WHERE NOT EXISTS (SELECT 1 FROM C WHERE C.TABLE_NAME = 'x' OR 0)", "SELECT 1 FROM T WHERE NOT EXISTS (SELECT 1 FROM C WHERE C.TABLE_NAME = 'x' OR 0)"},
		{"SELECT 1 FROM T WHERE TABLE_NAME IN ('x', 'X')", "SELECT 1 FROM T WHERE binary TABLE_NAME IN ('x')"},
		{"SELECT 1 FROM T GROUP BY 1 HAVING 1 AND TABLE_NAME = 'x'", "SELECT 1 FROM T GROUP BY 1 HAVING 1 AND TABLE_NAME = 'x'"},
		{"SELECT (SELECT 1 FROM T WHERE TABLE_NAME = 'x' LIMIT 1) FROM T WHERE 1 ORDER BY TABLE_NAME = 'y'", "SELECT (SELECT 1 FROM T WHERE binary TABLE_NAME = 'x' LIMIT 1) FROM T WHERE 1 ORDER BY TABLE_NAME = 'y'"},
	} {
		toks, _ := lex(c.in)
		got, last := "", 0
		edits, err := lookupEdits(toks, false)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
		}
		for _, e := range edits {
			got += c.in[last:e.from] + e.text
			last = e.to
		}
		got += c.in[last:]
		if got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}
