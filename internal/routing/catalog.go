package routing

import (
	"fmt"
	"slices"
	"strings"
)

// The catalog answers for the logical view of the tables: what one server holding every table
// would answer. In that view each statically routed table is its backend's, each time-sharded
// table is one table under its logical name (its definition that of its newest physical table,
// its row statistics the sum of its physical tables'), and every other table is the default
// backend's; the physical tables of a time-sharded table, and the tables of a backend no rule
// routes to, are not in it (a backend hint still reaches them).
//
// Read here (routing decides; the connector reads the backends and runs the answer):
//   - SELECT … FROM information_schema.T for the tables T of catalogViews: every production
//     backend's rows of T for its current database are read, mapped to the logical view and put
//     in a temporary table on the server session that answers, and the statement runs there with
//     information_schema.T standing for that server's own rows of the other databases and the
//     logical rows of the current one. The other information_schema tables that name tables
//     (catalogRefused) are refused: obroute cannot map them exactly.
//   - SHOW [FULL] TABLES [FROM db] [LIKE p | WHERE c] and SHOW TABLE STATUS …: answered from the
//     logical rows of information_schema.TABLES.
//   - DESCRIBE t, SHOW [FULL] COLUMNS|FIELDS FROM t, SHOW INDEX|INDEXES|KEYS FROM t, SHOW CREATE
//     TABLE t of a time-sharded table t: sent to its newest physical table, whose name in the
//     answer becomes t.

// catalogKind is the kind of a catalog statement.
type catalogKind uint8

const (
	catalogSelect      catalogKind = iota + 1 // reads information_schema tables
	catalogShowTables                         // SHOW [FULL] TABLES
	catalogTableStatus                        // SHOW TABLE STATUS
	catalogDescribe                           // DESCRIBE, SHOW COLUMNS / INDEX / CREATE TABLE of one table
)

// catalogForm is a catalog statement as read from its words.
type catalogForm struct {
	kind  catalogKind
	views []string // catalogSelect: the information_schema tables read, upper case
	full  bool
	db    string // FROM db of SHOW TABLES / TABLE STATUS, "" when none
	// like is the LIKE pattern's value and likeText the literal as written; where is the text of
	// the WHERE condition.
	like, likeText, where string
	hasLike               bool
	table                 ddlRef // catalogDescribe: the table described
	cut                   [2]int // catalogDescribe: a FROM db clause to leave out, zero when none
}

// catalogView says, for an information_schema table obroute answers for the logical view, the
// columns holding a database name and those holding a table name; the first of each selects the
// rows (the table's own schema and name).
type catalogView struct {
	schemas, tables []string
}

// catalogViews are the information_schema tables answered for the logical view.
var catalogViews = map[string]catalogView{
	"TABLES":                  {schemas: []string{"TABLE_SCHEMA"}, tables: []string{"TABLE_NAME"}},
	"COLUMNS":                 {schemas: []string{"TABLE_SCHEMA"}, tables: []string{"TABLE_NAME"}},
	"STATISTICS":              {schemas: []string{"TABLE_SCHEMA", "INDEX_SCHEMA"}, tables: []string{"TABLE_NAME"}},
	"KEY_COLUMN_USAGE":        {schemas: []string{"TABLE_SCHEMA", "CONSTRAINT_SCHEMA", "REFERENCED_TABLE_SCHEMA"}, tables: []string{"TABLE_NAME", "REFERENCED_TABLE_NAME"}},
	"TABLE_CONSTRAINTS":       {schemas: []string{"TABLE_SCHEMA", "CONSTRAINT_SCHEMA"}, tables: []string{"TABLE_NAME"}},
	"REFERENTIAL_CONSTRAINTS": {schemas: []string{"CONSTRAINT_SCHEMA", "UNIQUE_CONSTRAINT_SCHEMA"}, tables: []string{"TABLE_NAME", "REFERENCED_TABLE_NAME"}},
	"CHECK_CONSTRAINTS":       {schemas: []string{"CONSTRAINT_SCHEMA"}, tables: []string{"TABLE_NAME"}},
	"PARTITIONS":              {schemas: []string{"TABLE_SCHEMA"}, tables: []string{"TABLE_NAME"}},
}

// catalogRefused are the information_schema tables that name tables and that obroute does not
// map to the logical view: a statement reading them is refused rather than answered with the
// default backend's physical tables only.
var catalogRefused = map[string]bool{
	"TRIGGERS": true, "COLUMN_PRIVILEGES": true, "TABLE_PRIVILEGES": true, "TABLE_STATISTICS": true,
	"INDEX_STATISTICS": true, "INNODB_SYS_TABLES": true, "INNODB_SYS_INDEXES": true, "INNODB_SYS_COLUMNS": true,
	"INNODB_SYS_FIELDS": true, "INNODB_SYS_FOREIGN": true, "INNODB_SYS_FOREIGN_COLS": true,
	"INNODB_SYS_TABLESTATS": true, "INNODB_SYS_VIRTUAL": true, "COLUMNS_EXTENDED": true,
	"INNODB_SYS_TABLESPACES": true, "INNODB_SYS_DATAFILES": true, "INNODB_BUFFER_PAGE": true,
	"INNODB_BUFFER_PAGE_LRU": true, "INNODB_TABLESPACES_ENCRYPTION": true, "INNODB_TABLESPACES_SCRUBBING": true,
	"INNODB_LOCKS": true, "VIEWS": true, "GEOMETRY_COLUMNS": true,
}

// catalogRefusedSys reports whether table (lower case) of the sys schema is one of its views
// over information_schema and performance_schema that name each backend's tables
// (schema_redundant_indexes, x$schema_flattened_keys, innodb_buffer_stats_by_table, …):
// refused as catalogRefused is.
func catalogRefusedSys(table string) bool {
	table = strings.TrimPrefix(table, "x$")
	for _, p := range []string{"schema_", "ps_schema_", "innodb_", "io_", "statement", "statements_"} {
		if strings.HasPrefix(table, p) {
			return true
		}
	}
	return false
}

