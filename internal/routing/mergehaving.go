package routing

import (
	"slices"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/obroute/obroute/internal/merge"
)

var havingOps = map[string]merge.CmpOp{
	sqlparser.EqualStr: merge.OpEq, sqlparser.NotEqualStr: merge.OpNe, sqlparser.LessThanStr: merge.OpLt,
	sqlparser.LessEqualStr: merge.OpLe, sqlparser.GreaterThanStr: merge.OpGt, sqlparser.GreaterEqualStr: merge.OpGe,
	sqlparser.NullSafeEqualStr: merge.OpNullSafeEq,
}

// condition translates a HAVING condition into a merge expression over leg columns. A
// condition on group keys and at most one MIN or MAX is computed by the sub-queries, with the
// server's collations, session settings and functions, and carried with the partial row the
// merge keeps; conditions on COUNT, SUM and AVG compare merged numbers.
func (p *mergePlanner) condition(e sqlparser.Expr) (merge.Expr, error) {
	if c, ok, err := p.carried(e); err != nil || ok {
		return merge.Col(c), err
	}
	switch x := e.(type) {
	case *sqlparser.ParenExpr:
		return p.condition(x.Expr)
	case *sqlparser.AndExpr:
		return p.both(x.Left, x.Right, merge.And)
	case *sqlparser.OrExpr:
		return p.both(x.Left, x.Right, merge.Or)
	case *sqlparser.NotExpr:
		a, err := p.condition(x.Expr)
		if err != nil {
			return nil, err
		}
		return merge.Not(a), nil
	case *sqlparser.RangeCond:
		return p.between(x)
	case *sqlparser.ComparisonExpr:
		if x.Operator == sqlparser.InStr || x.Operator == sqlparser.NotInStr {
			return p.in(x)
		}
		op, ok := havingOps[x.Operator]
		if !ok {
			return nil, notMergeable("HAVING %s: only =, <>, <, <=, >, >=, <=> comparisons of COUNT, SUM or AVG can be applied after merging; select the aggregate and filter in the application", nodeText(x))
		}
		if (isDouble(x.Left) && p.innerDigits(x.Right)) || (isDouble(x.Right) && p.innerDigits(x.Left)) {
			return nil, p.innerDigitsRefusal(x)
		}
		a, err := p.operand(x.Left)
		if err != nil {
			return nil, err
		}
		b, err := p.operand(x.Right)
		if err != nil {
			return nil, err
		}
		return merge.Cmp(op, a, b), nil
	case *sqlparser.IsExpr:
		a, err := p.operand(x.Expr)
		if err != nil {
			return nil, err
		}
		switch x.Operator {
		case sqlparser.IsNullStr:
			return merge.IsNull(a), nil
		case sqlparser.IsNotNullStr:
			return merge.Not(merge.IsNull(a)), nil
		}
	default:
		return p.operand(e)
	}
	return nil, notMergeable("HAVING %s cannot be applied after merging; keep HAVING to comparisons of selected columns and aggregates", nodeText(e))
}

// between translates x [NOT] BETWEEN a AND b over a merged aggregate: (x >= a AND x <= b),
// which is what the server computes when a and b are numbers (NULL when a comparison is). The
// server compares the three in one type: when a bound is a DOUBLE (1e9), both bounds are
// compared as DOUBLE values.
func (p *mergePlanner) between(x *sqlparser.RangeCond) (merge.Expr, error) {
	if p.innerDigits(x.Left) {
		return nil, p.innerDigitsRefusal(x)
	}
	from, err := numberBound(x, x.From)
	if err != nil {
		return nil, err
	}
	to, err := numberBound(x, x.To)
	if err != nil {
		return nil, err
	}
	if from.double || to.double {
		from, to = from.asDouble(), to.asDouble()
	}
	a, err := p.operand(x.Left)
	if err != nil {
		return nil, err
	}
	e := merge.And(merge.Cmp(merge.OpGe, a, from.lit()), merge.Cmp(merge.OpLe, a, to.lit()))
	if x.Operator == sqlparser.NotBetweenStr {
		e = merge.Not(e)
	}
	return e, nil
}

// in translates x [NOT] IN (v, …) over a merged aggregate: (x = v OR …), which is what the
// server computes when the values are numbers, each compared on its own (NULL when no value is
// equal and one is NULL).
func (p *mergePlanner) in(x *sqlparser.ComparisonExpr) (merge.Expr, error) {
	list, ok := x.Right.(sqlparser.ValTuple)
	if !ok {
		return nil, notMergeable("HAVING %s: only a list of numbers can follow IN after merging; select the aggregate and filter in the application", nodeText(x))
	}
	if len(list) > 1 && p.innerDigits(x.Left) {
		return nil, p.innerDigitsRefusal(x)
	}
	a, err := p.operand(x.Left)
	if err != nil {
		return nil, err
	}
	eqs := make([]merge.Expr, len(list))
	for i, v := range list {
		n, err := numberBound(x, v)
		if err != nil {
			return nil, err
		}
		eqs[i] = merge.Cmp(merge.OpEq, a, n.lit())
	}
	e := merge.Or(eqs...)
	if x.Operator == sqlparser.NotInStr {
		e = merge.Not(e)
	}
	return e, nil
}

