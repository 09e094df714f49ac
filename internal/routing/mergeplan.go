package routing

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/obroute/obroute/internal/merge"
)

// mergePlan is how a SELECT on a time-sharded table is split into legs (one per physical table)
// whose rows the merge engine combines. It is computed once per statement text.
type mergePlan struct {
	spec merge.Spec
	// leg is the SELECT each physical table runs: AVG split into SUM and COUNT, hidden columns
	// appended, HAVING removed, LIMIT o+n without offset. Its WHERE still lacks the clamp.
	leg *sqlparser.Select
	// sorted: every leg and every per-backend stream is sorted by spec.OrderBy.
	sorted bool
	// pushLimit: per-backend streams (UNION ALL of legs) are limited to offset+limit rows, like
	// each leg; not under DISTINCT, whose legs repeat each other's values.
	pushLimit bool
	// limitArg, offsetArg are the argument indexes of LIMIT ? / OFFSET ?, -1 for literals.
	limitArg, offsetArg int
	// outer is the ORDER BY of a per-backend UNION ALL, by column positions.
	outer string
	// legT is the leg printed as a template (set by the time analysis, which then drops leg).
	legT template
	// probeT, when set (WITH ROLLUP), is the types probe's template instead of legT.
	probeT template
	// snippets are the hidden columns written as SQL text (weights, exact sums), by marker.
	snippets map[string]snippet
	// subst are select aliases printed as their expressions (in HAVING conditions the
	// sub-queries compute).
	subst map[*sqlparser.ColName]sqlparser.Expr
	// types remembers the column types of one server for this statement (see TypesCache).
	types TypesCache
	// weightCols maps each weight snippet to the columns it weighs.
	weightCols map[string][]int
	// ordinalCols maps each ordinal snippet (e + 0) to the column it orders.
	ordinalCols map[string]int
	// sigNames are the weight snippets whose collations' signatures sigT reads, in its order;
	// sig is the statement that reads them (its select list until printed as sigT).
	sigNames []string
	sig      *sqlparser.Select
	sigT     template
	// distinctWeighed: a DISTINCT leg with weighed columns, whose LIMIT holds only when none
	// of its weights is asked for.
	distinctWeighed bool
	// unionTypesExact: a UNION ALL of legs reports the column types of one leg, as it does for
	// COUNT, and SUM and AVG of a column; otherwise (an ENUM, a TEXT, some DECIMAL
	// expressions) the UNION's types differ and one leg's are read and remembered.
	unionTypesExact bool
	// keyCols are the leg's columns that are the shard key itself (Plan.KeyColumns).
	keyCols []int
}

// notMergeable builds an ErrNotMergeable error.
func notMergeable(format string, a ...any) error {
	return errorf("%w: %s", ErrNotMergeable, fmt.Sprintf(format, a...))
}

// mergePlanner holds the state of planning one SELECT.
type mergePlanner struct {
	sel     *sqlparser.Select
	leg     *sqlparser.Select
	key     string // shard key, lower case
	keys    []string
	aliases []string // visible items' aliases, lower case
	// hiddenKeys maps the text of each hidden column's expression to its index.
	hiddenKeys map[string]int
	// snippetCols maps each snippet, by its text, to its column.
	snippetCols map[string]int
	// weightOf maps columns to their weight columns, for merge.Spec.Weights.
	weightOf map[int]int
	// ordinalOf maps columns to their ordinal columns, for merge.Spec.Ordinals; ordinalReqs
	// are the columns that need one, added last (addOrdinals).
	ordinalOf   map[int]int
	ordinalReqs []ordinalReq
	// groupKeys are the GROUP BY expressions, for HAVING conditions computed by the sub-queries.
	groupKeys []string
	snippets  map[string]snippet
	subst     map[*sqlparser.ColName]sqlparser.Expr
	// sigNames and sigItems are the weights' collation signatures a probe reads.
	sigNames []string
	sigItems sqlparser.SelectExprs
	visible  int
	spec     merge.Spec
	// computedCols are the columns the merge computes from merged aggregates.
	computedCols map[int]bool
	// grouping: the sub-queries group (by the statement's keys, or a DISTINCT aggregate's
	// arguments).
	grouping bool
	// star: the select list is *, whose width only the rows tell.
	star bool
	// distinctArgs are the arguments of the statement's COUNT, SUM or AVG (DISTINCT …), and
	// distinctCols their hidden columns (nil until added).
	distinctArgs []sqlparser.Expr
	distinctCols []int
}