// catalogRefusedTables are the tables of the other system databases (lower case, qualified)
// that name each backend's tables: refused as catalogRefused is.
var catalogRefusedTables = map[string]bool{
	"mysql.innodb_table_stats": true, "mysql.innodb_index_stats": true, "mysql.table_stats": true,
	"mysql.column_stats": true, "mysql.index_stats": true,
	"performance_schema.table_io_waits_summary_by_table": true, "performance_schema.table_io_waits_summary_by_index_usage": true,
	"performance_schema.table_lock_waits_summary_by_table": true, "performance_schema.objects_summary_global_by_type": true,
	"performance_schema.metadata_locks": true, "performance_schema.table_handles": true,
}

// hasLogicalView reports whether the logical view differs from the default backend's tables:
// some table is routed elsewhere or time-sharded.
func (r *Router) hasLogicalView() bool {
	return len(r.cfg.Settings.Routes) > 0 || r.time != nil
}

// readCatalog reads a catalog statement (see above) from toks, the tokens of the statement's
// text after its leading comments, which starts at base in the statement. It sets st.catalog,
// or st.catalogErr for a catalog statement that cannot be answered.
func (r *Router) readCatalog(st *Statement, toks []token, base int, body string) {
	if len(toks) == 0 || !r.hasLogicalView() {
		return
	}
	switch {
	case toks[0].is("show"):
		if len(toks) > 2 && (toks[1].is("open") && toks[2].is("tables") || toks[1].is("triggers")) {
			st.catalogErr = errorf("%w: SHOW %s lists the physical tables of one backend, which obroute does not map to the logical tables (time-sharded and routed); send it to each backend with a backend hint", ErrCatalog, strings.ToUpper(toks[1].text))
			return
		}
		st.catalog = readShow(toks, base, body)
		if st.catalog != nil && strings.Contains(strings.ToLower(st.catalog.where), "information_schema") {
			st.catalog, st.catalogErr = nil, errorf("%w: a SHOW whose WHERE reads information_schema is not answered for the logical tables; write it as SELECT … FROM information_schema.TABLES (or COLUMNS, STATISTICS) with the condition, which obroute answers", ErrCatalog)
			return
		}
	case toks[0].is("describe") || toks[0].is("desc") || toks[0].is("explain"):
		if len(toks) > 1 && (toks[1].kind == tokWord || toks[1].kind == tokIdent) {
			rd := ddlReader{toks: toks, i: 1, base: base}
			var refs []ddlRef
			if rd.table(&refs) && !rd.name() && rd.i < len(toks) && toks[rd.i].kind == tokString {
				rd.i++ // DESCRIBE t 'pattern' (a column name, read by name, is the other form)
			}
			if len(refs) == 1 && (rd.i == len(toks) || toks[rd.i].kind == tokPunct && toks[rd.i].text == ";") {
				st.catalog = &catalogForm{kind: catalogDescribe, table: refs[0]}
			}
		}
	}
	if st.catalog != nil || toks[0].is("explain") || toks[0].is("describe") || toks[0].is("desc") || toks[0].is("analyze") {
		return // the plan of a catalog statement is the server's own
	}
	var views []string
	for i := 0; i+2 < len(toks); i++ {
		if (toks[i].kind == tokWord || toks[i].kind == tokIdent) && toks[i+1].kind == tokPunct && toks[i+1].text == "." {
			if q := strings.ToLower(nameOf(toks[i]) + "." + nameOf(toks[i+2])); catalogRefusedTables[q] || isName(toks[i], "sys") && catalogRefusedSys(strings.ToLower(nameOf(toks[i+2]))) {
				st.catalogErr = errorf("%w: %s names the tables of each backend, which obroute does not map to the logical tables (time-sharded and routed); read it on one backend with a backend hint", ErrCatalog, q)
				return
			}
		}
		if !isName(toks[i], "information_schema") || toks[i+1].kind != tokPunct || toks[i+1].text != "." {
			continue
		}
		view := strings.ToUpper(nameOf(toks[i+2]))
		if catalogRefused[view] {
			st.catalogErr = errorf("%w: information_schema.%s names the tables of each backend, which obroute does not map to the logical tables (time-sharded and routed); read it on one backend with a backend hint", ErrCatalog, view)
			return
		}
		if _, ok := catalogViews[view]; ok && !slices.Contains(views, view) {
			views = append(views, view)
		}
	}
	if len(views) == 0 {
		if st.Kind == KindSelect {
			for _, t := range st.Tables {
				name := strings.ToUpper(t)
				if _, ok := catalogViews[name]; ok || catalogRefused[name] {
					st.bareView = name
				}
			}
		}
		return
	}
	for _, t := range st.Tables {
		if rule, ok := r.routed[t]; ok {
			st.catalogErr = errorf("%w: the statement reads information_schema.%s and %s, a table with a %s: the catalog is answered on one backend and %s is not there; read the catalog in a statement of its own", ErrCatalog, views[0], t, rule, t)
			return
		}
	}
	if st.Kind != KindSelect {
		st.catalogErr = errorf("%w: a %s reading information_schema.%s is not answered for the logical tables; SELECT the catalog rows, then write them in a statement of its own", ErrCatalog, st.Kind, views[0])
		return
	}
	st.catalog = &catalogForm{kind: catalogSelect, views: views}
}

