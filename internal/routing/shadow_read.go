package routing

import (
	"slices"
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// The analysis of a statement on a shadow table with column algorithms compiles, once per
// statement text, what the rows it writes or reads say of the column: the values an INSERT or
// REPLACE gives it (by its column list, or by the table's column order when it has none), the
// constants of INSERT … SELECT, the assignments of UPDATE … SET and ON DUPLICATE KEY UPDATE,
// and the WHERE as a formula over the column. Values and formulas are evaluated when the
// statement is routed, with its arguments and the column's type.

// svOp is the operation of a compiled value expression.
type svOp uint8

const (
	svLit      svOp = iota // a literal (lit)
	svArg                  // the arg-th argument
	svNeg                  // -x
	svAdd                  // x + y
	svSub                  // x - y
	svMul                  // x * y
	svInserted             // VALUES(column) in ON DUPLICATE KEY UPDATE: the row's inserted value
	svSelf                 // the column itself (SET c = c)
	svUnread               // an expression obroute does not evaluate (why)
)

// sval is a compiled value expression.
type sval struct {
	op   svOp
	lit  svalue
	arg  int
	x, y *sval
	why  string
}

// cmpOp is the comparison of a formula's atom: the column compared with values.
type cmpOp uint8

const (
	cEq cmpOp = iota
	cNe
	cLt
	cLe
	cGt
	cGe
	cNullEq    // <=>
	cNotNullEq // NOT (c <=> v)
	cIn
	cNotIn
	cIsNull
	cNotNull
	cBetween
	cNotBetween
)

// negated is the comparison NOT (c op v) is, in SQL's three-valued logic.
var negated = [...]cmpOp{cEq: cNe, cNe: cEq, cLt: cGe, cLe: cGt, cGt: cLe, cGe: cLt, cNullEq: cNotNullEq, cNotNullEq: cNullEq,
	cIn: cNotIn, cNotIn: cIn, cIsNull: cNotNull, cNotNull: cIsNull, cBetween: cNotBetween, cNotBetween: cBetween}

// mirrored is the comparison v op c is, written with the column first.
var mirrored = map[cmpOp]cmpOp{cEq: cEq, cNe: cNe, cLt: cGt, cLe: cGe, cGt: cLt, cGe: cLe, cNullEq: cNullEq}

var cmpOps = map[string]cmpOp{sqlparser.EqualStr: cEq, sqlparser.NotEqualStr: cNe, "<>": cNe, sqlparser.LessThanStr: cLt,
	sqlparser.LessEqualStr: cLe, sqlparser.GreaterThanStr: cGt, sqlparser.GreaterEqualStr: cGe, sqlparser.NullSafeEqualStr: cNullEq,
	sqlparser.InStr: cIn, sqlparser.NotInStr: cNotIn}

// scOp is the kind of a compiled formula node.
type scOp uint8

const (
	scAnd    scOp = iota // every kid
	scOr                 // any kid
	scAtom               // the column compared with vals by cmp
	scOther              // a condition that does not name the column: true or false by the row's other columns
	scUnread             // a condition on the column obroute does not read (why)
)

// scond is a compiled formula over the column (NOTs pushed down to the atoms).
type scond struct {
	op   scOp
	kids []*scond
	cmp  cmpOp
	vals []*sval
	why  string
}

// assign is an assignment to the column: UPDATE … SET or ON DUPLICATE KEY UPDATE.
type assign struct {
	column string
	value  *sval
}

// tableRead is what a statement says of the column values of one shadow table.
type tableRead struct {
	table  string // lower case
	schema string // the table's qualifier as written, "" without
	kind   Kind
	// why is set when the statement's rows of the table cannot be read at all (the table is
	// read in a subquery, or is not the target of the INSERT that names it).
	why string
	// INSERT and REPLACE: the column list (lower case, nil without one) and the rows, values
	// in the list's (or the table's) order; a row of INSERT … SELECT is one branch's select list.
	columns []string
	rows    [][]*sval
	// sets are the assignments of UPDATE … SET and ON DUPLICATE KEY UPDATE.
	sets []assign
	// where is the WHERE (and inner joins' ON) of UPDATE, DELETE and SELECT, per algorithm
	// column; nil entries for a statement without one.
	where map[string]*scond
	// mentions records, per algorithm column, whether where names it.
	mentions map[string]bool
	// source is, for INSERT … SELECT from the shadow table itself, the SELECT's reading of the
	// table: which rows the inserted rows are made from.
	source *tableRead
}

// readCompiler compiles one statement's values for one shadow table.
type readCompiler struct {
	p         *parsed
	backslash bool // a string literal of the text has a backslash: its value depends on sql_mode
	// names are the names that refer to the shadow table in the block read (its alias, or its
	// name); alone reports that the block reads no other table, so that an unqualified column
	// is the shadow table's.
	names []string
	alone bool
	table string
	// joins are the block's table expressions; outer the ON conditions of its outer joins.
	joins sqlparser.TableExprs
	outer []sqlparser.Expr
}

// shadowReads compiles what the statement says of the column values of the shadow tables with
// column algorithms it names; nil when it names none or is not DML.
func (r *Router) shadowReads(st *Statement, p *parsed) []*tableRead {
	if !st.Kind.IsDML() {
		return nil
	}
	var out []*tableRead
	for _, t := range st.Tables {
		if !r.shadowColumnTables[t] {
			continue
		}
		var cols []string
		for _, a := range r.cfg.Shadow.ColumnAlgorithms(t) {
			cols = appendNew(cols, a.Column)
		}
		c := &readCompiler{p: p, table: t}
		for _, tk := range p.toks {
			if tk.kind == tokString && strings.IndexByte(tk.text, '\\') >= 0 {
				c.backslash = true
			}
		}
		tr := c.compile(st.Kind, cols)
		if st.execWhy != "" && tr.why == "" {
			tr.why = "the statement holds " + st.execWhy + "; write it without the comment"
		}
		out = append(out, tr)
	}
	return out
}

// modal is what of a statement's text the session's sql_mode reads in another way.
type modal uint8

const (
	modalDoubleQuote modal = 1 << iota // a "double-quoted" text: an identifier under ANSI_QUOTES
	modalPipes                         // ||: concatenation under PIPES_AS_CONCAT
	modalBackslash                     // a backslash in a string: text under NO_BACKSLASH_ESCAPES, where the string may end elsewhere
	modalNot                           // NOT: bound tighter under HIGH_NOT_PRECEDENCE
	modalEmpty                         // '': NULL under EMPTY_STRING_IS_NULL
)

// modalTokens returns what of toks a sql_mode reads in another way.
func modalTokens(toks []token) modal {
	var m modal
	for _, t := range toks {
		switch {
		case t.kind == tokString && strings.IndexByte(t.text, '\\') >= 0:
			m |= modalBackslash
		case t.kind == tokString && t.val == "":
			m |= modalEmpty
		case t.kind == tokPunct && t.text == "||":
			m |= modalPipes
		case t.is("not"):
			m |= modalNot
		}
		if t.kind == tokString && strings.IndexByte(t.text, '"') >= 0 {
			m |= modalDoubleQuote
		}
	}
	return m
}

// modeProblem says why a statement whose text holds m cannot be read in a server session of
// sql_mode mode (a comma-separated list); known false means the session's mode is not known.
// "" when the mode reads the statement as obroute does.
func modeProblem(m modal, mode string, known bool) string {
	if !known {
		return "the session set sql_mode to a value obroute does not know, which may change how the server reads the statement; SET sql_mode to a literal"
	}
	if name, why := modeReads(m, mode); why != "" {
		return "the session's sql_mode " + name + " " + why + "; write the statement without it (single-quoted strings, CONCAT(), no backslash), or hint it as shadow or production traffic"
	}
	return ""
}

// modeReads returns the first mode of sql_mode mode (a comma-separated list) that reads a
// statement whose text holds m in another way than obroute's reading, and how; "" when none.
func modeReads(m modal, mode string) (name, why string) {
	for rest := mode; rest != ""; {
		name, rest, _ = strings.Cut(rest, ",")
		var why string
		switch strings.ToUpper(strings.TrimSpace(name)) {
		case "ORACLE", "POSTGRESQL", "MSSQL", "DB2", "MAXDB":
			why = "reads statements in another dialect"
		case "ANSI":
			if m&(modalDoubleQuote|modalPipes) != 0 {
				why = "reads a \"double-quoted\" text as an identifier and || as concatenation"
			}
		case "ANSI_QUOTES":
			if m&modalDoubleQuote != 0 {
				why = "reads a \"double-quoted\" text as an identifier"
			}
		case "PIPES_AS_CONCAT":
			if m&modalPipes != 0 {
				why = "reads || as concatenation"
			}
		case "NO_BACKSLASH_ESCAPES":
			if m&modalBackslash != 0 {
				why = "reads a backslash in a string as text, so that the string may end elsewhere"
			}
		case "HIGH_NOT_PRECEDENCE":
			if m&modalNot != 0 {
				why = "binds NOT tighter"
			}
		case "EMPTY_STRING_IS_NULL":
			if m&modalEmpty != 0 {
				why = "reads '' as NULL"
			}
		}
		if why != "" {
			return strings.TrimSpace(name), why
		}
	}
	return "", ""
}

func (c *readCompiler) compile(kind Kind, cols []string) *tableRead {
	return c.compileNode(c.p.ast, kind, cols)
}

// compileNode compiles the reading of node, the statement or the SELECT of its INSERT … SELECT.
func (c *readCompiler) compileNode(node sqlparser.SQLNode, kind Kind, cols []string) *tableRead {
	tr := &tableRead{table: c.table, kind: kind}
	var where sqlparser.Expr
	var sel *sqlparser.Select
	switch n := node.(type) {
	case *sqlparser.Insert:
		if !identEqual(n.Table.Name.String(), c.table) {
			tr.why = "the statement reads " + c.table + " to insert into " + n.Table.Name.String() + ", whose rows the shadow rule of " + c.table + " does not classify"
			return tr
		}
		tr.schema = n.Table.DbQualifier.String()
		c.names, c.alone = []string{c.table}, true
		if n.Columns != nil {
			tr.columns = make([]string, len(n.Columns))
			for i, col := range n.Columns {
				tr.columns[i] = col.Lowered()
			}
		}
		if rows, ok := insertValues(n); ok {
			for _, row := range rows {
				vals := make([]*sval, len(row))
				for i, e := range row {
					vals[i] = c.value(e)
				}
				tr.rows = append(tr.rows, vals)
			}
		} else {
			c.alone = false // a column in the SELECT is not the inserted row's
			row, why := c.selectRow(n.Rows)
			if why != "" {
				tr.why = why
				return tr
			}
			tr.rows = append(tr.rows, row)
			if src, why := c.selectSource(n.Rows, cols); why != "" {
				tr.why = why
				return tr
			} else if src != nil {
				tr.source = src
			}
		}
		c.alone = true
		for _, a := range n.OnDup {
			tr.sets = append(tr.sets, c.assignment(a))
		}
		return tr
	case *sqlparser.Update:
		if !c.block(n.TableExprs, tr) {
			return tr
		}
		for _, a := range n.Exprs {
			tr.sets = append(tr.sets, c.assignment(a))
		}
		where = whereExpr(n.Where)
	case *sqlparser.Delete:
		if !c.block(n.TableExprs, tr) {
			return tr
		}
		where = whereExpr(n.Where)
	case *sqlparser.Select:
		if !c.block(n.From, tr) {
			return tr
		}
		where = whereExpr(n.Where)
		sel = n
	default:
		tr.why = "the shadow table is read by a " + strings.ToUpper(kind.String()) + " of several query blocks (UNION, …)"
		return tr
	}
	where = c.withJoins(where)
	tr.where, tr.mentions = map[string]*scond{}, map[string]bool{}
	for _, col := range cols {
		having := c.having(sel, col)
		switch {
		case slices.ContainsFunc(c.outer, func(on sqlparser.Expr) bool { return c.mentions(on, col) }):
			tr.mentions[col] = true
			tr.where[col] = &scond{op: scUnread, why: "an outer join's ON condition names " + col + ", which does not restrict the rows of the other side"}
		case c.equated(col) != "":
			tr.mentions[col] = true
			tr.where[col] = &scond{op: scUnread, why: "the join " + c.equated(col) + " compares " + col + " with another table's column"}
		case where != nil && c.mentions(where, col) || having != nil:
			tr.mentions[col] = true
			w := &scond{op: scOther}
			if where != nil {
				w = c.cond(where, col, false)
			}
			if having != nil {
				w = &scond{op: scAnd, kids: []*scond{w, having}}
			}
			tr.where[col] = w
		}
	}
	return tr
}

// having compiles what a SELECT's HAVING says of column col, nil when it does not name it. The
// server keeps a group when its HAVING holds; a HAVING on a column the query groups by (or, in a
// query that neither groups nor aggregates, on each row) holds or not for every row of a group
// alike, so it restricts the rows read as a WHERE does, and is read as one. A HAVING that names
// col otherwise is unread: col of a group that is not grouped by it is any of its rows', an
// aggregate of col is not a value of it, a select-list alias (HAVING u = 0 for user_id AS u, or
// COUNT(*) AS user_id) may be what the server reads the name as, and WITH ROLLUP adds a
// row of every group.
func (c *readCompiler) having(sel *sqlparser.Select, col string) *scond {
	if sel == nil || sel.Having == nil || sel.Having.Expr == nil {
		return nil
	}
	h := sel.Having.Expr
	unread := func(why string) *scond { return &scond{op: scUnread, why: why} }
	var aliases []string
	named := false // an alias is named col: GROUP BY col may mean it
	for _, se := range sel.SelectExprs {
		if ae, ok := se.(*sqlparser.AliasedExpr); ok && !ae.As.IsEmpty() && (ae.As.Lowered() == col || c.mentions(ae.Expr, col)) {
			aliases = append(aliases, ae.As.Lowered())
			named = named || ae.As.Lowered() == col
		}
	}
	alias := ""
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		if x, ok := n.(*sqlparser.ColName); ok && x != nil && x.Qualifier.IsEmpty() && slices.Contains(aliases, x.Name.Lowered()) {
			alias = x.Name.String()
		}
		return alias == "", nil
	}, h)
	switch {
	case alias != "":
		return unread("the HAVING names " + alias + ", which the select list gives as an alias of an expression on " + col + " or of another value; write the condition on " + col + " in the WHERE")
	case !c.mentions(h, col):
		return nil
	}
	for _, tk := range c.p.toks {
		if tk.is("rollup") {
			return unread("the HAVING of a query WITH ROLLUP names " + col + "; write the condition on " + col + " in the WHERE")
		}
	}
	grouped := !named && slices.ContainsFunc(sel.GroupBy, func(g sqlparser.Expr) bool { return c.isColumn(g, col) })
	if !grouped && (len(sel.GroupBy) > 0 || aggregates(sel)) {
		return unread("the HAVING names " + col + ", which the query does not group by (its value in a group is any row's, or an aggregate's); write the condition on " + col + " in the WHERE")
	}
	return c.cond(h, col, false)
}

