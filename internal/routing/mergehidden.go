package routing

import (
	"slices"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/obroute/obroute/internal/merge"
)

// The merge repeats only what it can repeat exactly; everything that depends on a collation,
// a session setting or digits the server does not show is computed by the sub-queries, in
// hidden columns after the statement's own:
//
//   - the weight of every text value the merge compares (ORDER BY, GROUP BY, DISTINCT, MIN,
//     MAX), as merge.WeightSQL writes it;
//   - for SUM and AVG of an expression whose partial sums the server rounds for display (a
//     division, a product, a function), the sum with every digit it keeps (merge.ExactSumSQL);
//   - for AVG, the partial SUM and COUNT of its argument and the session's
//     div_precision_increment, and, unless the argument is a column, whether the server rounds
//     or cuts its quotient (merge.AvgModeSQL); the AVG itself stays in its place, so that its
//     column has the type one server gives it;
//   - each HAVING condition on group keys and one MIN or MAX, evaluated by the server on each
//     partial row and carried with the row whose value the merge keeps.

// snippet is a hidden column written as SQL text around one expression: pieces joined by arg.
type snippet struct {
	pieces []string
	arg    sqlparser.Expr
}

// snippetMarker is the column name that stands for a snippet in the leg until it is printed.
const snippetMarker = "__obroute_snippet_"

// snippetColumn appends a hidden column printed as pieces around arg and returns its index;
// the same snippet of the same expression is one column.
func (p *mergePlanner) snippetColumn(pieces []string, arg sqlparser.Expr) int {
	key := strings.Join(pieces, "\x00")
	if arg != nil {
		key += "\x00" + exprKey(arg)
	}
	if i, ok := p.snippetCols[key]; ok {
		return i
	}
	i := p.helper(p.snippet(pieces, arg))
	p.snippetCols[key] = i
	return i
}

// snippet returns the marker of a new snippet, printed as pieces around arg.
func (p *mergePlanner) snippet(pieces []string, arg sqlparser.Expr) *sqlparser.ColName {
	name := snippetMarker + strconv.Itoa(len(p.snippets)) + "__"
	p.snippets[name] = snippet{pieces: pieces, arg: arg}
	return sqlparser.NewColName(name)
}

// weigh gives column col, which holds e, a weight column, unless e cannot be text. Equal
// expressions share one.
func (p *mergePlanner) weigh(col int, e sqlparser.Expr) {
	if !p.mayBeText(e) {
		return
	}
	w := p.snippetColumn(merge.WeightSQL(), e)
	p.weightOf[col] = w
	name := p.leg.SelectExprs[w].(*sqlparser.AliasedExpr).Expr.(*sqlparser.ColName).Name.String()
	if !slices.Contains(p.sigNames, name) {
		// The collation's signature, read once per statement by a probe without GROUP BY.
		_, column := unparen(e).(*sqlparser.ColName)
		arg := e
		if !containsAggregate(e) {
			arg = aggregateCall("min", e)
		}
		p.sigNames = append(p.sigNames, name)
		p.sigItems = append(p.sigItems, &sqlparser.AliasedExpr{Expr: p.snippet(merge.SignatureSQL(column), arg)})
	}
}

// ordinalSQL is the snippet of an ENUM or SET column's position in its definition, which
// the server orders and groups it by.
var ordinalSQL = []string{"(", ") + 0"}

// ordinal gives column col, which holds e, an ordinal column (e + 0) when e is a column of the
// table other than the shard key: rendered only when its type is ENUM or SET (see derive), the
// merge then orders and groups col by it as the server does.
func (p *mergePlanner) ordinal(col int, e sqlparser.Expr) {
	c, ok := unparen(e).(*sqlparser.ColName)
	if !ok || c.Name.Lowered() == p.key || p.star {
		return // SELECT *: its hidden columns move first (hiddenFirst), an ENUM stays refused
	}
	for _, r := range p.ordinalReqs {
		if r.col == col {
			return
		}
	}
	p.ordinalReqs = append(p.ordinalReqs, ordinalReq{col, e})
}

// ordinalReq is a column to give an ordinal column, and its expression.
type ordinalReq struct {
	col int
	e   sqlparser.Expr
}

// addOrdinals adds the ordinal columns asked for, last in the leg's select list.
func (p *mergePlanner) addOrdinals() {
	for _, r := range p.ordinalReqs {
		p.ordinalOf[r.col] = p.snippetColumn(ordinalSQL, r.e)
	}
}

// isEnumOrSet reports whether a column of the type is ordered by its values' positions.
func isEnumOrSet(typ string) bool {
	return strings.EqualFold(typ, "ENUM") || strings.EqualFold(typ, "SET")
}

// ordinalColumns is merge.Spec.Ordinals.
func (p *mergePlanner) ordinalColumns() []int {
	if len(p.ordinalOf) == 0 {
		return nil
	}
	out := make([]int, len(p.leg.SelectExprs))
	for c, o := range p.ordinalOf {
		out[c] = o
	}
	return out
}

