package routing

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/metadata"
)

// DDL on tables is read from its words, not from the parser's tree: the parser does not know
// MariaDB's forms (IF [NOT] EXISTS on CREATE/DROP INDEX and ALTER TABLE, CREATE OR REPLACE,
// WAIT n / NOWAIT, ALGORITHM= and LOCK= clauses, OPTIMIZE/ANALYZE/REPAIR/CHECK TABLE),
// and routing needs only the tables a DDL statement names and where the table it acts on is
// written. The forms read are MariaDB's:
//
//	ALTER [ONLINE] [IGNORE] TABLE [IF EXISTS] t [WAIT n | NOWAIT] spec, … (RENAME [TO|AS] u,
//	    REFERENCES u, EXCHANGE PARTITION p WITH TABLE u, CONVERT PARTITION p TO TABLE u and
//	    CONVERT TABLE u TO PARTITION p name other tables)
//	CREATE [OR REPLACE] [UNIQUE|FULLTEXT|SPATIAL] INDEX [IF NOT EXISTS] i [USING …] ON t …
//	DROP INDEX [IF EXISTS] i ON t …
//	CREATE [OR REPLACE] [TEMPORARY] TABLE [IF NOT EXISTS] t … (LIKE u, REFERENCES u)
//	DROP [TEMPORARY] TABLE [IF EXISTS] t [, t …] …
//	RENAME TABLE[S] [IF EXISTS] t [WAIT n | NOWAIT] TO u [, …]
//	TRUNCATE [TABLE] t …
//	OPTIMIZE | ANALYZE | REPAIR [NO_WRITE_TO_BINLOG | LOCAL] TABLE t [, t …] …
//	CHECK TABLE t [, …] …
//
// A statement of one of these forms is routed by the tables it names (static routes) even when
// the parser cannot read it; one on a time-sharded table runs on every physical table (ALTER,
// CREATE/DROP INDEX, TRUNCATE and the maintenance statements) or is refused (CREATE, DROP,
// RENAME of the logical table).

// ddlAction is what a DDL statement does to the table it acts on.
type ddlAction uint8

const (
	ddlAlter ddlAction = iota + 1
	ddlCreateIndex
	ddlDropIndex
	ddlTruncate
	ddlMaintain // OPTIMIZE, ANALYZE, REPAIR, CHECK TABLE: a result set per table
	ddlCreateTable
	ddlDropTable
	ddlRename
)

// ddlRef is one table a DDL statement names: its name in lower case, as written (unquoted), its
// database qualifier as written ("" when none) and where it is written in the statement's text
// (qualifier included).
type ddlRef struct {
	name, written, db string
	from, to          int
}

// ddlForm is a DDL statement as read from its words.
type ddlForm struct {
	action ddlAction
	verb   string   // the statement's leading words in upper case, for messages: "ALTER TABLE"
	acts   []ddlRef // the tables it acts on
	others []ddlRef // tables named otherwise: RENAME TO, LIKE, REFERENCES, EXCHANGE … WITH TABLE
	// renames: an ALTER TABLE … RENAME TO; temporary: CREATE/DROP TEMPORARY TABLE.
	renames, temporary bool
	// renameTo are the indexes in others of an ALTER TABLE's RENAME TO tables, in order.
	renameTo    []int
	ifNotExists bool
	orReplace   bool
}

// fanOut reports whether the form runs on each physical table of a time-sharded table it acts on.
func (d *ddlForm) fanOut() bool {
	switch d.action {
	case ddlAlter:
		return !d.renames
	case ddlCreateIndex, ddlDropIndex, ddlTruncate, ddlMaintain:
		return true
	}
	return false
}

// refs returns every table the form names: those it acts on, then the others.
func (d *ddlForm) refs() []ddlRef {
	return append(append([]ddlRef(nil), d.acts...), d.others...)
}

// renamePairs returns the renames of the form, each its old and its new table, in order: RENAME
// TABLE a TO b, c TO d (acts[i] to others[i]), ALTER TABLE a RENAME TO b (each RENAME TO in
// turn, the table being renamed again by the next).
func (d *ddlForm) renamePairs() [][2]ddlRef {
	var out [][2]ddlRef
	switch {
	case d.action == ddlRename:
		for i := range d.acts {
			if i < len(d.others) {
				out = append(out, [2]ddlRef{d.acts[i], d.others[i]})
			}
		}
	case d.action == ddlAlter && len(d.acts) > 0:
		from := d.acts[0]
		for _, k := range d.renameTo {
			out = append(out, [2]ddlRef{from, d.others[k]})
			from = d.others[k]
		}
	}
	return out
}

