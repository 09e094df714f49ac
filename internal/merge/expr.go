package merge

import (
	"database/sql/driver"
	"fmt"
	"strings"
	"time"
)

// Expr is a small boolean expression over a merged row, for HAVING. Build it
// with Col, Lit, Cmp, And, Or, Not and IsNull. It follows SQL's three-valued
// logic: a comparison with NULL is NULL, and a row is kept only when the
// expression is TRUE. Comparisons use the column comparison of the Col
// operand (so 'abc' = 'ABC' on a VARCHAR column).
type Expr interface {
	// String returns the expression in SQL-like text, for error messages.
	String() string
	bind(cols *columns) (evalFunc, kind, error)
}

// evalFunc evaluates a bound expression; booleans are int64 1/0, NULL is nil.
type evalFunc func(row []driver.Value) driver.Value

// CmpOp is a comparison operator of Cmp.
type CmpOp string

// Comparison operators. OpNullSafeEq is MySQL's <=> (NULL <=> NULL is TRUE).
const (
	OpEq         CmpOp = "="
	OpNe         CmpOp = "<>"
	OpLt         CmpOp = "<"
	OpLe         CmpOp = "<="
	OpGt         CmpOp = ">"
	OpGe         CmpOp = ">="
	OpNullSafeEq CmpOp = "<=>"
)

var (
	vTrue  driver.Value = int64(1)
	vFalse driver.Value = int64(0)
)

func boolValue(b bool) driver.Value {
	if b {
		return vTrue
	}
	return vFalse
}

// truth reads v as a SQL condition: known reports whether it is not NULL.
func truth(v driver.Value) (val, known bool) {
	switch x := v.(type) {
	case nil:
		return false, false
	case int64:
		return x != 0, true
	case bool:
		return x, true
	case time.Time:
		return !x.IsZero(), true
	}
	f, ok := toFloat(v)
	return ok && f != 0, true // like MySQL, text that is not a number is 0
}

type colExpr int

// Col is the value of column i of the merged row (hidden columns included).
func Col(i int) Expr { return colExpr(i) }

// String implements fmt.Stringer: the column by its index.
func (c colExpr) String() string { return fmt.Sprintf("col%d", int(c)) }

func (c colExpr) bind(cols *columns) (evalFunc, kind, error) {
	i := int(c)
	if i < 0 || i >= len(cols.kinds) {
		return nil, 0, invalidf("HAVING refers to column %d, the inputs have %d columns", i, len(cols.kinds))
	}
	return func(row []driver.Value) driver.Value { return row[i] }, cols.kinds[i], nil
}

type litExpr struct{ v any }

// Lit is a constant: nil (NULL), an integer, float, bool, string, []byte or
// time.Time.
func Lit(v any) Expr { return litExpr{v} }

// String implements fmt.Stringer: the literal as SQL.
func (l litExpr) String() string {
	switch x := l.v.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case []byte:
		return "'" + strings.ReplaceAll(string(x), "'", "''") + "'"
	}
	return fmt.Sprint(l.v)
}

func (l litExpr) bind(*columns) (evalFunc, kind, error) {
	v, err := driver.DefaultParameterConverter.ConvertValue(l.v)
	if err != nil {
		return nil, 0, invalidf("HAVING literal %v: %v", l.v, err)
	}
	return func([]driver.Value) driver.Value { return v }, kindOfValue(v), nil
}

type cmpExpr struct{ binaryOp[CmpOp, Expr] }

// Cmp compares a and b with op (=, <>, !=, <, <=, >, >=, <=>).
func Cmp(op CmpOp, a, b Expr) Expr { return cmpExpr{binaryOp[CmpOp, Expr]{op, a, b}} }

// binaryOp is an operation on two operands, of a Value (arithmetic) or an Expr (a comparison).
type binaryOp[Op ~byte | ~string, T fmt.Stringer] struct {
	op   Op
	a, b T
}

// String writes the operation as "(a op b)".
func (x binaryOp[Op, T]) String() string {
	return "(" + x.a.String() + " " + string(x.op) + " " + x.b.String() + ")"
}