// aggregates reports whether the select list, HAVING or ORDER BY of sel holds an aggregate
// function: the query is then one group even without GROUP BY.
func aggregates(sel *sqlparser.Select) bool {
	found := false
	visit := func(n sqlparser.SQLNode) (bool, error) {
		switch x := n.(type) {
		case *sqlparser.FuncExpr:
			found = found || x.IsAggregate()
		case *sqlparser.GroupConcatExpr:
			found = true
		case *sqlparser.Subquery:
			return false, nil
		}
		return !found, nil
	}
	_ = sqlparser.Walk(visit, sel.SelectExprs, sel.OrderBy)
	if sel.Having != nil {
		_ = sqlparser.Walk(visit, sel.Having.Expr)
	}
	return found
}

// equated returns a join of the block (as written) that compares col of the shadow table with
// another table's column by USING (col) or NATURAL, "" when none does.
func (c *readCompiler) equated(col string) string {
	found := ""
	eachTable(c.joins, nil, func(x *sqlparser.JoinTableExpr) {
		switch {
		case found != "":
		case strings.HasPrefix(x.Join, "natural"):
			found = strings.ToUpper(x.Join)
		case slices.ContainsFunc(x.Condition.Using, func(u sqlparser.ColIdent) bool { return u.Lowered() == col }):
			found = "USING (" + col + ")"
		}
	})
	return found
}

