package routing

import (
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// flattenGrouped rewrites SELECT <columns> FROM (<inner>) AS t [WHERE c] [ORDER BY o] [LIMIT l],
// whose inner query groups or aggregates the time-sharded table, as the one query
// SELECT <the inner items of those columns, named as them> FROM … GROUP BY … HAVING <inner
// HAVING> AND c ORDER BY o LIMIT l, which the merge answers across tables. A condition on the
// rows of a grouping is a HAVING, and a column of the derived table is the inner item named so:
// the two return the same rows, columns and types. The outer query may only name the derived
// table's columns (unqualified, not renamed), select them (or *), filter, order and limit; the
// inner query may not have DISTINCT, LIMIT, a window or a subquery. why is the reason the inner
// query is not row-wise, for the refusal.
func flattenGrouped(outer *sqlparser.Select, target *sqlparser.AliasedTableExpr, inner *sqlparser.Select, table, why string) (*sqlparser.Select, error) {
	refuse := notMergeable("the derived table or WITH over the time-sharded table %s has %s, which would apply per table; keep its query to columns and conditions (move the grouping to the outer query), or select, filter (WHERE on its columns), order and limit its columns only, unqualified and not renamed", table, why)
	if len(inner.GroupBy) > 0 && containsAggregate(outer.SelectExprs) {
		// The outer aggregate reads groups merged across tables, and has types of its own (SUM of
		// a COUNT is a DECIMAL): no one query of the table returns it as one server does.
		return nil, notMergeable("an outer aggregate over the groups of a derived table or WITH over the time-sharded table %s cannot be merged; aggregate the table itself (the groups of k number COUNT(DISTINCT k), plus one when k is NULL in a row of the range; a SUM of an inner COUNT(*) is COUNT(*), though 0 rather than NULL over no rows), or narrow the range to one table", table)
	}
	switch {
	case len(outer.From) != 1 || outer.From[0] != sqlparser.TableExpr(target),
		len(outer.GroupBy) > 0, outer.Having != nil, outer.QueryOpts.Distinct, outer.QueryOpts.SQLCalcFoundRows, outer.Into != nil,
		len(outer.Window) > 0, hasWindow(outer), hasSubquery(outer.SelectExprs), hasSubquery(outer.Where), hasSubquery(outer.OrderBy),
		containsAggregate(outer.SelectExprs), containsAggregate(outer.Where), containsAggregate(outer.OrderBy),
		inner.QueryOpts.Distinct, inner.Limit != nil, inner.With != nil, len(inner.Window) > 0, hasWindow(inner), hasSubquery(inner),
		inner.QueryOpts.SQLCalcFoundRows, inner.Into != nil:
		return nil, refuse
	}
	named := map[string]*sqlparser.AliasedExpr{}
	var all sqlparser.SelectExprs
	for _, se := range inner.SelectExprs {
		ae, ok := se.(*sqlparser.AliasedExpr)
		if !ok {
			return nil, refuse
		}
		name := ae.As
		if name.IsEmpty() {
			col, ok := ae.Expr.(*sqlparser.ColName)
			if !ok {
				return nil, notMergeable("the derived table or WITH over the time-sharded table %s has the select item %s without an alias; give it one (AS name)", table, nodeText(ae.Expr))
			}
			name = col.Name
		}
		if named[name.Lowered()] != nil {
			return nil, refuse
		}
		named[name.Lowered()] = ae
		all = append(all, &sqlparser.AliasedExpr{Expr: ae.Expr, As: name})
	}
	flat := shallowSelect(inner)
	flat.SelectExprs = nil
	for _, se := range outer.SelectExprs {
		switch x := se.(type) {
		case *sqlparser.StarExpr:
			if !x.TableName.IsEmpty() && !strings.EqualFold(x.TableName.Name.String(), target.As.String()) {
				return nil, refuse
			}
			flat.SelectExprs = append(flat.SelectExprs, all...)
		case *sqlparser.AliasedExpr:
			col, ok := x.Expr.(*sqlparser.ColName)
			if !ok || !col.Qualifier.IsEmpty() || !x.As.IsEmpty() && x.As.Lowered() != col.Name.Lowered() || named[col.Name.Lowered()] == nil {
				return nil, refuse
			}
			flat.SelectExprs = append(flat.SelectExprs, &sqlparser.AliasedExpr{Expr: named[col.Name.Lowered()].Expr, As: col.Name})
		default:
			return nil, refuse
		}
	}
	// The outer conditions and keys name selected columns: as aliases in HAVING and ORDER BY.
	// A HAVING name that is also a GROUP BY column is read as that column: so no alias of
	// another value may be one.
	grouped := map[string]bool{}
	for _, e := range inner.GroupBy {
		if c, ok := e.(*sqlparser.ColName); ok {
			grouped[c.Name.Lowered()] = true
		}
	}
	selected := map[string]bool{}
	for _, se := range flat.SelectExprs {
		ae := se.(*sqlparser.AliasedExpr)
		name := ae.As.Lowered()
		if c, isCol := ae.Expr.(*sqlparser.ColName); grouped[name] && (!isCol || c.Name.Lowered() != name) {
			return nil, notMergeable("the derived table or WITH over the time-sharded table %s names %s as another value than its GROUP BY column %s; give it another alias", table, ae.As.String(), ae.As.String())
		}
		selected[name] = true
	}
	ok := true
	for _, n := range []sqlparser.SQLNode{whereExpr(outer.Where), outer.OrderBy} {
		if n == nil {
			continue
		}
		_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
			if c, isCol := n.(*sqlparser.ColName); isCol && (!c.Qualifier.IsEmpty() || !selected[c.Name.Lowered()]) {
				ok = false
			}
			return ok, nil
		}, n)
	}
	if !ok {
		return nil, refuse
	}
	if outer.Where != nil {
		flat.Having = &sqlparser.Where{Type: sqlparser.HavingStr, Expr: andAll(whereExpr(inner.Having), []sqlparser.Expr{outer.Where.Expr})}
	}
	flat.OrderBy, flat.Limit = outer.OrderBy, outer.Limit
	flat.Comments = outer.Comments
	return flat, nil
}