// readShow reads SHOW [FULL] TABLES, SHOW TABLE STATUS, SHOW [FULL] COLUMNS|FIELDS, SHOW
// INDEX|INDEXES|KEYS and SHOW CREATE TABLE; nil for other SHOW statements.
func readShow(toks []token, base int, body string) *catalogForm {
	r := ddlReader{toks: toks, i: 1, base: base}
	c := &catalogForm{}
	c.full = r.word("full")
	switch {
	case r.word("tables"):
		c.kind = catalogShowTables
	case !c.full && r.words("table", "status"):
		c.kind = catalogTableStatus
	case r.word("columns") || r.word("fields") || !c.full && (r.word("index") || r.word("indexes") || r.word("keys")):
		c.kind = catalogDescribe
		var refs []ddlRef
		if !(r.word("from") || r.word("in")) || !r.table(&refs) {
			return nil
		}
		c.table = refs[0]
		if at := r.i; r.word("from") || r.word("in") {
			if !r.name() {
				return nil
			}
			c.table.db = nameOf(toks[r.i-1])
			c.cut = [2]int{base + toks[at].pos, base + toks[r.i-1].end}
		}
		return c
	case !c.full && r.words("create", "table"):
		var refs []ddlRef
		if !r.table(&refs) {
			return nil
		}
		c.kind, c.table = catalogDescribe, refs[0]
		return c
	default:
		return nil
	}
	if r.word("from") || r.word("in") {
		if r.i >= len(toks) || (toks[r.i].kind != tokWord && toks[r.i].kind != tokIdent) {
			return nil
		}
		c.db = nameOf(toks[r.i])
		r.i++
	}
	switch {
	case r.word("like"):
		if r.i >= len(toks) || toks[r.i].kind != tokString {
			return nil
		}
		c.hasLike, c.like, c.likeText = true, toks[r.i].val, toks[r.i].text
		r.i++
	case r.word("where"):
		end := len(toks)
		if toks[end-1].kind == tokPunct && toks[end-1].text == ";" {
			end--
		}
		if r.i >= end {
			return nil
		}
		c.where = body[toks[r.i].pos:toks[end-1].end]
		r.i = end
	}
	if r.i < len(toks) && !(toks[r.i].kind == tokPunct && toks[r.i].text == ";") {
		return nil
	}
	return c
}

// isName reports whether t is the name n, quoted or not, in any case.
func isName(t token, n string) bool {
	return (t.kind == tokWord && strings.EqualFold(t.text, n)) || (t.kind == tokIdent && strings.EqualFold(t.val, n))
}

// nameOf returns the name a word or quoted identifier stands for.
func nameOf(t token) string {
	if t.kind == tokIdent {
		return t.val
	}
	return t.text
}

// catalogRoute routes a catalog statement: a description of a time-sharded table to its newest
// physical table, the others to the default backend, where the connector answers them for the
// logical view. It reports false for a statement left to the other rules (a description of a
// table that is not time-sharded).
func (r *Router) catalogRoute(p *Plan, st *Statement, in Input) (pinned, done bool, err error) {
	c := st.catalog
	if c.kind == catalogDescribe {
		if r.time == nil {
			return false, false, nil
		}
		verb := "DESCRIBE"
		if st.Kind == KindShow {
			verb = "SHOW"
		}
		tt, err := r.time.forPlan(p).nameCheck(r.time, c.table, verb, r.currentDB(in))
		if err != nil || tt == nil {
			return err != nil, err != nil, err
		}
		t := r.time.forPlan(p) // shadow traffic: the shadow side's tables
		if t == nil {
			return true, true, noShadowSide(tt.Table)
		}
		snap := t.cfg.Snapshot()
		if snap == nil {
			return true, true, errorf("%w: no shard metadata snapshot is loaded yet; load the metadata before describing %s", ErrNoShardTable, tt.Table)
		}
		all := r.time.own(tt, snap.Logical(tt.Table))
		if len(all) == 0 {
			return true, true, errorf("%w: the shard metadata lists no table named %s_<digits>…, so the time-sharded table %s has no definition yet; add its physical tables to shard_metadata", ErrNoShardTable, tt.Table, tt.Table)
		}
		newest := &all[len(all)-1]
		b, err := r.time.location(newest)
		if err != nil {
			return true, true, err
		}
		sql := st.SQL[:c.table.from] + "`" + newest.Name + "`"
		if c.cut[1] > 0 {
			sql += st.SQL[c.table.to:c.cut[0]] + st.SQL[c.cut[1]:]
		} else {
			sql += st.SQL[c.table.to:]
		}
		p.single(UsePartitionLocationLookup, ClassDefault, b, sql, in.Args)
		p.Targets[0].Tables = []string{newest.Name}
		p.Rename = [2]string{newest.Name, tt.Table}
		if toks := textTokens(st.SQL); len(toks) > 1 && toks[0].is("show") && toks[1].is("create") {
			for i := range all {
				cb, err := r.time.location(&all[i])
				if err != nil {
					return true, true, err
				}
				k := slices.IndexFunc(p.Counters, func(t Target) bool { return t.Backend == cb })
				if k < 0 {
					k = len(p.Counters)
					p.Counters = append(p.Counters, Target{Backend: cb})
				}
				p.Counters[k].Tables = append(p.Counters[k].Tables, all[i].Name)
			}
		}
		if in.Explain {
			p.Prompts = append(p.Prompts, fmt.Sprintf("%s is time-sharded: described by its newest physical table %s on %s, shown as %s", tt.Table, newest.Name, b, tt.Table))
		}
		return true, true, nil
	}
	// On the default backend's server session, outside the client session's transaction (it
	// reads no row of a table, and creates temporary tables only): that session is in the
	// client session's database under its own name, so the answer names the database as the
	// client sees it, in a transaction bound to another backend (whose database may have
	// another name) as outside one.
	p.single(UseRoutePolicy, ClassDefault, r.cfg.Settings.Default, st.SQL, in.Args)
	p.OutsideTx = true
	p.Catalog = &CatalogQuery{form: c, sql: st.SQL}
	if in.Explain {
		p.Prompts = append(p.Prompts, "Catalog statement: answered for the logical tables (routed tables from their backends, each time-sharded table under its logical name) on backend "+r.cfg.Settings.Default)
	}
	return false, true, nil
}

// CatalogQuery is a catalog statement the connector answers for the logical view of the tables
// (see Plan.Catalog): it reads the rows of Views on every backend of CatalogView.Sources, maps
// them with CatalogView.Table, keeps them in temporary tables on the server session of the
// plan's target, and runs the statement SQL returns there.
type CatalogQuery struct {
	form    *catalogForm
	sql     string
	columns map[int]string // set by SQL: see ColumnNames
}