func exprKey(e sqlparser.Expr) string { return strings.ToLower(nodeText(e)) }

// planMerge plans the split of sel (whose GROUP BY is WITH ROLLUP when rollup is set), or says
// clearly why it cannot be split correctly.
func planMerge(sel *sqlparser.Select, shardKey string, rollup bool) (*mergePlan, error) {
	switch {
	case sel.With != nil:
		return nil, notMergeable("a WITH clause on a time-sharded table cannot be split; move the common table expression into the application or a single-table query")
	case sel.QueryOpts.SQLCalcFoundRows:
		return nil, notMergeable("SQL_CALC_FOUND_ROWS cannot be answered across sub-queries; run a separate SELECT COUNT(*)")
	case len(sel.Window) > 0 || hasWindow(sel):
		return nil, notMergeable("window functions (OVER …) compute over all rows at once and cannot be merged from sub-queries; narrow the range to one table or compute them in the application")
	case sel.Into != nil:
		return nil, notMergeable("SELECT … INTO cannot be split; select the rows and write them in the application")
	}
	if e, rows := serverBound(sel); e != "" && rows {
		return nil, notMergeable("%s counts the statement's rows, which each sub-query counts on its own tables from the start; number the rows in the application", e)
	} else if e != "" {
		return nil, notMergeable("%s is the server's or its session's own, and each sub-query reads it on its own backend, where one server would give one value; read it in a statement of its own", e)
	}
	if err := checkSubqueryLimit(sel); err != nil {
		return nil, err
	}
	distinctList, err := checkDistinctLists(sel)
	if err != nil {
		return nil, err
	}
	// The leg keeps the statement's comments: optimizer hints apply to every sub-query.
	p := &mergePlanner{sel: sel, leg: shallowSelect(sel), key: shardKey, hiddenKeys: map[string]int{},
		snippetCols: map[string]int{}, weightOf: map[int]int{}, ordinalOf: map[int]int{}, snippets: map[string]snippet{}, subst: map[*sqlparser.ColName]sqlparser.Expr{},
		computedCols: map[int]bool{}, grouping: len(sel.GroupBy) > 0 || distinctList != nil}
	p.leg.Having = nil
	// The query cache's options change no rows, and MariaDB takes them only in a statement's
	// first SELECT, which a sub-query's SELECT inside its backend's UNION ALL is not.
	p.leg.QueryOpts.SQLCache, p.leg.QueryOpts.SQLNoCache = false, false
	star := false
	grouped := len(sel.GroupBy) > 0
	items := sel.SelectExprs
	for _, se := range items {
		switch x := se.(type) {
		case *sqlparser.StarExpr:
			star = true
		case *sqlparser.AliasedExpr:
			if overAggregates(x.Expr) {
				grouped = true
				continue
			}
			f, _, err := p.aggregate(x.Expr)
			if err != nil {
				return nil, err
			}
			grouped = grouped || f != 0
		default:
			return nil, notMergeable("the select item %s cannot be split", nodeText(se))
		}
	}
	if sel.Having != nil {
		grouped = true
	}
	p.star = star
	if err := p.checkStar(star, grouped); err != nil {
		return nil, err
	}
	if !star {
		p.visible = len(items)
	}
	// A SELECT DISTINCT * is deduplicated by the sub-queries alone (see checkStar).
	p.spec = merge.Spec{Visible: p.visible, Distinct: sel.QueryOpts.Distinct && !star, Limit: merge.NoLimit}
	for _, se := range items {
		ae, ok := se.(*sqlparser.AliasedExpr)
		if !ok {
			continue
		}
		p.aliases = append(p.aliases, ae.As.Lowered())
		p.keys = append(p.keys, exprKey(ae.Expr))
	}
	for i, se := range items {
		if ae, ok := se.(*sqlparser.AliasedExpr); ok {
			if overAggregates(ae.Expr) {
				if err := p.addComputed(i, ae.Expr); err != nil {
					return nil, err
				}
			} else if f, arg, _ := p.aggregate(ae.Expr); f != 0 {
				if err := p.addAggregate(i, f, ae.Expr, arg); err != nil {
					return nil, err
				}
			}
		}
	}
	if grouped {
		if err := p.groupBy(); err != nil {
			return nil, err
		}
	}
	if sel.Having != nil {
		h, err := p.condition(sel.Having.Expr)
		if err != nil {
			return nil, err
		}
		p.spec.Having = h
	}
	if err := p.orderBy(grouped); err != nil {
		return nil, err
	}
	if len(sel.GroupBy) > 0 && len(sel.OrderBy) == 0 && !rollup {
		// MariaDB returns the groups of a GROUP BY without ORDER BY sorted by the group keys, as
		// if ORDER BY named them (ORDER BY NULL leaves them unsorted): with LIMIT, that decides
		// which groups are returned.
		for _, c := range p.spec.GroupBy {
			p.spec.OrderBy = append(p.spec.OrderBy, merge.OrderKey{Column: c})
		}
	}
	if rollup {
		if err := p.rollup(); err != nil {
			return nil, err
		}
	}
	if err := p.checkStarDistinctOrder(); err != nil {
		return nil, err
	}
	if sel.QueryOpts.Distinct && !grouped && !star && p.hiddenOrderKeys() {
		return nil, notMergeable("SELECT DISTINCT with ORDER BY on columns not in the select list cannot be merged; add the ORDER BY columns to the select list")
	}
	if sel.QueryOpts.Distinct {
		for i := range p.visible {
			p.weigh(i, p.sel.SelectExprs[i].(*sqlparser.AliasedExpr).Expr)
		}
	}
	p.groupByDistinct()
	if err := p.constantOverNoRows(); err != nil {
		return nil, err
	}
	p.addOrdinals()
	p.spec.Weights = p.weightColumns()
	p.spec.Ordinals = p.ordinalColumns()
	if star {
		if err := p.hiddenFirst(); err != nil {
			return nil, err
		}
	}
	mp := &mergePlan{leg: p.leg, limitArg: -1, offsetArg: -1, snippets: p.snippets, subst: p.subst, unionTypesExact: p.unionTypesExact()}
	mp.weightCols = map[string][]int{}
	for c, w := range p.weightOf {
		name := p.leg.SelectExprs[w].(*sqlparser.AliasedExpr).Expr.(*sqlparser.ColName).Name.String()
		mp.weightCols[name] = append(mp.weightCols[name], c)
	}
	mp.ordinalCols = map[string]int{}
	for c, o := range p.ordinalOf {
		mp.ordinalCols[p.leg.SelectExprs[o].(*sqlparser.AliasedExpr).Expr.(*sqlparser.ColName).Name.String()] = c
	}
	mp.types.derive = mp.derive
	if len(p.sigItems) > 0 {
		mp.sigNames = p.sigNames
		mp.sig = &sqlparser.Select{SelectExprs: p.sigItems, From: p.leg.From}
	}
	switch {
	case grouped && p.spec.StreamsGroups():
		// The merge streams groups: legs and per-backend streams come sorted by the group keys.
		keys := p.spec.OrderBy[:len(p.spec.GroupBy)]
		p.leg.OrderBy = positionalOrder(keys, p.ordinalOf)
		p.leg.Limit = nil
		p.leg.QueryOpts.Distinct = false
		mp.sorted = true
		mp.outer = nodeText(p.leg.OrderBy)
	case grouped:
		// Groups are combined by hash merge; legs return all their groups, unsorted.
		p.leg.OrderBy = nil
		p.leg.Limit = nil
		p.leg.QueryOpts.Distinct = false
	case len(p.spec.OrderBy) > 0:
		mp.sorted = true
		mp.outer = nodeText(positionalOrder(p.spec.OrderBy, p.ordinalOf))
	}
	if err := p.limit(mp, grouped); err != nil {
		return nil, err
	}
	mp.spec = p.spec
	if !star {
		mp.keyCols = keyColumnsOf(p.leg, shardKey)
	}
	return mp, nil
}