// weightColumns is merge.Spec.Weights.
func (p *mergePlanner) weightColumns() []int {
	if len(p.weightOf) == 0 {
		return nil
	}
	out := make([]int, len(p.leg.SelectExprs))
	for c, w := range p.weightOf {
		out[c] = w
	}
	return out
}

// columnExpr is the expression of leg column i, or e when i is not one.
func (p *mergePlanner) columnExpr(i int, e sqlparser.Expr) sqlparser.Expr {
	if i >= 0 && i < len(p.leg.SelectExprs) {
		if ae, ok := p.leg.SelectExprs[i].(*sqlparser.AliasedExpr); ok {
			return ae.Expr
		}
	}
	return e
}

// mayBeText reports whether e may be a string: false only for what is a number or a time
// whatever its operands are (the shard key, arithmetic, comparisons, COUNT, SUM, AVG).
func (p *mergePlanner) mayBeText(e sqlparser.Expr) bool {
	switch x := unparen(e).(type) {
	case *sqlparser.ColName:
		return x.Name.Lowered() != p.key
	case *sqlparser.SQLVal:
		return x.Type == sqlparser.StrVal || x.Type == sqlparser.ValArg
	case *sqlparser.NullVal, sqlparser.BoolVal, *sqlparser.ComparisonExpr, *sqlparser.AndExpr, *sqlparser.OrExpr,
		*sqlparser.NotExpr, *sqlparser.IsExpr:
		return false
	case *sqlparser.BinaryExpr:
		return false // arithmetic and bit operators: numbers
	case *sqlparser.UnaryExpr:
		return x.Operator != sqlparser.UMinusStr && x.Operator != sqlparser.UPlusStr && x.Operator != sqlparser.TildaStr
	case *sqlparser.FuncExpr:
		switch x.Name.Lowered() {
		case "count", "sum", "avg", "round":
			return false
		case "min", "max":
			if len(x.Exprs) == 1 {
				if ae, ok := x.Exprs[0].(*sqlparser.AliasedExpr); ok {
					return p.mayBeText(ae.Expr)
				}
			}
		}
	}
	return true
}

// argKind says what an AVG's argument is made of: how many digits the server keeps of it.
func argKind(e sqlparser.Expr) merge.ArgKind {
	switch x := unparen(e).(type) {
	case *sqlparser.ColName:
		return merge.ArgColumn
	case *sqlparser.SQLVal:
		if x.Type == sqlparser.IntVal || x.Type == sqlparser.FloatVal {
			return merge.ArgColumn
		}
	case *sqlparser.UnaryExpr:
		if x.Operator == sqlparser.UMinusStr || x.Operator == sqlparser.UPlusStr {
			return argKind(x.Expr)
		}
	case *sqlparser.BinaryExpr:
		switch x.Operator {
		case sqlparser.PlusStr, sqlparser.MinusStr, sqlparser.MultStr, sqlparser.DivStr:
			if argKind(x.Left) != merge.ArgOther && argKind(x.Right) != merge.ArgOther {
				return merge.ArgArithmetic
			}
		}
	case *sqlparser.ConvertExpr:
		return merge.ArgColumn // a CAST keeps the digits of its type, as a column does
	case *sqlparser.FuncExpr:
		// ROUND(x, n) and TRUNCATE(x, n) keep n digits, FLOOR and CEIL none: as a column does.
		switch x.Name.Lowered() {
		case "floor", "ceil", "ceiling":
			return merge.ArgColumn
		case "round", "truncate":
			if len(x.Exprs) == 2 {
				if ae, ok := x.Exprs[1].(*sqlparser.AliasedExpr); ok {
					if n, ok := ae.Expr.(*sqlparser.SQLVal); ok && n.Type == sqlparser.IntVal {
						return merge.ArgColumn
					}
				}
			}
		}
	}
	return merge.ArgOther
}

// hiddenDigits reports whether e may keep more fraction digits than its type shows: a quotient
// keeps whole 9-digit words, and so does anything computed from one, unless ROUND, TRUNCATE,
// FLOOR, CEIL or a CAST fixes its digits.
func hiddenDigits(e sqlparser.Expr) bool {
	hidden := false
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		switch x := n.(type) {
		case *sqlparser.BinaryExpr:
			hidden = hidden || x.Operator == sqlparser.DivStr
		case *sqlparser.Subquery:
			hidden = true
		case *sqlparser.ConvertExpr:
			return false, nil
		case *sqlparser.FuncExpr:
			switch x.Name.Lowered() {
			case "round", "truncate", "floor", "ceil", "ceiling":
				return false, nil
			}
		}
		return !hidden, nil
	}, e)
	return hidden
}

