package routing

import (
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/shadow"
)

// A statement on a shadow table whose algorithms read column values is decided by the values
// its rows have, as the server stores and compares them, which takes the column's type: the
// router keeps the definitions of such tables, read from information_schema by the connector
// (SetTableDefinition), and asks for one it lacks by refusing the route with *ColumnsNeeded.
// The values are read first by the definition of the shadow side (the shadow backend the
// statement would go to): rows that are shadow rows there make the statement shadow traffic,
// with no read of production. Otherwise they are read again by the production backend's
// definition, which must find them production rows too. A statement whose rows are partly
// shadow rows (ErrMixedShadow), or whose values cannot be read exactly (ErrUnreadable), is
// refused: it is neither sent to production nor to shadow.

// ColumnsNeeded is the error of a route that needs the definition of a table on a backend the
// router has not been given (or whose copy is older than the metadata refresh interval). The
// connector reads it (SetTableDefinition) and routes the statement again.
type ColumnsNeeded struct {
	Backend string
	Schema  string // "" for the backend's database (its DSN's)
	Table   string // lower case
	// Views: what is needed is not a table's definition but the views of the backend's
	// database (SetViews), to tell whether the statement names one.
	Views bool
}

// Error implements error.
func (e *ColumnsNeeded) Error() string {
	if e.Views {
		return fmt.Sprintf("obroute: the views of backend %s are needed to tell whether the statement reaches a shadow table through one", e.Backend)
	}
	return fmt.Sprintf("obroute: the definition of table %s on backend %s is needed to read its shadow columns", e.Table, e.Backend)
}

// defKey identifies a definition: a table of a schema on a backend.
type defKey struct{ backend, schema, table string }

type defEntry struct {
	def TableColumns
	at  time.Time
}

// tableDefs are the definitions of shadow tables the connector read.
type tableDefs struct {
	mu sync.RWMutex
	m  map[defKey]defEntry
}

// SetTableDefinition records the definition of table (any case) in schema ("" for the
// backend's own database) on backend, as read from information_schema.COLUMNS; a definition
// without columns says the table does not exist there.
func (r *Router) SetTableDefinition(backend, schema, table string, def TableColumns) {
	r.defs.mu.Lock()
	defer r.defs.mu.Unlock()
	if r.defs.m == nil {
		r.defs.m = map[defKey]defEntry{}
	}
	r.defs.m[defKey{backend, strings.ToLower(schema), strings.ToLower(table)}] = defEntry{def: def, at: r.Now()}
}

// ForgetTableDefinitions drops what the router knows of tables (lower case) on backend, in
// every schema: a DDL statement that ran there may have changed them. With tables nil it drops
// every table's definition on backend (a statement that may run DDL on tables it does not name).
func (r *Router) ForgetTableDefinitions(backend string, tables []string) {
	r.defs.mu.Lock()
	defer r.defs.mu.Unlock()
	for k := range r.defs.m {
		if k.backend == backend && tables == nil {
			delete(r.defs.m, k)
		} else if k.backend == backend {
			for _, t := range tables {
				if k.table == t {
					delete(r.defs.m, k)
				}
			}
		}
	}
}

// definition returns the definition of a table; false when it is unknown or too old.
func (r *Router) definition(k defKey) (*TableColumns, bool) {
	r.defs.mu.RLock()
	e, ok := r.defs.m[k]
	r.defs.mu.RUnlock()
	if !ok {
		return nil, false
	}
	if ttl := time.Duration(r.cfg.Settings.Metadata.Refresh); ttl > 0 && r.Now().Sub(e.at) > ttl {
		return nil, false
	}
	return &e.def, true
}

// A view may reach a shadow table whose rule reads column values (INSERT INTO v_order … with
// the shadow value, UPDATE v_order … WHERE user_id = 0): obroute does not read which tables a
// view reaches, so a statement naming a view is refused when it is decided by column values.
// The views are those of the shadow backends' databases, read by the connector
// (SetShadowViews) on the shadow side, never on production.

// A view of production's database alone (v_prod over t_order, which the shadow backends do not
// have) reaches the shadow table as well: a DML statement the rule did not find shadow traffic
// is refused when it names a view of the production backends it would run on. Those views are
// read (SetViews, asked for by *ColumnsNeeded with Views) only for such a statement, which
// reaches production anyway: shadow traffic reads nothing of production.

// shadowViews are the views of the shadow backends' databases, and of production backends'.
type shadowViews struct {
	mu     sync.RWMutex
	names  map[string]bool   // lower case; nil until read
	leaves map[string]string // of names: those that reach another database, and why
	at     time.Time
	of     map[string]viewList // by production backend
}

// viewList is the views of one backend's database, when they were read.
type viewList struct {
	names map[string]bool // lower case
	at    time.Time
}

// SetViews records the views (any case) of the database of backend, a production backend.
func (r *Router) SetViews(backend string, names []string) {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[strings.ToLower(n)] = true
	}
	r.views.mu.Lock()
	defer r.views.mu.Unlock()
	if r.views.of == nil {
		r.views.of = map[string]viewList{}
	}
	r.views.of[backend] = viewList{names: m, at: r.Now()}
}