// keyColumnsOf returns the columns of leg that are the shard key key itself, or MIN or MAX of
// it (Plan.KeyColumns): routing checks what the merge compares of them (time_stamp.go).
func keyColumnsOf(leg *sqlparser.Select, key string) []int {
	if key == "" {
		return nil
	}
	bare := func(e sqlparser.Expr) bool {
		c, ok := unparen(e).(*sqlparser.ColName)
		return ok && c.Qualifier.IsEmpty() && c.Name.Lowered() == key
	}
	var cols []int
	for i, se := range leg.SelectExprs {
		ae, ok := se.(*sqlparser.AliasedExpr)
		if !ok {
			continue
		}
		if bare(ae.Expr) {
			cols = append(cols, i)
			continue
		}
		if f, ok := unparen(ae.Expr).(*sqlparser.FuncExpr); ok && f != nil && !f.Distinct && len(f.Exprs) == 1 {
			if n := f.Name.Lowered(); n == "min" || n == "max" {
				if arg, ok := f.Exprs[0].(*sqlparser.AliasedExpr); ok && bare(arg.Expr) {
					cols = append(cols, i)
				}
			}
		}
	}
	return cols
}

// positionalOrder is an ORDER BY of column positions (1-based), as a per-backend UNION ALL needs.
// A key with an ordinal column (ordinals: column → its ordinal) is ordered by the ordinal first:
// a UNION makes an ENUM or SET a VARCHAR, which it would sort as text; the ordinal is NULL in
// every row for a column of another type, which is then ordered by itself.
func positionalOrder(keys []merge.OrderKey, ordinals map[int]int) sqlparser.OrderBy {
	out := make(sqlparser.OrderBy, 0, len(keys))
	for _, k := range keys {
		dir := sqlparser.AscScr
		if k.Desc {
			dir = sqlparser.DescScr
		}
		if o, ok := ordinals[k.Column]; ok {
			out = append(out, &sqlparser.Order{Expr: sqlparser.NewIntVal([]byte(strconv.Itoa(o + 1))), Direction: dir})
		}
		out = append(out, &sqlparser.Order{Expr: sqlparser.NewIntVal([]byte(strconv.Itoa(k.Column + 1))), Direction: dir})
	}
	return out
}

