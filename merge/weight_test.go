package merge

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/sqltest"
)

// TestWeightedCompare checks the comparison of weights on hand-made ones: PAD SPACE pads the
// shorter weight with spaces, so a tab sorts before the end of a string, NO PAD does not.
func TestWeightedCompare(t *testing.T) {
	pad := func(units ...byte) []byte { // PAD SPACE, one byte per character, space 0x20
		return append([]byte{'1', 2, ' ', ' '}, units...)
	}
	nopad := func(units ...byte) []byte {
		return append([]byte{'0', 2, ' ', ' '}, units...)
	}
	tests := []struct {
		name string
		a, b []byte
		want int
	}{
		{"equal", pad('A'), pad('A'), 0},
		{"trailing spaces do not count", pad('A'), pad('A', ' ', ' '), 0},
		{"a tab sorts before the padding", pad('A', '\t'), pad('A'), -1},
		{"a letter sorts after it", pad('A', 'B'), pad('A'), 1},
		{"NO PAD: the shorter first", nopad('A'), nopad('A', ' '), -1},
		{"NO PAD: bytes", nopad('A', '\t'), nopad('A'), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &weighted{name: "c", weight: 1, ordered: true}
			a, b := []driver.Value{[]byte("a"), tt.a}, []driver.Value{[]byte("b"), tt.b}
			if err := w.check(a, 0); err != nil {
				t.Fatal(err)
			}
			if err := w.check(b, 0); err != nil {
				t.Fatal(err)
			}
			if got := w.compare(a, b, 0); got != tt.want {
				t.Errorf("compare = %d, want %d", got, tt.want)
			}
			if got := w.compare(b, a, 0); got != -tt.want {
				t.Errorf("compare reversed = %d, want %d", got, -tt.want)
			}
			ka, kb := w.appendKey(nil, a, 0), w.appendKey(nil, b, 0)
			if (string(ka) == string(kb)) != (tt.want == 0) {
				t.Errorf("keys %q and %q: equal = %v, want %v", ka, kb, string(ka) == string(kb), tt.want == 0)
			}
		})
	}
	refused := []struct {
		name string
		w    []byte
	}{
		{"several levels", []byte{'1', 6, 2, 9, 0, ' ', 0, 2}},
		{"a collation whose comparisons do not follow its weights", []byte("xbig5_chinese_ci")},
	}
	for _, tt := range refused {
		w := &weighted{name: "c", weight: 1, ordered: true}
		if err := w.check([]driver.Value{[]byte("a"), tt.w}, 0); !errors.Is(err, ErrNotExact) {
			t.Errorf("%s: err = %v, want ErrNotExact", tt.name, err)
		}
	}
	w := &weighted{name: "c", weight: 1, ordered: true}
	if err := w.check([]driver.Value{[]byte("::1"), nil}, 0); !errors.Is(err, ErrNotExact) {
		t.Errorf("ordering a text value without a weight (INET6): err = %v, want ErrNotExact", err)
	}
	w.ordered = false
	if err := w.check([]driver.Value{[]byte("::1"), nil}, 0); err != nil {
		t.Errorf("grouping a text value without a weight (INET6): err = %v, want nil", err)
	}
	w = &weighted{name: "c", weight: 1}
	_ = w.check([]driver.Value{[]byte("a"), pad('A')}, 0)
	if err := w.check([]driver.Value{[]byte("a"), nopad('A')}, 0); !errors.Is(err, ErrNotExact) {
		t.Errorf("two collations in one column: err = %v, want ErrNotExact", err)
	}
}

// collationTraps are the strings every collation is checked on: case, accents, expansions
// (ß, æ, œ, ﬁ), contractions (ch, ll), trailing spaces and characters that sort below the
// space (tab, control characters, NUL), ignorable and combining characters, characters
// beyond U+FFFF, and scripts of multi-byte character sets.
var collationTraps = []string{"", " ", "a", "A", "a ", "a  ", "a\t", "a\tb", "ab", "aB", "b", "é", "e", "E", "É",
	"ß", "ss", "SS", "s", "æ", "ae", "Æ", "AE", "å", "ä", "ö", "Å", "Ä", "Ö", "z", "Ø", "o", "ü", "y", "u",
	"\x01", "a\x01", "😀", "😁", "a😀", "中", "文", "ǆ", "Ǆ", "ch", "c", "h", "ll", "l", "Ł", "ı", "i", "I", "İ",
	"-", "a-b", "ab ", "a b", "\u00a0", "a\u00a0", "\u3000", "0", "1", "10", "9", "ñ", "n", "Ñ", "œ", "oe",
	"ﬁ", "fi", "\u0301", "e\u0301", "x\u200b", "\u200b", "a\n", "a\r", "\t", "a\x00", "\x00", "Straße",
	"STRASSE", "strasse", "a \t", "a\x1f", "ä ", "Ä\t", "aa", "å ", "ÿ", "Ÿ", "~", "_", "a_", "ア", "ｱ", "가", "ก"}