// tableNames returns the names of every table the form names, without duplicates.
func (d *ddlForm) tableNames() []string {
	var names []string
	for _, r := range d.acts {
		names = appendNew(names, r.name)
	}
	for _, r := range d.others {
		names = appendNew(names, r.name)
	}
	return names
}

// readDDL reads toks (the tokens of a statement's text after its leading comments; base is
// where that text starts in the statement) as one of the DDL forms above; nil when it is none.
func readDDL(toks []token, base int) *ddlForm {
	if len(toks) < 2 || toks[0].kind != tokWord {
		return nil
	}
	r := ddlReader{toks: toks, base: base}
	d := &ddlForm{}
	first := strings.ToLower(toks[0].text)
	r.i = 1
	switch first {
	case "alter":
		r.skip("online", "offline")
		r.skip("ignore")
		if !r.word("table") {
			return nil
		}
		d.action, d.verb = ddlAlter, "ALTER TABLE"
		r.words("if", "exists")
		if !r.table(&d.acts) {
			return nil
		}
	case "create":
		if r.words("or", "replace") {
			d.orReplace = true
		}
		if r.word("temporary") {
			d.temporary = true
		}
		switch {
		case r.word("table"):
			d.action, d.verb = ddlCreateTable, "CREATE TABLE"
			d.ifNotExists = r.words("if", "not", "exists")
			if !r.table(&d.acts) {
				return nil
			}
		case !d.temporary && (r.word("index") || (r.skip("unique", "fulltext", "spatial") && r.word("index"))):
			d.action, d.verb = ddlCreateIndex, "CREATE INDEX"
			d.ifNotExists = r.words("if", "not", "exists")
			if !r.name() {
				return nil
			}
			if r.word("using") && !r.name() {
				return nil
			}
			if !r.word("on") || !r.table(&d.acts) {
				return nil
			}
		default:
			return nil
		}
	case "drop":
		if r.word("temporary") {
			d.temporary = true
		}
		switch {
		case r.word("table"):
			d.action, d.verb = ddlDropTable, "DROP TABLE"
			r.words("if", "exists")
			if !r.tableList(&d.acts) {
				return nil
			}
		case !d.temporary && r.word("index"):
			d.action, d.verb = ddlDropIndex, "DROP INDEX"
			r.words("if", "exists")
			if !r.name() || !r.word("on") || !r.table(&d.acts) {
				return nil
			}
		default:
			return nil
		}
	case "rename":
		if !r.word("table") && !r.word("tables") {
			return nil
		}
		d.action, d.verb = ddlRename, "RENAME TABLE"
		r.words("if", "exists")
		for {
			if !r.table(&d.acts) {
				return nil
			}
			r.wait()
			if !r.word("to") || !r.table(&d.others) {
				return nil
			}
			if !r.punct(",") {
				break
			}
		}
	case "truncate":
		r.word("table")
		d.action, d.verb = ddlTruncate, "TRUNCATE TABLE"
		if !r.table(&d.acts) {
			return nil
		}
	case "optimize", "analyze", "repair", "check":
		if first != "check" {
			r.skip("no_write_to_binlog", "local")
		}
		if !r.word("table") {
			return nil
		}
		d.action, d.verb = ddlMaintain, strings.ToUpper(first)+" TABLE"
		if !r.tableList(&d.acts) {
			return nil
		}
	default:
		return nil
	}
	r.rest(d)
	return d
}

// ddlReader walks the tokens of a DDL statement.
type ddlReader struct {
	toks []token
	i    int
	base int
}

// word moves past the word w when it stands next.
//
//go:noinline
func (r *ddlReader) word(w string) bool {
	if r.i < len(r.toks) && r.toks[r.i].is(w) {
		r.i++
		return true
	}
	return false
}

// words moves past the words ws when they all stand next, in order.
func (r *ddlReader) words(ws ...string) bool {
	if r.i+len(ws) > len(r.toks) {
		return false
	}
	for k, w := range ws {
		if !r.toks[r.i+k].is(w) {
			return false
		}
	}
	r.i += len(ws)
	return true
}

// skip moves past one of the words ws when it stands next; it reports whether one did.
func (r *ddlReader) skip(ws ...string) bool {
	for _, w := range ws {
		if r.word(w) {
			return true
		}
	}
	return false
}

func (r *ddlReader) punct(p string) bool {
	if r.i < len(r.toks) && r.toks[r.i].kind == tokPunct && r.toks[r.i].text == p {
		r.i++
		return true
	}
	return false
}