// aggregateCall is the call of aggregate function name on arg.
//
//go:noinline
func aggregateCall(name string, arg sqlparser.Expr) sqlparser.Expr {
	return &sqlparser.FuncExpr{Name: sqlparser.NewColIdent(name), Exprs: sqlparser.SelectExprs{&sqlparser.AliasedExpr{Expr: arg}}}
}

// resolve finds the leg column of an ORDER BY / GROUP BY / HAVING term: a position, a select
// alias, or an expression of the select list. It returns -1 when none matches.
func (p *mergePlanner) resolve(e sqlparser.Expr, positions bool) (int, error) {
	if lit, ok := e.(*sqlparser.SQLVal); ok && positions && lit.Type == sqlparser.IntVal {
		if p.star {
			return 0, notMergeable("ORDER BY %s is a position in SELECT *, whose columns obroute does not know; name the column instead", lit.Val)
		}
		n, err := strconv.Atoi(string(lit.Val))
		if err != nil || n < 1 || n > p.visible {
			return 0, notMergeable("position %s is not a column of the select list", lit.Val)
		}
		return n - 1, nil
	}
	if col, ok := e.(*sqlparser.ColName); ok && col.Qualifier.IsEmpty() {
		for i, a := range p.aliases {
			if a != "" && a == col.Name.Lowered() {
				return i, nil
			}
		}
	}
	k := exprKey(e)
	for i, s := range p.keys {
		if s == k {
			return i, nil
		}
	}
	// Columns hidden earlier (group or order keys, aggregates) are found too.
	if i, ok := p.hiddenKeys[k]; ok {
		return i, nil
	}
	return -1, nil
}

func (p *mergePlanner) groupBy() error {
	exprs := p.sel.GroupBy
	isGroup := map[int]bool{}
	for _, e := range exprs {
		i, err := p.resolve(e, true)
		if err != nil {
			return err
		}
		if i < 0 {
			if containsAggregate(e) || hasSubquery(e) {
				return notMergeable("GROUP BY %s cannot be a hidden group key; group by columns or expressions of columns", nodeText(e))
			}
			i = p.hidden(e)
		} else if i < p.visible {
			if f, _, _ := p.aggregate(p.sel.SelectExprs[i].(*sqlparser.AliasedExpr).Expr); f != 0 || p.computedCols[i] {
				return notMergeable("GROUP BY %s names an aggregate", nodeText(e))
			}
		}
		if err := p.checkAliasColumn(e, i); err != nil {
			return err
		}
		isGroup[i] = true
		p.spec.GroupBy = append(p.spec.GroupBy, i)
		p.weigh(i, p.columnExpr(i, e))
		p.ordinal(i, p.columnExpr(i, e))
		p.groupKeys = append(p.groupKeys, exprKey(p.columnExpr(i, e)))
	}
	for i, se := range p.sel.SelectExprs {
		ae := se.(*sqlparser.AliasedExpr)
		if f, _, _ := p.aggregate(ae.Expr); f == 0 && !isGroup[i] && !p.computedCols[i] && !isConstant(ae.Expr) {
			return notMergeable("the select item %s is neither aggregated nor in GROUP BY; add it to GROUP BY or aggregate it", nodeText(ae.Expr))
		}
	}
	return nil
}