// Views are the information_schema tables whose logical rows the answer reads.
func (q *CatalogQuery) Views() []string {
	if q.form.kind == catalogSelect {
		return q.form.views
	}
	return []string{"TABLES"}
}

// ViewColumns returns the columns of information_schema table view holding database names and
// those holding table names; the first of each names the row's own table.
func ViewColumns(view string) (schemas, tables []string) {
	v := catalogViews[view]
	return v.schemas, v.tables
}

// Database is the database a SHOW TABLES or SHOW TABLE STATUS names with FROM, "" when none:
// the answer is the logical view only for the current database.
func (q *CatalogQuery) Database() string { return q.form.db }

// SQL returns the statement that answers q on the server session holding, for each view V of
// Views, the logical rows of the current database in the temporary table temp[V]. db is that
// session's current database; exclude are the databases of the other backends on the same
// server, which one server holding every table would not have; lowerNames is the server's
// lower_case_table_names != 0 (SHOW TABLES LIKE then compares names in any case). It refuses a
// statement whose lookups of tables by name obroute cannot tell (see lookupEdits).
func (q *CatalogQuery) SQL(temp map[string]string, db string, exclude []string, lowerNames bool) (string, error) {
	c := q.form
	switch c.kind {
	case catalogShowTables:
		col := "Tables_in_" + db
		if c.hasLike {
			col += " (" + c.like + ")"
		}
		cols := quoteName(col) + ", " + quoteName("Table_type")
		// SHOW FULL TABLES calls a system-versioned table a BASE TABLE (TABLES: SYSTEM VERSIONED).
		inner := "select TABLE_NAME as " + quoteName(col) + ", if(TABLE_TYPE = 'SYSTEM VERSIONED', 'BASE TABLE', TABLE_TYPE) as " + quoteName("Table_type") + " from " + temp["TABLES"]
		if !c.full {
			cols = quoteName(col)
			inner = "select TABLE_NAME as " + quoteName(col) + " from " + temp["TABLES"]
		}
		return q.listing(cols, inner, quoteName(col), lowerNames), nil
	case catalogTableStatus:
		inner := "select " + tableStatusColumns + " from " + temp["TABLES"]
		return q.listing("*", inner, "`Name`", lowerNames), nil
	}
	toks, _ := lex(q.sql)
	var edits []catalogEdit
	for i := 0; i+2 < len(toks); i++ {
		if !isName(toks[i], "information_schema") || toks[i+1].kind != tokPunct || toks[i+1].text != "." {
			continue
		}
		view := strings.ToUpper(nameOf(toks[i+2]))
		v, ok := catalogViews[view]
		if !ok {
			continue
		}
		if i+3 < len(toks) && toks[i+3].kind == tokPunct && toks[i+3].text == "." {
			// A column qualified by the table.
			edits = append(edits, catalogEdit{toks[i].pos, toks[i+2].end, quoteName(nameOf(toks[i+2])), true})
			i += 2
			continue
		}
		var b strings.Builder
		schema := v.schemas[0]
		b.WriteString("(select * from information_schema." + view + " where not (" + schema + " <=> database())")
		if len(exclude) > 0 {
			b.WriteString(" and " + schema + " not in (")
			for k, x := range exclude {
				if k > 0 {
					b.WriteString(", ")
				}
				b.WriteString(quoteString(x))
			}
			b.WriteString(")")
		}
		b.WriteString(" union all select * from " + temp[view] + ")")
		if !hasAlias(toks, i+3) {
			b.WriteString(" as " + quoteName(nameOf(toks[i+2])))
		}
		edits = append(edits, catalogEdit{toks[i].pos, toks[i+2].end, b.String(), false})
		i += 2
	}
	lookups, err := lookupEdits(toks, lowerNames)
	if err != nil {
		return "", err
	}
	edits = append(edits, lookups...)
	slices.SortStableFunc(edits, func(a, b catalogEdit) int {
		if a.from != b.from {
			return a.from - b.from
		}
		return a.to - b.to
	})
	// Both lists are in text order; an alias goes after the items' edits.
	names, columns := itemNames(q.sql, toks, edits)
	q.columns = columns
	var b strings.Builder
	last := 0
	for len(edits) > 0 || len(names) > 0 {
		var e catalogEdit
		if len(names) == 0 || len(edits) > 0 && edits[0].from < names[0].from {
			e, edits = edits[0], edits[1:]
		} else {
			e, names = names[0], names[1:]
		}
		b.WriteString(q.sql[last:e.from])
		b.WriteString(e.text)
		last = e.to
	}
	b.WriteString(q.sql[last:])
	return b.String(), nil
}