// block finds the shadow table among the table expressions of the statement's query block:
// it must be read there (not only in a subquery or a derived table). It records the names
// that refer to it and the inner joins' conditions.
func (c *readCompiler) block(exprs sqlparser.TableExprs, tr *tableRead) bool {
	count := 0
	eachTable(exprs, func(x *sqlparser.AliasedTableExpr) {
		count++
		if name, ok := x.Expr.(sqlparser.TableName); ok && identEqual(name.Name.String(), c.table) {
			tr.schema = name.DbQualifier.String()
			if x.As.IsEmpty() {
				c.names = append(c.names, c.table)
			} else {
				c.names = append(c.names, x.As.String())
			}
		}
	}, nil)
	switch len(c.names) {
	case 0:
		tr.why = "the statement reads " + c.table + " in a subquery or derived table, whose rows obroute does not classify"
		return false
	case 1:
	default:
		tr.why = "the statement reads " + c.table + " more than once (a self-join)"
		return false
	}
	c.alone = count == 1
	c.joins = exprs
	return true
}

// eachTable calls table for every table of exprs and join for every join, inner ones first.
func eachTable(exprs sqlparser.TableExprs, table func(*sqlparser.AliasedTableExpr), join func(*sqlparser.JoinTableExpr)) {
	var walk func(sqlparser.TableExpr)
	walk = func(te sqlparser.TableExpr) {
		switch x := te.(type) {
		case *sqlparser.AliasedTableExpr:
			if table != nil {
				table(x)
			}
		case *sqlparser.ParenTableExpr:
			for _, e := range x.Exprs {
				walk(e)
			}
		case *sqlparser.JoinTableExpr:
			walk(x.LeftExpr)
			walk(x.RightExpr)
			if join != nil {
				join(x)
			}
		}
	}
	for _, te := range exprs {
		walk(te)
	}
}

