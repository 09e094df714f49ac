package merge

import (
	"bytes"
	"database/sql/driver"
	"fmt"
	"strings"
)

// The server compares text by its collation. Rather than reproduce any collation, the merge
// asks each sub-query for the server's own weights (WEIGHT_STRING) of every text value it
// compares, in a hidden column, and compares those bytes. A weight alone is not the whole
// comparison: under a PAD SPACE collation the shorter string counts as padded with spaces, so
// the weight of a space and the pad attribute come along, and a collation that weighs on
// several levels (accent- or case-sensitive UCA) puts its levels one after the other, which
// bytes cannot compare. Each weight column therefore holds, for a non-NULL string value:
//
//	flag    '1' PAD SPACE, '0' NO PAD (the server's own answer to 'a' = 'a '); 'p' and 'n'
//	        the same for a collation whose ORDER BY of an expression the server does not sort
//	        by its own comparison (8-bit _bin and _nopad collations, latin7)
//	n       one byte: the length of the next part
//	w2      the weight of two spaces: two equal halves for a one-level collation
//	weight  WEIGHT_STRING of the value
//
// or 'x' and the collation's name for a collation whose comparisons do not follow its own
// weights (big5_chinese_ci and big5_chinese_nopad_ci weigh some distinct characters alike,
// tis620_thai_nopad_ci ignores a trailing NUL in comparisons only), and NULL for a value that
// is not a string (numbers and times, and INET6 or UUID values, which the wire sends as text
// but the server orders otherwise).

// weightSQL is the expression of a weight column; each \x00 stands for the compared expression,
// and %s for the pattern of the collations whose ORDER BY the server does not sort by its own
// comparison.
const weightSQL = "IF(COERCIBILITY(\x00) < 5 AND COLLATION(\x00) <> 'binary', " +
	"IF(COLLATION(\x00) IN ('big5_chinese_ci', 'big5_chinese_nopad_ci', 'tis620_thai_nopad_ci'), CONCAT('x', COLLATION(\x00)), " +
	"CONCAT(ELT(1 + (CONCAT(LEFT(\x00, 0), 'a') = CONCAT(LEFT(\x00, 0), 'a ')) + 2 * (COLLATION(\x00) REGEXP '%s'), '0', '1', 'n', 'p'), " +
	"CHAR(LENGTH(WEIGHT_STRING(CONCAT(LEFT(\x00, 0), '  ')))), WEIGHT_STRING(CONCAT(LEFT(\x00, 0), '  ')), WEIGHT_STRING(\x00))), NULL)"

// MariaDB sorts an ORDER BY expression in the _bin and _nopad collations of the non-Unicode
// character sets (and ucs2_bin) otherwise than it compares (a trailing tab or NUL against
// nothing), and an ORDER BY column or expression in latin7's collations; ORDER BY those is
// refused (TestWeightsCompareAsServer finds them).
const (
	orderUnsafeExpr   = "^(?!utf(8|16|32))[a-z0-9]+_(bin|.*nopad.*)$|^latin7_"
	orderUnsafeColumn = "^latin7_"
)

// WeightSQL returns the SQL text of the weight column of an expression (see Spec.Weights) in
// pieces: the expression is written between each two consecutive pieces. column says the
// expression is a column of a table, which the server orders by its own comparison in more
// collations than other expressions.
func WeightSQL(column bool) []string {
	pattern := orderUnsafeExpr
	if column {
		pattern = orderUnsafeColumn
	}
	return strings.Split(fmt.Sprintf(weightSQL, pattern), "\x00")
}

// exactSumSQL is the expression of an exact partial sum; each \x00 stands for the SUM call. It
// is NULL when the cast loses a digit (more than 27 integer or 38 fraction digits). The test is
// arithmetic: a comparison would see the sum rounded to its displayed scale.
const exactSumSQL = "IF((\x00 - CAST(\x00 AS DECIMAL(65,38))) * 100000000000000000000000000000000000000 = 0, CAST(\x00 AS DECIMAL(65,38)), NULL)"

// ExactSumSQL returns, in the pieces WeightSQL uses, the SQL text of the partial sum with
// every digit the server keeps (see Aggregate.Exact): the SUM call is written between each two
// consecutive pieces.
func ExactSumSQL() []string { return strings.Split(exactSumSQL, "\x00") }

// collation is what the merge learns about the collation of one weighted column from the
// first weight it reads; every later weight must carry the same signature.
type collation struct {
	known bool
	sig   []byte // flag, n and w2: the prefix of every weight of the column
	pad   bool   // PAD SPACE: trailing spaces do not count
	space []byte // the weight of one space
	// orderUnsafe: the server's ORDER BY of an expression does not follow the comparison.
	orderUnsafe bool
	err         error // the collation cannot be merged exactly
}

// weighted is a text column compared by its server weights.
type weighted struct {
	name   string // column name, for errors
	weight int    // hidden column of the weights
	// ordered: the column is compared for order (ORDER BY, MIN, MAX), not only for equality;
	// orderBy: it is an ORDER BY key.
	ordered, orderBy bool
	coll             collation
}