// name moves past a name (an index name, an index type).
func (r *ddlReader) name() bool {
	if r.i < len(r.toks) && (r.toks[r.i].kind == tokWord || r.toks[r.i].kind == tokIdent) {
		r.i++
		return true
	}
	return false
}

// wait moves past WAIT n or NOWAIT.
func (r *ddlReader) wait() {
	if r.word("nowait") {
		return
	}
	if r.i+1 < len(r.toks) && r.toks[r.i].is("wait") && r.toks[r.i+1].kind == tokNumber {
		r.i += 2
	}
}

// table reads a table name, qualified or not, into refs.
func (r *ddlReader) table(refs *[]ddlRef) bool {
	toks := r.toks
	if r.i >= len(toks) || (toks[r.i].kind != tokWord && toks[r.i].kind != tokIdent) {
		return false
	}
	from := toks[r.i].pos
	name, end := toks[r.i], toks[r.i].end
	db := ""
	r.i++
	if r.i+1 < len(toks) && toks[r.i].kind == tokPunct && toks[r.i].text == "." && (toks[r.i+1].kind == tokWord || toks[r.i+1].kind == tokIdent) {
		db = nameOf(name)
		name, end = toks[r.i+1], toks[r.i+1].end
		r.i += 2
	}
	n := nameOf(name)
	*refs = append(*refs, ddlRef{name: strings.ToLower(n), written: n, db: db, from: r.base + from, to: r.base + end})
	return true
}

// tableList reads t [, t …].
func (r *ddlReader) tableList(refs *[]ddlRef) bool {
	for {
		if !r.table(refs) {
			return false
		}
		if !r.punct(",") {
			return true
		}
	}
}

// rest reads the tables named in the rest of the statement: RENAME [TO|AS] u of ALTER TABLE,
// LIKE u, REFERENCES u, EXCHANGE PARTITION … WITH TABLE u, CONVERT PARTITION … TO TABLE u,
// CONVERT TABLE u TO PARTITION ….
func (r *ddlReader) rest(d *ddlForm) {
	depth := 0
	for r.i < len(r.toks) {
		t := r.toks[r.i]
		switch {
		case t.kind == tokPunct && t.text == "(":
			depth++
		case t.kind == tokPunct && t.text == ")":
			depth--
		case d.action == ddlAlter && depth == 0 && t.is("rename"):
			r.i++
			if r.skip("column", "index", "key", "constraint") {
				continue
			}
			r.skip("to", "as")
			if r.table(&d.others) {
				d.renames = true
				d.renameTo = append(d.renameTo, len(d.others)-1)
			}
			continue
		case t.is("references"), d.action == ddlCreateTable && t.is("like"):
			r.i++
			r.table(&d.others)
			continue
		case d.action == ddlAlter && (t.is("with") || t.is("to") || t.is("convert")) && r.i+1 < len(r.toks) && r.toks[r.i+1].is("table"):
			// EXCHANGE PARTITION p WITH TABLE u, CONVERT PARTITION p TO TABLE u, CONVERT TABLE u TO PARTITION p
			r.i += 2
			r.table(&d.others)
			continue
		}
		r.i++
	}
}