// productionView refuses a statement decided production traffic by the rule that names a view
// of a production backend it runs on, while the rule reads column values: the view may reach a
// shadow table. It asks for the views of a backend it has not read (or not within the metadata
// refresh interval), once it was given the shadow backends' views: a router whose connector
// does not read views (or is not yet reading them) asks for none. Statements that read or write
// no rows are left alone.
func (r *Router) productionView(p *Plan, st *Statement) error {
	if r.shadowColumnTables == nil || len(st.Tables) == 0 {
		return nil
	}
	ttl := time.Duration(r.cfg.Settings.Metadata.Refresh)
	r.views.mu.RLock()
	defer r.views.mu.RUnlock()
	if r.views.names == nil {
		return nil
	}
	for _, t := range p.Targets {
		if r.shadowOf[t.Backend] {
			continue
		}
		l, ok := r.views.of[t.Backend]
		if !ok || ttl > 0 && r.Now().Sub(l.at) > ttl {
			if !r.readsRows(st) {
				return nil
			}
			return &ColumnsNeeded{Backend: t.Backend, Views: true}
		}
		for _, n := range st.Tables {
			if l.names[n] && r.readsRows(st) {
				return errorf("%w: the statement names the view %s of backend %s, which may reach a shadow table whose rule reads column values, and obroute does not read which tables a view reaches; write the statement on the view's tables, or hint it as shadow or production traffic", ErrUnreadable, n, t.Backend)
			}
		}
	}
	return nil
}

// readsRows reports whether st reads or writes rows of the tables it names: a DML statement,
// or one of another kind whose words read or write rows (see shadowRowsOutsideDML).
func (r *Router) readsRows(st *Statement) bool {
	if operationOf(st.Kind) != "" {
		return true
	}
	switch st.Kind {
	case KindPrepare, KindExecute, KindDeallocate, KindShow:
		return false
	}
	words := rowWords
	if st.Kind == KindDDL {
		words = words[:1] // CREATE … SELECT; ALTER … ON UPDATE CURRENT_TIMESTAMP reads no row
	}
	toks, _ := lex(st.SQL)
	for _, tk := range toks {
		for _, w := range words {
			if tk.is(w) {
				return true
			}
		}
	}
	return false
}

// SetShadowViews records the views (any case) of the shadow backends' databases, without their
// definitions: shadow traffic naming one is refused (see SetShadowViewDefinitions).
func (r *Router) SetShadowViews(names []string) {
	views := make([]View, len(names))
	for i, n := range names {
		views[i] = View{Name: n}
	}
	r.SetShadowViewDefinitions(views)
}

// View is a view of a shadow backend's database, as information_schema.VIEWS describes it.
type View struct {
	Name       string // TABLE_NAME
	Schema     string // TABLE_SCHEMA
	Definition string // VIEW_DEFINITION; "" when the user may not read it
}

// A view of a shadow backend's database may read or write another database of its server (a
// production database on the same server: CREATE VIEW v_order AS SELECT * FROM prod.t_order):
// shadow traffic naming such a view, or a view over one, or one whose definition obroute cannot
// read, is refused. The definitions are read on the shadow side with the names.

// SetShadowViewDefinitions records the views of the shadow backends' databases, with their
// definitions.
func (r *Router) SetShadowViewDefinitions(views []View) {
	m := make(map[string]bool, len(views))
	for _, v := range views {
		m[strings.ToLower(v.Name)] = true
	}
	leaves := viewsLeaving(views)
	r.views.mu.Lock()
	r.views.names, r.views.leaves, r.views.at = m, leaves, r.Now()
	r.views.mu.Unlock()
}

// viewsLeaving returns the views whose definition reaches a database other than the view's own
// (a table, a column or a function qualified by it), directly or through another of the views,
// or cannot be read: why each does, by lower-case name.
func viewsLeaving(views []View) map[string]string {
	leaves := map[string]string{}
	uses := map[string][]string{} // the names (lower case) of the view's own database it reads
	for _, v := range views {
		name := strings.ToLower(v.Name)
		if v.Definition == "" {
			leaves[name] = "its definition is not readable (SHOW VIEW privilege)"
			continue
		}
		p, err := parse(v.Definition, nil)
		if err != nil {
			leaves[name] = "its definition is not one obroute reads"
			continue
		}
		other := ""
		qualified := func(db sqlparser.TableIdent) {
			if q := db.String(); q != "" && !strings.EqualFold(q, v.Schema) && other == "" {
				other = q
			}
		}
		_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
			switch x := n.(type) {
			case sqlparser.TableName:
				qualified(x.DbQualifier)
				if x.DbQualifier.IsEmpty() || strings.EqualFold(x.DbQualifier.String(), v.Schema) {
					uses[name] = append(uses[name], strings.ToLower(x.Name.String()))
				}
			case *sqlparser.FuncExpr:
				qualified(x.Qualifier)
			}
			return true, nil
		}, p.ast)
		if other != "" {
			leaves[name] = "its definition reads database " + other
		}
	}
	for changed := true; changed; {
		changed = false
		for name, used := range uses {
			if _, done := leaves[name]; done {
				continue
			}
			for _, u := range used {
				if _, ok := leaves[u]; ok && u != name {
					leaves[name] = "it reads the view " + u + ", which " + strings.TrimPrefix(leaves[u], "it ")
					changed = true
					break
				}
			}
		}
	}
	return leaves
}

// shadowViewLeaving refuses shadow traffic naming a view of the shadow backends that reaches
// another database (see viewsLeaving).
func (r *Router) shadowViewLeaving(st *Statement) error {
	r.views.mu.RLock()
	defer r.views.mu.RUnlock()
	for _, t := range st.Tables {
		if why, ok := r.views.leaves[t]; ok {
			return errorf("%w: shadow traffic names the view %s of the shadow backends, and %s: it may read or write another database (production's, on the same server); write the statement on the shadow database's own tables", ErrUnreadable, t, why)
		}
	}
	return nil
}

