package routing

import (
	"cmp"
	"slices"
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/obroute/obroute/config"
)

// analyze computes what time routing needs of a statement that does not depend on arguments or
// the clock. It returns nil when the statement names no time-sharded table; an error refuses the
// statement (it is stored in Statement.RouteErr).
func (t *timeRouter) analyze(st *Statement, p *parsed) (*timeStatement, error) {
	var cfg *config.TimeTable
	for _, name := range st.Tables {
		c, ok := t.tables[name]
		if !ok {
			continue
		}
		if cfg != nil {
			return nil, errorf("%w: %s and %s are both time-sharded; query each on its own and join in the application", ErrTimeShardedJoin, cfg.Table, c.Table)
		}
		cfg = c
	}
	if cfg == nil {
		return nil, nil
	}
	union, _ := p.ast.(*sqlparser.SetOp)
	switch p.ast.(type) {
	case *sqlparser.Select, *sqlparser.Update, *sqlparser.Delete, *sqlparser.Insert, *sqlparser.SetOp:
	default:
		// A time-sharded table in another statement (DDL, …).
		if st.Kind == KindSelect {
			return nil, notMergeable("this statement over the time-sharded table %s cannot be routed; run each SELECT on its own", cfg.Table)
		}
		return nil, readInOther(p.ast, cfg.Table)
	}
	if _, ok := st.hasAside(asideRowsExamined); ok {
		return nil, notMergeable("LIMIT ROWS EXAMINED on the time-sharded table %s would count the rows of each physical table on its own; remove ROWS EXAMINED", cfg.Table)
	}
	// The statement is rewritten for its physical tables: it must print as written.
	if err := p.faithful(); err != nil {
		return nil, err
	}
	if form := unreadForm(p.toks); form != "" {
		return nil, errorf("%w: the statement names the time-sharded table %s: %s", ErrUnreadable, cfg.Table, form)
	}
	logical := strings.ToLower(cfg.Table)
	var uses []*sqlparser.AliasedTableExpr
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		if a, ok := n.(*sqlparser.AliasedTableExpr); ok && a != nil {
			if name, ok := a.Expr.(sqlparser.TableName); ok && strings.EqualFold(name.Name.String(), logical) {
				uses = append(uses, a)
			}
		}
		return true, nil
	}, p.ast)
	sel, _ := p.ast.(*sqlparser.Select)
	if len(uses) > 1 && union == nil && sel == nil { // a UNION names the table once per SELECT
		return nil, errorf("%w: %s appears %d times (a self-join or subquery on it); query each part on its own", ErrTimeShardedJoin, cfg.Table, len(uses))
	}
	ts := &timeStatement{table: cfg, kind: st.Kind, prefix: cfg.Table, key: strings.ToLower(cfg.ShardKey), clocked: hasClock(p.ast)}
	pr := &printer{logical: logical, typed: p.typed, clock: true, lits: st.litSlots}
	var (
		where sqlparser.Expr
		err   error
	)
	switch n := p.ast.(type) {
	case *sqlparser.SetOp:
		if len(uses) == 0 {
			return nil, nil
		}
		d, err := analyzeUnion(n, uses, cfg.Table, ts.key)
		if err != nil {
			return nil, err
		}
		ts.qual, ts.derived, where = uses[0].As.String(), true, d.where
		ts.unionKey = d.key
		ts.planSelect(pr, d.union, d.whole, "", false)
		if d.key != "" { // the merge compares the key's values (time_stamp.go)
			ts.keyOrder, ts.keyGroup = keyCompared(d.whole, d.key)
		}
	case *sqlparser.Select:
		var ons []sqlparser.Expr
		if len(uses) == 0 {
			return nil, nil
		}
		if _, ok := st.hasAside(asideRollup); ok {
			pr.rollup = n.GroupBy
		}
		if len(uses) > 1 {
			rng, ok, err := selfJoinRange(n, uses, logical, ts.key, p.typed)
			if !ok || err != nil {
				return nil, cmp.Or(err, selfJoinRefusal(cfg.Table, len(uses)))
			}
			ts.rng, ts.oneTable = rng, selfJoinRefusal(cfg.Table, len(uses))
			ts.mergeErr = ts.oneTable
			ts.whole = pr.print(withColumnNames(n, p.text))
			return ts, nil
		}
		found := false
		for _, te := range n.From {
			f, o, err := findTable(te, uses[0], false)
			if err != nil {
				return nil, errorf("%s %w", cfg.Table, err)
			}
			if f {
				found, ons = true, o
			}
		}
		ts.qual = uses[0].As.String()
		// Rewritten statements keep the column names of the statement as written.
		named := withColumnNames(n, p.text)
		// Comments inside the statement (optimizer hints) are kept; obroute's own hints lead
		// the statement, where the parser does not keep them.
		leg := shallowSelect(named)
		plan, mergeKey, clampLegs := named, ts.key, found
		if found {
			where = andAll(whereExpr(n.Where), ons)
			leg.Where = withClamp(leg.Where)
		} else {
			d, err := analyzeDerived(named, uses[0], cfg.Table, ts.key)
			if err != nil {
				return nil, err
			}
			ts.derived = true
			where, leg, plan, mergeKey = d.where, d.whole, d.whole, d.key
			if d.plan != nil {
				plan, clampLegs = d.plan, true
			}
		}
		ts.planSelect(pr, leg, plan, mergeKey, clampLegs)
	case *sqlparser.Update:
		if len(n.TableExprs) != 1 || len(uses) != 1 {
			return nil, errorf("%w: a multi-table UPDATE on %s cannot be routed; update %s on its own", ErrNotMergeable, cfg.Table, cfg.Table)
		}
		if err := writesTheTable("UPDATE", n.TableExprs[0], uses[0], cfg.Table); err != nil {
			return nil, err
		}
		for _, e := range n.Exprs {
			if e.Name.Name.Lowered() == ts.key {
				return nil, errorf("%w: UPDATE sets the shard key %s, which may move rows to another table; DELETE and INSERT the rows instead", ErrNotMergeable, cfg.ShardKey)
			}
		}
		leg := *n
		leg.Where = withClamp(n.Where)
		where = ts.oneTableWrite(pr, tableWrite{verb: "UPDATE", use: uses[0], where: n.Where, order: n.OrderBy, limit: n.Limit, leg: &leg})
		if ts.splitErr == nil {
			ts.splitErr = joinedUpdate(n, uses[0], cfg.Table)
		}
	case *sqlparser.Delete:
		if len(n.TableExprs) != 1 || len(n.Targets) > 0 || len(uses) != 1 {
			return nil, errorf("%w: a multi-table DELETE on %s cannot be routed; delete from %s on its own", ErrNotMergeable, cfg.Table, cfg.Table)
		}
		if err := writesTheTable("DELETE", n.TableExprs[0], uses[0], cfg.Table); err != nil {
			return nil, err
		}
		leg := *n
		leg.Where = withClamp(n.Where)
		where = ts.oneTableWrite(pr, tableWrite{verb: "DELETE", use: uses[0], where: n.Where, order: n.OrderBy, limit: n.Limit, leg: &leg})
		if err := t.returning(st, ts, logical); err != nil {
			return nil, err
		}
	case *sqlparser.Insert:
		if len(uses) > 0 {
			return nil, errorf("%w: the INSERT reads the time-sharded table %s (INSERT … SELECT, or a subquery), which obroute does not split inside an INSERT; run the SELECT on its own and insert its rows with VALUES", ErrNotMergeable, cfg.Table)
		}
		if _, err := t.analyzeInsert(ts, n, pr); err != nil {
			return nil, err
		}
		return ts, t.returning(st, ts, logical)
	}
	c := &rangeCompiler{key: ts.key, quals: []string{logical}, typed: p.typed}
	if ts.qual != "" {
		c.quals = []string{strings.ToLower(ts.qual)}
		ts.qualSQL = sqlparser.String(sqlparser.NewTableIdent(ts.qual))
	}
	if ts.rng, err = c.compile(where); err != nil {
		return nil, err
	}
	ts.conj = ts.rng.conjunctive()
	return ts, nil
}

