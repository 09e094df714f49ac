package routing

import (
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// derivedSelect is a SELECT whose time-sharded table is read inside one derived table or common
// table expression of its FROM, by an inner query that is row-wise: each row it returns comes
// from one row of the sharded table (joined with other tables at most). Its result over the
// logical table is then the concatenation of its results over each physical table, so every
// sub-query runs the whole statement with its physical table (and the clamp of its span) inside,
// and the outer query merges as if the derived table were the time-sharded table.
type derivedSelect struct {
	// inner is the inner query as written; where is its condition the range is read from.
	inner *sqlparser.Select
	where sqlparser.Expr
	// whole is the statement with the clamp added to the inner query's WHERE, its common table
	// expression (if any) written as a derived table.
	whole *sqlparser.Select
	// plan is, for an inner query flattened with the outer one, the query the merge plans,
	// without clamp (the legs add it to its WHERE); nil when the merge plans whole.
	plan *sqlparser.Select
	// union is, for a UNION, the statement itself with the clamp in each SELECT: sent as it is
	// to one table.
	union *sqlparser.SetOp
	// key is the shard key's name as a column of the derived table, "" when the inner query
	// does not return it as itself.
	key string
}

// analyzeDerived finds use (the time-sharded table, named table in messages) inside a derived
// table or the common table expression of sel and checks that the statement can be pushed down
// whole per physical table. It refuses, saying how to rewrite, what cannot.
func analyzeDerived(sel *sqlparser.Select, use *sqlparser.AliasedTableExpr, table, key string) (*derivedSelect, error) {
	nested := notMergeable("the time-sharded table %s is inside a subquery or a nested derived table; name it in the top-level FROM of the statement, or in one derived table or WITH whose query reads it directly", table)
	if sel.With != nil {
		return analyzeCTE(sel, use, table, key, nested)
	}
	var target *sqlparser.AliasedTableExpr
	var inner *sqlparser.Select
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		a, ok := n.(*sqlparser.AliasedTableExpr)
		if !ok || a == nil || target != nil {
			return target == nil, nil
		}
		if sq, ok := a.Expr.(*sqlparser.Subquery); ok {
			if s, ok := sq.Select.(*sqlparser.Select); ok && readsDirectly(s, use) {
				target, inner = a, s
			}
		}
		return true, nil
	}, sel.From)
	if target == nil {
		return nil, nested
	}
	if f, _, err := findTable(fromExpr(sel.From), target, false); !f || err != nil {
		if err != nil {
			return nil, notMergeable("the derived table over %s %s", table, strings.TrimPrefix(err.Error(), ErrNotMergeable.Error()+": "))
		}
		return nil, nested
	}
	if strings.EqualFold(target.As.String(), table) {
		return nil, notMergeable("the derived table over the time-sharded table %s is named %s too; give it another alias", table, table)
	}
	if target.Lateral || len(target.Expr.(*sqlparser.Subquery).Columns) > 0 {
		return nil, notMergeable("a LATERAL derived table or one with a column list over the time-sharded table %s cannot be split; use a plain derived table with AS aliases on its select items", table)
	}
	d, err := derivedInner(innerQuery{sel: inner, use: use, table: table, key: key, what: "the derived table or WITH", outer: sel, target: target})
	if err != nil {
		return nil, err
	}
	clamped := *target
	clamped.Expr = &sqlparser.Subquery{Select: d.clamped()}
	d.whole = shallowSelect(sel)
	d.whole.From = replaceTable(sel.From, target, &clamped)
	return d, nil
}

