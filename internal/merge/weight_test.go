package merge

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/sqltest"
)

// TestWeightedCompare checks the comparison of weights on hand-made ones: PAD SPACE pads the
// shorter weight with spaces, so a tab sorts before the end of a string, NO PAD does not.
func TestWeightedCompare(t *testing.T) {
	// One byte per character, a space weighing 0x20.
	padSig, nopadSig := []byte("c_pad 1\x02  "), []byte("c_nopad 0\x02  ")
	w := func(coll string, units ...byte) []byte { return append([]byte(coll+" "), units...) }
	tests := []struct {
		name string
		sig  []byte
		a, b []byte
		want int
	}{
		{"equal", padSig, w("c_pad", 'A'), w("c_pad", 'A'), 0},
		{"trailing spaces do not count", padSig, w("c_pad", 'A'), w("c_pad", 'A', ' ', ' '), 0},
		{"a tab sorts before the padding", padSig, w("c_pad", 'A', '\t'), w("c_pad", 'A'), -1},
		{"a letter sorts after it", padSig, w("c_pad", 'A', 'B'), w("c_pad", 'A'), 1},
		{"NO PAD: the shorter first", nopadSig, w("c_nopad", 'A'), w("c_nopad", 'A', ' '), -1},
		{"NO PAD: bytes", nopadSig, w("c_nopad", 'A', '\t'), w("c_nopad", 'A'), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &weighted{name: "c", weight: 1, ordered: true, coll: parseSignature("c", tt.sig, true)}
			a, b := []driver.Value{[]byte("a"), tt.a}, []driver.Value{[]byte("b"), tt.b}
			if err := c.check(a, 0); err != nil {
				t.Fatal(err)
			}
			if err := c.check(b, 0); err != nil {
				t.Fatal(err)
			}
			if got := c.compare(a, b, 0); got != tt.want {
				t.Errorf("compare = %d, want %d", got, tt.want)
			}
			if got := c.compare(b, a, 0); got != -tt.want {
				t.Errorf("compare reversed = %d, want %d", got, -tt.want)
			}
			ka, kb := c.appendKey(nil, a, 0), c.appendKey(nil, b, 0)
			if (string(ka) == string(kb)) != (tt.want == 0) {
				t.Errorf("keys %q and %q: equal = %v, want %v", ka, kb, string(ka) == string(kb), tt.want == 0)
			}
		})
	}
	refused := []struct {
		name, sig string
		orderBy   bool
	}{
		{"several levels", "c_as_cs 1\x06\x02\x09\x00 \x00\x02", false},
		{"a collation whose comparisons do not follow its weights", "big5_chinese_ci x", false},
		{"ORDER BY in a collation the server sorts otherwise", "latin1_bin p\x02  ", true},
	}
	for _, tt := range refused {
		c := &weighted{name: "c", weight: 1, ordered: true, coll: parseSignature("c", []byte(tt.sig), tt.orderBy)}
		if err := c.check([]driver.Value{[]byte("a"), []byte("x a")}, 0); !errors.Is(err, ErrNotExact) {
			t.Errorf("%s: err = %v, want ErrNotExact", tt.name, err)
		}
	}
	inet := &weighted{name: "c", weight: 1, ordered: true, notString: true}
	if err := inet.check([]driver.Value{[]byte("::1"), []byte("latin1_swedish_ci ::1")}, 0); !errors.Is(err, ErrNotExact) {
		t.Errorf("ordering a value the server does not take for a string (INET6): err = %v, want ErrNotExact", err)
	}
	inet.ordered = false
	if err := inet.check([]driver.Value{[]byte("::1"), []byte("latin1_swedish_ci ::1")}, 0); err != nil {
		t.Errorf("grouping a value the server does not take for a string (INET6): err = %v, want nil", err)
	}
	stale := false
	c := &weighted{name: "c", weight: 1, coll: parseSignature("c", padSig, false), stale: func() { stale = true }}
	if err := c.check([]driver.Value{[]byte("a"), w("c_other", 'A')}, 0); !errors.Is(err, ErrNotExact) || !stale {
		t.Errorf("a weight of another collation: err = %v, stale called %v; want ErrNotExact and true", err, stale)
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
	var defs, sel, conv, weights, sigs, cmps []string
	for j, c := range colls {
		col := fmt.Sprintf("c%d", j)
		defs = append(defs, fmt.Sprintf("%s VARCHAR(16) CHARACTER SET %s COLLATE %s", col, cs, c))
		conv = append(conv, fmt.Sprintf("CONVERT(s USING %s)", cs))
		sel = append(sel, col)
		weights = append(weights, strings.Join(WeightSQL(), col))
		sigs = append(sigs, strings.Join(SignatureSQL(true), "MIN("+col+")"), strings.Join(SignatureSQL(false), "MIN(CONCAT("+col+"))"))
		cmps = append(cmps, fmt.Sprintf("STRCMP(a.%s, b.%s)", col, col))
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
	n := len(colls)
	// The signatures, as a statement's probe reads them: of each column and of an expression.
	sig := make([][]byte, 2*n)
	dest := make([]any, 2*n)
	for k := range sig {
		dest[k] = &sig[k]
	}
	if err := conn.QueryRowContext(ctx, "SELECT "+strings.Join(sigs, ", ")+" FROM coll WHERE 1 = 0").Scan(dest...); err != nil {
		t.Fatalf("%s: signatures: %v", cs, err)
	}
	// The value and the weight of each trap under each collation.
	values := map[int][][2]driver.Value{}
	rows, err := conn.QueryContext(ctx, fmt.Sprintf("SELECT i, %s, %s FROM coll", strings.Join(sel, ", "), strings.Join(weights, ", ")))
	if err != nil {
		t.Fatalf("%s: %v", cs, err)
	}
	for rows.Next() {
		var i int
		raw := make([][]byte, 2*n)
		dest := []any{&i}
		for k := range raw {
			dest = append(dest, &raw[k])
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		r := make([][2]driver.Value, n)
		for j := range colls {
			r[j] = [2]driver.Value{nilIfNil(raw[j]), nilIfNil(raw[n+j])}
		}
		values[i] = r
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	// Each collation compared as a column (equality, MIN/MAX; and ORDER BY where not refused),
	// and ordered as an expression.
	cols, exprs := make([]*weighted, n), make([]*weighted, n)
	orderCol := make([]bool, n)
	for j, c := range colls {
		if sig[2*j] == nil {
			t.Fatalf("%s: the server does not take a %s column for a string", c, cs)
		}
		cols[j] = &weighted{name: c, weight: 1, ordered: true, coll: parseSignature(c, sig[2*j], false)}
		if cols[j].coll.err != nil {
			cols[j] = nil
			refused = append(refused, c)
			continue
		}
		orderCol[j] = parseSignature(c, sig[2*j], true).err == nil
		if e := (&weighted{name: c, weight: 1, ordered: true, coll: parseSignature(c, sig[2*j+1], true)}); e.coll.err == nil {
			exprs[j] = e
		}
		for _, r := range values {
			if err := cols[j].check([]driver.Value{r[j][0], r[j][1]}, 0); err != nil {
				t.Fatalf("%s: %v", c, err)
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
			a := []driver.Value{values[i][j][0], values[i][j][1]}
			b := []driver.Value{values[k][j][0], values[k][j][1]}
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
	// The server's ORDER BY, of the column and of an expression, ties broken by i. The weight
	// of CONCAT(c) is the column's.
	for j := range colls {
		for _, order := range []struct {
			by string
			w  *weighted
		}{{fmt.Sprintf("c%d", j), map[bool]*weighted{true: cols[j]}[orderCol[j]]}, {fmt.Sprintf("CONCAT(c%d)", j), exprs[j]}} {
			if order.w == nil {
				continue // refused for ORDER BY
			}
			ids := orderedIDs(t, ctx, conn, "SELECT i FROM coll ORDER BY "+order.by+", i")
			for x := 1; x < len(ids); x++ {
				a := []driver.Value{values[ids[x-1]][j][0], values[ids[x-1]][j][1]}
				b := []driver.Value{values[ids[x]][j][0], values[ids[x]][j][1]}
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