// routeDDL routes a DDL statement read by readDDL that names the time-sharded table tt: on each
// of its physical tables, or refused. It fills p and says so with true; false leaves a statement
// that does not act on tt (a temporary table of that name) to the other rules.
func (t *timeRouter) routeDDL(p *Plan, st *Statement, in Input, tt *config.TimeTable, db string) (bool, error) {
	d := st.ddl
	if d.temporary {
		return false, nil
	}
	logical := strings.ToLower(tt.Table)
	names := func(r ddlRef) bool { return r.name == logical && (r.db == "" || r.db == db) }
	snap := t.cfg.Snapshot()
	if snap == nil {
		return true, errorf("%w: no shard metadata snapshot is loaded yet; load the metadata before routing %s", ErrNoShardTable, tt.Table)
	}
	all := t.own(tt, snap.Logical(tt.Table))
	acts := false
	for _, r := range d.acts {
		acts = acts || names(r)
	}
	switch {
	case d.action == ddlCreateTable && acts && d.ifNotExists && !d.orReplace && len(all) > 0:
		// One server holding every table would find it and do nothing.
		p.Type, p.Class, p.NoOp = UsePartitionLocationLookup, ClassDefault, true
		if in.Explain {
			p.Prompts = append(p.Prompts, fmt.Sprintf("%s is a time-sharded table with %d physical tables: CREATE TABLE IF NOT EXISTS does nothing", tt.Table, len(all)))
		}
		return true, nil
	case d.action == ddlCreateTable && acts:
		return true, errorf("%w: %s is a time-sharded table: its physical tables %s_<period> are created by obroute metadata prepare (CREATE TABLE … LIKE the newest); to create one yourself, send CREATE TABLE %s_<period> … with a backend hint and add its row to the shard metadata",
			ErrLogicalTable, tt.Table, tt.Table, tt.Table)
	case d.action == ddlDropTable:
		return true, errorf("%w: DROP TABLE of the time-sharded table %s would drop its %d physical tables (%s); drop each with a backend hint (/*+ OBROUTE(backend=…) */ DROP TABLE %s_<period>), delete its row from the shard metadata, and remove time_tables.%s from the configuration when none is left",
			ErrLogicalTable, tt.Table, len(all), physicalList(t, all), tt.Table, tt.Table)
	case d.action == ddlRename || d.renames:
		return true, errorf("%w: %s of the time-sharded table %s would rename one table, not its %d physical tables; rename each physical table with a backend hint, update the shard metadata's table_name, and change time_tables.%s in the configuration",
			ErrLogicalTable, d.verb, tt.Table, len(all), tt.Table)
	case !acts || !d.fanOut():
		return true, errorf("%w: %s names the time-sharded table %s other than as the table it acts on (LIKE, REFERENCES, WITH TABLE); name one of its physical tables with a backend hint instead",
			ErrLogicalTable, d.verb, tt.Table)
	case len(d.acts) > 1:
		return true, errorf("%w: %s of the time-sharded table %s with other tables; run it on %s alone", ErrLogicalTable, d.verb, tt.Table, tt.Table)
	}
	for _, r := range d.others {
		if names(r) {
			return true, errorf("%w: %s on %s names %s again (REFERENCES, WITH TABLE): each physical table would name the logical table; name a physical table instead", ErrLogicalTable, d.verb, tt.Table, tt.Table)
		}
	}
	if d.action == ddlAlter || d.action == ddlCreateIndex {
		if err := keyProblem(st.SQL, d, tt); err != nil {
			return true, err
		}
	}
	if in.Session != nil && in.Session.InTransaction {
		return true, errorf("%w: %s on the time-sharded table %s runs on each of its %d physical tables, each committing on its own; run it outside the transaction", ErrDDLInTransaction, d.verb, tt.Table, len(all))
	}
	if len(all) == 0 {
		return true, errorf("%w: the shard metadata lists no table named %s_<digits>… for %s on %s; add its physical tables to shard_metadata", ErrNoShardTable, tt.Table, d.verb, tt.Table)
	}
	ref := d.acts[0]
	p.Type, p.FanOut = UsePartitionLocationLookup, tt.Table
	p.Targets = make([]Target, len(all))
	hot, cold := 0, 0
	for i := range all {
		b, err := t.location(&all[i])
		if err != nil {
			return true, err
		}
		if t.router.roles[b] == config.RoleCold {
			cold++
		} else {
			hot++
		}
		sql := st.SQL[:ref.from] + "`" + all[i].Name + "`" + st.SQL[ref.to:]
		p.Targets[i] = Target{Backend: b, SQL: sql, Args: in.Args, Tables: []string{all[i].Name}}
	}
	switch {
	case hot > 0 && cold > 0:
		p.Class = ClassSplit
	case cold > 0:
		p.Class = ClassColdOnly
	default:
		p.Class = ClassHotOnly
	}
	if in.Explain {
		p.Prompts = append(p.Prompts, fmt.Sprintf("%s on the time-sharded table %s: run on each of its %d physical tables (%d hot, %d cold), oldest first, one after the other; a failure stops it and names the tables changed and not", d.verb, tt.Table, len(all), hot, cold))
	}
	return true, nil
}