// lookupEdits makes the comparisons the server reads as the names of the tables to look up
// compare in the names' case: it finds those tables in their case (lower_case_table_names=0),
// where the column's collation would compare in any case. A lookup is TABLE_NAME or
// TABLE_SCHEMA compared by =, <=> or a one-value IN with a constant (a literal, a ?, a function
// or subquery), on either side, that the WHERE (or an inner join's ON) holds through ANDs only:
// a condition under an OR or XOR, in an outer join's ON, in HAVING, or a comparison with another
// column (a join of two catalog tables) compares in the collation, as there.
//
// The parser makes lookups of some other forms, which are read too: NOT (TABLE_NAME <> c) (and
// NOT TABLE_NAME <> c, !(…), with !=) is TABLE_NAME = c; an IN of string literals that are all
// one name (in any case) is a lookup of its first. Where the names compare in their case
// (anyCase false), the forms whose lookups obroute does not tell are refused: a NOT over a
// condition holding AND, OR, XOR or another NOT and naming TABLE_NAME or TABLE_SCHEMA (the
// parser distributes it), and an IN of several values that are not all plain ASCII string
// literals (their equality in the column's collation decides).
func lookupEdits(toks []token, anyCase bool) ([]catalogEdit, error) {
	if !anyCase {
		if why := lookupMisread(toks); why != "" {
			return nil, errorf("%w: the statement compares TABLE_NAME or TABLE_SCHEMA %s, where the server may or may not look the table up by name in its case (lower_case_table_names=0), which obroute does not tell; write each as a plain TABLE_NAME = '…' conjunct of the WHERE, once per column", ErrCatalog, why)
		}
	}
	depth := make([]int, len(toks)+1)
	match := make([]int, len(toks)) // the matching parenthesis of each, -1 for other tokens
	var open []int
	for i, t := range toks {
		depth[i+1] = depth[i]
		match[i] = -1
		switch {
		case t.kind == tokPunct && t.text == "(":
			open = append(open, i)
			depth[i+1]++
		case t.kind == tokPunct && t.text == ")" && len(open) > 0:
			o := open[len(open)-1]
			open = open[:len(open)-1]
			match[o], match[i] = i, o
			depth[i+1]--
		}
	}
	at := func(i int) int { return depth[i] } // the depth a token stands at (a parenthesis: outside it)
	var out []catalogEdit
	var refusal error
	var walk func(from, to int)
	walk = func(from, to int) {
		for from < to && toks[from].kind == tokPunct && toks[from].text == "(" && match[from] == to-1 {
			from, to = from+1, to-1
		}
		if from >= to || toks[from].is("select") || toks[from].is("with") {
			return
		}
		d := at(from)
		for k := from; k < to; k++ {
			if at(k) == d && (toks[k].is("or") || toks[k].is("xor") || toks[k].kind == tokPunct && toks[k].text == "||") {
				return // no lookup under an OR
			}
		}
		start, between := from, false
		for k := from; k <= to; k++ {
			if k < to {
				t := toks[k]
				if at(k) != d {
					continue
				}
				if t.is("between") {
					between = true
					continue
				}
				if !(t.is("and") || t.kind == tokPunct && t.text == "&&") {
					continue
				}
				if between && t.is("and") {
					between = false
					continue
				}
			}
			if k > start {
				switch {
				case toks[start].kind == tokPunct && toks[start].text == "(" && match[start] == k-1:
					walk(start, k)
				case toks[start].is("not") || toks[start].kind == tokPunct && toks[start].text == "!":
					e, err := negatedLookup(toks, start, k, at, match)
					if err != nil && !anyCase && refusal == nil {
						refusal = err
					}
					out = append(out, e...)
				default:
					e, err := lookupOf(toks, start, k, at, false)
					if err != nil && !anyCase && refusal == nil {
						refusal = err
					}
					out = append(out, e...)
				}
			}
			start = k + 1
		}
	}
	for i, t := range toks {
		if !t.is("where") && !t.is("on") {
			continue
		}
		if t.is("on") && outerJoinOn(toks, i, at) {
			continue
		}
		d, end := at(i), i+1
		for ; end < len(toks); end++ {
			u := toks[end]
			if at(end) < d || at(end) == d && (u.kind == tokPunct && (u.text == ";" || u.text == ",") || u.kind == tokWord && clauseEnds[strings.ToLower(u.text)]) {
				break
			}
			if u.kind == tokPunct && u.text == ")" && at(end) == d {
				break
			}
		}
		walk(i+1, end)
	}
	return out, refusal
}

// negatedLookup returns the edits making the conjunct toks[from:to], a NOT (or !) of a
// condition, compare in the names' case when the parser makes it a lookup: NOT of TABLE_NAME
// <> c is TABLE_NAME = c. A NOT over a condition holding AND, OR, XOR or another NOT that names
// TABLE_NAME or TABLE_SCHEMA is refused (the parser distributes the NOT, which may make
// lookups); a NOT over a subquery leaves it to the subquery's own WHERE.
func negatedLookup(toks []token, from, to int, at func(int) int, match []int) ([]catalogEdit, error) {
	bang := toks[from].kind == tokPunct
	from++
	if bang && !(from < to && toks[from].kind == tokPunct && toks[from].text == "(" && match[from] == to-1) {
		return nil, nil // !a <> b is (!a) <> b: a comparison of a number
	}
	for from < to && toks[from].kind == tokPunct && toks[from].text == "(" && match[from] == to-1 {
		from, to = from+1, to-1
	}
	names, logic := false, false
	for k := from; k < to; k++ {
		t := toks[k]
		switch {
		case t.is("select") || t.is("with"):
			return nil, nil
		case isName(t, "table_name") || isName(t, "table_schema"):
			names = true
		case t.is("and") || t.is("or") || t.is("xor") || t.is("not") ||
			t.kind == tokPunct && (t.text == "&&" || t.text == "||" || t.text == "!"):
			logic = true
		}
	}
	if !names {
		return nil, nil
	}
	if logic {
		return nil, errorf("%w: a NOT over a condition with AND, OR, XOR or NOT that compares TABLE_NAME or TABLE_SCHEMA: the server turns it into comparisons, some of which may look tables up by name in their case (lower_case_table_names=0), which obroute does not tell; write the condition without the NOT (NOT (a <> 'x' OR b) is a = 'x' AND NOT b)", ErrCatalog)
	}
	return lookupOf(toks, from, to, at, true)
}

// clauseEnds are the words that end a WHERE or ON condition at its own depth.
var clauseEnds = map[string]bool{
	"group": true, "having": true, "order": true, "limit": true, "union": true, "except": true,
	"intersect": true, "window": true, "for": true, "lock": true, "into": true, "procedure": true,
	"returning": true, "join": true, "inner": true, "left": true, "right": true, "cross": true,
	"straight_join": true, "natural": true, "where": true, "on": true, "using": true, "offset": true,
	"fetch": true,
}

