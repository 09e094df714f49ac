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
// the pad attribute and the weight of a space come along, and a collation that weighs on
// several levels (accent- or case-sensitive UCA) puts its levels one after the other, which
// bytes cannot compare. What depends only on the collation, its signature, is read once per
// statement (SignatureSQL, in Spec.Collations); each row carries its value's weight and the
// name of its collation (WeightSQL), which must be the one the signature was read for.
//
// A signature is the collation's name, a space and:
//
//	flag    '1' PAD SPACE, '0' NO PAD (the server's own answer to 'a' = 'a '); 'p' and 'n'
//	        the same for a collation whose ORDER BY the server does not sort by its own
//	        comparison (see orderUnsafeExpr)
//	n       one byte: the length of the next part
//	w2      the weight of two spaces: two equal halves for a one-level collation
//
// or 'x' for a collation whose comparisons do not follow its own weights (big5_chinese_ci and
// big5_chinese_nopad_ci weigh some distinct characters alike, tis620_thai_nopad_ci ignores a
// trailing NUL in comparisons only). It is NULL for an expression that is not a string
// (numbers and times, and INET6 or UUID values, which the wire sends as text but the server
// orders otherwise).

// weightSQL is the expression of a weight column; each \x00 stands for the compared expression.
const weightSQL = "CONCAT(COLLATION(\x00), ' ', WEIGHT_STRING(\x00))"

// signatureSQL is the expression of a collation's signature; each \x00 stands for the compared
// expression (an aggregate, so that a statement with no row has one row of them), and %s for
// the pattern of the collations whose ORDER BY the server does not sort by its own comparison.
// IFNULL keeps the expression's collation where its value is NULL.
const signatureSQL = "IF(COERCIBILITY(\x00) < 5 AND COLLATION(\x00) <> 'binary', CONCAT(COLLATION(\x00), ' ', " +
	"IF(COLLATION(\x00) IN ('big5_chinese_ci', 'big5_chinese_nopad_ci', 'tis620_thai_nopad_ci'), 'x', " +
	"CONCAT(ELT(1 + (CONCAT(IFNULL(LEFT(\x00, 0), ''), 'a') = CONCAT(IFNULL(LEFT(\x00, 0), ''), 'a ')) + 2 * (COLLATION(\x00) REGEXP '%s'), '0', '1', 'n', 'p'), " +
	"CHAR(LENGTH(WEIGHT_STRING(CONCAT(IFNULL(LEFT(\x00, 0), ''), '  ')))), WEIGHT_STRING(CONCAT(IFNULL(LEFT(\x00, 0), ''), '  '))))), NULL)"

// MariaDB sorts an ORDER BY expression in the _bin and _nopad collations of the non-Unicode
// character sets (and ucs2_bin) otherwise than it compares (a trailing tab or NUL against
// nothing), and an ORDER BY column or expression in latin7's collations; ORDER BY those is
// refused (TestWeightsCompareAsServer finds them).
const (
	orderUnsafeExpr   = "^(?!utf(8|16|32))[a-z0-9]+_(bin|.*nopad.*)$|^latin7_"
	orderUnsafeColumn = "^latin7_"
)

// WeightSQL returns the SQL text of the weight column of an expression (see Spec.Weights) in
// pieces: the expression is written between each two consecutive pieces.
func WeightSQL() []string { return strings.Split(weightSQL, "\x00") }

// SignatureSQL returns, in the pieces WeightSQL uses, the SQL text of the signature of an
// expression's collation (see Spec.Collations), written around an aggregate of it (MIN of it,
// unless it has an aggregate) in a statement without GROUP BY. column says the expression is a
// column of a table, which the server orders by its own comparison in more collations than
// other expressions.
func SignatureSQL(column bool) []string {
	pattern := orderUnsafeExpr
	if column {
		pattern = orderUnsafeColumn
	}
	return strings.Split(fmt.Sprintf(signatureSQL, pattern), "\x00")
}

// exactSumSQL is the expression of an exact partial sum; each \x00 stands for the SUM call. It
// is NULL when the cast loses a digit (more than 27 integer or 38 fraction digits). The test is
// arithmetic: a comparison would see the sum rounded to its displayed scale.
const exactSumSQL = "IF((\x00 - CAST(\x00 AS DECIMAL(65,38))) * 100000000000000000000000000000000000000 = 0, CAST(\x00 AS DECIMAL(65,38)), NULL)"

// ExactSumSQL returns, in the pieces WeightSQL uses, the SQL text of the partial sum with
// every digit the server keeps (see Aggregate.Exact): the SUM call is written between each two
// consecutive pieces.
func ExactSumSQL() []string { return strings.Split(exactSumSQL, "\x00") }

// collation is the collation of one weighed column, from its signature.
type collation struct {
	name  []byte // the collation's name, and a space: the prefix of every weight
	pad   bool   // PAD SPACE: trailing spaces do not count
	space []byte // the weight of one space
	// orderUnsafe: the server's ORDER BY does not follow the comparison.
	orderUnsafe bool
	err         error // the collation cannot be merged exactly
}