// nameCheck reads a table that DDL or a description without a backend hint names (ref), db
// being the client session's current database: it returns the time-sharded table ref stands
// for, nil for another table, or an error refusing the statement. t is the traffic's side (nil:
// shadow traffic without a shadow side), root the production side, whose configuration names
// the time-sharded tables. A name qualified by another database is that database's table. A
// time-sharded table's name in another case is refused: with lower_case_table_names=0 one
// server would find no such table, with 1 it would find the logical table, and obroute does not
// tell which. A physical table of a time-sharded table is hidden in the logical view (one
// server has no such table), so acting on it is refused with the backend hint that reaches it.
func (t *timeRouter) nameCheck(root *timeRouter, ref ddlRef, verb, db string) (*config.TimeTable, error) {
	tt, named := root.tables[ref.name]
	switch {
	case ref.db != "" && db == "" && named:
		return nil, errorf("%w: %s names %s.%s, and obroute does not know the client session's current database (the default backend's DSN names none), so not whether that is the time-sharded table %s; USE a database, or write %s without its database",
			ErrLogicalTable, verb, ref.db, ref.written, tt.Table, tt.Table)
	case ref.db != "" && ref.db != db:
		return nil, nil
	}
	if named {
		if ref.written != tt.Table {
			return nil, errorf("%w: %s names %s, the time-sharded table %s in another case; table names compare in their case (lower_case_table_names=0), so one server might have no table %s: write %s",
				ErrLogicalTable, verb, ref.written, tt.Table, ref.written, tt.Table)
		}
		return tt, nil
	}
	return nil, t.hiddenCheck(ref.written, verb, "to act on every physical table, name %s")
}

// hiddenCheck refuses a statement without a backend hint (verb, for the message) naming name,
// when the shard metadata lists it as a physical table of a time-sharded table: the logical
// view hides it (one server has no such table), and the default backend may have none, or a
// stale copy of a table that lives on another backend. use says, with %s for the logical
// table's name, how to reach the rows through the logical view. t is the traffic's side (nil:
// shadow traffic without a shadow side: nothing to check).
func (t *timeRouter) hiddenCheck(name, verb, use string) error {
	if t == nil || !t.physicalForm(name) {
		return nil
	}
	snap := t.cfg.Snapshot()
	if snap == nil {
		return nil
	}
	for _, tt := range t.tables {
		all := t.own(tt, snap.Logical(tt.Table))
		for i := range all {
			if !strings.EqualFold(all[i].Name, name) {
				continue
			}
			b, err := t.location(&all[i])
			if err != nil {
				return err
			}
			return errorf("%w: %s names %s, a physical table of the time-sharded table %s (on backend %s), which the logical view does not show; to act on the physical table, start the statement with the backend hint /*+ OBROUTE(backend=%s) */; "+use,
				ErrLogicalTable, verb, name, tt.Table, b, b, tt.Table)
		}
	}
	return nil
}

// physicalForm reports whether name (in any case) is written as a physical table of one of t's
// time-sharded tables L would be: L_<digit>…
func (t *timeRouter) physicalForm(name string) bool {
	name = strings.ToLower(name)
	for l := range t.tables {
		if len(name) > len(l)+1 && strings.HasPrefix(name, l+"_") && name[len(l)+1] >= '0' && name[len(l)+1] <= '9' {
			return true
		}
	}
	return false
}

// hiddenTables refuses a statement without a backend hint that names, in any clause, a
// physical table of a time-sharded table (see hiddenCheck): a read would answer from the
// default backend's table, or a copy of it, and a write would put rows where the logical
// table does not read them (outside the table's span) or move them out of it. Tables it names
// that are temporary tables of the client session are those; the tables a DDL statement or a
// description acts on are read by nameCheck, with their database qualifiers.
func (r *Router) hiddenTables(p *Plan, st *Statement, sess *SessionState) error {
	if r.time == nil || len(st.Tables) == 0 {
		return nil
	}
	if other, err := r.otherDatabase(sess); other || err != nil {
		return err // another database's tables: its own (see elsewhereRoute)
	}
	t := r.time.forPlan(p)
	if t == nil {
		return nil
	}
	var checked []string
	if st.ddl != nil {
		checked = st.ddl.tableNames() // read by nameCheck; a temporary table's are the session's
	}
	if st.catalog != nil && st.catalog.kind == catalogDescribe {
		checked = append(checked, st.catalog.table.name)
	}
	for _, name := range st.Tables {
		if _, temp := sess.TempTables[name]; temp || slices.Contains(checked, name) {
			continue
		}
		use := "to read or write the rows of every physical table, name %s"
		if st.Kind == KindDDL {
			use = "to act on every physical table, name %s"
		}
		if err := t.hiddenCheck(name, statementVerb(st), use); err != nil {
			return err
		}
	}
	return nil
}

// statementVerb names st's kind for messages: its first word in upper case (SELECT, REPLACE,
// CHECKSUM, WITH …), else its kind.
func statementVerb(st *Statement) string {
	if st.ddl != nil {
		return st.ddl.verb
	}
	if toks, _ := lex(st.SQL[hint.StatementStart(st.SQL):]); len(toks) > 0 && toks[0].kind == tokWord {
		return strings.ToUpper(toks[0].text)
	}
	return st.Kind.String()
}