func (c cmpExpr) bind(cols *columns) (evalFunc, kind, error) {
	fa, ka, err := c.a.bind(cols)
	if err != nil {
		return nil, 0, err
	}
	fb, kb, err := c.b.bind(cols)
	if err != nil {
		return nil, 0, err
	}
	// The column's comparison decides; between two literals, the left one's.
	k := ka
	if _, isCol := c.a.(colExpr); !isCol {
		if _, isCol := c.b.(colExpr); isCol {
			k = kb
		}
	}
	// A number compared with a FLOAT or DOUBLE (a column, or a literal written with an exponent)
	// is compared as doubles, as the server does: 0.01 = 1e-2 holds.
	if numeric(ka) && numeric(kb) && (ka == kindFloat || kb == kindFloat) {
		k = kindFloat
	}
	if err := c.comparable(k, ka, kb); err != nil {
		return nil, 0, err
	}
	var test func(int) bool
	switch c.op {
	case OpEq, OpNullSafeEq:
		test = func(x int) bool { return x == 0 }
	case OpNe, "!=":
		test = func(x int) bool { return x != 0 }
	case OpLt:
		test = func(x int) bool { return x < 0 }
	case OpLe:
		test = func(x int) bool { return x <= 0 }
	case OpGt:
		test = func(x int) bool { return x > 0 }
	case OpGe:
		test = func(x int) bool { return x >= 0 }
	default:
		return nil, 0, invalidf("HAVING operator %q is not one of = <> != < <= > >= <=>", c.op)
	}
	nullSafe := c.op == OpNullSafeEq
	return func(row []driver.Value) driver.Value {
		va, vb := fa(row), fb(row)
		if va == nil || vb == nil {
			if nullSafe {
				return boolValue(va == nil && vb == nil)
			}
			return nil
		}
		return boolValue(test(compareValues(k, va, vb)))
	}, kindNumber, nil
}

// numeric reports whether k is an exact number or a float.
func numeric(k kind) bool { return k == kindNumber || k == kindFloat }

// comparable refuses a comparison the merge cannot make as the server would: text, which
// compares by a collation (the rewrite has the sub-queries compare text and carry the
// result), or a number with a string that is not a number.
func (c cmpExpr) comparable(k, ka, kb kind) error {
	_, colA := c.a.(colExpr)
	_, colB := c.b.(colExpr)
	if (colA && ka == kindText) || (colB && kb == kindText) || (!colA && !colB && k == kindText) {
		return notExactf("HAVING %s compares text after merging, which depends on a collation; compare the text in a condition on one column or aggregate and a literal, or narrow the range to one table", c)
	}
	for _, side := range []Expr{c.a, c.b} {
		l, ok := side.(litExpr)
		if !ok {
			continue
		}
		if s, isText := l.v.(string); isText && (k == kindNumber || k == kindFloat) {
			if _, ok := parseDec([]byte(s)); !ok {
				return notExactf("HAVING %s compares a number with the string %q; write the number without quotes", c, s)
			}
		}
	}
	return nil
}

type logicExpr struct {
	and   bool
	terms []Expr
}

// And is TRUE when every term is TRUE, FALSE when any is FALSE, else NULL.
func And(terms ...Expr) Expr { return logicExpr{true, terms} }

// Or is TRUE when any term is TRUE, FALSE when every term is FALSE, else NULL.
func Or(terms ...Expr) Expr { return logicExpr{false, terms} }

// String implements fmt.Stringer, as SQL.
func (l logicExpr) String() string {
	parts := make([]string, len(l.terms))
	for i, t := range l.terms {
		parts[i] = t.String()
	}
	sep := " OR "
	if l.and {
		sep = " AND "
	}
	return "(" + strings.Join(parts, sep) + ")"
}

func (l logicExpr) bind(cols *columns) (evalFunc, kind, error) {
	if len(l.terms) == 0 {
		return nil, 0, invalidf("HAVING %s without terms", map[bool]string{true: "AND", false: "OR"}[l.and])
	}
	fs := make([]evalFunc, len(l.terms))
	for i, t := range l.terms {
		f, _, err := t.bind(cols)
		if err != nil {
			return nil, 0, err
		}
		fs[i] = f
	}
	and := l.and
	return func(row []driver.Value) driver.Value {
		unknown := false
		for _, f := range fs {
			v, known := truth(f(row))
			switch {
			case !known:
				unknown = true
			case v != and: // FALSE decides an AND, TRUE decides an OR
				return boolValue(v)
			}
		}
		if unknown {
			return nil
		}
		return boolValue(and)
	}, kindNumber, nil
}

type notExpr struct{ e Expr }

// Not is TRUE for FALSE, FALSE for TRUE, NULL for NULL.
func Not(e Expr) Expr { return notExpr{e} }

// String implements fmt.Stringer, as SQL.
func (n notExpr) String() string { return "NOT " + n.e.String() }

func (n notExpr) bind(cols *columns) (evalFunc, kind, error) {
	f, _, err := n.e.bind(cols)
	if err != nil {
		return nil, 0, err
	}
	return func(row []driver.Value) driver.Value {
		v, known := truth(f(row))
		if !known {
			return nil
		}
		return boolValue(!v)
	}, kindNumber, nil
}

type isNullExpr struct{ e Expr }

// IsNull is TRUE when e is NULL, else FALSE (never NULL).
func IsNull(e Expr) Expr { return isNullExpr{e} }

// String implements fmt.Stringer, as SQL.
func (n isNullExpr) String() string { return n.e.String() + " IS NULL" }

func (n isNullExpr) bind(cols *columns) (evalFunc, kind, error) {
	f, _, err := n.e.bind(cols)
	if err != nil {
		return nil, 0, err
	}
	return func(row []driver.Value) driver.Value { return boolValue(f(row) == nil) }, kindNumber, nil
}