// planSelect prints leg (the statement with its clamp) and the merge plan of plan (the same
// statement, without the clamp when clampLegs is set, which adds it to the legs' WHERE; else the
// clamp is inside a derived table the legs keep) into ts. mergeKey is the shard key as a column
// of the FROM of plan, "" when it is not one.
func (ts *timeStatement) planSelect(pr *printer, leg sqlparser.SQLNode, plan *sqlparser.Select, mergeKey string, clampLegs bool) {
	ts.whole = pr.print(leg)
	ts.keyOrder, ts.keyGroup = keyCompared(plan, mergeKey)
	mp, err := planMerge(plan, mergeKey, pr.rollup != nil)
	if err != nil {
		ts.mergeErr = err
		return
	}
	if clampLegs {
		mp.leg.Where = withClamp(mp.leg.Where)
	}
	pr.snippets, pr.subst = mp.snippets, mp.subst
	mp.legT = pr.print(mp.leg)
	if pr.rollup != nil {
		// WITH ROLLUP types some columns otherwise than the legs' plain GROUP BY (MIN of an
		// ENUM is a VARCHAR): the types probe is the leg grouped WITH ROLLUP, as the statement.
		probe := *mp.leg
		probe.GroupBy, probe.OrderBy, probe.Limit = pr.rollup, nil, nil
		mp.probeT = pr.print(&probe)
	}
	if mp.sig != nil {
		mp.sig.Where = mp.leg.Where
		mp.sigT = pr.print(mp.sig)
	}
	if ts.unionKey != "" && !slices.ContainsFunc(mp.leg.SelectExprs, func(se sqlparser.SelectExpr) bool { _, star := se.(*sqlparser.StarExpr); return star }) {
		mp.keyCols = keyColumnsOf(mp.leg, ts.unionKey)
	}
	mp.leg, mp.sig = nil, nil // the templates are all a route needs
	ts.merge = mp
}