// learn reads the signature of the weight w (non-NULL) and checks it against what the column
// had so far. It returns the weight proper.
func (c *weighted) learn(w []byte) ([]byte, error) {
	if c.coll.known {
		if !bytes.HasPrefix(w, c.coll.sig) {
			return nil, notExactf("column %s has different collations in different sub-queries; the tables of the statement must have the same definition", c.name)
		}
		if c.coll.err != nil {
			return nil, c.coll.err
		}
		return w[len(c.coll.sig):], nil
	}
	c.coll.known = true
	if len(w) > 0 && w[0] == 'x' {
		c.coll.sig = bytes.Clone(w)
		c.coll.err = notExactf("column %s uses the collation %s, whose comparisons on the server do not follow its own weights; obroute cannot merge its order or groups exactly across tables: COLLATE the column to another collation in the statement, or narrow the range to one table", c.name, w[1:])
		return nil, c.coll.err
	}
	if len(w) < 2 || len(w) < 2+int(w[1]) {
		c.coll.err = notExactf("column %s: the sub-query returned a malformed weight %q", c.name, w)
		return nil, c.coll.err
	}
	n := int(w[1])
	c.coll.sig = bytes.Clone(w[:2+n])
	w2 := w[2 : 2+n]
	if n == 0 || n%2 != 0 || !bytes.Equal(w2[:n/2], w2[n/2:]) {
		c.coll.err = notExactf("column %s uses a collation that weighs on several levels (an accent- or case-sensitive UCA collation such as utf8mb4_uca1400_as_cs, or czech_cs, thai_520_w2), whose order obroute cannot merge exactly across tables: COLLATE it to a one-level collation (…_ai_ci, …_general_ci, …_bin) in the statement, or narrow the range to one table", c.name)
		return nil, c.coll.err
	}
	c.coll.pad = w[0] == '1' || w[0] == 'p'
	c.coll.orderUnsafe = w[0] == 'p' || w[0] == 'n'
	c.coll.space = c.coll.sig[2 : 2+n/2]
	if c.coll.orderUnsafe && c.orderBy {
		c.coll.err = notExactf("column %s uses a collation (a _bin or _nopad collation of a non-Unicode character set, or latin7's) whose ORDER BY of an expression the server does not sort by its own comparison; obroute cannot merge that order across tables: ORDER BY the column itself in another collation (…_general_ci, utf8mb4_bin), or narrow the range to one table", c.name)
		return nil, c.coll.err
	}
	return w[len(c.coll.sig):], nil
}

// check validates the weight of row's value in column col: a non-NULL string value has a
// weight of the column's collation. A value without a weight is not a string to the server
// (INET6, UUID): it may be grouped by its text, but not ordered.
func (c *weighted) check(row []driver.Value, col int) error {
	if row[col] == nil {
		return nil
	}
	w, ok := row[c.weight].([]byte)
	if !ok {
		if c.ordered {
			return notExactf("column %s is sent as text but the server orders it otherwise (a type such as INET6 or UUID, or text longer than max_allowed_packet allows to weigh); obroute cannot merge its order across tables: order by an expression of another type, or narrow the range to one table", c.name)
		}
		return nil
	}
	_, err := c.learn(w)
	return err
}

// compare orders the values of two rows (both non-NULL) of the column.
func (c *weighted) compare(a, b []driver.Value, col int) int {
	return c.comparePair(a[col], a[c.weight], b[col], b[c.weight])
}

// comparePair orders two non-NULL values va, vb of the column with their weights wa, wb.
func (c *weighted) comparePair(va, wa, vb, wb driver.Value) int {
	ba, oka := wa.([]byte)
	bb, okb := wb.([]byte)
	if !oka || !okb || !c.coll.known || c.coll.err != nil {
		// Not weighed (checked already: only compared for equality): by the text itself.
		return bytes.Compare(asBytes(va), asBytes(vb))
	}
	return c.coll.compare(ba[len(c.coll.sig):], bb[len(c.coll.sig):])
}

// compare orders two weights of the collation.
func (cl *collation) compare(wa, wb []byte) int {
	n := min(len(wa), len(wb))
	if x := bytes.Compare(wa[:n], wb[:n]); x != 0 || len(wa) == len(wb) {
		return x
	}
	if !cl.pad {
		if len(wa) < len(wb) {
			return -1
		}
		return 1
	}
	// PAD SPACE: the rest of the longer one compares with spaces.
	rest, sign := wb[n:], -1
	if len(wa) > len(wb) {
		rest, sign = wa[n:], 1
	}
	sp := cl.space
	for i, x := range rest {
		if s := sp[i%len(sp)]; x != s {
			if x < s {
				return -sign
			}
			return sign
		}
	}
	if len(rest)%len(sp) != 0 {
		return sign
	}
	return 0
}

// appendKey appends a key of the value of row's column col: two values get the same key
// exactly when compare says they are equal.
func (c *weighted) appendKey(buf []byte, row []driver.Value, col int) []byte {
	w, ok := row[c.weight].([]byte)
	if !ok || !c.coll.known || c.coll.err != nil {
		return append(append(buf, 'v'), asBytes(row[col])...)
	}
	w = w[len(c.coll.sig):]
	if c.coll.pad {
		for len(w) >= len(c.coll.space) && bytes.HasSuffix(w, c.coll.space) {
			w = w[:len(w)-len(c.coll.space)]
		}
	}
	return append(append(buf, 'w'), w...)
}