// TestWeightsCompareAsServer checks, for every collation of every character set the server
// has, that comparing the weights the rewrite asks for (WeightSQL) orders and groups the trap
// strings exactly as the server's own comparison does (STRCMP), or that the merge refuses the
// collation. Only the collations that weigh on several levels and three whose comparisons do
// not follow their own weights may be refused.
func TestWeightsCompareAsServer(t *testing.T) {
	db := sqltest.Shared(t, "weights")[0].DB
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := conn.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("SET NAMES utf8mb4")
	exec("SET SESSION sql_mode = ''") // an unconvertible trap is skipped, not an error
	exec("CREATE TEMPORARY TABLE traps (i INT PRIMARY KEY, s VARCHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin)")
	for i, s := range collationTraps {
		exec("INSERT INTO traps VALUES (?, ?)", i, s)
	}
	byCharset := map[string][]string{}
	rows, err := conn.QueryContext(ctx, "SELECT character_set_name, full_collation_name FROM information_schema.collation_character_set_applicability WHERE character_set_name <> 'binary' ORDER BY 1, 2")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var cs, coll string
		if err := rows.Scan(&cs, &coll); err != nil {
			t.Fatal(err)
		}
		byCharset[cs] = append(byCharset[cs], coll)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	mayRefuse := regexp.MustCompile(`_(as|cs|w2)(_|$)|_as_c[is]$|_ai_cs$|^big5_chinese_(nopad_)?ci$|^tis620_thai_nopad_ci$`)
	var exact, refused []string
	for cs, colls := range byCharset {
		for start := 0; start < len(colls); start += 100 { // at most 100 columns per table
			batch := colls[start:min(start+100, len(colls))]
			e, r := checkCollations(t, ctx, conn, cs, batch)
			exact, refused = append(exact, e...), append(refused, r...)
		}
	}
	slices.Sort(refused)
	for _, c := range refused {
		if !mayRefuse.MatchString(c) {
			t.Errorf("collation %s is refused; only multi-level collations and big5_chinese_ci, big5_chinese_nopad_ci, tis620_thai_nopad_ci may be", c)
		}
	}
	for _, c := range []string{"utf8mb4_general_ci", "utf8mb4_bin", "latin1_swedish_ci", "utf8mb4_unicode_ci", "utf8mb4_uca1400_ai_ci", "utf8mb4_unicode_520_nopad_ci"} {
		if !slices.Contains(exact, c) {
			t.Errorf("collation %s is not compared exactly", c)
		}
	}
	t.Logf("%d collations compare exactly, %d are refused (multi-level or inconsistent on the server)", len(exact), len(refused))
}