// readInOther refuses a statement other than SELECT, INSERT, UPDATE and DELETE that reads the
// time-sharded table's rows (CREATE TABLE … SELECT, CREATE VIEW) or loads rows into it (LOAD
// DATA): no one server holds them, and no physical table can stand for them.
func readInOther(ast sqlparser.Statement, table string) error {
	switch n := ast.(type) {
	case *sqlparser.DDL:
		if n.OptSelect != nil && n.OptSelect.Select != nil && nodeNames(n.OptSelect.Select, table) {
			return errorf("%w: CREATE TABLE … SELECT reads the time-sharded table %s, whose rows are split across physical tables; create the table, then SELECT the rows through obroute (split and merged) and INSERT them", ErrNotMergeable, table)
		}
		if n.ViewSpec != nil && n.ViewSpec.ViewExpr != nil && nodeNames(n.ViewSpec.ViewExpr, table) {
			return errorf("%w: CREATE VIEW over the time-sharded table %s: a view reads one server's tables, and no physical table holds every row of %s; query %s through obroute instead, or create a view per physical table with a backend hint", ErrNotMergeable, table, table, table)
		}
	case *sqlparser.Load:
		if strings.EqualFold(n.Table.Name.String(), table) {
			return errorf("%w: LOAD DATA into the time-sharded table %s is not routed row by row; INSERT the rows (each goes to its period's table), or load each period's rows into its physical table with a backend hint", ErrNotMergeable, table)
		}
	}
	return nil
}

// nodeNames reports whether n names the table (lower case) as a table.
func nodeNames(n sqlparser.SQLNode, table string) bool {
	found := false
	_ = sqlparser.Walk(func(node sqlparser.SQLNode) (bool, error) {
		if a, ok := node.(*sqlparser.AliasedTableExpr); ok && a != nil {
			if name, ok := a.Expr.(sqlparser.TableName); ok && strings.EqualFold(name.Name.String(), table) {
				found = true
			}
		}
		return !found, nil
	}, n)
	return found
}

// writesTheTable refuses an UPDATE or DELETE of other tables that reads the time-sharded table
// only in a subquery (use is not in te, the tables it writes): no physical table can stand for it.
func writesTheTable(verb string, te sqlparser.TableExpr, use *sqlparser.AliasedTableExpr, table string) error {
	if found, _, _ := findTable(te, use, false); found { // on an outer join's optional side too
		return nil
	}
	return errorf("%w: the %s reads the time-sharded table %s in a subquery, whose rows are split across physical tables; run the subquery on its own and pass its result as ? arguments", ErrNotMergeable, verb, table)
}