// outerJoinOn reports whether the ON at toks[on] is the condition of a LEFT or RIGHT join.
func outerJoinOn(toks []token, on int, at func(int) int) bool {
	for k := on - 1; k >= 0; k-- {
		if at(k) == at(on) && toks[k].is("straight_join") {
			return false
		}
		if at(k) != at(on) || !toks[k].is("join") {
			continue
		}
		for j := k - 1; j >= 0 && at(j) == at(on); j-- {
			switch {
			case toks[j].is("outer") || toks[j].is("natural"):
				continue
			case toks[j].is("left") || toks[j].is("right"):
				return true
			}
			return false
		}
		return false
	}
	return false
}

// lookupOf returns the edits making the conjunct toks[from:to] compare in the names' case when
// it is a lookup (see lookupEdits); negated: the conjunct is the condition of a NOT, which is a
// lookup when it compares by <> or !=. An IN of several values that obroute cannot tell all one
// name or not is refused.
func lookupOf(toks []token, from, to int, at func(int) int, negated bool) ([]catalogEdit, error) {
	op := -1
	for k := from; k < to; k++ {
		if at(k) != at(from) {
			continue
		}
		t := toks[k]
		if negated && t.kind == tokPunct && (t.text == "<>" || t.text == "!=") ||
			!negated && (t.kind == tokPunct && (t.text == "=" || t.text == "<=>") || t.is("in")) {
			op = k
			break
		}
	}
	if op <= from || op == to-1 {
		return nil, nil
	}
	binary := func(at int) []catalogEdit { return []catalogEdit{{toks[at].pos, toks[at].pos, "binary ", true}} }
	if toks[op].is("in") {
		// The column on the left, a list of values in parentheses.
		if !lookupColumn(toks, from, op) || toks[op+1].kind != tokPunct || toks[op+1].text != "(" || toks[to-1].kind != tokPunct || toks[to-1].text != ")" {
			return nil, nil
		}
		if op+3 == to-1 {
			return binary(from), nil // IN (v) is = v
		}
		return inLookup(toks, from, op, to, at)
	}
	switch {
	case lookupColumn(toks, from, op) && !nameChain(toks, op+1, to):
		return binary(from), nil
	case lookupColumn(toks, op+1, to) && !nameChain(toks, from, op):
		return binary(op + 1), nil
	}
	return nil, nil
}

// inLookup reads TABLE_NAME IN (v1, v2 …), toks[from:to] with the IN at toks[in]: the server
// looks up the first value when all the values are one in the column's collation, and nothing
// otherwise. Plain ASCII string literals (no trailing space) are one when they are equal in any
// case: then the list becomes the first value, compared in its case; other values are refused.
func inLookup(toks []token, from, in, to int, at func(int) int) ([]catalogEdit, error) {
	if toks[in+2].is("select") || toks[in+2].is("with") {
		return nil, nil // a subquery: no lookup
	}
	d := at(in + 1)
	var vals []token
	start := in + 2
	for k := in + 2; k <= to-1; k++ {
		if k < to-1 && !(at(k) == d+1 && toks[k].kind == tokPunct && toks[k].text == ",") {
			continue
		}
		if k != start+1 || toks[start].kind != tokString || toks[start].national || !plainName(toks[start].val) {
			return nil, errorf("%w: %s IN (…) with values other than plain ASCII string literals: the server looks the table up by name in its case (lower_case_table_names=0) when the values are all one name in the column's collation, which obroute does not tell for these; compare with = for one name, or write the names as plain literals", ErrCatalog, strings.ToUpper(nameOf(toks[in-1])))
		}
		vals = append(vals, toks[start])
		start = k + 1
	}
	for _, v := range vals[1:] {
		if !strings.EqualFold(v.val, vals[0].val) {
			return nil, nil // several names: compared in the collation
		}
	}
	return []catalogEdit{
		{toks[from].pos, toks[from].pos, "binary ", true},
		{toks[in+1].pos, toks[to-1].end, "(" + vals[0].text + ")", false},
	}, nil
}