// productionDatabases returns the databases the production backends' DSNs name and no shadow
// backend's DSN names, lower case; nil when there are none.
func productionDatabases(backends []config.Backend, shadowOf map[string]bool) map[string]bool {
	prod, own := map[string]bool{}, map[string]bool{}
	for _, b := range backends {
		if b.MySQL == nil || b.MySQL.DBName == "" {
			continue
		}
		if db := strings.ToLower(b.MySQL.DBName); shadowOf[b.Name] {
			own[db] = true
		} else {
			prod[db] = true
		}
	}
	for db := range own {
		delete(prod, db)
	}
	if len(prod) == 0 {
		return nil
	}
	return prod
}

// shadowNamesProduction refuses shadow traffic that names a production backend's database —
// a table qualified by it, or USE of it — which a shadow backend may reach when it shares a
// server with production (the name then means production's tables). A word before a dot that
// is such a database's name is taken for it, even when it is a table's alias: refused alike.
func (r *Router) shadowNamesProduction(st *Statement) error {
	if r.productionDBs == nil {
		return nil
	}
	db := ""
	if st.Kind == KindUse {
		if r.productionDBs[strings.ToLower(st.Database)] {
			db = st.Database
		}
	} else {
		toks := textTokens(st.SQL)
		for i := 0; i+2 < len(toks) && db == ""; i++ {
			if toks[i+1].kind == tokPunct && toks[i+1].text == "." && toks[i+2].kind != tokPunct {
				if name := identText(toks[i]); r.productionDBs[name] {
					db = name
				}
			}
		}
	}
	if db == "" {
		return nil
	}
	return errorf("%w: shadow traffic names %s, the database of a production backend: on a shadow backend sharing production's server it would read or write production's tables; name the shadow database's tables without a database (or by the shadow database's own name)", ErrUnreadable, db)
}

// ShadowViewsNeeded reports whether the router wants the shadow backends' views read before it
// routes a statement: the shadow rule has a table whose algorithm reads column values (any
// statement may be shadow traffic by its values), or the statement is shadow traffic by its
// hints (shadowTraffic), and the views were not read within the metadata refresh interval.
// Production traffic under a rule of hints only never waits for the shadow backends.
func (r *Router) ShadowViewsNeeded(shadowTraffic bool) bool {
	if r.cfg.Shadow == nil || r.shadowColumnTables == nil && !shadowTraffic {
		return false
	}
	r.views.mu.RLock()
	defer r.views.mu.RUnlock()
	ttl := time.Duration(r.cfg.Settings.Metadata.Refresh)
	return r.views.names == nil || ttl > 0 && r.Now().Sub(r.views.at) > ttl
}

// namedView returns a view among st's tables, "" when none (or the views are not known).
func (r *Router) namedView(st *Statement) string {
	r.views.mu.RLock()
	defer r.views.mu.RUnlock()
	for _, t := range st.Tables {
		if r.views.names[t] {
			return t
		}
	}
	return ""
}

// readsShadowColumns reports whether st names a shadow table whose algorithm reads column values.
func (r *Router) readsShadowColumns(st *Statement) (string, bool) {
	for _, t := range st.Tables {
		if r.shadowColumnTables[t] {
			return t, true
		}
	}
	return "", false
}

// shadowRowsOutsideDML returns the shadow table with column algorithms that a statement of a
// kind other than SELECT, INSERT, UPDATE and DELETE names while its words read or write rows
// (SET STATEMENT … FOR INSERT, EXPLAIN SELECT, DO (SELECT …), LOAD XML …), or "". An SQL-level
// prepared statement is left out: what it prepares is read as a statement of its own.
func (r *Router) shadowRowsOutsideDML(st *Statement) string {
	if r.shadowColumnTables == nil {
		return ""
	}
	for _, t := range st.Tables {
		if r.shadowColumnTables[t] {
			if r.readsRows(st) {
				return t
			}
			return ""
		}
	}
	return ""
}

// rowWords are the words with which a statement reads or writes a table's rows.
var rowWords = []string{"SELECT", "INSERT", "REPLACE", "UPDATE", "DELETE", "LOAD", "DO", "HANDLER"}

func operationOf(k Kind) shadow.Operation {
	switch k {
	case KindSelect:
		return shadow.OpSelect
	case KindInsert:
		return shadow.OpInsert
	case KindUpdate:
		return shadow.OpUpdate
	case KindDelete:
		return shadow.OpDelete
	}
	return ""
}

// decideShadow evaluates the shadow rule for the statement routed to p's (production)
// targets. A statement following its shadow transaction (txShadow) is shadow traffic unless its
// column values say its rows are production rows (then it is refused). An unhinted statement
// the rule leaves to production is refused when it names a view there (productionView).
func (r *Router) decideShadow(p *Plan, st *Statement, hints hint.Set, args []driver.NamedValue, sess *SessionState, txShadow bool) (shadow.Decision, error) {
	d, err := r.decideRule(p, st, hints, args, sess, txShadow)
	switch {
	case err != nil:
	case d.Shadow:
		if err = r.shadowViewLeaving(st); err == nil {
			err = r.shadowNamesProduction(st)
		}
		if err == nil {
			err = r.otherDatabaseRefusal(st, sess)
		}
	default:
		if err = r.productionNamesShadow(st); err == nil && hints.Shadow == hint.ShadowUnset && !txShadow {
			err = r.productionView(p, st)
		}
	}
	return d, err
}