// serverFuncs are the functions whose value is the server's or its session's (its identity,
// its database, the connection, the last statement): each backend's differs.
var serverFuncs = map[string]bool{
	"connection_id": true, "database": true, "schema": true, "user": true, "session_user": true,
	"system_user": true, "current_user": true, "current_role": true, "version": true,
	"uuid_short": true, "last_insert_id": true, "row_count": true, "found_rows": true,
}

// serverBound returns the text of the first function call or system variable (@@name) of sel
// whose value differs between backends, "" when there is none; rows is set when it counts the
// statement's rows (ROWNUM(), RAND(N) with its seed: one server's sequence runs over all rows).
// The clock functions are not among them: every sub-query runs at the statement's one instant.
func serverBound(sel *sqlparser.Select) (found string, rows bool) {
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		switch x := n.(type) {
		case *sqlparser.FuncExpr:
			name := x.Name.Lowered()
			switch {
			case !x.Qualifier.IsEmpty():
			case serverFuncs[name]:
				found = nodeText(x)
			case name == "rownum" || name == "rand" && len(x.Exprs) > 0:
				found, rows = nodeText(x), true
			}
		case *sqlparser.ColName:
			if strings.HasPrefix(x.Name.String(), "@@") {
				found = nodeText(x)
			}
		}
		return found == "", nil
	}, sel)
	return found, rows
}

// isConstant reports whether e reads neither a column nor a subquery, an aggregate or an
// argument, and calls only the built-in functions of constantFuncs: literals, operators and
// functions of them, the clock (every sub-query runs at the statement's one instant). Its value
// needs no GROUP BY, and every sub-query's is one server's. A function outside the list
// (RAND(N) and ROWNUM(), which count rows; stored functions; what reads the server or its
// session, refused before by serverBound) is not a constant.
func isConstant(e sqlparser.Expr) bool {
	constant := true
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		switch x := n.(type) {
		case *sqlparser.ColName, *sqlparser.Subquery, *sqlparser.GroupConcatExpr:
			constant = false
		case *sqlparser.FuncExpr:
			if !x.Qualifier.IsEmpty() || x.IsAggregate() || !constantFuncs[x.Name.Lowered()] {
				constant = false
			}
		case *sqlparser.SQLVal:
			if x.Type == sqlparser.ValArg {
				constant = false
			}
		}
		return constant, nil
	}, e)
	return constant
}

// constantFuncs are built-in functions whose value depends only on their arguments, the
// session's settings (which obroute keeps alike on every backend) and the statement's instant.
var constantFuncs = map[string]bool{
	"now": true, "current_timestamp": true, "localtime": true, "localtimestamp": true, "curdate": true,
	"current_date": true, "curtime": true, "current_time": true, "utc_timestamp": true, "utc_date": true,
	"utc_time": true, "concat": true, "concat_ws": true, "upper": true, "lower": true, "ucase": true, "lcase": true,
	"round": true, "abs": true, "floor": true, "ceil": true, "ceiling": true, "truncate": true,
	"coalesce": true, "ifnull": true, "if": true, "nullif": true, "length": true, "char_length": true,
	"substring": true, "substr": true, "left": true, "right": true, "trim": true, "lpad": true,
	"rpad": true, "replace": true, "repeat": true, "greatest": true, "least": true, "mod": true,
	"date": true, "year": true, "month": true, "day": true, "hour": true, "minute": true,
	"second": true, "date_format": true, "date_add": true, "date_sub": true, "datediff": true,
	"from_unixtime": true, "last_day": true,
}

// aggColumn returns the column of an aggregate term of HAVING or ORDER BY, adding it hidden
// when the select list lacks it.
func (p *mergePlanner) aggColumn(e sqlparser.Expr, f merge.AggFunc, arg sqlparser.Expr) (int, error) {
	i, err := p.resolve(e, false)
	if err != nil || i >= 0 {
		return i, err
	}
	i = p.hidden(e)
	return i, p.addAggregate(i, f, e, arg)
}

