package routing

import (
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/obroute/obroute/internal/merge"
)

// overAggregates reports whether e is an expression over aggregates (SUM(a)/COUNT(*),
// ROUND(AVG(a), 1)) rather than an aggregate or a plain expression.
func overAggregates(e sqlparser.Expr) bool {
	switch x := e.(type) {
	case *sqlparser.FuncExpr:
		if x.IsAggregate() {
			return false
		}
	case *sqlparser.GroupConcatExpr:
		return false
	}
	return containsAggregate(e)
}

// addComputed makes column col, which holds the expression e over aggregates, a column the
// merge computes from the merged aggregates: each aggregate of e is merged in its own column
// (hidden when not selected), and e is evaluated after them. The sub-queries still compute e
// in col, so that its type is one server's.
func (p *mergePlanner) addComputed(col int, e sqlparser.Expr) error {
	c := merge.Computed{Column: col}
	divides := false
	var err error
	if c.Expr, err = p.value(e, e, &divides); err != nil {
		return err
	}
	if divides {
		c.Increment = p.snippetColumn([]string{"@@div_precision_increment"}, nil)
	}
	p.spec.Computed = append(p.spec.Computed, c)
	p.computedCols[col] = true
	return nil
}

// value translates the part e of the expression whole into a merge.Value.
func (p *mergePlanner) value(e, whole sqlparser.Expr, divides *bool) (merge.Value, error) {
	switch x := e.(type) {
	case *sqlparser.ParenExpr:
		return p.value(x.Expr, whole, divides)
	case *sqlparser.SQLVal:
		if x.Type == sqlparser.IntVal || x.Type == sqlparser.FloatVal && !strings.ContainsAny(string(x.Val), "eE") {
			return merge.Num(string(x.Val)), nil
		}
	case *sqlparser.UnaryExpr:
		switch x.Operator {
		case sqlparser.UMinusStr:
			a, err := p.value(x.Expr, whole, divides)
			if err != nil {
				return nil, err
			}
			return merge.Neg(a), nil
		case sqlparser.UPlusStr:
			return p.value(x.Expr, whole, divides)
		}
	case *sqlparser.BinaryExpr:
		switch x.Operator {
		case sqlparser.PlusStr, sqlparser.MinusStr, sqlparser.MultStr, sqlparser.DivStr:
			a, err := p.value(x.Left, whole, divides)
			if err != nil {
				return nil, err
			}
			b, err := p.value(x.Right, whole, divides)
			if err != nil {
				return nil, err
			}
			*divides = *divides || x.Operator == sqlparser.DivStr
			return merge.Arith(x.Operator[0], a, b), nil
		}
	case *sqlparser.FuncExpr:
		if x.IsAggregate() {
			return p.aggregateValue(x, whole)
		}
		if x.Name.Lowered() == "round" && (len(x.Exprs) == 1 || len(x.Exprs) == 2) {
			n, ok := 0, true
			if len(x.Exprs) == 2 {
				n, ok = intArg(x.Exprs[1])
			}
			if ae, isExpr := x.Exprs[0].(*sqlparser.AliasedExpr); isExpr && ok {
				a, err := p.value(ae.Expr, whole, divides)
				if err != nil {
					return nil, err
				}
				return merge.Round(a, n), nil
			}
		}
	}
	return nil, notMergeable("%s in %s cannot be computed exactly after merging: only +, -, *, /, unary minus and ROUND(x, n) over COUNT, SUM, AVG, MIN, MAX and number literals are; select the aggregates themselves and compute the expression in the application, or narrow the range to one table",
		nodeText(e), nodeText(whole))
}

// aggregateValue is the merged aggregate x of an expression: its column, hidden when not selected.
func (p *mergePlanner) aggregateValue(x *sqlparser.FuncExpr, whole sqlparser.Expr) (merge.Value, error) {
	f, arg, err := p.aggregate(x)
	if err != nil {
		return nil, err
	}
	if f >= merge.AggBitAnd {
		// BIGINT UNSIGNED arithmetic: a sub-query computing the expression over a table with no
		// row fails where one server would not (BIT_OR(x) - 1 of 0), and below zero the server
		// fails where the merge would answer.
		return nil, notMergeable("%s in %s: arithmetic on a BIT aggregate is BIGINT UNSIGNED, whose overflow depends on each table's partial; select %s itself and compute the expression in the application", nodeText(x), nodeText(whole), nodeText(x))
	}
	if arg != nil && hiddenDigits(arg) {
		return nil, notMergeable("%s in %s: the server computes with digits of the quotient that it does not show; fix them with ROUND (%s(ROUND(%s, n))), or narrow the range to one table",
			nodeText(x), nodeText(whole), strings.ToUpper(f.String()), nodeText(arg))
	}
	col, err := p.aggColumn(x, f, arg)
	if err != nil {
		return nil, err
	}
	return merge.Agg(col), nil
}

// intArg reads an integer literal argument, negative ones included.
func intArg(se sqlparser.SelectExpr) (int, bool) {
	ae, ok := se.(*sqlparser.AliasedExpr)
	if !ok {
		return 0, false
	}
	neg := false
	e := ae.Expr
	if u, ok := e.(*sqlparser.UnaryExpr); ok && u.Operator == sqlparser.UMinusStr {
		neg, e = true, u.Expr
	}
	v, ok := e.(*sqlparser.SQLVal)
	if !ok || v.Type != sqlparser.IntVal || len(v.Val) > 3 {
		return 0, false
	}
	n := 0
	for _, c := range v.Val {
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
