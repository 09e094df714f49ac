package routing

import (
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// checkStar refuses the SELECT * the merge cannot answer: the sub-queries' hidden columns come
// before the *, whose width only the rows tell, so * must be the whole select list; and a
// merge that groups or compares whole rows needs to know every column.
//
// SELECT DISTINCT * of the time-sharded table alone is answered: * holds the shard key, whose
// values never repeat across the clamped tables, so rows of different tables always differ and
// each sub-query's own DISTINCT is the whole DISTINCT. Hidden weights would break it (a leg's
// DISTINCT would compare them too, and weights tell apart values the collation holds equal), so
// its ORDER BY may name only columns the merge compares without a weight.
func (p *mergePlanner) checkStar(star, grouped bool) error {
	sel := p.sel
	switch {
	case !star:
		return nil
	case grouped:
		return notMergeable("SELECT * with GROUP BY or aggregates across several tables: the server gives each column neither grouped nor aggregated the value of any one row of its group, so there is no one answer to merge; select the grouped and aggregated columns instead of *")
	case len(sel.OrderBy) == 0 && !sel.QueryOpts.Distinct:
		return nil
	case len(sel.SelectExprs) > 1:
		return notMergeable("* with other select items and ORDER BY or DISTINCT across several tables: name the columns instead of *")
	case sel.QueryOpts.Distinct && !p.fromShardedTable():
		return notMergeable("SELECT DISTINCT * over a join or a derived table across several tables: name the columns instead of *")
	}
	return nil
}

// checkStarDistinctOrder refuses, after the ORDER BY is planned, a SELECT DISTINCT * whose
// order keys are not columns or need weights (see checkStar).
func (p *mergePlanner) checkStarDistinctOrder() error {
	if !p.star || !p.sel.QueryOpts.Distinct {
		return nil
	}
	for _, o := range p.sel.OrderBy {
		if _, ok := o.Expr.(*sqlparser.ColName); !ok {
			if _, null := o.Expr.(*sqlparser.NullVal); !null {
				return notMergeable("SELECT DISTINCT * with ORDER BY %s across several tables: order by columns, or name the columns instead of *", nodeText(o.Expr))
			}
		}
	}
	if len(p.weightOf) > 0 {
		return notMergeable("SELECT DISTINCT * ordered by a column that may be text across several tables: order by %s only, or name the columns instead of *", p.key)
	}
	return nil
}

// fromShardedTable reports whether the statement reads one table, by its name: the
// time-sharded one, whose rows * selects whole.
func (p *mergePlanner) fromShardedTable() bool {
	if len(p.sel.From) != 1 {
		return false
	}
	t, ok := p.sel.From[0].(*sqlparser.AliasedTableExpr)
	if !ok {
		return false
	}
	_, ok = t.Expr.(sqlparser.TableName)
	return ok
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