func (r *Router) decideRule(p *Plan, st *Statement, hints hint.Set, args []driver.NamedValue, sess *SessionState, txShadow bool) (shadow.Decision, error) {
	if err := r.storedProgramRefusal(st, hints); err != nil {
		return shadow.Decision{}, err
	}
	if err := r.foreignKeyRefusal(st); err != nil {
		return shadow.Decision{}, err
	}
	hintOn := hints.Shadow == hint.ShadowOn
	c := shadow.Condition{Tables: st.Tables, Operation: operationOf(st.Kind), Hint: hintOn}
	if c.Operation == "" && hints.Shadow != hint.ShadowOff {
		if t := r.shadowRowsOutsideDML(st); t != "" {
			return shadow.Decision{}, errorf("%w: the statement reads or writes rows of the shadow table %s, whose rule reads column values, inside a statement of another kind (SET STATEMENT … FOR, EXPLAIN, ANALYZE, DO, SET … = (SELECT …), HANDLER … READ, CREATE … SELECT, LOAD …), from which obroute does not read the values; write it as a plain SELECT, INSERT, UPDATE or DELETE, or hint it as production traffic (/*+ OBROUTE(shadow=false) */)", ErrUnreadable, t)
		}
	}
	if hints.Shadow == hint.ShadowUnset && !txShadow && r.shadowColumnTables != nil {
		if v := r.namedView(st); v != "" && r.readsRows(st) {
			return shadow.Decision{}, errorf("%w: the statement names the view %s, which may reach a shadow table whose rule reads column values, and obroute does not read which tables a view reaches; write the statement on the view's tables, or hint it as shadow or production traffic", ErrUnreadable, v)
		}
	}
	if st.shadowReads == nil || c.Operation == "" || len(p.Targets) != 1 || st.time != nil {
		if st.shadowReads != nil && c.Operation != "" {
			c.Read = splitRead // a value table joined with a time-sharded one
		}
		d := r.cfg.Shadow.Decide(c)
		if d.Refused != "" {
			return d, errorf("%w: %s", ErrUnreadable, d.Refused)
		}
		if !d.Shadow && txShadow {
			d = shadow.Decision{Shadow: true, Mappings: r.allMappings(), Reason: "the transaction is shadow traffic"}
		}
		return d, nil
	}
	prod := p.Targets[0].Backend
	if hints.Shadow == hint.ShadowOff {
		// Declared production: values that read as shadow rows contradict it; values obroute
		// cannot read are the caller's to declare.
		rd := &columnReader{r: r, st: st, backend: prod, db: sess.Databases[0], args: args, sess: sess, declared: true}
		c.Read = rd.read
		d := r.cfg.Shadow.Decide(c)
		if rd.need != nil {
			return d, rd.need
		}
		if d.Shadow {
			return d, errorf("%w: the statement is hinted as production traffic but its rows are shadow rows (%s); remove the hint or the shadow values", hint.ErrHintConflict, d.Reason)
		}
		return shadow.Decision{Reason: "production: hinted as production traffic"}, rd.checkAssignments(false)
	}
	shadowSide, mapped := r.allMappings()[prod], true
	if r.shadowOf[prod] {
		shadowSide = prod // a backend hint named the shadow backend itself
	} else if shadowSide == "" {
		mapped = false
	}
	if mapped {
		rd := &columnReader{r: r, st: st, backend: shadowSide, db: sess.Databases[1], args: args, sess: sess, side: 1}
		c.Read, c.Hint = rd.read, hintOn || txShadow
		d := r.cfg.Shadow.Decide(c)
		if err := rd.refusal(d); err != nil {
			return d, err
		}
		if d.Shadow {
			return d, rd.checkAssignments(true)
		}
		if txShadow {
			return d, errorf("%w: the statement runs in a shadow transaction but its rows are production rows (%s); run it outside the transaction", ErrShadowConflict, d.Reason)
		}
		if hintOn {
			return d, nil // hinted as shadow and not accepted: refused by the caller, production unread
		}
	}
	rd := &columnReader{r: r, st: st, backend: prod, db: sess.Databases[0], args: args, sess: sess}
	c.Read, c.Hint = rd.read, hintOn
	d := r.cfg.Shadow.Decide(c)
	if err := rd.refusal(d); err != nil {
		return d, err
	}
	if d.Shadow && mapped {
		return d, errorf("%w: by the definition of %s on backend %s the statement's rows are shadow rows, by its definition on the shadow backend %s they are not; give both the same definition",
			ErrUnreadable, st.shadowReads[0].table, prod, shadowSide)
	}
	if d.Shadow {
		return d, nil // no shadow backend: refused by the caller
	}
	return d, rd.checkAssignments(false)
}

// columnReader reads a statement's column values by the definitions of one backend.
type columnReader struct {
	r       *Router
	st      *Statement
	backend string
	db      string // the current database of the side's traffic, "" for the DSN's
	args    []driver.NamedValue
	sess    *SessionState
	// declared: the statement is hinted as production traffic; an assignment obroute cannot
	// read is then the caller's to declare.
	declared bool
	side     int // 0 reading for production, 1 for shadow: the index of the side's sql_mode
	// modalBits is what of the text a sql_mode reads in another way, once modalRead.
	modalBits modal
	modalRead bool
	need      *ColumnsNeeded
	last      shadow.Verdict // of the last read: the one that refused, when Decide refuses
}