// withJoins returns where with the ON conditions of the block's inner joins ANDed to it, and
// keeps the outer joins' conditions (which do not restrict the rows of the preserved side).
func (c *readCompiler) withJoins(where sqlparser.Expr) sqlparser.Expr {
	eachTable(c.joins, nil, func(x *sqlparser.JoinTableExpr) {
		switch {
		case x.Condition.On == nil:
		case x.Join == sqlparser.JoinStr || x.Join == sqlparser.StraightJoinStr:
			if where == nil {
				where = x.Condition.On
			} else {
				where = &sqlparser.AndExpr{Left: where, Right: x.Condition.On}
			}
		default:
			c.outer = append(c.outer, x.Condition.On)
		}
	})
	return where
}

// selectSource compiles the reading of the shadow table by the SELECT of INSERT … SELECT (rows),
// nil when the SELECT does not read it: the rows the SELECT reads are of a traffic too, which
// must be the inserted rows' (a production row made from shadow rows mixes them). why says why
// the SELECT's rows of the table cannot be read (a subquery, a self-join, a UNION).
func (c *readCompiler) selectSource(rows sqlparser.InsertRows, cols []string) (*tableRead, string) {
	reads := 0
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		if x, ok := n.(*sqlparser.AliasedTableExpr); ok {
			if name, ok := x.Expr.(sqlparser.TableName); ok && identEqual(name.Name.String(), c.table) {
				reads++
			}
		}
		return true, nil
	}, rows)
	if reads == 0 {
		return nil, ""
	}
	for {
		p, ok := rows.(*sqlparser.ParenSelect)
		if !ok {
			break
		}
		rows = p.Select
	}
	sel, ok := rows.(*sqlparser.Select)
	if !ok || reads > 1 {
		return nil, "INSERT … SELECT reads the shadow table " + c.table + " in a subquery, a UNION or more than once, whose rows obroute does not classify"
	}
	src := (&readCompiler{p: c.p, table: c.table, backslash: c.backslash}).compileNode(sel, KindSelect, cols)
	if src.why != "" {
		return nil, "INSERT … SELECT from the shadow table " + c.table + ": " + src.why
	}
	return src, ""
}