// innerDigits reports whether e (a select alias standing for its item) holds an AVG, or a SUM
// of a quotient: values the server keeps with more digits than it shows (AVG of an integer
// to a 9-digit word), and compares with those digits in BETWEEN, in an IN of several values
// and against a DOUBLE, where = < > compare the shown value.
func (p *mergePlanner) innerDigits(e sqlparser.Expr) bool {
	found := false
	var visit func(n sqlparser.SQLNode) (bool, error)
	visit = func(n sqlparser.SQLNode) (bool, error) {
		switch x := n.(type) {
		case *sqlparser.FuncExpr:
			if name := x.Name.Lowered(); name == "avg" {
				found = true
			} else if name == "sum" && hiddenDigits(x) {
				found = true
			}
		case *sqlparser.ColName:
			if i := slices.Index(p.aliases, x.Name.Lowered()); x.Qualifier.IsEmpty() && i >= 0 && i < p.visible {
				_ = sqlparser.Walk(visit, p.sel.SelectExprs[i].(*sqlparser.AliasedExpr).Expr)
			}
		}
		return !found, nil
	}
	_ = sqlparser.Walk(visit, e)
	return found
}

func (p *mergePlanner) innerDigitsRefusal(x sqlparser.Expr) error {
	return notMergeable("HAVING %s: the server compares an AVG (or a SUM of a quotient) here with digits it keeps but does not show, which the merge does not have; compare it with =, <, <=, >, >= and a decimal number, or select it and filter in the application", nodeText(x))
}

// isDouble reports whether e is a number literal written with an exponent (a DOUBLE).
func isDouble(e sqlparser.Expr) bool {
	n, err := numberBound(e, e)
	return err == nil && n.double
}

// number is a number literal of a BETWEEN or IN: NULL, an integer, a DECIMAL (its digits) or a
// DOUBLE (written with an exponent).
type number struct {
	null   bool
	text   string // the digits as written, with a leading "-" when negated
	double bool
}

// numberBound reads e, a number or NULL literal of cond, negated by any unary minus; anything
// else is refused: BETWEEN and IN compare as the server does only over numbers.
func numberBound(cond, e sqlparser.Expr) (number, error) {
	neg := false
	for {
		switch v := e.(type) {
		case *sqlparser.ParenExpr:
			e = v.Expr
			continue
		case *sqlparser.UnaryExpr:
			if v.Operator == sqlparser.UMinusStr || v.Operator == sqlparser.UPlusStr {
				neg = neg != (v.Operator == sqlparser.UMinusStr)
				e = v.Expr
				continue
			}
		case *sqlparser.NullVal:
			return number{null: true}, nil
		case *sqlparser.SQLVal:
			text := string(v.Val)
			if (v.Type == sqlparser.IntVal || v.Type == sqlparser.FloatVal) && text != "" {
				if strings.HasPrefix(text, "-") {
					neg, text = !neg, text[1:]
				}
				if neg {
					text = "-" + text
				}
				return number{text: text, double: v.Type == sqlparser.FloatVal && strings.ContainsAny(text, "eE")}, nil
			}
		}
		return number{}, notMergeable("HAVING %s: after merging, BETWEEN and IN compare COUNT, SUM or AVG only with numbers written in the statement; write %s as a number, or select the aggregate and filter in the application", nodeText(cond), nodeText(e))
	}
}

// asDouble is n read as a DOUBLE.
func (n number) asDouble() number {
	n.double = !n.null
	return n
}

// lit is n as a merge literal: nil, int64, the DECIMAL's digits or a float64.
func (n number) lit() merge.Expr {
	switch {
	case n.null:
		return merge.Lit(nil)
	case n.double:
		f, _ := strconv.ParseFloat(n.text, 64)
		return merge.Lit(f)
	}
	if i, err := strconv.ParseInt(n.text, 10, 64); err == nil {
		return merge.Lit(i)
	}
	return merge.Lit(n.text)
}

// both translates l and r and joins them (AND, OR).
func (p *mergePlanner) both(l, r sqlparser.Expr, join func(...merge.Expr) merge.Expr) (merge.Expr, error) {
	conds, err := translateEach(p.condition, l, r)
	if err != nil {
		return nil, err
	}
	return join(conds...), nil
}