// analyzeCTE is analyzeDerived for a statement with a WITH clause: one common table expression,
// not recursive, read once in the FROM of the statement.
func analyzeCTE(sel *sqlparser.Select, use *sqlparser.AliasedTableExpr, table, key string, nested error) (*derivedSelect, error) {
	w := sel.With
	if w.Recursive || len(w.Ctes) != 1 {
		return nil, notMergeable("a WITH clause on the time-sharded table %s is split only with one common table expression, not recursive; move the others into the application or into derived tables of other tables", table)
	}
	cte := w.Ctes[0]
	sq, ok := cte.Expr.(*sqlparser.Subquery)
	if !ok {
		return nil, nested
	}
	inner, ok := sq.Select.(*sqlparser.Select)
	if !ok || !readsDirectly(inner, use) {
		return nil, notMergeable("the common table expression over the time-sharded table %s must be one SELECT that names it in its FROM (no UNION); run each SELECT on its own", table)
	}
	if strings.EqualFold(cte.As.String(), table) {
		return nil, notMergeable("the common table expression over the time-sharded table %s is named %s too; give it another name", table, table)
	}
	if len(cte.Columns) > 0 {
		return nil, notMergeable("a common table expression with a column list over the time-sharded table %s cannot be split; give its select items AS aliases instead", table)
	}
	plan := shallowSelect(sel)
	plan.With = nil
	name := cte.As.String()
	var refs []*sqlparser.AliasedTableExpr
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		if a, ok := n.(*sqlparser.AliasedTableExpr); ok && a != nil {
			if tn, ok := a.Expr.(sqlparser.TableName); ok && tn.DbQualifier.IsEmpty() && tn.Name.String() != "" && strings.EqualFold(tn.Name.String(), name) {
				refs = append(refs, a)
			}
		}
		return true, nil
	}, plan)
	if len(refs) != 1 {
		return nil, notMergeable("the common table expression %s over the time-sharded table %s is read %d times; each sub-query would pair only rows of its own table: read it once, or query each part on its own", cte.As.String(), table, len(refs))
	}
	if f, _, err := findTable(fromExpr(plan.From), refs[0], false); !f || err != nil {
		if err != nil {
			return nil, notMergeable("the common table expression over %s %s", table, strings.TrimPrefix(err.Error(), ErrNotMergeable.Error()+": "))
		}
		return nil, notMergeable("the common table expression %s over the time-sharded table %s is read in a subquery; read it in the FROM of the statement", cte.As.String(), table)
	}
	d, err := derivedInner(innerQuery{sel: inner, use: use, table: table, key: key, what: "the derived table or WITH", outer: plan, target: refs[0]})
	if err != nil {
		return nil, err
	}
	// Read once, the common table expression is its query as a derived table: so it can be
	// a member of the UNION ALL of a backend's legs, where MariaDB takes no WITH.
	ref := *refs[0]
	ref.Expr = &sqlparser.Subquery{Select: d.clamped()}
	if ref.As.IsEmpty() {
		ref.As = cte.As
	}
	d.whole = plan
	d.whole.From = replaceTable(plan.From, refs[0], &ref)
	return d, nil
}

// readsDirectly reports whether use is a table of inner's FROM (through joins).
func readsDirectly(inner *sqlparser.Select, use *sqlparser.AliasedTableExpr) bool {
	f, _, _ := findTable(fromExpr(inner.From), use, false)
	return f
}

// fromExpr is a FROM list as one table expression.
func fromExpr(from sqlparser.TableExprs) sqlparser.TableExpr {
	return &sqlparser.ParenTableExpr{Exprs: from}
}

// innerQuery is a query over the time-sharded table that another query reads: a derived
// table, a common table expression, a SELECT of a UNION.
type innerQuery struct {
	sel        *sqlparser.Select
	use        *sqlparser.AliasedTableExpr // the time-sharded table in sel's FROM
	table, key string                      // its name and its shard key
	what       string                      // how messages name sel
	outer      *sqlparser.Select           // the query that reads sel as target; nil for none
	target     *sqlparser.AliasedTableExpr
}