// selectRow compiles the row of INSERT … SELECT: its select list; why says why its values
// cannot be read.
func (c *readCompiler) selectRow(rows sqlparser.InsertRows) (row []*sval, why string) {
	switch x := rows.(type) {
	case *sqlparser.ParenSelect:
		return c.selectRow(x.Select)
	case *sqlparser.SetOp:
		// The server gives each column of a UNION one type for all its branches: 0x30 in a
		// branch beside 5 is the string '0', 0.5 beside 1e0 the double rint rounds to 0.
		return nil, "INSERT … SELECT of a UNION, whose branches the server converts to one type per column"
	case *sqlparser.Select:
		for _, se := range x.SelectExprs {
			ae, ok := se.(*sqlparser.AliasedExpr)
			if !ok {
				return nil, "INSERT … SELECT * inserts the values of rows obroute does not read"
			}
			row = append(row, c.value(ae.Expr))
		}
		return row, ""
	}
	return nil, "the rows of " + nodeText(rows)
}

// assignment compiles column = value of UPDATE … SET or ON DUPLICATE KEY UPDATE.
func (c *readCompiler) assignment(a *sqlparser.AssignmentExpr) assign {
	col := ""
	if a.Name != nil && c.ours(a.Name) != refOther {
		col = a.Name.Name.Lowered()
	}
	return assign{column: col, value: c.value(a.Expr)}
}