// parseSignature reads a signature (see SignatureSQL) for the column named column.
func parseSignature(column string, sig []byte, orderBy bool) collation {
	var c collation
	name, rest, ok := bytes.Cut(sig, []byte(" "))
	c.name = append(name[:len(name):len(name)], ' ')
	switch {
	case !ok || len(rest) == 0:
		c.err = notExactf("column %s: the sub-query returned a malformed collation signature %q", column, sig)
	case rest[0] == 'x':
		c.err = notExactf("column %s uses the collation %s, whose comparisons on the server do not follow its own weights; obroute cannot merge its order or groups exactly across tables: COLLATE the column to another collation in the statement, or narrow the range to one table", column, name)
	case len(rest) < 2 || len(rest) != 2+int(rest[1]):
		c.err = notExactf("column %s: the sub-query returned a malformed collation signature %q", column, sig)
	default:
		n := int(rest[1])
		w2 := rest[2:]
		if n == 0 || n%2 != 0 || !bytes.Equal(w2[:n/2], w2[n/2:]) {
			c.err = notExactf("column %s uses the collation %s, which weighs on several levels (an accent- or case-sensitive UCA collation such as utf8mb4_uca1400_as_cs, or czech_cs, thai_520_w2), whose order obroute cannot merge exactly across tables: COLLATE it to a one-level collation (…_ai_ci, …_general_ci, …_bin) in the statement, or narrow the range to one table", column, name)
			break
		}
		c.pad = rest[0] == '1' || rest[0] == 'p'
		c.orderUnsafe = rest[0] == 'p' || rest[0] == 'n'
		c.space = bytes.Clone(w2[:n/2])
		if c.orderUnsafe && orderBy {
			c.err = notExactf("column %s uses the collation %s, whose ORDER BY of an expression the server does not sort by its own comparison (a _bin or _nopad collation of a non-Unicode character set, or latin7's); obroute cannot merge that order across tables: ORDER BY the column itself in another collation (…_general_ci, utf8mb4_bin), or narrow the range to one table", column, name)
		}
	}
	return c
}

// weighted is a text column compared by its server weights.
type weighted struct {
	name   string // column name, for errors
	weight int    // hidden column of the weights
	// ordered: the column is compared for order (ORDER BY, MIN, MAX), not only for equality.
	ordered bool
	// notString: the server does not order the column as a string (no signature): its values
	// are grouped by their text, never ordered.
	notString bool
	coll      collation
	// stale is called when a row's weight is of another collation than the signature's.
	stale func()
}

// check validates the weight of row's value in column col: a non-NULL string value has a
// weight of the column's collation.
func (c *weighted) check(row []driver.Value, col int) error {
	if row[col] == nil {
		return nil
	}
	if c.notString {
		if c.ordered {
			return notExactf("column %s is sent as text but the server orders it otherwise (a type such as INET6 or UUID); obroute cannot merge its order across tables: order by an expression of another type, or narrow the range to one table", c.name)
		}
		return nil
	}
	if c.coll.err != nil {
		return c.coll.err
	}
	w, ok := row[c.weight].([]byte)
	if !ok {
		return notExactf("column %s: the sub-query returned no weight for a text value (text longer than max_allowed_packet allows to weigh?); narrow the range to one table", c.name)
	}
	if !bytes.HasPrefix(w, c.coll.name) {
		if c.stale != nil {
			c.stale()
		}
		return notExactf("column %s is no longer in the collation %s obroute read for the statement (the table was redefined): run the statement again", c.name, c.coll.name[:len(c.coll.name)-1])
	}
	return nil
}

// compare orders the values of two rows (both non-NULL) of the column.
func (c *weighted) compare(a, b []driver.Value, col int) int {
	return c.comparePair(a[col], a[c.weight], b[col], b[c.weight])
}

// comparePair orders two non-NULL values va, vb of the column with their weights wa, wb.
func (c *weighted) comparePair(va, wa, vb, wb driver.Value) int {
	ba, oka := wa.([]byte)
	bb, okb := wb.([]byte)
	if c.notString || !oka || !okb || c.coll.err != nil {
		// Not weighed (checked already: only compared for equality): by the text itself.
		return bytes.Compare(asBytes(va), asBytes(vb))
	}
	return c.coll.compare(ba[len(c.coll.name):], bb[len(c.coll.name):])
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
	if c.notString || !ok || c.coll.err != nil {
		return append(append(buf, 'v'), asBytes(row[col])...)
	}
	w = w[len(c.coll.name):]
	if c.coll.pad {
		for len(w) >= len(c.coll.space) && bytes.HasSuffix(w, c.coll.space) {
			w = w[:len(w)-len(c.coll.space)]
		}
	}
	return append(append(buf, 'w'), w...)
}