// joinedUpdate is the refusal of an UPDATE joining the time-sharded table to others, run as one
// UPDATE per physical table, that assigns a column of another table: one server updates each
// row of the other table once, the split once per physical table its rows join. nil when every
// assignment names a column of the sharded table (qualified with its name or alias).
func joinedUpdate(n *sqlparser.Update, use *sqlparser.AliasedTableExpr, table string) error {
	if _, ok := n.TableExprs[0].(*sqlparser.AliasedTableExpr); ok {
		return nil
	}
	own := strings.ToLower(use.As.String())
	if own == "" {
		own = strings.ToLower(table)
	}
	for _, e := range n.Exprs {
		if q := strings.ToLower(e.Name.Qualifier.Name.String()); q != own {
			return errorf("%w: the UPDATE joins %s to other tables and sets %s, which is not qualified as a column of %s: split across physical tables, a joined row would be updated once per table it joins; narrow the range to one table, or qualify every assigned column with %s",
				ErrNotMergeable, table, nodeText(e.Name), table, own)
		}
	}
	return nil
}

// tableWrite is an UPDATE or DELETE of the sharded table alone.
type tableWrite struct {
	verb  string                      // "UPDATE" or "DELETE"
	use   *sqlparser.AliasedTableExpr // the sharded table
	where *sqlparser.Where
	order sqlparser.OrderBy
	limit *sqlparser.Limit
	leg   sqlparser.SQLNode // the statement with the clamp
}

// oneTableWrite records what w needs: the sharded table's alias, the refusal of ORDER BY/LIMIT
// when it is split, and its leg printed. It returns the condition the range is read from.
func (ts *timeStatement) oneTableWrite(pr *printer, w tableWrite) sqlparser.Expr {
	ts.qual = w.use.As.String()
	ts.splitErr = perTableOrderLimit(w.verb, ts.table.Table, w.order, w.limit)
	ts.whole = pr.print(w.leg)
	return whereExpr(w.where)
}

// returning adds the RETURNING clause the parser did not read to the rewritten statement.
func (t *timeRouter) returning(st *Statement, ts *timeStatement, logical string) error {
	c, ok := st.hasAside(asideReturning)
	if !ok {
		return nil
	}
	ts.returning = true
	return returningTail(&ts.whole, c, logical, st.Params)
}

// shallowSelect copies sel and its select items, so that the copy's clauses and items can be
// replaced without touching sel; the expressions are shared and never modified.
//
// Not inlined: copied into each of its many call sites it would grow every
// binary that imports the driver (see driver/import_test.go).
//
//go:noinline
func shallowSelect(sel *sqlparser.Select) *sqlparser.Select {
	out := *sel
	out.SelectExprs = make(sqlparser.SelectExprs, len(sel.SelectExprs))
	for i, se := range sel.SelectExprs {
		if ae, ok := se.(*sqlparser.AliasedExpr); ok {
			c := *ae
			// Printed from its expression, with AS before an alias, not from the written text.
			c.InputExpression = ""
			se = &c
		}
		out.SelectExprs[i] = se
	}
	return &out
}

// findTable reports whether target is reachable in te through joins, with the ON conditions of
// the inner joins on the way. A target on the optional side of an outer join is refused: its
// sub-queries would each add the unmatched rows again.
func findTable(te sqlparser.TableExpr, target *sqlparser.AliasedTableExpr, optional bool) (bool, []sqlparser.Expr, error) {
	switch x := te.(type) {
	case *sqlparser.AliasedTableExpr:
		if x != target {
			return false, nil, nil
		}
		if optional {
			return true, nil, errorf("%w: is on the optional side of an outer join; put it on the preserved side (orders LEFT JOIN …) or use an inner join", ErrNotMergeable)
		}
		return true, nil, nil
	case *sqlparser.ParenTableExpr:
		for _, e := range x.Exprs {
			if f, o, err := findTable(e, target, optional); f || err != nil {
				return f, o, err
			}
		}
	case *sqlparser.JoinTableExpr:
		lOpt, rOpt := optional, optional
		switch x.Join {
		case sqlparser.LeftJoinStr, sqlparser.NaturalLeftJoinStr:
			rOpt = true
		case sqlparser.RightJoinStr, sqlparser.NaturalRightJoinStr:
			lOpt = true
		case sqlparser.FullOuterJoinStr:
			lOpt, rOpt = true, true
		}
		for i, side := range []sqlparser.TableExpr{x.LeftExpr, x.RightExpr} {
			opt := lOpt
			if i == 1 {
				opt = rOpt
			}
			f, o, err := findTable(side, target, opt)
			if err != nil {
				return f, o, err
			}
			if f {
				if (x.Join == sqlparser.JoinStr || x.Join == sqlparser.StraightJoinStr) && x.Condition.On != nil {
					o = append(o, x.Condition.On)
				}
				return true, o, nil
			}
		}
	}
	return false, nil, nil
}