// refKind says what a column reference refers to.
type refKind uint8

const (
	refOther     refKind = iota // another table's column
	refOurs                     // the shadow table's
	refAmbiguous                // unqualified in a block of several tables
)

// ours says whether col refers to a column of the shadow table.
func (c *readCompiler) ours(col *sqlparser.ColName) refKind {
	q := col.Qualifier.Name.String()
	if q == "" {
		if c.alone {
			return refOurs
		}
		return refAmbiguous
	}
	for _, n := range c.names {
		if identEqual(n, q) {
			return refOurs
		}
	}
	return refOther
}

// names reports whether e names column col of the shadow table (or might: an unqualified
// name in a block of several tables, a name in a subquery).
func (c *readCompiler) mentions(e sqlparser.Expr, col string) bool {
	found := false
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		if x, ok := n.(*sqlparser.ColName); ok && x != nil && x.Name.Lowered() == col && c.ours(x) != refOther {
			found = true
		}
		return !found, nil
	}, e)
	return found
}

// value compiles a value expression.
func (c *readCompiler) value(e sqlparser.Expr) *sval {
	unread := func(why string) *sval { return &sval{op: svUnread, why: why} }
	switch x := e.(type) {
	case *sqlparser.ParenExpr:
		return c.value(x.Expr)
	case *sqlparser.SQLVal:
		var v svalue
		var why string
		ok := false
		switch x.Type {
		case sqlparser.ValArg:
			if i := argIndex(string(x.Val)); i >= 0 {
				return &sval{op: svArg, arg: i}
			}
			return unread("the placeholder " + string(x.Val))
		case sqlparser.StrVal:
			if _, typed := c.p.typed[x]; typed {
				return unread("the typed literal " + nodeText(x))
			}
			if c.backslash {
				return unread("a string literal of a statement with a backslash in a string (its value depends on sql_mode NO_BACKSLASH_ESCAPES)")
			}
			v, why, ok = stringValue(string(x.Val))
		case sqlparser.IntVal, sqlparser.FloatVal:
			v, why, ok = numberValue(string(x.Val))
		case sqlparser.HexNum:
			var b string
			if b, ok = hexBytes(strings.TrimPrefix(strings.ToLower(string(x.Val)), "0x")); ok {
				v, ok = hybrid(b)
			}
		case sqlparser.HexVal:
			var b string
			if b, ok = hexBytes(string(x.Val)); ok {
				v = svalue{kind: svString, str: b}
			}
		case sqlparser.BitVal:
			var b string
			if b, ok = bitBytes(string(x.Val)); ok {
				v, ok = hybrid(b)
			}
		}
		if !ok {
			if why == "" {
				why = "the literal " + nodeText(x)
			}
			return unread(why)
		}
		return &sval{op: svLit, lit: v}
	case sqlparser.BoolVal:
		n := int64(0)
		if x {
			n = 1
		}
		return &sval{op: svLit, lit: svalue{kind: svExact, num: exactInt(n)}}
	case *sqlparser.NullVal:
		return &sval{op: svLit, lit: svalue{kind: svNull}}
	case *sqlparser.UnaryExpr:
		switch x.Operator {
		case sqlparser.UMinusStr:
			return &sval{op: svNeg, x: c.value(x.Expr)}
		case sqlparser.UPlusStr:
			return c.value(x.Expr)
		}
	case *sqlparser.BinaryExpr:
		op, ok := map[string]svOp{sqlparser.PlusStr: svAdd, sqlparser.MinusStr: svSub, sqlparser.MultStr: svMul}[x.Operator]
		if ok {
			return &sval{op: op, x: c.value(x.Left), y: c.value(x.Right)}
		}
	case *sqlparser.ColName:
		if c.ours(x) == refOurs {
			return &sval{op: svSelf, why: x.Name.Lowered()}
		}
		return unread("the column " + nodeText(x))
	case *sqlparser.ValuesFuncExpr:
		if x.Name != nil {
			return &sval{op: svInserted, why: x.Name.Name.Lowered()}
		}
	}
	return unread("the expression " + nodeText(e))
}

