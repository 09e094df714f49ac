package routing

import (
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// analyzeUnion reads a UNION whose every SELECT reads the time-sharded table (named table in
// messages) once, row-wise, under the same alias. Its rows over the logical table are the
// union of its rows over each physical table: every sub-query runs the whole UNION with its
// physical table and clamp in each SELECT, as the derived table of
// SELECT [DISTINCT] <columns> FROM (…) AS _obroute_union ORDER BY … LIMIT …, which the merge
// combines across tables (DISTINCT by the columns' collations for UNION). The range is the
// union of the SELECTs' ranges; uses are the table's uses in the statement.
func analyzeUnion(u *sqlparser.SetOp, uses []*sqlparser.AliasedTableExpr, table, key string) (*derivedSelect, error) {
	var leaves []*sqlparser.Select
	distinct := u.Type != sqlparser.UnionAllStr
	clamped, err := clampUnion(u, u, distinct, &leaves, table)
	if err != nil {
		return nil, err
	}
	if len(uses) != len(leaves) {
		return nil, notMergeable("a UNION over the time-sharded table %s is split only when each SELECT reads %s once and nothing else reads it (no subquery on it); run each SELECT on its own", table, table)
	}
	d := &derivedSelect{}
	var where sqlparser.Expr
	for i, leaf := range leaves {
		use := uses[i]
		if !readsDirectly(leaf, use) {
			// uses and leaves are both in the order of the text.
			return nil, notMergeable("a UNION over the time-sharded table %s is split only when each SELECT names %s in its FROM; run each SELECT on its own", table, table)
		}
		if !strings.EqualFold(use.As.String(), uses[0].As.String()) {
			return nil, notMergeable("the SELECTs of a UNION over the time-sharded table %s give it different aliases; give it the same alias (or none) in every SELECT", table)
		}
		li, err := derivedInner(innerQuery{sel: leaf, use: use, table: table, key: key, what: "a SELECT of the UNION"})
		if err != nil {
			return nil, err
		}
		if li.where == nil {
			where = nil
			break
		}
		if i == 0 {
			where = li.where
		} else {
			where = &sqlparser.OrExpr{Left: where, Right: li.where}
		}
	}
	d.where = where
	items, err := unionColumns(leaves[0], table)
	if err != nil {
		return nil, err
	}
	d.whole = &sqlparser.Select{
		SelectExprs: items,
		From: sqlparser.TableExprs{&sqlparser.AliasedTableExpr{
			Expr: &sqlparser.Subquery{Select: clamped}, As: sqlparser.NewTableIdent("_obroute_union")}},
		OrderBy: u.OrderBy,
		Limit:   u.Limit,
	}
	d.whole.QueryOpts.Distinct = distinct
	d.key = unionKey(leaves, items, key)
	d.union = clamped.(*sqlparser.SetOp)
	whole := *d.union
	whole.OrderBy, whole.Limit = u.OrderBy, u.Limit
	d.union = &whole
	return d, nil
}

// clampUnion copies the UNION s (top is the whole statement) with the clamp in each SELECT's
// WHERE, appending the SELECTs to leaves. It refuses mixed UNION and UNION ALL, INTERSECT and
// EXCEPT, and clauses of an inner UNION.
func clampUnion(s sqlparser.SelectStatement, top *sqlparser.SetOp, distinct bool, leaves *[]*sqlparser.Select, table string) (sqlparser.SelectStatement, error) {
	switch x := s.(type) {
	case *sqlparser.Select:
		*leaves = append(*leaves, x)
		c := shallowSelect(x)
		c.Where = withClamp(x.Where)
		// The query cache's options change no rows; MariaDB takes them only in a statement's
		// first SELECT, which a sub-query's UNION inside its derived table is not.
		c.QueryOpts.SQLCache, c.QueryOpts.SQLNoCache = false, false
		return c, nil
	case *sqlparser.ParenSelect:
		c, err := clampUnion(x.Select, top, distinct, leaves, table)
		return &sqlparser.ParenSelect{Select: c}, err
	case *sqlparser.SetOp:
		switch {
		case x.Type != sqlparser.UnionStr && x.Type != sqlparser.UnionAllStr && x.Type != sqlparser.UnionDistinctStr:
			return nil, notMergeable("%s over the time-sharded table %s cannot be split; run each SELECT on its own and combine the rows in the application", strings.ToUpper(x.Type), table)
		case (x.Type == sqlparser.UnionAllStr) == distinct:
			return nil, notMergeable("a UNION over the time-sharded table %s mixes UNION and UNION ALL; use one of them throughout", table)
		case x.With != nil || x.Into != nil || x.Lock != "":
			return nil, notMergeable("a UNION over the time-sharded table %s with WITH, INTO or a locking clause cannot be split; run each SELECT on its own", table)
		case x != top && (len(x.OrderBy) > 0 || x.Limit != nil):
			return nil, notMergeable("ORDER BY or LIMIT inside a UNION over the time-sharded table %s would apply per table; put it after the last SELECT", table)
		}
		l, err := clampUnion(x.Left, top, distinct, leaves, table)
		if err != nil {
			return nil, err
		}
		r, err := clampUnion(x.Right, top, distinct, leaves, table)
		if err != nil {
			return nil, err
		}
		return &sqlparser.SetOp{Type: x.Type, Left: l, Right: r}, nil
	}
	return nil, notMergeable("a part of the UNION over the time-sharded table %s cannot be split; run each SELECT on its own", table)
}

// unionColumns are the select items naming the UNION's columns: those of its first SELECT.
func unionColumns(first *sqlparser.Select, table string) (sqlparser.SelectExprs, error) {
	if len(first.SelectExprs) == 1 {
		if s, ok := first.SelectExprs[0].(*sqlparser.StarExpr); ok && s.TableName.IsEmpty() {
			return sqlparser.SelectExprs{&sqlparser.StarExpr{}}, nil
		}
	}
	seen := map[string]bool{}
	var items sqlparser.SelectExprs
	for _, se := range first.SelectExprs {
		ae, ok := se.(*sqlparser.AliasedExpr)
		if !ok {
			return nil, notMergeable("the first SELECT of a UNION over the time-sharded table %s has %s with other items; name the columns", table, nodeText(se))
		}
		name := ae.As
		if name.IsEmpty() {
			name = ae.Expr.(*sqlparser.ColName).Name // derivedInner refused other unnamed items
		}
		if seen[name.Lowered()] {
			return nil, notMergeable("the first SELECT of a UNION over the time-sharded table %s names two columns %s; give them different aliases", table, name.String())
		}
		seen[name.Lowered()] = true
		items = append(items, &sqlparser.AliasedExpr{Expr: &sqlparser.ColName{Name: name}})
	}
	return items, nil
}

// unionKey is the name of the UNION's column that is the shard key key in every SELECT (items
// name the columns), "" when none is: the merge compares its values as it compares the key's
// (a TIMESTAMP key's repeated hour, time_stamp.go).
func unionKey(leaves []*sqlparser.Select, items sqlparser.SelectExprs, key string) string {
	for i, it := range items {
		col, ok := it.(*sqlparser.AliasedExpr)
		if !ok {
			return ""
		}
		all := true
		for _, leaf := range leaves {
			if i >= len(leaf.SelectExprs) {
				return ""
			}
			ae, ok := leaf.SelectExprs[i].(*sqlparser.AliasedExpr)
			if !ok {
				return ""
			}
			if c, isCol := unparen(ae.Expr).(*sqlparser.ColName); !isCol || c.Name.Lowered() != key {
				all = false
				break
			}
		}
		if all {
			return col.Expr.(*sqlparser.ColName).Name.Lowered()
		}
	}
	return ""
}
