package routing

import (
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// checkStar refuses the SELECT * the merge cannot answer: the sub-queries' hidden columns come
// before the *, whose width only the rows tell, so * must be the whole select list; and a
// merge that groups or compares whole rows needs to know every column.
func checkStar(star bool, sel *sqlparser.Select, grouped bool) error {
	switch {
	case !star || !grouped && len(sel.OrderBy) == 0 && !sel.QueryOpts.Distinct:
		return nil
	case len(sel.SelectExprs) > 1:
		return notMergeable("* with other select items and ORDER BY, GROUP BY, aggregates or DISTINCT across several tables: name the columns instead of *")
	case grouped:
		return notMergeable("SELECT * with GROUP BY or aggregates across several tables: the columns not grouped have no one value; name the grouped and aggregated columns instead of *")
	case sel.QueryOpts.Distinct:
		return notMergeable("SELECT DISTINCT * across several tables compares every column by its collation, which obroute must name; name the columns instead of *")
	}
	return nil
}

// hiddenFirst moves the * of the leg's select list after the hidden columns, so that their
// positions are known whatever the * stands for, and renumbers the columns of the plan.
func (p *mergePlanner) hiddenFirst() error {
	items := p.leg.SelectExprs
	if len(items) <= 1 {
		return nil
	}
	// After other items, MySQL takes only a qualified *: that of the table's alias, else of the
	// table (printed as each sub-query's physical table).
	star := *items[0].(*sqlparser.StarExpr)
	if star.TableName.IsEmpty() {
		name, ok := p.starTable()
		if !ok {
			return notMergeable("SELECT * over several tables with ORDER BY across time tables: name the columns instead of *")
		}
		star.TableName = name
	}
	p.leg.SelectExprs = append(append(sqlparser.SelectExprs{}, items[1:]...), &star)
	p.spec.Leading = len(items) - 1
	for i := range p.spec.OrderBy {
		p.spec.OrderBy[i].Column--
	}
	if p.spec.Weights != nil {
		w := make([]int, len(p.spec.Weights))
		for c, wc := range p.spec.Weights {
			if wc != 0 {
				w[c-1] = wc - 1
			}
		}
		p.spec.Weights = w
	}
	weightOf := map[int]int{}
	for c, wc := range p.weightOf {
		weightOf[c-1] = wc - 1
	}
	p.weightOf = weightOf
	return nil
}

// starTable is the name that qualifies the * of a statement on one table: its alias, or its name.
func (p *mergePlanner) starTable() (sqlparser.TableName, bool) {
	if len(p.sel.From) != 1 {
		return sqlparser.TableName{}, false
	}
	t, ok := p.sel.From[0].(*sqlparser.AliasedTableExpr)
	if !ok {
		return sqlparser.TableName{}, false
	}
	if !t.As.IsEmpty() {
		return sqlparser.TableName{Name: t.As}, true
	}
	name, ok := t.Expr.(sqlparser.TableName)
	return name, ok
}