// plainName reports whether s is printable ASCII without a trailing space: two such names are
// one in the catalog's collation (utf8mb3_general_ci) exactly when they are equal in any case.
func plainName(s string) bool {
	if s == "" || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// nameChain reports whether toks[from:to] is a column reference: names joined by dots.
func nameChain(toks []token, from, to int) bool {
	if from >= to || (to-from)%2 == 0 {
		return false
	}
	for k := from; k < to; k++ {
		t := toks[k]
		if (k-from)%2 == 1 {
			if t.kind != tokPunct || t.text != "." {
				return false
			}
			continue
		}
		if t.kind == tokIdent {
			continue
		}
		if t.kind != tokWord || t.is("null") || t.is("true") || t.is("false") || t.is("default") {
			return false
		}
	}
	return true
}

// lookupColumn reports whether toks[from:to] is the column TABLE_NAME or TABLE_SCHEMA, qualified
// or not.
func lookupColumn(toks []token, from, to int) bool {
	return nameChain(toks, from, to) && (isName(toks[to-1], "table_name") || isName(toks[to-1], "table_schema"))
}

// catalogEdit replaces sql[from:to] by text; qualifier: the qualifier of a column, which keeps
// the name of a select item.
type catalogEdit struct {
	from, to  int
	text      string
	qualifier bool
}

// itemNames keeps the column names of the statement's select items that edits change: the
// server names an item without an alias by its text as written, so such an item gets its
// original text as alias. Only the first SELECT names the columns. An item whose text holds a
// ? placeholder gets no alias (a driver interpolating arguments would read the ? in the alias
// as one): its original text is returned in columns, by its column's index, for the answer's
// column name (when no * before it leaves the index unknown).
func itemNames(sql string, toks []token, edits []catalogEdit) (out []catalogEdit, columns map[int]string) {
	depth, i := 0, 0
	for ; i < len(toks); i++ {
		t := toks[i]
		if t.kind == tokPunct && t.text == "(" {
			depth++
		} else if t.kind == tokPunct && t.text == ")" {
			depth--
		} else if depth == 0 && t.is("select") {
			break
		}
	}
	for i++; i < len(toks) && toks[i].kind == tokWord && selectOptions[strings.ToUpper(toks[i].text)]; i++ {
	}
	start, item, star := i, 0, false
	for depth = 0; i <= len(toks); i++ {
		end := i == len(toks)
		if !end {
			t := toks[i]
			switch {
			case t.kind == tokPunct && t.text == "(":
				depth++
				continue
			case t.kind == tokPunct && t.text == ")":
				depth--
				continue
			case depth != 0:
				continue
			}
			end = t.is("from") || t.is("into") || t.is("union") || t.is("where") || t.kind == tokPunct && t.text == ";"
			if !end && !(t.kind == tokPunct && t.text == ",") {
				continue
			}
		}
		if i > start {
			from, to := toks[start].pos, toks[i-1].end
			text := sql[from:to]
			changed := slices.ContainsFunc(edits, func(e catalogEdit) bool { return !e.qualifier && e.from >= from && e.to <= to })
			star = star || toks[i-1].kind == tokPunct && toks[i-1].text == "*" && (i-1 == start || toks[i-2].kind == tokPunct && toks[i-2].text == ".")
			switch {
			case !changed || itemHasAlias(toks[start:i]):
			case !strings.Contains(text, "?"):
				out = append(out, catalogEdit{to, to, " as " + quoteName(text), false})
			case !star && len(text) <= maxItemName:
				if columns == nil {
					columns = map[int]string{}
				}
				columns[item] = text
			}
		}
		if end {
			break
		}
		start, item = i+1, item+1
	}
	return out, columns
}

// maxItemName bounds the text of a select item the server names a column by in full (it cuts a
// longer one, to 256 characters, as obroute does not).
const maxItemName = 250

// ColumnNames returns, by index, the names of the answer's columns that the rewritten statement
// SQL returned names otherwise than one server would (select items holding a ?, which keep no
// alias): their text as written. Nil for none.
func (q *CatalogQuery) ColumnNames() map[int]string {
	return q.columns
}

// itemHasAlias reports whether a select item (its tokens) ends with an alias: AS name, or a name
// after an expression's end (a parenthesis, a literal, a variable).
func itemHasAlias(item []token) bool {
	n := len(item)
	if n < 2 {
		return false
	}
	last, before := item[n-1], item[n-2]
	if before.is("as") {
		return true
	}
	if last.kind != tokIdent && last.kind != tokWord && last.kind != tokString {
		return false
	}
	return before.kind == tokPunct && before.text == ")" || before.kind == tokNumber || before.kind == tokString || before.kind == tokVar
}

// listing returns the SELECT of a SHOW listing: cols of the rows of inner, filtered by the
// statement's LIKE (on the table name, case-sensitive unless lowerNames) or WHERE, in the order of
// the names' bytes, as SHOW lists them.
func (q *CatalogQuery) listing(cols, inner, name string, lowerNames bool) string {
	c := q.form
	s := "select " + cols + " from (" + inner + ") as t"
	switch {
	case c.hasLike && lowerNames:
		s += " where " + name + " like " + c.likeText
	case c.hasLike:
		s += " where convert(" + name + " using utf8mb4) collate utf8mb4_bin like " + c.likeText
	case c.where != "":
		s += " where " + c.where
	}
	return s + " order by convert(" + name + " using utf8mb4) collate utf8mb4_bin"
}

// tableStatusColumns are SHOW TABLE STATUS's columns over information_schema.TABLES.
const tableStatusColumns = "TABLE_NAME as `Name`, ENGINE as `Engine`, VERSION as `Version`, ROW_FORMAT as `Row_format`, " +
	"TABLE_ROWS as `Rows`, AVG_ROW_LENGTH as `Avg_row_length`, DATA_LENGTH as `Data_length`, MAX_DATA_LENGTH as `Max_data_length`, " +
	"INDEX_LENGTH as `Index_length`, DATA_FREE as `Data_free`, AUTO_INCREMENT as `Auto_increment`, CREATE_TIME as `Create_time`, " +
	"UPDATE_TIME as `Update_time`, CHECK_TIME as `Check_time`, TABLE_COLLATION as `Collation`, CHECKSUM as `Checksum`, " +
	"CREATE_OPTIONS as `Create_options`, TABLE_COMMENT as `Comment`, MAX_INDEX_LENGTH as `Max_index_length`, TEMPORARY as `Temporary`"

// hasAlias reports whether an alias follows the table reference ending before toks[i].
func hasAlias(toks []token, i int) bool {
	if i >= len(toks) {
		return false
	}
	t := toks[i]
	if t.kind == tokIdent {
		return true
	}
	return t.kind == tokWord && (t.is("as") || !notNames[strings.ToLower(t.text)] && !t.is("ignore") && !t.is("natural"))
}

func quoteName(n string) string { return "`" + strings.ReplaceAll(n, "`", "``") + "`" }

func quoteString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' || s[i] == '\'' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('\'')
	return b.String()
}

// CatalogView is the logical view of the tables at one moment (see above): which table of which
// backend shows as which table.
type CatalogView struct {
	def      string
	routes   map[string]string
	logical  map[string]bool       // time-sharded tables, lower case
	physical map[string]physicalOf // physical tables of time-sharded tables, lower case
	sources  []string
}

// physicalOf is a physical table of a time-sharded table.
type physicalOf struct {
	logical, backend string
	newest           bool
}

// TableRole says what a backend's table is in the logical view.
type TableRole uint8

// Table roles.
const (
	// TableHidden: not in the logical view (another backend's table, a physical table of a
	// time-sharded table on a backend that does not hold it).
	TableHidden TableRole = iota
	// TablePlain: in the view under its own name.
	TablePlain
	// TableDefinition: the newest physical table of a time-sharded table, which stands for it.
	TableDefinition
	// TablePart: another physical table of a time-sharded table: its row statistics count in
	// the logical table's.
	TablePart
)