// addAggregate records the aggregate e = f(arg) in column col and the hidden columns it needs.
func (p *mergePlanner) addAggregate(col int, f merge.AggFunc, e, arg sqlparser.Expr) error {
	a := merge.Aggregate{Func: f, Column: col}
	if args := p.distinctOf(e); args != nil {
		a.Distinct = p.distinctColumns(args)
	}
	if (f == merge.AggSum || f == merge.AggAvg) && hiddenDigits(arg) && p.grouping {
		return notMergeable("%s where the sub-queries group (by GROUP BY keys or a DISTINCT aggregate's arguments): MariaDB itself rounds each row's value to the digits its type shows, or not, depending on how it groups (through a temporary table or not), so one server has no one answer to repeat; fix the digits with ROUND (%s(ROUND(%s, n))), or narrow the range to one table",
			nodeText(e), strings.ToUpper(f.String()), nodeText(arg))
	}
	switch f {
	case merge.AggSum:
		if hiddenDigits(arg) {
			a.Exact = p.snippetColumn(merge.ExactSumSQL(), aggregateCall("sum", arg))
		}
	case merge.AggAvg:
		a.Sum = p.helper(aggregateCall("sum", arg))
		a.Count = p.helper(aggregateCall("count", arg))
		a.Increment = p.snippetColumn([]string{"@@div_precision_increment"}, nil)
		a.Arg = argKind(arg)
		if a.Arg != merge.ArgColumn {
			a.Mode = p.snippetColumn(merge.AvgModeSQL(), aggregateCall("sum", arg))
		}
		if hiddenDigits(arg) {
			a.Exact = p.snippetColumn(merge.ExactSumSQL(), aggregateCall("sum", arg))
		}
	case merge.AggMin, merge.AggMax:
		p.weigh(col, e)
	}
	p.spec.Aggregates = append(p.spec.Aggregates, a)
	return nil
}

// hiddenOrderKeys reports whether an ORDER BY key is not in the select list.
func (p *mergePlanner) hiddenOrderKeys() bool {
	for _, k := range p.spec.OrderBy {
		if k.Column >= p.visible {
			return true
		}
	}
	return false
}

// unionTypesExact reports whether a UNION ALL of legs reports the types of one leg: every
// visible column is a COUNT, or a SUM or AVG of a column, and no ORDER BY key is a column whose
// order the types decide (an ENUM orders by its definition).
func (p *mergePlanner) unionTypesExact() bool {
	if p.visible == 0 {
		return false
	}
	for _, se := range p.sel.SelectExprs {
		f, arg, _ := p.aggregate(se.(*sqlparser.AliasedExpr).Expr)
		if f != merge.AggCount && (f != merge.AggSum && f != merge.AggAvg || argKind(arg) != merge.ArgColumn) {
			return false
		}
	}
	for _, k := range p.spec.OrderBy {
		if !slices.ContainsFunc(p.spec.Aggregates, func(a merge.Aggregate) bool { return a.Column == k.Column }) {
			return false
		}
	}
	return true
}

// derive says, for one server's column types and the signatures of the weighed collations
// (in sigNames order, nil where not read), which weights the legs need (those of text columns,
// and of columns whose type is not known) and what the merge needs to know of their
// collations.
func (mp *mergePlan) derive(one []merge.ColumnType, sigs [][]byte) typesDerived {
	d := typesDerived{skip: make([]bool, len(mp.legT.snips)), spec: mp.spec}
	d.spec.Weights = slices.Clone(mp.spec.Weights)
	d.spec.Collations = make([][]byte, len(d.spec.Weights))
	d.spec.Ordinals = slices.Clone(mp.spec.Ordinals)
	for i, sn := range mp.legT.snips {
		if c, ok := mp.ordinalCols[sn.name]; ok {
			if c >= len(one) || !isEnumOrSet(one[c].DatabaseTypeName) {
				d.skip[i] = true
				d.spec.Ordinals[c] = 0
			}
			continue
		}
		cols, ok := mp.weightCols[sn.name]
		if !ok {
			continue // not a weight
		}
		if k := slices.Index(mp.sigNames, sn.name); anyText(one, cols) && k >= 0 && k < len(sigs) {
			for _, c := range cols {
				d.spec.Collations[c] = sigs[k]
			}
			continue
		}
		d.skip[i] = true
		for _, c := range cols {
			d.spec.Weights[c] = 0
			d.skipped = append(d.skipped, c)
		}
	}
	return d
}

// hidden appends a hidden column to the leg's select list, found by resolve, and returns its
// index.
func (p *mergePlanner) hidden(e sqlparser.Expr) int {
	i := p.helper(e)
	if _, ok := p.hiddenKeys[exprKey(e)]; !ok {
		p.hiddenKeys[exprKey(e)] = i
	}
	return i
}

// helper appends a hidden column that resolve does not find (a part of an AVG, a weight: the
// merge folds it into another column rather than merging it on its own) and returns its index.
// Hidden columns are named by their position: short, and never taken for a column of the table.
func (p *mergePlanner) helper(e sqlparser.Expr) int {
	i := len(p.leg.SelectExprs)
	p.leg.SelectExprs = append(p.leg.SelectExprs, &sqlparser.AliasedExpr{Expr: e, As: sqlparser.NewColIdent("_obroute_" + strconv.Itoa(i+1))})
	return i
}