// refusal turns what the reading found into the route's error: a definition to read first, or
// a refusal of the rule.
func (rd *columnReader) refusal(d shadow.Decision) error {
	if rd.need != nil {
		return rd.need
	}
	if d.Refused == "" {
		return nil
	}
	if rd.last == shadow.VerdictMixed {
		return errorf("%w: %s; write the shadow rows and the production rows in separate statements", ErrMixedShadow, d.Refused)
	}
	return errorf("%w: %s; write the value as a literal or a ? argument of the column's type, or hint the statement as shadow or production traffic", ErrUnreadable, d.Refused)
}

// tableRead returns the statement's reading of table.
func (rd *columnReader) tableRead(table string) *tableRead {
	for _, tr := range rd.st.shadowReads {
		if tr.table == table {
			return tr
		}
	}
	return nil
}

// modeProblem says why tr's text cannot be read in the sql_mode of a server session of the
// reader's side: the mode the client session set for the side, else the mode the backend's
// sessions start with (read with def).
func (rd *columnReader) modeProblem(tr *tableRead, def *TableColumns) string {
	m := SessionSQLMode{Known: true, Value: def.SQLMode}
	if s := rd.sess.SQLModes[rd.side]; s.Set {
		m = s
	} else if s := rd.sess.SQLModes[0]; rd.side == 1 && s.Set {
		m = s // the shadow side follows production's SET unless it set its own
	}
	return modeProblem(rd.modal(), m.Value, m.Known)
}

// modal returns what of the statement's text a sql_mode reads in another way, read from the
// text itself (the analysis may be the one of its normalized text, whose literals are ?).
func (rd *columnReader) modal() modal {
	if !rd.modalRead {
		rd.modalBits, rd.modalRead = modalTokens(textTokens(rd.st.SQL)), true
	}
	return rd.modalBits
}

// column returns the definition and type of column of tr's table on the reader's backend; why
// says why the column's values cannot be read; need is set when the definition is missing.
func (rd *columnReader) column(tr *tableRead, column string) (def *TableColumns, col *TableColumn, idx int, t colType, why string) {
	if _, temp := rd.sess.TempTables[tr.table]; temp {
		return nil, nil, -1, t, "the statement names the session's temporary table " + tr.table + ", whose definition obroute does not read"
	}
	schema := tr.schema
	if schema == "" {
		schema = rd.db
	}
	def, ok := rd.r.definition(defKey{rd.backend, strings.ToLower(schema), tr.table})
	if !ok {
		if rd.need == nil {
			rd.need = &ColumnsNeeded{Backend: rd.backend, Schema: schema, Table: tr.table}
		}
		return nil, nil, -1, t, "the table's definition is not known yet"
	}
	if len(def.Columns) == 0 {
		where := "the database of its DSN"
		if schema != "" {
			where = "database " + schema
		}
		return nil, nil, -1, t, "backend " + rd.backend + " has no table " + tr.table + " in " + where
	}
	col, idx = def.column(column)
	if col == nil {
		return nil, nil, -1, t, "table " + tr.table + " on backend " + rd.backend + " has no column " + column
	}
	t = typeOf(col)
	return def, col, idx, t, ""
}

// read implements shadow.Condition.Read for one side.
func (rd *columnReader) read(table, column string, set shadow.ValueSet) (shadow.Verdict, string) {
	v, why := rd.verdict(table, column, set)
	rd.last = v
	return v, why
}

func (rd *columnReader) verdict(table, column string, set shadow.ValueSet) (shadow.Verdict, string) {
	tr := rd.tableRead(table)
	if tr == nil {
		return shadow.VerdictNone, ""
	}
	if tr.why != "" {
		return shadow.VerdictUnread, tr.why
	}
	def, col, idx, t, why := (*TableColumns)(nil), (*TableColumn)(nil), -1, colType{}, ""
	if tr.kind != KindInsert && !tr.mentions[column] {
		// A WHERE that does not name the column: production, as in ShardingSphere, unless the
		// server computes the column from others (a generated column: the WHERE may reach shadow
		// rows by them) or the session's sql_mode makes the WHERE name it ("user_id" under
		// ANSI_QUOTES).
		if def, col, idx, t, why = rd.column(tr, column); why == "" && strings.Contains(strings.ToLower(col.Extra), "generated") {
			why = "the shadow column " + column + " is a generated column, whose value the server computes from other columns; make it a plain column, or hint the statement as shadow or production traffic"
		}
		if why == "" && rd.modal() != 0 {
			why = rd.modeProblem(tr, def)
		}
		if why != "" {
			return shadow.VerdictUnread, why
		}
		return shadow.VerdictNone, ""
	}
	def, col, idx, t, why = rd.column(tr, column)
	if why == "" {
		why = rd.modeProblem(tr, def)
	}
	if why != "" {
		return shadow.VerdictUnread, why
	}
	sv, why := valuesIn(&t, set)
	if why != "" {
		return shadow.VerdictUnread, why
	}
	if tr.kind == KindInsert {
		v, why := rd.insertVerdict(tr, def, col, idx, &t, &sv)
		if tr.source == nil || v != shadow.VerdictShadow && v != shadow.VerdictProduction {
			return v, why
		}
		if !tr.source.mentions[column] {
			return v, why // the SELECT reads every row of the side the rows are written on
		}
		switch from, fromWhy := rd.whereVerdict(tr.source.where[column], column, &t, &sv); {
		case from == shadow.VerdictUnread:
			return from, "the SELECT of INSERT … SELECT from " + tr.table + ": " + fromWhy
		case from == v:
			return v, ""
		case from == shadow.VerdictMixed:
			return from, "the SELECT of INSERT … SELECT from " + tr.table + ": " + fromWhy
		case v == shadow.VerdictShadow:
			return shadow.VerdictMixed, "INSERT … SELECT writes rows with a shadow " + column + " made from production rows of " + tr.table + " (its SELECT's WHERE)"
		default:
			return shadow.VerdictMixed, "INSERT … SELECT writes rows with a production " + column + " made from shadow rows of " + tr.table + " (its SELECT's WHERE)"
		}
	}
	return rd.whereVerdict(tr.where[column], column, &t, &sv)
}