// currentDB returns the client session's current database for production traffic: the one it
// set with USE, else the default backend's DSN's.
func (r *Router) currentDB(in Input) string {
	if in.Session != nil && in.Session.Databases[0] != "" {
		return in.Session.Databases[0]
	}
	for _, b := range r.cfg.Settings.Backends {
		if b.Name == r.cfg.Settings.Default && b.MySQL != nil {
			return b.MySQL.DBName
		}
	}
	return ""
}

// physicalList names the physical tables with their backends, for messages.
func physicalList(t *timeRouter, tables []metadata.Table) string {
	var b strings.Builder
	for i := range tables {
		if i > 0 {
			b.WriteString(", ")
		}
		loc, _ := t.location(&tables[i])
		b.WriteString(tables[i].Name + " on " + loc)
	}
	return b.String()
}

// useDDL makes d the reading of st: its kind is DDL and its tables include those d names. A
// statement whose tables were read from its words (the parser could not read it) has d's tables
// only, and a routed table it names elsewhere is a mention, which refuses it.
func (r *Router) useDDL(st *Statement, d *ddlForm, toks []token) {
	st.ddl, st.Kind = d, KindDDL
	names := d.tableNames()
	switch {
	case d.temporary && d.action == ddlCreateTable && len(d.acts) > 0:
		if st.TempTableCreated == "" {
			st.TempTableCreated = d.acts[0].name
		}
	case d.action == ddlDropTable:
		// DROP TABLE t, without TEMPORARY, drops the temporary t too when there is one.
		if st.TempTablesDropped == nil {
			st.TempTablesDropped = names
		}
	}
	for _, rn := range d.renamePairs() {
		st.TablesRenamed = append(st.TablesRenamed, TableRename{From: rn[0].name, To: rn[1].name})
	}
	if !st.scanned {
		for _, n := range names {
			st.Tables = appendNew(st.Tables, n)
		}
		return
	}
	st.Tables, st.mentions = names, r.mentions(toks, names)
}

// DDLTables returns the tables (lower case) a DDL statement on tables that are not temporary
// names, nil for other statements: one named as a physical table of a time-sharded table is
// refused, which the shard metadata tells.
func (st *Statement) DDLTables() []string {
	if st.ddl == nil || st.ddl.temporary {
		return nil
	}
	return st.ddl.tableNames()
}

// FansOut reports whether st is DDL that runs on each physical table of a time-sharded table
// (or is refused for it): inside a transaction it is refused rather than committing it.
func (r *Router) FansOut(st *Statement) bool {
	if st.ddl == nil || st.ddl.temporary || r.time == nil {
		return false
	}
	for _, name := range st.ddl.tableNames() {
		if _, ok := r.time.tables[name]; ok {
			return true
		}
	}
	return false
}

