package merge

import (
	"database/sql/driver"
	"fmt"
	"strings"
)

// comparer compares the values of one column, the same way for ORDER BY, GROUP BY, DISTINCT,
// MIN and MAX, so that two values are in one group exactly when they sort as equal.
type comparer struct {
	col  int
	kind kind
	w    *weighted // text compared by the server's weights; nil for other kinds
}

// compare orders the column's values in rows a and b: NULL first.
func (c *comparer) compare(a, b []driver.Value) int {
	va, vb := a[c.col], b[c.col]
	if va == nil || vb == nil || c.w == nil {
		return compareValues(c.kind, va, vb)
	}
	return c.w.compare(a, b, c.col)
}

// appendKey appends a key of the column's value in row: equal keys exactly for values that
// compare as equal.
func (c *comparer) appendKey(buf []byte, row []driver.Value) []byte {
	if c.w == nil || row[c.col] == nil {
		return appendKey(buf, c.kind, row[c.col])
	}
	start := len(buf)
	buf = append(buf, 1, 0, 0, 0, 0)
	buf = c.w.appendKey(buf, row, c.col)
	n := len(buf) - start - 5
	buf[start+1], buf[start+2], buf[start+3], buf[start+4] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return buf
}

// columns holds the comparer of every column of the inputs and the checks of their rows.
type columns struct {
	names []string
	kinds []kind
	cmp   []*comparer
	// weighted lists the text columns that have weights, to check each input row.
	weighted []*comparer
}

// use says how the merge compares a column.
type use uint8

const (
	useEqual   use = 1 << iota // GROUP BY, DISTINCT: equality
	useOrder                   // MIN, MAX: order
	useOrderBy                 // ORDER BY: order, and the server's ORDER BY order
)

// newColumns decides how each column compares: by the kind of its type, text by its weights.
// Text that is compared but has no weight column cannot be compared as the server does.
func newColumns(spec *Spec, names []string, types []ColumnType, uses []use) (*columns, error) {
	cs := &columns{names: names, kinds: make([]kind, len(names)), cmp: make([]*comparer, len(names))}
	all := make([]comparer, len(names))
	for i := range names {
		cs.kinds[i] = kindOfType(types[i].DatabaseTypeName)
		c := &all[i]
		*c = comparer{col: i, kind: cs.kinds[i]}
		cs.cmp[i] = c
		if i < len(spec.Weights) && spec.Weights[i] != 0 && cs.kinds[i] == kindText {
			name := fmt.Sprintf("%d (%s)", i+1, names[i])
			c.w = &weighted{name: name, weight: spec.Weights[i], ordered: uses[i]&(useOrder|useOrderBy) != 0,
				notString: spec.Collations[i] == nil, stale: spec.Stale}
			if !c.w.notString {
				c.w.coll = parseSignature(name, spec.Collations[i], uses[i]&useOrderBy != 0)
			}
			cs.weighted = append(cs.weighted, c)
		}
		if uses[i] == 0 || cs.kinds[i] != kindText {
			continue
		}
		name := strings.ToUpper(types[i].DatabaseTypeName)
		if (name == "ENUM" || name == "SET") && i < len(spec.Ordinals) && spec.Ordinals[i] != 0 {
			// Ordered and grouped by its values' positions, as the server does: one value
			// per position (the definition holds no two values its collation finds equal).
			*c = comparer{col: spec.Ordinals[i], kind: kindNumber}
			if n := len(cs.weighted); n > 0 && cs.weighted[n-1] == c {
				cs.weighted = cs.weighted[:n-1]
			}
			continue
		}
		if uses[i]&useOrderBy != 0 && (name == "ENUM" || name == "SET") {
			return nil, notExactf("column %d (%s) is an %s, which the server orders by the position of its values in the column's definition; obroute cannot merge that order across tables: order by %s+0 (definition order) or CAST(%s AS CHAR) (text order), or narrow the range to one table",
				i+1, names[i], name, names[i], names[i])
		}
		if c.w == nil {
			// The rewrite weighs every expression that may be text: this one it took for a number
			// (a || b under sql_mode PIPES_AS_CONCAT).
			return nil, notExactf("column %d (%s) is text but was planned as a number, so its collation is not known to the merge; write CONCAT() for || (sql_mode PIPES_AS_CONCAT), or narrow the range to one table", i+1, names[i])
		}
	}
	return cs, nil
}

// check validates the weights of one input row.
func (cs *columns) check(row []driver.Value) error {
	for _, c := range cs.weighted {
		if err := c.w.check(row, c.col); err != nil {
			return err
		}
	}
	return nil
}