// insertVerdict classifies the rows of an INSERT or REPLACE by the value each gives column
// col (at idx in the table), as the column stores it.
func (rd *columnReader) insertVerdict(tr *tableRead, def *TableColumns, col *TableColumn, idx int, t *colType, sv *shadowValues) (shadow.Verdict, string) {
	pos := idx
	if tr.columns != nil {
		pos = -1
		for i, c := range tr.columns {
			if identEqual(c, col.Name) {
				pos = i
			}
		}
	}
	autoInc := strings.Contains(strings.ToLower(col.Extra), "auto_increment")
	shadowRows := 0
	for i, row := range tr.rows {
		if tr.columns == nil && len(row) != len(def.Columns) {
			return shadow.VerdictUnread, fmt.Sprintf("row %d gives %d values and table %s on backend %s has %d columns", i+1, len(row), tr.table, rd.backend, len(def.Columns))
		}
		var val svalue
		if pos < 0 {
			var why string
			var ok bool
			if val, why, ok = defaultValue(col); !ok {
				return shadow.VerdictUnread, "the statement does not give " + t.name + " a value and its default is " + why
			}
		} else if pos >= len(row) {
			return shadow.VerdictUnread, fmt.Sprintf("row %d has no value for %s", i+1, t.name)
		} else {
			var why string
			var ok bool
			if val, why, ok = rd.eval(row[pos]); !ok {
				return shadow.VerdictUnread, fmt.Sprintf("row %d gives %s %s", i+1, t.name, why)
			}
		}
		text, null, why, ok := t.store(val)
		if !ok {
			return shadow.VerdictUnread, fmt.Sprintf("row %d gives %s %s", i+1, t.name, why)
		}
		if autoInc && (null || text == "0") {
			return shadow.VerdictUnread, fmt.Sprintf("row %d leaves the AUTO_INCREMENT column %s to the server", i+1, t.name)
		}
		if !null && sv.has(text) {
			shadowRows++
		}
	}
	switch shadowRows {
	case len(tr.rows):
		return shadow.VerdictShadow, ""
	case 0:
		return shadow.VerdictProduction, ""
	}
	return shadow.VerdictMixed, fmt.Sprintf("%d of its %d rows have a shadow %s", shadowRows, len(tr.rows), t.name)
}

// defaultValue reads the default of a column as information_schema writes it.
func defaultValue(col *TableColumn) (svalue, string, bool) {
	if col.Default == nil {
		return svalue{}, "none (the server's answer depends on sql_mode)", false
	}
	d := *col.Default
	switch {
	case strings.EqualFold(d, "NULL"):
		return svalue{kind: svNull}, "", true
	case len(d) >= 2 && d[0] == '\'' && d[len(d)-1] == '\'':
		inner := d[1 : len(d)-1]
		if strings.IndexByte(inner, '\\') >= 0 {
			return svalue{}, "the string " + d, false
		}
		v, why, ok := stringValue(strings.ReplaceAll(inner, "''", "'"))
		return v, why, ok
	}
	if v, _, ok := numberValue(d); ok {
		return v, "", true
	}
	return svalue{}, "the expression " + d, false
}

// eval evaluates a compiled value with the statement's arguments.
func (rd *columnReader) eval(v *sval) (svalue, string, bool) {
	switch v.op {
	case svLit:
		return v.lit, "", true
	case svArg:
		if v.arg >= len(rd.args) {
			return svalue{}, "an argument that is not given", false
		}
		x, why, ok := boundValue(rd.args[v.arg].Value)
		if !ok {
			why = why + " (argument " + strconv.Itoa(argNumber(rd.args, v.arg)) + ")"
		}
		return x, why, ok
	case svNeg, svAdd, svSub, svMul:
		x, why, ok := rd.eval(v.x)
		if !ok {
			return x, why, ok
		}
		if x, why, ok = x.arith(); !ok {
			return x, why, ok
		}
		y := svalue{kind: svExact, num: exactInt(0)}
		if v.op != svNeg {
			if y, why, ok = rd.eval(v.y); !ok {
				return y, why, ok
			}
			if y, why, ok = y.arith(); !ok {
				return y, why, ok
			}
		}
		if x.kind == svNull || y.kind == svNull {
			return svalue{kind: svNull}, "", true
		}
		if x.kind == svDouble || y.kind == svDouble {
			a, b := x.toFloat(), y.toFloat()
			switch v.op {
			case svNeg:
				return svalue{kind: svDouble, f: -a}, "", true
			case svAdd:
				return svalue{kind: svDouble, f: a + b}, "", true
			case svSub:
				return svalue{kind: svDouble, f: a - b}, "", true
			}
			return svalue{kind: svDouble, f: a * b}, "", true
		}
		switch v.op {
		case svNeg:
			return svalue{kind: svExact, num: exactInt(0).add(x.num, -1)}, "", true
		case svAdd:
			return svalue{kind: svExact, num: x.num.add(y.num, 1)}, "", true
		case svSub:
			return svalue{kind: svExact, num: x.num.add(y.num, -1)}, "", true
		}
		return svalue{kind: svExact, num: x.num.mul(y.num)}, "", true
	}
	switch v.op {
	case svSelf, svInserted:
		return svalue{}, "the value of column " + v.why, false
	}
	return svalue{}, v.why, false
}