// keyProblem refuses DDL on the time-sharded table tt (d, the statement's text sql) that one
// server would take but that cannot hold across its physical tables: a unique key or primary key
// without the shard key (unique in each physical table only: two tables may hold the same
// value), a foreign key (the physical tables live on several servers, and move between them), and
// dropping or renaming the shard-key column, by which obroute routes.
func keyProblem(sql string, d *ddlForm, tt *config.TimeTable) error {
	toks, _ := lex(sql)
	key := strings.ToLower(tt.ShardKey)
	at := 0
	for at < len(toks) && toks[at].pos < d.acts[0].to {
		at++
	}
	uniqueErr := func(what string) error {
		return errorf("%w: %s on the time-sharded table %s: a %s without the shard key %s is unique in each physical table only, and two physical tables may hold the same value; include %s in the key (a key holding the shard key is unique across them, their spans being disjoint), or enforce it in the application",
			ErrLogicalTable, d.verb, tt.Table, what, tt.ShardKey, tt.ShardKey)
	}
	if d.action == ddlCreateIndex {
		unique := false
		for _, t := range toks[:at] {
			unique = unique || t.is("unique")
		}
		for ; at < len(toks) && !(toks[at].kind == tokPunct && toks[at].text == "("); at++ {
		}
		if unique && !slices.Contains(keyColumns(toks, at), key) {
			return uniqueErr("unique index")
		}
		return nil
	}
	// ALTER TABLE: each specification, up to a comma at depth 0.
	for at < len(toks) {
		end, depth := at, 0
		for ; end < len(toks); end++ {
			t := toks[end]
			if t.kind == tokPunct && t.text == "(" {
				depth++
			} else if t.kind == tokPunct && t.text == ")" {
				depth--
			} else if depth == 0 && t.kind == tokPunct && (t.text == "," || t.text == ";") {
				break
			}
		}
		spec := toks[at:end]
		at = end + 1
		if len(spec) == 0 {
			continue
		}
		r := ddlReader{toks: spec}
		name := func() string {
			if r.i < len(spec) && (spec[r.i].kind == tokWord || spec[r.i].kind == tokIdent) {
				r.i++
				return strings.ToLower(nameOf(spec[r.i-1]))
			}
			return ""
		}
		// columnUnique: a column definition's own UNIQUE or PRIMARY KEY.
		columnUnique := func(col string) error {
			for _, t := range spec[r.i:] {
				if (t.is("unique") || t.is("primary")) && col != key {
					return uniqueErr("unique column " + col)
				}
			}
			return nil
		}
		if !spec[0].is("drop") {
			for _, t := range spec {
				if t.is("references") || t.is("foreign") {
					return errorf("%w: %s on the time-sharded table %s adds a foreign key: its physical tables live on several backends and move from hot to cold, and a foreign key holds only between tables of one server; enforce the reference in the application",
						ErrLogicalTable, d.verb, tt.Table)
				}
			}
		}
		keyErr := func(what string) error {
			return errorf("%w: %s on the time-sharded table %s %s its shard-key column %s, by which obroute routes every statement and the shard metadata spans its tables; keep %s (to change its type, MODIFY it), or add a new time-sharded table",
				ErrLogicalTable, d.verb, tt.Table, what, tt.ShardKey, tt.ShardKey)
		}
		switch {
		case r.word("add"):
			if r.word("constraint") && !(r.i < len(spec) && (spec[r.i].is("unique") || spec[r.i].is("primary"))) {
				name()
			}
			switch {
			case r.word("unique"):
				r.skip("index", "key")
				for r.i < len(spec) && !(spec[r.i].kind == tokPunct && spec[r.i].text == "(") {
					r.i++
				}
				if !slices.Contains(keyColumns(spec, r.i), key) {
					return uniqueErr("unique key")
				}
			case r.words("primary", "key"):
				for r.i < len(spec) && !(spec[r.i].kind == tokPunct && spec[r.i].text == "(") {
					r.i++
				}
				if !slices.Contains(keyColumns(spec, r.i), key) {
					return uniqueErr("primary key")
				}
			case r.i < len(spec) && (spec[r.i].is("index") || spec[r.i].is("key") || spec[r.i].is("fulltext") || spec[r.i].is("spatial") || spec[r.i].is("partition") || spec[r.i].is("check") || spec[r.i].is("period") || spec[r.i].is("system")):
			default:
				r.word("column")
				r.words("if", "not", "exists")
				if err := columnUnique(name()); err != nil {
					return err
				}
			}
		case r.word("modify"):
			r.word("column")
			r.words("if", "exists")
			if err := columnUnique(name()); err != nil {
				return err
			}
		case r.word("change"):
			r.word("column")
			r.words("if", "exists")
			old, next := name(), name()
			if old == key && next != key {
				return keyErr("renames")
			}
			if err := columnUnique(next); err != nil {
				return err
			}
		case r.words("rename", "column"):
			r.words("if", "exists")
			if name() == key {
				return keyErr("renames")
			}
		case r.word("drop"):
			if r.i < len(spec) && (spec[r.i].is("index") || spec[r.i].is("key") || spec[r.i].is("primary") || spec[r.i].is("foreign") || spec[r.i].is("constraint") || spec[r.i].is("partition") || spec[r.i].is("check") || spec[r.i].is("system") || spec[r.i].is("period")) {
				break
			}
			r.word("column")
			r.words("if", "exists")
			if name() == key {
				return keyErr("drops")
			}
		}
	}
	return nil
}

// keyColumns returns the columns (lower case) of the key column list opening at toks[at] ("("):
// the first name of each item (a prefix length or ASC/DESC after it); nil when none opens there.
func keyColumns(toks []token, at int) []string {
	if at >= len(toks) || !(toks[at].kind == tokPunct && toks[at].text == "(") {
		return nil
	}
	var cols []string
	depth, first := 0, true
	for _, t := range toks[at+1:] {
		switch {
		case t.kind == tokPunct && t.text == "(":
			depth++
		case t.kind == tokPunct && t.text == ")":
			if depth == 0 {
				return cols
			}
			depth--
		case depth == 0 && t.kind == tokPunct && t.text == ",":
			first = true
		case depth == 0 && first && (t.kind == tokWord || t.kind == tokIdent):
			cols, first = append(cols, strings.ToLower(nameOf(t))), false
		}
	}
	return cols
}