func whereExpr(w *sqlparser.Where) sqlparser.Expr {
	if w == nil {
		return nil
	}
	return w.Expr
}

//go:noinline
func andAll(e sqlparser.Expr, more []sqlparser.Expr) sqlparser.Expr {
	for _, m := range more {
		if e == nil {
			e = m
		} else {
			e = &sqlparser.AndExpr{Left: e, Right: m}
		}
	}
	return e
}

// withClamp adds the clamp marker to a WHERE clause.
//
//go:noinline
func withClamp(w *sqlparser.Where) *sqlparser.Where {
	clamp := sqlparser.NewColName(clampColumn)
	if w == nil || w.Expr == nil {
		return &sqlparser.Where{Type: sqlparser.WhereStr, Expr: clamp}
	}
	return &sqlparser.Where{Type: sqlparser.WhereStr, Expr: &sqlparser.AndExpr{Left: w.Expr, Right: clamp}}
}

// perTableOrderLimit is the refusal of a split UPDATE/DELETE … ORDER BY/LIMIT, which would
// apply per table; nil without ORDER BY and LIMIT.
func perTableOrderLimit(verb, table string, order sqlparser.OrderBy, limit *sqlparser.Limit) error {
	if len(order) == 0 && limit == nil {
		return nil
	}
	return errorf("%w: %s … ORDER BY/LIMIT on %s would be applied per table; narrow the range to one table or drop ORDER BY/LIMIT", ErrNotMergeable, verb, table)
}

func (t *timeRouter) analyzeInsert(ts *timeStatement, n *sqlparser.Insert, p *printer) (*timeStatement, error) {
	cfg := ts.table
	rows, ok := insertValues(n)
	if !ok {
		return nil, errorf("%w: INSERT … SELECT into the time-sharded table %s cannot be routed by row; select the rows and insert them with VALUES", ErrNotMergeable, cfg.Table)
	}
	keyCol := -1
	for i, c := range n.Columns {
		if c.Lowered() == ts.key {
			keyCol = i
		}
	}
	if keyCol < 0 {
		return nil, errorf("%w: INSERT into %s must name its columns including the shard key %s, e.g. INSERT INTO %s (id, %s, …) VALUES …", ErrNoTimeRange, cfg.Table, cfg.ShardKey, cfg.Table, cfg.ShardKey)
	}
	if err := onDupSetsKey(n, ts.key, cfg.ShardKey); err != nil {
		return nil, err
	}
	ip := &insertPlan{keyCol: keyCol, upsert: upsertKind(n), dupKeepsKey: onDupKeepsKey(n, ts.key)}
	c := &rangeCompiler{key: ts.key, typed: p.typed}
	for i, row := range rows {
		if keyCol >= len(row) {
			return nil, errorf("%w: row %d of the INSERT has no value for %s", ErrNoTimeRange, i+1, cfg.ShardKey)
		}
		v, ok := c.constant(row[keyCol])
		if !ok {
			return nil, errorf("%w: row %d gives %s as %s; give a literal, a ? argument or a constant time expression such as NOW() so the row can be routed to its table", ErrNoTimeRange, i+1, cfg.ShardKey, nodeText(row[keyCol]))
		}
		ip.keys = append(ip.keys, v)
		ip.rows = append(ip.rows, p.print(row))
	}
	p.rows = true
	ts.whole = p.print(n)
	ts.insert = ip
	return ts, nil
}