// CatalogView returns the logical view of the tables under the current shard metadata.
func (r *Router) CatalogView() (*CatalogView, error) {
	v := &CatalogView{def: r.cfg.Settings.Default, routes: r.cfg.Settings.Routes, logical: map[string]bool{}, physical: map[string]physicalOf{}}
	v.sources = []string{v.def}
	for _, b := range r.cfg.Settings.Routes {
		v.sources = appendNew(v.sources, b)
	}
	if r.time != nil {
		snap := r.time.cfg.Snapshot()
		if snap == nil {
			return nil, errorf("%w: no shard metadata snapshot is loaded yet; the logical view of the time-sharded tables needs it", ErrNoShardTable)
		}
		for name, tt := range r.time.tables {
			all := r.time.own(tt, snap.Logical(tt.Table))
			if len(all) == 0 {
				continue // no physical table: the logical table does not exist yet
			}
			v.logical[name] = true
			for i := range all {
				b, err := r.time.location(&all[i])
				if err != nil {
					return nil, err
				}
				v.physical[strings.ToLower(all[i].Name)] = physicalOf{logical: tt.Table, backend: b, newest: i == len(all)-1}
				v.sources = appendNew(v.sources, b)
			}
		}
	}
	return v, nil
}

// Sources are the backends whose tables are in the view.
func (v *CatalogView) Sources() []string { return v.sources }

// Table returns the name under which table of backend shows in the view, and its role there.
func (v *CatalogView) Table(backend, table string) (string, TableRole) {
	lower := strings.ToLower(table)
	if p, ok := v.physical[lower]; ok {
		switch {
		case p.backend != backend:
			return "", TableHidden
		case p.newest:
			return p.logical, TableDefinition
		}
		return p.logical, TablePart
	}
	if v.logical[lower] {
		return "", TableHidden // a physical table named as a time-sharded table: the logical one wins
	}
	if b, ok := v.routes[lower]; ok {
		if b == backend {
			return table, TablePlain
		}
		return "", TableHidden
	}
	if backend == v.def {
		return table, TablePlain
	}
	return "", TableHidden
}

// ReadsCatalog reports whether the statement is a catalog statement answered for the logical
// view of the tables, which reads the shard metadata.
func (st *Statement) ReadsCatalog() bool { return st.catalog != nil }

// UnqualifiedCatalog returns the information_schema table a SELECT names without its database
// (TABLES, COLUMNS, …) when the logical view differs from the default backend's tables, ""
// otherwise: in a client session whose database is information_schema, such a statement reads
// the backend's physical tables, and the connector refuses it. It is read at analysis.
func (st *Statement) UnqualifiedCatalog() string { return st.bareView }

// logicWords are the words before a parenthesis that opens a condition, not a call.
var logicWords = map[string]bool{"where": true, "and": true, "or": true, "xor": true, "not": true, "on": true, "having": true, "when": true, "then": true, "else": true}

// lookupMisread names a form of comparing TABLE_NAME or TABLE_SCHEMA whose lookups (see
// lookupEdits) the server's optimizer decides otherwise than obroute reads them, "" when the
// statement holds none: the column in parentheses or in a row, an IN of a subquery, the
// comparison's result compared again (IS TRUE, = 1), an OR with a constant (folded away),
// a column compared with a constant twice, a NATURAL JOIN or USING (the join's equalities);
// the OR and the twice outside parentheses only.
func lookupMisread(toks []token) string {
	lookup := func(t token) bool { return isName(t, "table_name") || isName(t, "table_schema") }
	constant := func(t token) bool {
		return t.kind == tokString || t.kind == tokNumber || t.kind == tokParam || t.is("false") || t.is("true") || t.is("null")
	}
	comparison := func(t token) bool {
		return t.kind == tokPunct && (t.text == "=" || t.text == "<=>" || t.text == "<>" || t.text == "!=" || t.text == "<" || t.text == ">" || t.text == "<=" || t.text == ">=")
	}
	has, or := false, false
	for _, t := range toks {
		has = has || lookup(t)
		or = or || t.is("or") || t.is("xor") || t.kind == tokPunct && t.text == "||"
	}
	if !has {
		return ""
	}
	seen := map[string]bool{}
	depth := 0 // of parentheses: the forms below are read outside them only
	for i, t := range toks {
		if t.kind == tokPunct && t.text == "(" {
			depth++
		} else if t.kind == tokPunct && t.text == ")" {
			depth--
		}
		switch {
		case t.is("natural") || t.is("using"):
			return "with a NATURAL JOIN or USING"
		case depth == 0 && (t.is("or") || t.kind == tokPunct && t.text == "||") && (i+1 < len(toks) && constant(toks[i+1]) || i > 0 && constant(toks[i-1]) && (i < 2 || !comparison(toks[i-2]))):
			return "with an OR of a constant (which the server folds away)"
		case !lookup(t):
			continue
		}
		called := i > 1 && (toks[i-2].kind == tokIdent || toks[i-2].kind == tokWord && !logicWords[strings.ToLower(toks[i-2].text)])
		if i > 0 && toks[i-1].kind == tokPunct && toks[i-1].text == "(" && !called && i+1 < len(toks) && toks[i+1].kind == tokPunct && (toks[i+1].text == ")" || toks[i+1].text == ",") {
			return "in parentheses or in a row"
		}
		if i+5 < len(toks) && toks[i+1].is("in") && toks[i+2].kind == tokPunct && toks[i+2].text == "(" && toks[i+3].is("select") && constant(toks[i+4]) && toks[i+5].kind == tokPunct && toks[i+5].text == ")" {
			return "with an IN of a subquery without tables"
		}
		if i+2 < len(toks) && comparison(toks[i+1]) && constant(toks[i+2]) {
			if i+3 < len(toks) && (toks[i+3].is("is") || comparison(toks[i+3])) {
				return "and compares the comparison's result again"
			}
			name := strings.ToLower(nameOf(t))
			if depth != 0 {
				continue
			}
			if seen[name] && !or {
				return "with constants twice"
			}
			seen[name] = true
		}
	}
	return ""
}
