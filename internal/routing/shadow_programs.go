package routing

import (
	"sort"
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/hint"
)

// Stored programs, SQL-level prepared texts and other databases under a shadow rule.
//
// The body of a stored program (procedure, function, trigger, event) runs on the server that
// holds it, at each CALL, trigger or schedule, without obroute: its statements are never
// routed, its rows' values never read. A definition that names a shadow table whose rule
// reads column values (or a view, or runs SQL-level prepared statements, whose text obroute
// does not see) is refused in either traffic, unless hinted as production traffic; a shadow
// CALL on a shadow backend that may share production's server is refused too (the
// procedure's body may name production's database).

// storedProgram reports whether toks define a stored program: CREATE [OR REPLACE]
// [DEFINER = user] [AGGREGATE] PROCEDURE | FUNCTION (not a UDF's … SONAME) | TRIGGER | EVENT |
// PACKAGE [BODY], or ALTER [DEFINER = user] EVENT (which may replace the body).
func storedProgram(toks []token) bool {
	first := lowerWord(toks, 0)
	if first != "create" && first != "alter" {
		return false
	}
	i := 1
	if first == "create" && lowerWord(toks, 1) == "or" && lowerWord(toks, 2) == "replace" {
		i = 3
	}
	if lowerWord(toks, i) == "definer" {
		// DEFINER = user: the user is a name, a string, @host parts or CURRENT_USER[()].
		for i++; i < len(toks) && i < 12; i++ {
			if w := lowerWord(toks, i); w == "procedure" || w == "function" || w == "trigger" || w == "event" || w == "package" || w == "aggregate" {
				break
			}
		}
	}
	if first == "alter" {
		return lowerWord(toks, i) == "event"
	}
	switch lowerWord(toks, i) {
	case "aggregate":
		if lowerWord(toks, i+1) != "function" {
			return false
		}
		fallthrough
	case "function":
		for _, t := range toks {
			if t.is("soname") {
				return false // a UDF: no body
			}
		}
		return true
	case "procedure", "trigger", "event", "package":
		return true
	}
	return false
}

// storedProgramRefusal refuses the definition of a stored program (see storedProgram) that
// names a shadow table whose rule reads column values, or a view obroute knows of while such a
// rule is configured, or runs SQL-level prepared statements under any shadow rule: unless it
// is hinted as production traffic, which declares its rows production rows.
func (r *Router) storedProgramRefusal(st *Statement, hints hint.Set) error {
	if r.cfg.Shadow == nil || hints.Shadow == hint.ShadowOff {
		return nil
	}
	// Only CREATE or ALTER defines a stored program: any other text is not lexed again here, on
	// the path of every statement.
	if !containsFold(st.SQL, "create") && !containsFold(st.SQL, "alter") {
		return nil
	}
	toks := textTokens(st.SQL)
	if !storedProgram(toks) {
		return nil
	}
	why := ""
	for i, t := range toks {
		name := identText(t)
		switch {
		case name == "":
			continue
		case r.shadowColumnTables[name]:
			why = "names the shadow table " + name + ", whose rule reads column values"
		case t.kind == tokWord && (t.is("prepare") || t.is("execute")) && i > 0:
			why = "runs SQL-level prepared statements (" + strings.ToUpper(t.text) + "), whose text obroute does not read: it may name a shadow table or carry a shadow hint"
		case r.shadowColumnTables != nil && r.knownView(name):
			why = "names the view " + name + ", which may reach a shadow table whose rule reads column values"
		}
		if why != "" {
			break
		}
	}
	if why == "" {
		return nil
	}
	return errorf("%w: the definition of a stored program (procedure, function, trigger or event) %s; the server runs its body at each CALL, trigger or schedule without obroute, which then neither routes its statements nor reads their rows' values, so shadow rows could be written or read on production (or production rows on shadow); create it on the shadow backend directly, not through obroute, or hint it as production traffic (/*+ OBROUTE(shadow=false) */) to create it on production as declared", ErrUnreadable, why)
}

// knownView reports whether name (lower case) is a view obroute read on the shadow backends or
// on a production backend.
func (r *Router) knownView(name string) bool {
	r.views.mu.RLock()
	defer r.views.mu.RUnlock()
	if r.views.names[name] {
		return true
	}
	for _, l := range r.views.of {
		if l.names[name] {
			return true
		}
	}
	return false
}

// shadowDatabases returns the databases the shadow backends' DSNs name, lower case.
func shadowDatabases(backends []config.Backend, shadowOf map[string]bool) map[string]bool {
	own := map[string]bool{}
	for _, b := range backends {
		if b.MySQL != nil && b.MySQL.DBName != "" && shadowOf[b.Name] {
			own[strings.ToLower(b.MySQL.DBName)] = true
		}
	}
	return own
}