// arith returns v as an operand of arithmetic: a string becomes the double it reads as.
func (v svalue) arith() (svalue, string, bool) {
	switch v.kind {
	case svString:
		n, why, ok := v.numeric()
		if !ok {
			return n, why, ok
		}
		return svalue{kind: svDouble, f: n.num.float()}, "", true
	case svHybrid:
		return svalue{kind: svExact, num: v.num}, "", true
	}
	return v, "", true
}

func (v svalue) toFloat() float64 {
	if v.kind == svDouble {
		return v.f
	}
	return v.num.float()
}

// candidate is a value the column may hold: a stored text, or NULL.
type candidate struct {
	text string
	null bool
}

// whereEval evaluates formulas for candidates of one column.
type whereEval struct {
	rd     *columnReader
	t      *colType
	unread string // the first condition that could not be read
}

// truth returns whether a row whose column holds x may satisfy the formula.
func (w *whereEval) truth(c *scond, x candidate) tri {
	switch c.op {
	case scOther:
		return triMaybe
	case scUnread:
		w.note(c.why)
		return triMaybe
	case scAnd, scOr:
		all, any := true, false
		for _, k := range c.kids {
			v := w.truth(k, x)
			if c.op == scAnd && v == triFalse || c.op == scOr && v == triTrue {
				return v
			}
			all = all && v == triTrue
			any = any || v == triMaybe
		}
		switch {
		case c.op == scAnd && all:
			return triTrue
		case any:
			return triMaybe
		}
		return triFalse
	}
	vals := make([]compared, len(c.vals))
	for i, v := range c.vals {
		sv, why, ok := w.rd.eval(v)
		if ok {
			vals[i], why, ok = w.t.comparedAs(sv)
		}
		if !ok {
			w.note(why)
			return triMaybe
		}
	}
	if x.null {
		switch c.cmp {
		case cIsNull:
			return triTrue
		case cNullEq:
			return triOf(vals[0].null)
		case cNotNullEq:
			return triOf(!vals[0].null)
		}
		return triFalse
	}
	eq := func(v compared) (tri, bool) { // x = v
		if v.null {
			return triFalse, true
		}
		n, ok := w.t.cmp(x.text, v)
		if !ok && !v.isStr {
			return triMaybe, false
		}
		return triOf(n == 0 && ok), true
	}
	order := func(v compared, test func(int) bool) tri {
		if v.null {
			return triFalse
		}
		n, ok := w.t.cmp(x.text, v)
		if !ok {
			w.note("an order comparison of the string column " + w.t.name)
			return triMaybe
		}
		return triOf(test(n))
	}
	switch c.cmp {
	case cIsNull:
		return triFalse
	case cNotNull:
		return triTrue
	case cEq, cNullEq:
		v, _ := eq(vals[0])
		return v
	case cNe, cNotNullEq:
		if vals[0].null {
			return triOf(c.cmp == cNotNullEq)
		}
		v, _ := eq(vals[0])
		return not(v)
	case cLt:
		return order(vals[0], func(n int) bool { return n < 0 })
	case cLe:
		return order(vals[0], func(n int) bool { return n <= 0 })
	case cGt:
		return order(vals[0], func(n int) bool { return n > 0 })
	case cGe:
		return order(vals[0], func(n int) bool { return n >= 0 })
	case cBetween, cNotBetween:
		lo := order(vals[0], func(n int) bool { return n >= 0 })
		hi := order(vals[1], func(n int) bool { return n <= 0 })
		in := and(lo, hi)
		if c.cmp == cNotBetween {
			if vals[0].null || vals[1].null {
				return triFalse
			}
			return not(in)
		}
		return in
	case cIn, cNotIn:
		result, null := triFalse, false
		for _, v := range vals {
			null = null || v.null
			e, _ := eq(v)
			if e == triTrue {
				result = triTrue
				break
			}
			if e == triMaybe {
				result = triMaybe
			}
		}
		if c.cmp == cIn {
			return result
		}
		if result == triTrue || null {
			return triFalse
		}
		return not(result)
	}
	return triMaybe
}

func not(v tri) tri {
	switch v {
	case triTrue:
		return triFalse
	case triFalse:
		return triTrue
	}
	return triMaybe
}

func and(a, b tri) tri {
	switch {
	case a == triFalse || b == triFalse:
		return triFalse
	case a == triTrue && b == triTrue:
		return triTrue
	}
	return triMaybe
}

func (w *whereEval) note(why string) {
	if w.unread == "" {
		w.unread = why
	}
}