// cond compiles the formula e over column col, negated when neg.
func (c *readCompiler) cond(e sqlparser.Expr, col string, neg bool) *scond {
	if !c.mentions(e, col) {
		return &scond{op: scOther}
	}
	unread := &scond{op: scUnread, why: "the condition " + nodeText(e) + " on " + col}
	switch x := e.(type) {
	case *sqlparser.ParenExpr:
		return c.cond(x.Expr, col, neg)
	case *sqlparser.AndExpr, *sqlparser.OrExpr:
		var l, r sqlparser.Expr
		op := scAnd
		if a, ok := x.(*sqlparser.AndExpr); ok {
			l, r = a.Left, a.Right
		} else {
			o := x.(*sqlparser.OrExpr)
			l, r, op = o.Left, o.Right, scOr
		}
		if neg {
			op = scAnd + scOr - op
		}
		return &scond{op: op, kids: []*scond{c.cond(l, col, neg), c.cond(r, col, neg)}}
	case *sqlparser.NotExpr:
		return c.cond(x.Expr, col, !neg)
	case *sqlparser.ComparisonExpr:
		op, ok := cmpOps[x.Operator]
		if !ok {
			return unread
		}
		left, right := x.Left, x.Right
		if !c.isColumn(left, col) {
			m, mok := mirrored[op]
			if !c.isColumn(right, col) || !mok {
				return unread
			}
			left, right, op = right, left, m
		}
		if c.mentions(right, col) {
			return unread
		}
		a := &scond{op: scAtom, cmp: op}
		if op == cIn || op == cNotIn {
			tuple, ok := unparen(right).(sqlparser.ValTuple)
			if !ok {
				return unread
			}
			for _, v := range tuple {
				a.vals = append(a.vals, c.value(v))
			}
		} else {
			a.vals = []*sval{c.value(right)}
		}
		if neg {
			a.cmp = negated[a.cmp]
		}
		return a
	case *sqlparser.RangeCond:
		if !c.isColumn(x.Left, col) || c.mentions(x.From, col) || c.mentions(x.To, col) {
			return unread
		}
		a := &scond{op: scAtom, cmp: cBetween, vals: []*sval{c.value(x.From), c.value(x.To)}}
		if x.Operator == sqlparser.NotBetweenStr {
			a.cmp = cNotBetween
		}
		if neg {
			a.cmp = negated[a.cmp]
		}
		return a
	case *sqlparser.IsExpr:
		if !c.isColumn(x.Expr, col) {
			return unread
		}
		a := &scond{op: scAtom}
		switch x.Operator {
		case sqlparser.IsNullStr:
			a.cmp = cIsNull
		case sqlparser.IsNotNullStr:
			a.cmp = cNotNull
		default:
			return unread
		}
		if neg {
			a.cmp = negated[a.cmp]
		}
		return a
	}
	return unread
}