// translateEach translates each of exprs with f, in order, and stops at the first error.
func translateEach[T any](f func(sqlparser.Expr) (T, error), exprs ...sqlparser.Expr) ([]T, error) {
	out := make([]T, 0, len(exprs))
	for _, e := range exprs {
		t, err := f(e)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// operand translates one side of a comparison the merge makes: a literal, or a selected
// column or aggregate (added hidden when not selected).
func (p *mergePlanner) operand(e sqlparser.Expr) (merge.Expr, error) {
	switch x := e.(type) {
	case *sqlparser.ParenExpr:
		return p.operand(x.Expr)
	case *sqlparser.NullVal:
		return merge.Lit(nil), nil
	case *sqlparser.UnaryExpr:
		// A negated number: -1, -0.5, -1e4, an integer beyond BIGINT.
		if n, err := numberBound(e, e); err == nil {
			return n.lit(), nil
		}
	case *sqlparser.SQLVal:
		switch x.Type {
		case sqlparser.IntVal, sqlparser.FloatVal:
			// 10.50 is a DECIMAL, compared exactly (an integer beyond BIGINT too); 1e3 is a DOUBLE.
			if n, err := numberBound(e, e); err == nil {
				return n.lit(), nil
			}
		case sqlparser.StrVal:
			return merge.Lit(string(x.Val)), nil
		case sqlparser.ValArg:
			return nil, notMergeable("HAVING compares COUNT, SUM or AVG with a ? placeholder, which is not supported across several tables; write the value into the statement")
		}
		return nil, notMergeable("HAVING literal %s cannot be compared after merging; write it as a decimal number", nodeText(x))
	}
	i, err := p.resolve(e, false)
	if err != nil {
		return nil, err
	}
	if i < 0 && overAggregates(e) {
		i = p.hidden(e)
		return merge.Col(i), p.addComputed(i, e)
	}
	if i < 0 {
		f, arg, err := p.aggregate(e)
		if err != nil {
			return nil, err
		}
		if f == 0 {
			return nil, notMergeable("HAVING %s is neither a selected column nor an aggregate; add it to the select list", nodeText(e))
		}
		if i, err = p.aggColumn(e, f, arg); err != nil {
			return nil, err
		}
	}
	return merge.Col(i), nil
}

// carried adds, when the sub-queries can compute the condition e, a hidden column with its
// value and returns its index: e refers to group keys, to one MIN or MAX and to nothing else
// but literals and placeholders. A condition with a MIN or MAX is carried with the partial row
// whose MIN or MAX the merge keeps.
func (p *mergePlanner) carried(e sqlparser.Expr) (int, bool, error) {
	var agg *sqlparser.FuncExpr
	ok := true
	subst := map[*sqlparser.ColName]sqlparser.Expr{}
	var visit func(n sqlparser.SQLNode) (bool, error)
	visit = func(n sqlparser.SQLNode) (bool, error) {
		if !ok {
			return false, nil
		}
		if x, isExpr := n.(sqlparser.Expr); isExpr && slices.Contains(p.groupKeys, exprKey(x)) {
			return false, nil
		}
		switch x := n.(type) {
		case *sqlparser.Subquery, *sqlparser.GroupConcatExpr:
			ok = false
		case *sqlparser.FuncExpr:
			if !x.IsAggregate() {
				return true, nil
			}
			name := x.Name.Lowered()
			ok = (name == "min" || name == "max") && (agg == nil || exprKey(agg) == exprKey(x))
			agg = x
			return false, nil
		case *sqlparser.ColName:
			// A select alias stands for its expression, which the sub-query must write out.
			i := slices.Index(p.aliases, x.Name.Lowered())
			if !x.Qualifier.IsEmpty() || i < 0 || i >= p.visible {
				ok = false
				return false, nil
			}
			item := p.sel.SelectExprs[i].(*sqlparser.AliasedExpr).Expr
			subst[x] = item
			_ = sqlparser.Walk(visit, item)
			return false, nil
		}
		return true, nil
	}
	_ = sqlparser.Walk(visit, e)
	if !ok {
		return 0, false, nil
	}
	for c, item := range subst {
		p.subst[c] = item
	}
	h := p.helper(e)
	if agg == nil {
		return h, true, nil // a group condition: every partial row of a group has its value
	}
	f, arg, err := p.aggregate(agg)
	if err != nil {
		return 0, false, err
	}
	col, err := p.resolve(agg, false)
	if err == nil && col < 0 {
		col, err = p.aggColumn(agg, f, arg)
	}
	if err != nil {
		return 0, false, err
	}
	for i := range p.spec.Aggregates {
		if a := &p.spec.Aggregates[i]; a.Column == col && (a.Func == merge.AggMin || a.Func == merge.AggMax) {
			a.Carry = append(a.Carry, h)
			return h, true, nil
		}
	}
	return 0, false, notMergeable("HAVING %s: %s is not merged as an aggregate", nodeText(e), nodeText(agg))
}