// tempTableDDL refuses a DROP TABLE or a rename naming a temporary table of the client session
// that obroute could not run, or follow, as one server would: it runs on the temporary table's
// server session, so every table it drops or renames must be a temporary table there (a
// permanent table of that name may live on another backend), a rename's new name must not be a
// temporary table on another backend (one server would refuse it as existing), and a temporary
// table keeps its database (obroute tracks temporary tables by name in the current database).
func (r *Router) tempTableDDL(st *Statement, sess *SessionState, in Input) error {
	d := st.ddl
	if d != nil && d.temporary && d.action == ddlCreateTable && len(d.acts) > 0 {
		if ref := d.acts[0]; ref.db != "" && ref.db != r.currentDB(in) {
			return errorf("%w: %s creates the temporary table %s in database %s, not the current one; obroute follows temporary tables by name in the current database, where a table %s would be taken for it: USE %s first, or create it there",
				ErrSessionState, d.verb, ref.written, ref.db, ref.written, ref.db)
		}
	}
	if st.Kind == KindUse && len(sess.TempTables) > 0 && st.Database != r.currentDB(in) {
		return errorf("%w: USE %s while the client session has temporary tables (%s) in the current database; obroute follows temporary tables by name in the current database, and in %s a table of one of those names would be taken for it: drop the temporary tables first, or name the tables of %s qualified",
			ErrSessionState, st.Database, strings.Join(slices.Sorted(maps.Keys(sess.TempTables)), ", "), st.Database, st.Database)
	}
	if d == nil || len(sess.TempTables) == 0 || d.action != ddlDropTable && d.action != ddlRename && !d.renames {
		return nil
	}
	involved := false
	for _, n := range d.tableNames() {
		_, ok := sess.TempTables[n]
		involved = involved || ok
	}
	if !involved {
		return nil
	}
	if d.action == ddlDropTable {
		first, firstTable := "", ""
		for _, ref := range d.acts {
			b, ok := sess.TempTables[ref.name]
			switch {
			case !ok:
				return errorf("%w: %s names a temporary table of this client session (%s) and %s, which is not one; obroute runs it on the temporary table's server session, where %s may not live: drop the temporary tables in a statement of their own",
					ErrSessionState, d.verb, tempNames(d.acts, sess), ref.written, ref.written)
			case first == "":
				first, firstTable = b, ref.name
			case b != first:
				return errorf("%w: %s names the temporary tables %s, on backend %s, and %s, on backend %s; drop them in one statement per backend",
					ErrSessionState, d.verb, firstTable, first, ref.name, b)
			}
		}
		return nil
	}
	db := r.currentDB(in)
	temp := make(map[string]string, len(sess.TempTables))
	for k, v := range sess.TempTables {
		temp[k] = v
	}
	first := ""
	for _, rn := range d.renamePairs() {
		from, to := rn[0], rn[1]
		b, ok := temp[from.name]
		if !ok {
			return errorf("%w: %s renames a temporary table of this client session and %s, which is not one; obroute runs it on the temporary table's server session, where %s may not live: rename the temporary tables in a statement of their own",
				ErrSessionState, d.verb, from.written, from.written)
		}
		if first == "" {
			first = b
		} else if b != first {
			return errorf("%w: %s renames temporary tables on backends %s and %s; rename them in one statement per backend", ErrSessionState, d.verb, first, b)
		}
		if other, ok := temp[to.name]; ok && other != b {
			return errorf("%w: %s renames the temporary table %s, on backend %s, to %s, a temporary table on backend %s; drop or rename %s first",
				ErrSessionState, d.verb, from.written, b, to.written, other, to.written)
		}
		fromDB, toDB := from.db, to.db
		if fromDB == "" {
			fromDB = db
		}
		if toDB == "" {
			toDB = db
		}
		if fromDB != toDB {
			return errorf("%w: %s moves the temporary table %s to database %s; obroute follows temporary tables by name in one database: create the temporary table in that database instead",
				ErrSessionState, d.verb, from.written, toDB)
		}
		delete(temp, from.name)
		temp[to.name] = b
	}
	return nil
}

// tempNames lists those of refs that are temporary tables of the session, for messages.
func tempNames(refs []ddlRef, sess *SessionState) string {
	var names []string
	for _, ref := range refs {
		if _, ok := sess.TempTables[ref.name]; ok {
			names = appendNew(names, ref.written)
		}
	}
	return strings.Join(names, ", ")
}