// checkCollations loads the traps representable in charset cs into one column per collation
// and compares every pair of them by weights and on the server (STRCMP), and the order of the
// server's ORDER BY of each column and of an expression (CONCAT) of it with the weights' order.
func checkCollations(t *testing.T, ctx context.Context, conn *sql.Conn, cs string, colls []string) (exact, refused []string) {
	t.Helper()
	var defs, sel, conv, weights, cmps []string
	for j, c := range colls {
		col := fmt.Sprintf("c%d", j)
		defs = append(defs, fmt.Sprintf("%s VARCHAR(16) CHARACTER SET %s COLLATE %s", col, cs, c))
		conv = append(conv, fmt.Sprintf("CONVERT(s USING %s)", cs))
		sel = append(sel, col)
		weights = append(weights, strings.Join(WeightSQL(true), col))
		cmps = append(cmps, fmt.Sprintf("STRCMP(a.%s, b.%s)", col, col))
	}
	for j := range colls {
		weights = append(weights, strings.Join(WeightSQL(false), "CONCAT(c"+strconv.Itoa(j)+")"))
	}
	for _, q := range []string{
		"DROP TEMPORARY TABLE IF EXISTS coll",
		fmt.Sprintf("CREATE TEMPORARY TABLE coll (i INT PRIMARY KEY, %s)", strings.Join(defs, ", ")),
		fmt.Sprintf("INSERT INTO coll (i, %s) SELECT i, %s FROM traps WHERE CONVERT(CONVERT(s USING %s) USING utf8mb4) = s",
			strings.Join(sel, ", "), strings.Join(conv, ", "), cs),
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %s: %v", cs, q, err)
		}
	}
	// The value and the two weights (column, expression) of each trap under each collation.
	type vw struct{ v, col, expr driver.Value }
	values := map[int][]vw{}
	rows, err := conn.QueryContext(ctx, fmt.Sprintf("SELECT i, %s, %s FROM coll", strings.Join(sel, ", "), strings.Join(weights, ", ")))
	if err != nil {
		t.Fatalf("%s: %v", cs, err)
	}
	n := len(colls)
	for rows.Next() {
		var i int
		raw := make([][]byte, 3*n)
		dest := []any{&i}
		for k := range raw {
			dest = append(dest, &raw[k])
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		r := make([]vw, n)
		for j := range colls {
			r[j] = vw{nilIfNil(raw[j]), nilIfNil(raw[n+j]), nilIfNil(raw[2*n+j])}
		}
		values[i] = r
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	cols := make([]*weighted, n)  // compared and ordered as a column
	exprs := make([]*weighted, n) // ordered as an expression; nil when refused for that
	for j, c := range colls {
		cols[j] = &weighted{name: c, weight: 1, ordered: true, orderBy: true}
		exprs[j] = &weighted{name: c, weight: 1, ordered: true, orderBy: true}
		for _, r := range values {
			if cols[j] != nil && cols[j].check([]driver.Value{r[j].v, r[j].col}, 0) != nil {
				cols[j] = nil
			}
			if exprs[j] != nil && exprs[j].check([]driver.Value{r[j].v, r[j].expr}, 0) != nil {
				exprs[j] = nil
			}
		}
		if cols[j] == nil {
			// Refused as an ORDER BY column: compared for equality and MIN/MAX, if at all.
			cols[j] = &weighted{name: c, weight: 1, ordered: true}
			for _, r := range values {
				if err := cols[j].check([]driver.Value{r[j].v, r[j].col}, 0); err != nil {
					if !errors.Is(err, ErrNotExact) {
						t.Fatal(err)
					}
					cols[j] = nil
					refused = append(refused, c)
					break
				}
			}
		}
	}
	bad := make([]int, n)
	fail := func(j int, format string, args ...any) {
		if bad[j]++; bad[j] <= 3 {
			t.Errorf("%s: "+format, append([]any{colls[j]}, args...)...)
		}
	}
	// The server's comparison of every pair.
	rows, err = conn.QueryContext(ctx, fmt.Sprintf("SELECT a.i, b.i, %s FROM coll a, coll b", strings.Join(cmps, ", ")))
	if err != nil {
		t.Fatalf("%s: %v", cs, err)
	}
	for rows.Next() {
		var i, k int
		want := make([]int, n)
		dest := []any{&i, &k}
		for j := range want {
			dest = append(dest, &want[j])
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		for j, c := range cols {
			if c == nil {
				continue
			}
			a := []driver.Value{values[i][j].v, values[i][j].col}
			b := []driver.Value{values[k][j].v, values[k][j].col}
			got := c.compare(a, b, 0)
			sameKey := string(c.appendKey(nil, a, 0)) == string(c.appendKey(nil, b, 0))
			if got != want[j] || sameKey != (want[j] == 0) {
				fail(j, "%q vs %q: weights compare %d (same key %v), the server %d", a[0], b[0], got, sameKey, want[j])
			}
		}
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	// The server's ORDER BY, of the column and of an expression, ties broken by i.
	for j := range colls {
		for _, order := range []struct {
			by string
			w  *weighted
			k  func(vw) driver.Value
		}{{fmt.Sprintf("c%d", j), cols[j], func(r vw) driver.Value { return r.col }}, {fmt.Sprintf("CONCAT(c%d)", j), exprs[j], func(r vw) driver.Value { return r.expr }}} {
			if order.w == nil || !order.w.orderBy {
				continue // refused for ORDER BY
			}
			ids := orderedIDs(t, ctx, conn, "SELECT i FROM coll ORDER BY "+order.by+", i")
			for x := 1; x < len(ids); x++ {
				a := []driver.Value{values[ids[x-1]][j].v, order.k(values[ids[x-1]][j])}
				b := []driver.Value{values[ids[x]][j].v, order.k(values[ids[x]][j])}
				if c := order.w.compare(a, b, 0); c > 0 || c == 0 && ids[x-1] > ids[x] {
					fail(j, "ORDER BY %s puts %q before %q; the weights compare %d", order.by, a[0], b[0], c)
				}
			}
		}
	}
	for j, c := range cols {
		if c != nil && bad[j] == 0 {
			exact = append(exact, colls[j])
		}
	}
	return exact, refused
}

func nilIfNil(b []byte) driver.Value {
	if b == nil {
		return nil
	}
	return b
}

// orderedIDs runs q and returns its one integer column.
func orderedIDs(t *testing.T, ctx context.Context, conn *sql.Conn, q string) []int {
	t.Helper()
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var ids []int
	for rows.Next() {
		var i int
		if err := rows.Scan(&i); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, i)
	}
	return ids
}