// isColumn reports whether e is the shadow table's column col itself.
func (c *readCompiler) isColumn(e sqlparser.Expr, col string) bool {
	x, ok := unparen(e).(*sqlparser.ColName)
	return ok && x.Name.Lowered() == col && c.ours(x) == refOurs
}

// size estimates the bytes a tableRead keeps alive, for the analysis cache.
func (tr *tableRead) size() int {
	n := 128 + len(tr.why) + 16*len(tr.columns)
	for _, row := range tr.rows {
		n += 24 + 96*len(row)
	}
	n += 128 * len(tr.sets)
	for _, c := range tr.where {
		n += c.size()
	}
	if tr.source != nil {
		n += tr.source.size()
	}
	return n
}

func (c *scond) size() int {
	if c == nil {
		return 0
	}
	n := 64 + len(c.why) + 96*len(c.vals)
	for _, k := range c.kids {
		n += k.size()
	}
	return n
}

// sameRead reports whether norm, read from a normalized text, reads the values orig reads,
// with the text's literals lits as arguments; user maps norm's placeholders to orig's (see
// sameAnalysis).
func sameRead(orig, norm *tableRead, user func(int) (int, bool), lits []literal) bool {
	if orig.table != norm.table || orig.schema != norm.schema || orig.kind != norm.kind || orig.why != norm.why ||
		!slices.Equal(orig.columns, norm.columns) || len(orig.rows) != len(norm.rows) || len(orig.sets) != len(norm.sets) ||
		len(orig.where) != len(norm.where) || (orig.source == nil) != (norm.source == nil) {
		return false
	}
	if orig.source != nil && !sameRead(orig.source, norm.source, user, lits) {
		return false
	}
	for i, row := range orig.rows {
		if len(row) != len(norm.rows[i]) {
			return false
		}
		for j, v := range row {
			if !sameSval(v, norm.rows[i][j], user, lits) {
				return false
			}
		}
	}
	for i, a := range orig.sets {
		if a.column != norm.sets[i].column || !sameSval(a.value, norm.sets[i].value, user, lits) {
			return false
		}
	}
	for col, c := range orig.where {
		d, ok := norm.where[col]
		if !ok || orig.mentions[col] != norm.mentions[col] || !sameCond(c, d, user, lits) {
			return false
		}
	}
	return true
}

func sameCond(a, b *scond, user func(int) (int, bool), lits []literal) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.op != b.op || a.cmp != b.cmp || len(a.kids) != len(b.kids) || len(a.vals) != len(b.vals) {
		return false
	}
	for i := range a.kids {
		if !sameCond(a.kids[i], b.kids[i], user, lits) {
			return false
		}
	}
	for i := range a.vals {
		if !sameSval(a.vals[i], b.vals[i], user, lits) {
			return false
		}
	}
	return true
}

// sameSval reports whether b (of the normalized text) evaluates as a (of the text) does.
func sameSval(a, b *sval, user func(int) (int, bool), lits []literal) bool {
	if a == nil || b == nil {
		return a == b
	}
	if b.op == svArg {
		j, isArg := user(b.arg)
		if isArg {
			return a.op == svArg && a.arg == j
		}
		v, _, ok := lits[j].svalue()
		return ok && a.op == svLit && sameValue(a.lit, v)
	}
	if a.op != b.op || a.why != b.why || !sameSval(a.x, b.x, user, lits) || !sameSval(a.y, b.y, user, lits) {
		return false
	}
	return a.op != svLit || sameValue(a.lit, b.lit)
}

func sameValue(a, b svalue) bool {
	if a.kind != b.kind || a.str != b.str || a.f != b.f {
		return false
	}
	if a.num.mant == nil || b.num.mant == nil {
		return a.num.mant == b.num.mant
	}
	return a.num.scale == b.num.scale && a.num.mant.Cmp(b.num.mant) == 0
}

// insertValues returns the VALUES rows of an INSERT; ok is false for INSERT … SELECT.
func insertValues(n *sqlparser.Insert) (sqlparser.Values, bool) {
	switch rows := n.Rows.(type) {
	case *sqlparser.AliasedValues:
		return rows.Values, true
	case sqlparser.AliasedValues:
		return rows.Values, true
	case sqlparser.Values:
		return rows, true
	}
	return nil, false
}
