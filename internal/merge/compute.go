package merge

import (
	"database/sql/driver"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Computed is a column whose value is an arithmetic expression over merged aggregates
// (SUM(a)/COUNT(*), ROUND(AVG(a), 1), MAX(a) - MIN(a), COUNT(*) * 2), evaluated after the
// aggregates are merged, digit for digit as the server evaluates it: integer and DECIMAL
// arithmetic only. The server keeps an exact DECIMAL through +, - and *; a quotient keeps
// whole 9-digit words of fraction digits (the dividend's and divisor's words plus
// div_precision_increment) and drops the rest; ROUND rounds half away from zero to the
// digits it asks for, at most those of its argument's type; the result is rounded half away
// from zero to the scale of the column's type (one server's, Spec.ColumnTypes). Operands of
// another type (FLOAT, DOUBLE, text, times) are refused with ErrNotExact.
type Computed struct {
	// Column holds the expression: its type is the result's; the sub-queries' own values of
	// it are replaced by the computed one.
	Column int
	// Expr is the expression.
	Expr Value
	// Increment is the hidden column holding the server session's div_precision_increment
	// when Expr divides; 0 when it does not.
	Increment int
}

// Value is an arithmetic expression over merged aggregates, for Computed. Build it with Agg,
// Num, Arith, Neg and Round.
type Value interface {
	// String returns the expression in SQL-like text, for error messages.
	String() string
	bindValue(b *valueBinder) (valueFunc, error)
}

// number is an exact decimal: unscaled / 10^frac, with dec the fraction digits of its type
// (the server's "decimals" of the item that computed it).
type number struct {
	u     *big.Int
	frac  int
	dec   int
	isInt bool // of an integer type: ROUND keeps it whole
	null  bool
}

// valueEnv is what an expression reads: the merged group and the session's increment.
type valueEnv struct {
	g    *grouper
	gr   *group
	incr int
}

type valueFunc func(env *valueEnv) (number, error)

// valueBinder resolves the columns of a Value against the merge's aggregates and types.
type valueBinder struct {
	g      *grouper
	cols   *columns
	types  []ColumnType
	divide bool
}

type aggValue int

// Agg is the merged value of the aggregate (COUNT, SUM, AVG, MIN or MAX) in column i.
func Agg(i int) Value { return aggValue(i) }

// String names the column from 1, as EXPLAIN ROUTE does.
func (a aggValue) String() string { return fmt.Sprintf("col%d", int(a)+1) }

func (a aggValue) bindValue(b *valueBinder) (valueFunc, error) {
	col := int(a)
	k := -1
	for i := range b.g.aggs {
		if b.g.aggs[i].Column == col {
			k = i
		}
	}
	if k < 0 {
		return nil, invalidf("computed expression refers to column %d, which holds no aggregate", col)
	}
	ag := &b.g.aggs[k]
	if b.cols.kinds[col] != kindNumber {
		return nil, notExactf("column %d (%s) is a %s: only integer and DECIMAL aggregates are computed exactly after merging; select the aggregate itself and compute the expression in the application, or narrow the range to one table",
			col+1, b.cols.names[col], b.types[col].DatabaseTypeName)
	}
	if ag.Exact != 0 {
		return nil, notExactf("%s in column %d sums a quotient, whose digits the server keeps inside an expression but does not show; fix them with ROUND (%s(ROUND(x, n))), or narrow the range to one table", ag.Func, col+1, ag.Func)
	}
	dec := 0
	if t := b.types[col]; t.HasPrecisionScale {
		dec = int(t.Scale)
	}
	isInt := !strings.EqualFold(b.types[col].DatabaseTypeName, "DECIMAL")
	return func(env *valueEnv) (number, error) {
		st := &env.gr.aggs[k]
		switch ag.Func {
		case AggCount:
			return number{u: big.NewInt(st.count), dec: dec, isInt: true}, nil
		case AggSum, AggAvg:
			if !st.seen || (ag.Func == AggAvg && st.count == 0) {
				return number{null: true}, nil
			}
			if st.asFloat {
				return number{}, notExactf("%s in column %d is a floating-point sum; select the aggregate itself and compute the expression in the application", ag.Func, col+1)
			}
			n := number{u: st.sum.unscaled(), frac: st.sum.scale, dec: dec}
			if ag.Func == AggAvg {
				return quotient(n, number{u: big.NewInt(st.count)}, st.incr, dec)
			}
			return n, nil
		case AggBitAnd, AggBitOr, AggBitXor:
			return number{u: new(big.Int).SetUint64(st.bits), dec: dec, isInt: true}, nil
		}
		if !st.seen {
			return number{null: true}, nil
		}
		n, ok := readNumber(st.val)
		if !ok {
			return number{}, badValue(col, ag.Func.String(), st.val)
		}
		n.dec, n.isInt = dec, isInt
		return n, nil
	}, nil
}

// readNumber reads an integer or DECIMAL value with the fraction digits it is written with.
func readNumber(v driver.Value) (number, bool) {
	var d decSum
	switch x := v.(type) {
	case int64:
		d.addInt(x)
	case uint64:
		d.addUint(x)
	case []byte:
		if !d.addText(x) {
			return number{}, false
		}
	default:
		return number{}, false
	}
	return number{u: d.unscaled(), frac: d.scale}, true
}

type numValue string

// Num is an integer or decimal literal as written ("2", "1.50").
func Num(text string) Value { return numValue(text) }

// String implements fmt.Stringer: the number as written.
func (n numValue) String() string { return string(n) }

func (n numValue) bindValue(*valueBinder) (valueFunc, error) {
	v, ok := readNumber([]byte(n))
	if !ok {
		return nil, invalidf("%q is not a decimal literal", string(n))
	}
	v.dec, v.isInt = v.frac, !strings.Contains(string(n), ".")
	return func(*valueEnv) (number, error) { return v, nil }, nil
}

type arithValue struct{ binaryOp[byte, Value] }

// Arith is a op b, op one of + - * /.
func Arith(op byte, a, b Value) Value { return arithValue{binaryOp[byte, Value]{op, a, b}} }

// maxScale is the most fraction digits a DECIMAL has.
const maxScale = 38

func (x arithValue) bindValue(b *valueBinder) (valueFunc, error) {
	fa, err := x.a.bindValue(b)
	if err != nil {
		return nil, err
	}
	fb, err := x.b.bindValue(b)
	if err != nil {
		return nil, err
	}
	if !strings.ContainsRune("+-*/", rune(x.op)) {
		return nil, invalidf("operator %q is not one of + - * /", x.op)
	}
	b.divide = b.divide || x.op == '/'
	op, text := x.op, x.String()
	return func(env *valueEnv) (number, error) {
		a, err := fa(env)
		if err != nil || a.null {
			return a, err
		}
		c, err := fb(env)
		if err != nil || c.null {
			return c, err
		}
		switch op {
		case '+', '-':
			f := max(a.frac, c.frac)
			u, v := scaleTo(a, f), scaleTo(c, f)
			if op == '+' {
				u.Add(u, v)
			} else {
				u.Sub(u, v)
			}
			return number{u: u, frac: f, dec: max(a.dec, c.dec), isInt: a.isInt && c.isInt}, nil
		case '*':
			if a.frac+c.frac > maxScale {
				return number{}, notExactf("%s has more than %d fraction digits; round its operands", text, maxScale)
			}
			return number{u: new(big.Int).Mul(a.u, c.u), frac: a.frac + c.frac, dec: min(a.dec+c.dec, maxScale), isInt: a.isInt && c.isInt}, nil
		}
		if c.u.Sign() == 0 {
			return number{null: true}, nil // division by zero is NULL
		}
		return quotient(a, c, env.incr, min(a.dec+env.incr, maxScale))
	}, nil
}

// quotient divides a by c as the server does: the quotient keeps whole 9-digit words of
// fraction digits, those of the operands' words and div_precision_increment beyond them, and
// drops the rest; a zero dividend is a zero without fraction digits.
func quotient(a, c number, incr, dec int) (number, error) {
	if a.u.Sign() == 0 {
		return number{u: new(big.Int), dec: dec}, nil
	}
	w1, w2 := ceil9(a.frac), ceil9(c.frac)
	f := ceil9(w1 + w2 + max(0, incr-(w1-a.frac)-(w2-c.frac)))
	if f > 81 {
		return number{}, notExactf("a quotient keeps %d fraction digits, more than a DECIMAL holds; round its operands", f)
	}
	// a/c at f digits: a.u * 10^(f - a.frac + c.frac) / c.u, cut toward zero.
	n := new(big.Int).Mul(a.u, pow10Big(f-a.frac+c.frac))
	return number{u: n.Quo(n, c.u), frac: f, dec: dec}, nil
}

// scaleTo returns n's unscaled value at f ≥ n.frac fraction digits (a new big.Int).
func scaleTo(n number, f int) *big.Int {
	return new(big.Int).Mul(n.u, pow10Big(f-n.frac))
}

type negValue struct{ a Value }

// Neg is -a.
func Neg(a Value) Value { return negValue{a} }

// String implements fmt.Stringer, as SQL.
func (x negValue) String() string { return "-" + x.a.String() }

func (x negValue) bindValue(b *valueBinder) (valueFunc, error) {
	fa, err := x.a.bindValue(b)
	if err != nil {
		return nil, err
	}
	return func(env *valueEnv) (number, error) {
		a, err := fa(env)
		if err != nil || a.null {
			return a, err
		}
		return number{u: new(big.Int).Neg(a.u), frac: a.frac, dec: a.dec, isInt: a.isInt}, nil
	}, nil
}

type roundValue struct {
	a Value
	n int
}

// Round is ROUND(a, n): half away from zero to n fraction digits (at most 38), shown with n
// digits; an integer stays one.
func Round(a Value, n int) Value { return roundValue{a, n} }

// String implements fmt.Stringer, as SQL.
func (x roundValue) String() string { return "ROUND(" + x.a.String() + ", " + strconv.Itoa(x.n) + ")" }

func (x roundValue) bindValue(b *valueBinder) (valueFunc, error) {
	fa, err := x.a.bindValue(b)
	if err != nil {
		return nil, err
	}
	n := x.n
	return func(env *valueEnv) (number, error) {
		a, err := fa(env)
		if err != nil || a.null {
			return a, err
		}
		to := min(n, maxScale)
		if a.isInt {
			if to >= 0 {
				return a, nil
			}
			r := roundNumber(a, to, 0)
			r.isInt = true
			return r, nil
		}
		return roundNumber(a, to, max(to, 0)), nil
	}, nil
}

// roundNumber rounds n half away from zero to `to` fraction digits (to < 0: to tens, hundreds…);
// the result has max(to, 0) fraction digits and dec as its type's.
func roundNumber(n number, to, dec int) number {
	if to >= n.frac {
		return number{u: scaleTo(n, to), frac: to, dec: dec}
	}
	u := roundQuo(n.u, n.frac, big.NewInt(1), to, false)
	if to < 0 {
		u.Mul(u, pow10Big(-to))
		to = 0
	}
	return number{u: u, frac: to, dec: dec}
}
