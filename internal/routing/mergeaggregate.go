package routing

import (
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/obroute/obroute/internal/merge"
)

// aggregate classifies e: 0 for no aggregate at its top, else the merge function and its argument.
// An aggregate below the top (SUM(x)+1) or one that cannot be merged is an error.
func (p *mergePlanner) aggregate(e sqlparser.Expr) (merge.AggFunc, sqlparser.Expr, error) {
	x, ok := e.(*sqlparser.FuncExpr)
	if !ok || !x.IsAggregate() {
		if _, ok := e.(*sqlparser.GroupConcatExpr); ok {
			return 0, nil, notMergeable("%s cannot be merged from sub-queries; use COUNT, SUM, MIN, MAX, AVG, BIT_AND, BIT_OR or BIT_XOR, or narrow the range to one table", nodeText(e))
		}
		if containsAggregate(e) {
			return 0, nil, notMergeable("the aggregate inside %s cannot be merged; select the aggregate itself and compute the expression in the application", nodeText(e))
		}
		return 0, nil, nil
	}
	var f merge.AggFunc
	switch x.Name.Lowered() {
	case "count":
		f = merge.AggCount
	case "sum":
		f = merge.AggSum
	case "min":
		f = merge.AggMin
	case "max":
		f = merge.AggMax
	case "avg":
		f = merge.AggAvg
	case "bit_and":
		f = merge.AggBitAnd
	case "bit_or":
		f = merge.AggBitOr
	case "bit_xor":
		f = merge.AggBitXor
	default:
		return 0, nil, notMergeable("%s cannot be merged from sub-queries; use COUNT, SUM, MIN, MAX, AVG, BIT_AND, BIT_OR or BIT_XOR, or narrow the range to one table", nodeText(e))
	}
	if x.Distinct && f == merge.AggCount && len(x.Exprs) > 1 {
		args, err := distinctArgs(x)
		if err == nil {
			err = p.distinctArgument(x, args)
		}
		return merge.AggCount, args[0], err
	}
	if f == merge.AggCount && len(x.Exprs) == 1 {
		if _, star := x.Exprs[0].(*sqlparser.StarExpr); star && !x.Distinct {
			return merge.AggCount, nil, nil // COUNT(*)
		}
	}
	if len(x.Exprs) != 1 {
		return 0, nil, notMergeable("%s with %d arguments cannot be merged; give it one column", nodeText(e), len(x.Exprs))
	}
	ae, ok := x.Exprs[0].(*sqlparser.AliasedExpr)
	if !ok {
		return 0, nil, notMergeable("%s cannot be merged; give it one column", nodeText(e))
	}
	arg, distinct := ae.Expr, x.Distinct
	if distinct && f >= merge.AggBitAnd {
		return 0, nil, notMergeable("%s cannot be merged; write it without DISTINCT (the same bits)", nodeText(e))
	}
	if distinct && f == merge.AggCount {
		if col, ok := unparen(arg).(*sqlparser.ColName); ok && col.Name.Lowered() == p.key {
			distinct = false // distinct shard-key values never repeat across clamped tables
		}
	}
	if distinct && f != merge.AggMin && f != merge.AggMax {
		if err := p.distinctArgument(x, []sqlparser.Expr{arg}); err != nil {
			return 0, nil, err
		}
	}
	if containsAggregate(arg) {
		return 0, nil, notMergeable("the aggregate of an aggregate %s cannot be merged", nodeText(e))
	}
	return f, arg, nil
}

func containsAggregate(e sqlparser.SQLNode) bool {
	found := false
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		switch x := n.(type) {
		case *sqlparser.Subquery:
			return false, nil
		case *sqlparser.FuncExpr:
			found = x != nil && x.IsAggregate()
		case *sqlparser.GroupConcatExpr:
			found = x != nil
		}
		return !found, nil
	}, e)
	return found
}

// hasWindow reports whether sel holds a window function (an OVER clause).
func hasWindow(sel *sqlparser.Select) bool {
	return anyNode(sel, func(n sqlparser.SQLNode) bool {
		o, ok := n.(*sqlparser.Over)
		return ok && o != nil
	})
}

// anyNode reports whether match holds for a node of root, subqueries included; the walk stops
// at the first.
func anyNode(root sqlparser.SQLNode, match func(sqlparser.SQLNode) bool) bool {
	found := false
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		found = found || match(n)
		return !found, nil
	}, root)
	return found
}

// checkSubqueryLimit refuses LIMIT inside a subquery: each leg would apply it to its own table.
func checkSubqueryLimit(sel *sqlparser.Select) error {
	var err error
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		if n == sqlparser.SQLNode(sel) {
			return true, nil
		}
		var limit *sqlparser.Limit
		switch s := n.(type) {
		case *sqlparser.Select:
			if s != nil {
				limit = s.Limit
			}
		case *sqlparser.SetOp:
			if s != nil {
				limit = s.Limit
			}
		}
		if limit != nil {
			err = notMergeable("LIMIT inside a subquery would be applied per table, not once; remove it or narrow the range to one table")
		}
		return err == nil, nil
	}, sel)
	return err
}

// hasSubquery reports whether e holds a subquery.
//
// Not inlined: copied into each of its many call sites it would grow every
// binary that imports the driver (see driver/import_test.go).
//
//go:noinline
func hasSubquery(e sqlparser.SQLNode) bool {
	return anyNode(e, func(n sqlparser.SQLNode) bool {
		s, ok := n.(*sqlparser.Subquery)
		return ok && s != nil
	})
}
