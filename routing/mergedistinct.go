package routing

import (
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// COUNT, SUM and AVG of DISTINCT x across tables: the same value of x may be in several tables,
// so the sub-queries group by the statement's group keys and x, and return x (with its weight
// when it may be text); the merge keeps, per group, the values of x it has seen, and counts or
// adds each value once. The other aggregates are merged from those finer groups as usual.

// distinctArgument records arg as the argument of the DISTINCT aggregate x; a statement may have
// one (in as many aggregates as it likes).
func (p *mergePlanner) distinctArgument(x *sqlparser.FuncExpr, arg sqlparser.Expr) error {
	switch {
	case containsAggregate(arg) || hasSubquery(arg):
		return notMergeable("%s cannot be merged: its argument must be an expression of columns", nodeText(x))
	case !x.Name.EqualString("count") && hiddenDigits(arg):
		return notMergeable("%s: the server adds distinct values of a quotient with digits it does not show; fix them with ROUND (%s(DISTINCT ROUND(%s, n))), or narrow the range to one table",
			nodeText(x), x.Name.String(), nodeText(arg))
	case p.distinctArg != nil && exprKey(p.distinctArg) != exprKey(arg):
		return notMergeable("DISTINCT aggregates of %s and of %s: obroute merges the distinct values of one expression per statement; run one statement per expression, or narrow the range to one table",
			nodeText(p.distinctArg), nodeText(arg))
	}
	p.distinctArg = arg
	return nil
}

// distinctOf returns the argument whose distinct values the aggregate e counts or adds across
// tables, nil when e is no such aggregate (COUNT(DISTINCT shard key) is merged as a COUNT).
func (p *mergePlanner) distinctOf(e sqlparser.Expr) sqlparser.Expr {
	x, ok := e.(*sqlparser.FuncExpr)
	if !ok || !x.Distinct || p.distinctArg == nil || len(x.Exprs) != 1 {
		return nil
	}
	switch x.Name.Lowered() {
	case "count", "sum", "avg":
	default:
		return nil
	}
	if ae, ok := x.Exprs[0].(*sqlparser.AliasedExpr); ok && exprKey(ae.Expr) == exprKey(p.distinctArg) {
		return ae.Expr
	}
	return nil
}

// distinctColumn returns the hidden column that holds the DISTINCT aggregates' argument, added
// (with its weight) the first time.
func (p *mergePlanner) distinctColumn(arg sqlparser.Expr) int {
	if p.distinctCol == 0 {
		p.distinctCol = p.helper(arg)
		p.weigh(p.distinctCol, arg)
	}
	return p.distinctCol
}

// groupByDistinct makes the legs group by the DISTINCT aggregates' argument after the
// statement's group keys.
func (p *mergePlanner) groupByDistinct() {
	if p.distinctCol == 0 {
		return
	}
	g := append(sqlparser.GroupBy{}, p.sel.GroupBy...)
	p.leg.GroupBy = append(g, p.distinctArg)
	p.spec.EmptyGroup = len(p.sel.GroupBy) == 0
}
