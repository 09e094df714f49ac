package routing

import (
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// COUNT, SUM and AVG of DISTINCT x across tables: the same value of x may be in several tables,
// so the sub-queries group by the statement's group keys and x, and return x (with its weight
// when it may be text); the merge keeps, per group, the values of x it has seen, and counts or
// adds each value once. The other aggregates are merged from those finer groups as usual.

// distinctArgs returns the arguments of COUNT(DISTINCT a, b, …), each an expression; on error,
// a list of one nil.
func distinctArgs(x *sqlparser.FuncExpr) ([]sqlparser.Expr, error) {
	args := make([]sqlparser.Expr, len(x.Exprs))
	for i, se := range x.Exprs {
		ae, ok := se.(*sqlparser.AliasedExpr)
		if !ok {
			return []sqlparser.Expr{nil}, notMergeable("%s cannot be merged; give it columns", nodeText(x))
		}
		args[i] = ae.Expr
	}
	return args, nil
}

// distinctKey is the text of a DISTINCT aggregate's arguments.
//
// Not inlined: copied into each of its many call sites it would grow every
// binary that imports the driver (see driver/import_test.go).
//
//go:noinline
func distinctKey(args []sqlparser.Expr) string {
	key := ""
	for _, a := range args {
		key += exprKey(a) + "\x00"
	}
	return key
}

// distinctArgument records args as the arguments of the DISTINCT aggregate x; a statement may
// have one list of them (in as many aggregates as it likes).
func (p *mergePlanner) distinctArgument(x *sqlparser.FuncExpr, args []sqlparser.Expr) error {
	for _, arg := range args {
		switch {
		case containsAggregate(arg) || hasSubquery(arg):
			return notMergeable("%s cannot be merged: its arguments must be expressions of columns", nodeText(x))
		case !x.Name.EqualString("count") && hiddenDigits(arg):
			return notMergeable("%s: the server adds distinct values of a quotient with digits it does not show; fix them with ROUND (%s(DISTINCT ROUND(%s, n))), or narrow the range to one table",
				nodeText(x), x.Name.String(), nodeText(arg))
		}
	}
	if p.distinctArgs != nil && distinctKey(p.distinctArgs) != distinctKey(args) {
		return notMergeable("DISTINCT aggregates of %s and of %s: obroute merges the distinct values of one list of expressions per statement; run one statement per list, or narrow the range to one table",
			nodeText(sqlparser.Exprs(p.distinctArgs)), nodeText(sqlparser.Exprs(args)))
	}
	p.distinctArgs = args
	return nil
}

// distinctOf returns the arguments whose distinct values the aggregate e counts or adds across
// tables, nil when e is no such aggregate (COUNT(DISTINCT shard key) is merged as a COUNT).
func (p *mergePlanner) distinctOf(e sqlparser.Expr) []sqlparser.Expr {
	x, ok := e.(*sqlparser.FuncExpr)
	if !ok || !x.Distinct || p.distinctArgs == nil {
		return nil
	}
	switch x.Name.Lowered() {
	case "count", "sum", "avg":
	default:
		return nil
	}
	if args, err := distinctArgs(x); err == nil && distinctKey(args) == distinctKey(p.distinctArgs) {
		return args
	}
	return nil
}

// distinctColumns returns the hidden columns that hold the DISTINCT aggregates' arguments, added
// (with their weights) the first time.
func (p *mergePlanner) distinctColumns(args []sqlparser.Expr) []int {
	if p.distinctCols == nil {
		for _, a := range args {
			c := p.helper(a)
			p.weigh(c, a)
			p.distinctCols = append(p.distinctCols, c)
		}
	}
	return p.distinctCols
}

// groupByDistinct makes the legs group by the DISTINCT aggregates' arguments after the
// statement's group keys.
func (p *mergePlanner) groupByDistinct() {
	if p.distinctCols == nil {
		return
	}
	g := append(sqlparser.GroupBy{}, p.sel.GroupBy...)
	p.leg.GroupBy = append(g, p.distinctArgs...)
	p.spec.EmptyGroup = len(p.sel.GroupBy) == 0
}

// constantOverNoRows refuses a select item reading no column next to a DISTINCT aggregate
// without GROUP BY: over no rows the merge makes the one row of aggregates itself, and has no
// value for the item.
func (p *mergePlanner) constantOverNoRows() error {
	if p.distinctCols == nil || len(p.sel.GroupBy) > 0 {
		return nil
	}
	for _, se := range p.sel.SelectExprs {
		if ae, ok := se.(*sqlparser.AliasedExpr); ok && !containsAggregate(ae.Expr) && isConstant(ae.Expr) {
			return notMergeable("the select item %s next to a DISTINCT aggregate without GROUP BY: over no rows the merge makes the row of aggregates and has no value for it; select it in the application, or narrow the range to one table", nodeText(ae.Expr))
		}
	}
	return nil
}

// checkDistinctLists returns the arguments of the statement's COUNT, SUM or AVG (DISTINCT …),
// and refuses DISTINCT aggregates of several lists of them, the shard key's included: grouping
// the sub-queries by one list would make the others' partial counts overlap.
func checkDistinctLists(sel *sqlparser.Select) (first []sqlparser.Expr, err error) {
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		switch x := n.(type) {
		case *sqlparser.Subquery:
			return false, nil
		case *sqlparser.FuncExpr:
			if x == nil || !x.Distinct || !x.IsAggregate() {
				return true, nil
			}
			switch x.Name.Lowered() {
			case "count", "sum", "avg":
			default:
				return true, nil
			}
			args, aerr := distinctArgs(x)
			switch {
			case aerr != nil:
				err = aerr
			case first == nil:
				first = args
			case distinctKey(first) != distinctKey(args):
				err = notMergeable("DISTINCT aggregates of %s and of %s: obroute merges the distinct values of one list of expressions per statement; run one statement per list, or narrow the range to one table",
					nodeText(sqlparser.Exprs(first)), nodeText(sqlparser.Exprs(args)))
			}
			return false, nil
		}
		return err == nil, nil
	}, sel)
	return first, err
}