// derivedInner checks that q's query is row-wise and reads the range condition and the shard
// key's column name. A query that groups or aggregates under an outer query is flattened into
// one query if it can be (flattenGrouped).
func derivedInner(q innerQuery) (*derivedSelect, error) {
	inner, use, table, key, what, outer, target := q.sel, q.use, q.table, q.key, q.what, q.outer, q.target
	var why string
	switch {
	case inner.With != nil:
		why = "a WITH clause"
	case len(inner.GroupBy) > 0 || inner.Having != nil:
		why = "GROUP BY or HAVING"
	case inner.QueryOpts.Distinct:
		why = "DISTINCT"
	case inner.Limit != nil:
		why = "LIMIT"
	case len(inner.Window) > 0 || hasWindow(inner):
		why = "a window function"
	case inner.QueryOpts.SQLCalcFoundRows || inner.Into != nil:
		why = "SQL_CALC_FOUND_ROWS or INTO"
	case hasSubquery(inner):
		why = "a subquery"
	case containsAggregate(inner.SelectExprs) || containsAggregate(inner.OrderBy):
		why = "an aggregate"
	}
	var flat *sqlparser.Select
	if grouped := why == "GROUP BY or HAVING" || why == "an aggregate"; grouped && outer != nil {
		var err error
		if flat, err = flattenGrouped(outer, target, inner, table, why); err != nil {
			return nil, err
		}
	} else if why != "" {
		return nil, notMergeable("%s over the time-sharded table %s has %s, which would apply per table; keep its query to columns and conditions (move the grouping to the outer query), or narrow the range to one table", what, table, why)
	}
	_, ons, err := findTable(fromExpr(inner.From), use, false)
	if err != nil {
		return nil, notMergeable("the time-sharded table %s in %s %s", table, what, strings.TrimPrefix(err.Error(), ErrNotMergeable.Error()+": "))
	}
	d := &derivedSelect{inner: inner, where: andAll(whereExpr(inner.Where), ons)}
	if flat != nil {
		// The merge plans the flattened query, over the sharded table itself.
		d.plan, d.key = flat, key
		return d, nil
	}
	for _, se := range inner.SelectExprs {
		switch x := se.(type) {
		case *sqlparser.StarExpr:
			if x.TableName.IsEmpty() || strings.EqualFold(x.TableName.Name.String(), use.As.String()) ||
				use.As.IsEmpty() && strings.EqualFold(x.TableName.Name.String(), table) {
				d.key = key
			}
		case *sqlparser.AliasedExpr:
			col, isCol := x.Expr.(*sqlparser.ColName)
			switch {
			case isCol && col.Name.Lowered() == key && (x.As.IsEmpty() || x.As.Lowered() == key):
				d.key = key
			case x.As.Lowered() == key:
				// Another value named as the shard key: the derived table's column is not it.
				return nil, notMergeable("%s over %s names %s as another value; give that item another alias", what, table, key)
			case !isCol && x.As.IsEmpty():
				// A derived table's column is named by the expression as written, which the
				// sub-queries print differently.
				return nil, notMergeable("%s over the time-sharded table %s has the select item %s without an alias; give it one (AS name)", what, table, nodeText(x.Expr))
			}
		default:
			return nil, notMergeable("the select item %s of %s over %s cannot be split", nodeText(se), what, table)
		}
	}
	return d, nil
}

// clamped is the inner query with the clamp of each sub-query's table added to its WHERE.
func (d *derivedSelect) clamped() *sqlparser.Select {
	s := shallowSelect(d.inner)
	s.Where = withClamp(d.inner.Where)
	return s
}

// replaceTable returns te with target replaced by repl, copying only the joins on the way.
func replaceTable(from sqlparser.TableExprs, target, repl *sqlparser.AliasedTableExpr) sqlparser.TableExprs {
	out := make(sqlparser.TableExprs, len(from))
	for i, te := range from {
		out[i] = replaceIn(te, target, repl)
	}
	return out
}

func replaceIn(te sqlparser.TableExpr, target, repl *sqlparser.AliasedTableExpr) sqlparser.TableExpr {
	switch x := te.(type) {
	case *sqlparser.AliasedTableExpr:
		if x == target {
			return repl
		}
	case *sqlparser.ParenTableExpr:
		c := *x
		c.Exprs = replaceTable(x.Exprs, target, repl)
		return &c
	case *sqlparser.JoinTableExpr:
		c := *x
		c.LeftExpr, c.RightExpr = replaceIn(x.LeftExpr, target, repl), replaceIn(x.RightExpr, target, repl)
		return &c
	}
	return te
}