// otherDatabaseRefusal refuses shadow traffic that may leave the shadow backends' own
// databases while a production backend's DSN names a database no shadow DSN names (the
// shadow backend may share production's server): a database qualifier other than a shadow
// DSN's database or information_schema (a third database may hold a view or a procedure over
// production's tables), USE of one, a current database set by production traffic's USE that
// is not the shadow side's, and CALL (a procedure's body obroute does not see).
func (r *Router) otherDatabaseRefusal(st *Statement, sess *SessionState) error {
	if r.productionDBs == nil {
		return nil
	}
	refuse := func(what string) error {
		return errorf("%w: shadow traffic %s, while a production backend's DSN names database(s) %s that no shadow backend's does: on a shadow backend sharing production's server it may read or write production's tables; name the shadow database's tables without a database (or by the shadow database's own name), or give the shadow backends a server of their own", ErrUnreadable, what, r.productionDBList())
	}
	allowed := func(db string) bool {
		return db == "" || r.shadowDBs[db] || db == "information_schema"
	}
	if st.Kind == KindUse {
		if db := strings.ToLower(st.Database); !allowed(db) {
			return refuse("runs USE " + st.Database)
		}
		return nil
	}
	if db := strings.ToLower(sess.Databases[1]); !allowed(db) {
		return refuse("would run in database " + sess.Databases[1] + " (the current database production traffic's USE set; shadow traffic has set none); run /* shadow */ USE of the shadow database first")
	}
	toks := textTokens(st.SQL)
	if lowerWord(toks, 0) == "call" {
		return refuse("runs CALL: the procedure's body, which obroute does not see, may name another database")
	}
	if p, err := parse(st.SQL, nil); err == nil && operationOf(st.Kind) != "" && !st.scanned {
		db := ""
		_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
			switch x := n.(type) {
			case sqlparser.TableName:
				if q := strings.ToLower(x.DbQualifier.String()); !allowed(q) && db == "" {
					db = q
				}
			case *sqlparser.FuncExpr:
				if q := strings.ToLower(x.Qualifier.String()); !allowed(q) && db == "" {
					db = q
				}
			}
			return true, nil
		}, p.ast)
		if db != "" {
			return refuse("names the database " + db)
		}
		return nil
	}
	// A statement the parser does not read fully: any word before a dot may be a database.
	definition := storedProgram(toks)
	for i := 0; i+2 < len(toks); i++ {
		if toks[i+1].kind != tokPunct || toks[i+1].text != "." || toks[i+2].kind == tokPunct || i > 0 && toks[i-1].kind == tokPunct && toks[i-1].text == "." {
			continue
		}
		name := identText(toks[i])
		if name == "" || allowed(name) || definition && (name == "new" || name == "old") {
			continue
		}
		return refuse("names " + name + "." + identText(toks[i+2]) + " in a statement obroute does not parse, where " + name + " may be a database")
	}
	return nil
}

// productionNamesShadow refuses production traffic that names the database of a shadow
// backend's DSN that no production backend's DSN names (a table qualified by it, or USE of it):
// on a production backend sharing the shadow backend's server it would write production rows
// into the shadow database. A word before a dot spelled like it is taken for it, even an alias.
func (r *Router) productionNamesShadow(st *Statement) error {
	if r.productionDBs == nil {
		return nil
	}
	only := func(db string) bool { return r.shadowDBs[db] && !r.productionDB(db) }
	db := ""
	if st.Kind == KindUse {
		if only(strings.ToLower(st.Database)) {
			db = st.Database
		}
	} else {
		toks := textTokens(st.SQL)
		for i := 0; i+2 < len(toks) && db == ""; i++ {
			if toks[i+1].kind == tokPunct && toks[i+1].text == "." && toks[i+2].kind != tokPunct {
				if name := identText(toks[i]); only(name) {
					db = name
				}
			}
		}
	}
	if db == "" {
		return nil
	}
	return errorf("%w: production traffic names %s, the database of a shadow backend: on a production backend sharing the shadow backend's server it would read or write the shadow database's tables; name production's tables without a database, or hint the statement as shadow traffic", ErrUnreadable, db)
}

// productionDB reports whether a production backend's DSN names db (lower case).
func (r *Router) productionDB(db string) bool {
	for _, b := range r.cfg.Settings.Backends {
		if b.MySQL != nil && !r.shadowOf[b.Name] && strings.ToLower(b.MySQL.DBName) == db {
			return true
		}
	}
	return false
}

// identEqual reports whether two names are the same column name as MariaDB compares names:
// in any case (USER_ID is user_id, ÜSER_ID üser_id), but without the folds of ſ (U+017F) to s
// and of the Kelvin sign (U+212A) to k that strings.EqualFold makes and the server does not
// (uſer_id is an unknown column, not user_id).
func identEqual(a, b string) bool {
	if !strings.ContainsAny(a, "\u017f\u212a") && !strings.ContainsAny(b, "\u017f\u212a") {
		return strings.EqualFold(a, b)
	}
	ra, rb := []rune(a), []rune(b)
	if len(ra) != len(rb) {
		return false
	}
	for i := range ra {
		x, y := ra[i], rb[i]
		if x == y {
			continue
		}
		if x == '\u017f' || x == '\u212a' || y == '\u017f' || y == '\u212a' || !strings.EqualFold(string(x), string(y)) {
			return false
		}
	}
	return true
}

// productionDBList returns the databases of productionDBs, sorted, comma-separated.
func (r *Router) productionDBList() string {
	dbs := make([]string, 0, len(r.productionDBs))
	for db := range r.productionDBs {
		dbs = append(dbs, db)
	}
	sort.Strings(dbs)
	return strings.Join(dbs, ", ")
}