func (p *mergePlanner) orderBy(grouped bool) error {
	for _, o := range p.sel.OrderBy {
		if _, ok := o.Expr.(*sqlparser.NullVal); ok {
			continue // ORDER BY NULL: no order
		}
		if f, ok := o.Expr.(*sqlparser.FuncExpr); ok && f.Name.Lowered() == "rand" {
			return notMergeable("ORDER BY RAND() cannot be merged; shuffle in the application")
		}
		i, err := p.resolve(o.Expr, true)
		if err != nil {
			return err
		}
		if i < 0 {
			f, arg, err := p.aggregate(o.Expr)
			switch {
			case grouped && overAggregates(o.Expr):
				i = p.hidden(o.Expr)
				if err := p.addComputed(i, o.Expr); err != nil {
					return err
				}
			case err != nil:
				return err
			case f != 0 && grouped:
				if i, err = p.aggColumn(o.Expr, f, arg); err != nil {
					return err
				}
			case grouped && p.ofGroupKeys(o.Expr):
				// An expression of group keys (ORDER BY e+0): one value per group, computed by
				// the sub-queries.
				i = p.hidden(o.Expr)
			case grouped:
				return notMergeable("ORDER BY %s is neither a group column nor an aggregate; add it to the select list", nodeText(o.Expr))
			default:
				i = p.hidden(o.Expr)
			}
		}
		p.weigh(i, p.columnExpr(i, o.Expr))
		p.ordinal(i, p.columnExpr(i, o.Expr))
		p.spec.OrderBy = append(p.spec.OrderBy, merge.OrderKey{Column: i, Desc: o.Direction == sqlparser.DescScr})
	}
	return nil
}

// checkAliasColumn adds, for a GROUP BY name that resolved to the select item i, an alias of
// another value, the check that no column of the table has that name: MariaDB groups by such
// a column (warning 1052), the merge by the item. The sub-queries compute
// MIN((SELECT name) <=> item) per group: in a select-list subquery the name is the table's
// column when there is one and the alias otherwise, as in GROUP BY. The check holds when each
// row's item has the bytes and the collation of what the server groups by, so that the merge's
// groups are the server's; it fails (the statement is refused) otherwise, also where the item
// is a function of the column the server would group as one (UPPER(status) AS status).
func (p *mergePlanner) checkAliasColumn(e sqlparser.Expr, i int) error {
	col, ok := e.(*sqlparser.ColName)
	if !ok || !col.Qualifier.IsEmpty() || i >= p.visible || p.aliases[i] != col.Name.Lowered() {
		return nil
	}
	item := p.sel.SelectExprs[i].(*sqlparser.AliasedExpr).Expr
	if c, isCol := item.(*sqlparser.ColName); isCol && c.Name.Lowered() == col.Name.Lowered() {
		return nil
	}
	name, value := "(select "+nodeText(col)+")", "("+nodeText(item)+")"
	stmt, err := sqlparser.Parse("select binary " + name + " <=> binary " + value + " and collation(" + name + ") = collation(" + value + ")")
	if err != nil {
		return notMergeable("GROUP BY %s names the select item %s: %v", nodeText(e), nodeText(item), err)
	}
	c := p.helper(aggregateCall("min", stmt.(*sqlparser.Select).SelectExprs[0].(*sqlparser.AliasedExpr).Expr))
	p.spec.Checks = append(p.spec.Checks, merge.Check{Column: c, Refusal: fmt.Sprintf(
		"GROUP BY %s names the select item %s AS %s and a column of the table, which MariaDB groups by (warning 1052): give the item another alias, or GROUP BY the expression itself",
		nodeText(e), nodeText(item), col.Name.String())})
	return nil
}

// ofGroupKeys reports whether e is an expression of columns that are all GROUP BY keys, without
// aggregates, subqueries or arguments.
func (p *mergePlanner) ofGroupKeys(e sqlparser.Expr) bool {
	if containsAggregate(e) || hasSubquery(e) {
		return false
	}
	ok, cols := true, 0
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		switch x := n.(type) {
		case *sqlparser.ColName:
			cols++
			ok = ok && slices.Contains(p.groupKeys, exprKey(x))
		case *sqlparser.SQLVal:
			ok = ok && x.Type != sqlparser.ValArg
		}
		return ok, nil
	}, e)
	return ok && cols > 0
}