// finite returns the stored texts the column of the rows the formula can be true for has,
// when they are finitely many; ok false otherwise. NULL is never among them (see truth).
func (w *whereEval) finite(c *scond) (texts []string, ok bool) {
	switch c.op {
	case scAnd:
		found := false
		for _, k := range c.kids {
			if t, ok := w.finite(k); ok && (!found || len(t) < len(texts)) {
				texts, found = t, true
			}
		}
		if !found {
			return nil, false
		}
		var out []string
		for _, x := range texts {
			if w.truth(c, candidate{text: x}) != triFalse {
				out = append(out, x)
			}
		}
		return out, true
	case scOr:
		for _, k := range c.kids {
			t, ok := w.finite(k)
			if !ok {
				return nil, false
			}
			texts = append(texts, t...)
		}
		return texts, true
	case scAtom:
		switch c.cmp {
		case cIsNull:
			return nil, true
		case cEq, cNullEq, cIn:
		default:
			return nil, false
		}
		for _, v := range c.vals {
			sv, why, ok := w.rd.eval(v)
			var cv compared
			if ok {
				cv, why, ok = w.t.comparedAs(sv)
			}
			if !ok {
				w.note(why)
				return nil, false
			}
			text, none, ok := w.t.equalStored(cv)
			if !ok {
				w.note("the comparison of " + w.t.name + " with a value no single stored value equals exactly")
				return nil, false
			}
			if !none {
				texts = append(texts, text)
			}
		}
		return texts, true
	}
	return nil, false
}

// whereVerdict classifies the rows a WHERE reaches by column col's values.
func (rd *columnReader) whereVerdict(c *scond, col string, t *colType, sv *shadowValues) (shadow.Verdict, string) {
	w := &whereEval{rd: rd, t: t}
	texts, finite := w.finite(c)
	if finite && sv.set.Regex != nil && t.pad {
		finite = false // under PAD SPACE one compared value stands for texts the regex tells apart
		w.note("a comparison of the PAD SPACE column " + col + " with a regex_match algorithm")
	}
	nullRows := w.truth(c, candidate{null: true}) != triFalse
	shadowN := 0
	for _, x := range texts {
		if sv.has(x) {
			shadowN++
		}
	}
	switch {
	case finite && shadowN == 0:
		return shadow.VerdictProduction, ""
	case finite && shadowN == len(texts) && !nullRows:
		return shadow.VerdictShadow, ""
	}
	if sv.set.Regex == nil {
		none := true
		for _, x := range sv.stored {
			none = none && w.truth(c, candidate{text: x}) == triFalse
		}
		if none {
			return shadow.VerdictProduction, ""
		}
	}
	if w.unread != "" {
		return shadow.VerdictUnread, w.unread
	}
	if sv.set.Regex != nil && !finite {
		return shadow.VerdictUnread, "with a regex_match algorithm, a WHERE that names " + col + " must give its values with = or IN"
	}
	return shadow.VerdictMixed, "the WHERE can reach rows whose " + col + " is a shadow value and rows whose " + col + " is not"
}

// checkAssignments refuses an UPDATE … SET or ON DUPLICATE KEY UPDATE that would give a row's
// algorithm column a value of the other traffic: shadow traffic writing a production value, or
// production traffic a shadow value. The row's class is the column's insert algorithms' (else
// the statement's operation's).
func (rd *columnReader) checkAssignments(shadowTraffic bool) error {
	for _, tr := range rd.st.shadowReads {
		if tr.why != "" || len(tr.sets) == 0 {
			continue
		}
		algs := rd.r.cfg.Shadow.ColumnAlgorithms(tr.table)
		for _, a := range tr.sets {
			if a.column == "" || a.value.op == svSelf && a.value.why == a.column || a.value.op == svInserted && a.value.why == a.column {
				continue
			}
			set, ok := rowClass(algs, a.column, operationOf(tr.kind))
			if !ok {
				continue
			}
			def, _, _, t, why := rd.column(tr, a.column)
			if why == "" {
				why = rd.modeProblem(tr, def)
			}
			var sv shadowValues
			if why == "" {
				sv, why = valuesIn(&t, set)
			}
			var text string
			var null bool
			if why == "" {
				var v svalue
				var ok bool
				if v, why, ok = rd.eval(a.value); ok {
					text, null, why, ok = t.store(v)
				}
				if ok {
					why = ""
				} else if why == "" {
					why = "a value obroute cannot read"
				}
			}
			if rd.need != nil {
				return rd.need
			}
			if why != "" {
				if rd.declared {
					continue
				}
				return errorf("%w: the statement sets %s of the shadow table %s to %s; write the value as a literal or a ? argument, or hint the statement as shadow or production traffic", ErrUnreadable, a.column, tr.table, why)
			}
			isShadow := !null && sv.has(text)
			if isShadow != shadowTraffic {
				what := "production traffic gives it a shadow value"
				if shadowTraffic {
					what = "shadow traffic gives it a production value"
				}
				return errorf("%w: the statement sets %s of the shadow table %s to %q: %s, which would leave a row of one traffic among the other's; write it as two statements, or keep the value's traffic", ErrMixedShadow, a.column, tr.table, text, what)
			}
		}
	}
	return nil
}

// rowClass returns the shadow values that say which traffic a row of column belongs to: its
// insert algorithms' (first), else the algorithm of the statement's operation.
func rowClass(algs []shadow.ColumnAlgorithm, column string, op shadow.Operation) (shadow.ValueSet, bool) {
	for _, want := range []shadow.Operation{shadow.OpInsert, op} {
		for _, a := range algs {
			if a.Column == column && a.Operation == want {
				return a.Set, true
			}
		}
	}
	return shadow.ValueSet{}, false
}

func (r *Router) allMappings() map[string]string {
	m := make(map[string]string, len(r.cfg.Shadow.Mappings))
	for _, x := range r.cfg.Shadow.Mappings {
		m[x.Production] = x.Shadow
	}
	return m
}
