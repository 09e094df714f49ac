package routing

import (
	"fmt"
	"strings"
)

// The logical tables (time-sharded and statically routed) exist only in the client's database,
// the one the default backend's DSN names: their configuration and the shard metadata are for
// it. In another current database (after USE staging) a name of a logical table is that
// database's own table, as on one server; a name qualified by another database is that
// database's table too. obroute never maps such a name to the logical table: it sends the
// statement as written to the default backend, or refuses it.

// ruledTable reports whether name (lower case) is a time-sharded or statically routed table,
// and which.
func (r *Router) ruledTable(name string) (string, bool) {
	rule, ok := r.routed[name]
	if !ok || rule == "shadow rule" {
		return "", false
	}
	return rule, true
}

// logicalNames returns the tables st names that are time-sharded or statically routed.
func (r *Router) logicalNames(st *Statement) []string {
	var out []string
	add := func(n string) {
		if _, ok := r.ruledTable(n); ok {
			out = appendNew(out, n)
		}
	}
	for _, n := range st.Tables {
		add(n)
	}
	if st.ddl != nil {
		for _, n := range st.ddl.tableNames() {
			add(n)
		}
	}
	if st.catalog != nil && st.catalog.kind == catalogDescribe {
		add(st.catalog.table.name)
	}
	return out
}

// otherDatabase reports whether the client session's current database (sess) is not the one
// the logical tables are in (def, the default backend's DSN's), and refuses a current database
// that is def's name in another case, which one server may or may not take for def.
func (r *Router) otherDatabase(sess *SessionState) (other bool, err error) {
	def := r.dsnDBs[r.cfg.Settings.Default]
	cur := sess.Databases[0]
	if def == "" || cur == "" || cur == def {
		return false, nil
	}
	if strings.EqualFold(cur, def) {
		return true, errorf("%w: the client session's database is %s, the database %s of the logical tables in another case; database names compare in their case or not by the server's lower_case_table_names, which obroute does not follow: USE %s", ErrLogicalTable, cur, def, def)
	}
	return true, nil
}

// elsewhereRoute routes a statement (without a backend hint) naming a time-sharded or routed
// table by its name, when that name is not the logical table: in another current database it
// is that database's table, and the statement goes to the default backend as written, as to
// one server; a name qualified by another database names that database's table, refused in the
// logical tables' database (obroute routes by the names, not by their databases), and a name
// qualified by the logical tables' database from another one is refused (USE it first). It
// reports whether it routed p.
func (r *Router) elsewhereRoute(p *Plan, st *Statement, in Input, sess *SessionState) (bool, error) {
	def := r.dsnDBs[r.cfg.Settings.Default]
	if def == "" || len(r.routed) == 0 {
		return false, nil
	}
	names := r.logicalNames(st)
	if len(names) == 0 {
		return false, nil
	}
	other, err := r.otherDatabase(sess)
	if err != nil {
		return true, err
	}
	lowerDef := strings.ToLower(def)
	var toks []token
	if strings.IndexByte(st.SQL, '.') >= 0 { // no qualified name without a dot: lex nothing
		toks = textTokens(st.SQL)
	}
	for i := 0; i+2 < len(toks); i++ {
		if toks[i+1].kind != tokPunct || toks[i+1].text != "." || (i > 0 && toks[i-1].kind == tokPunct && toks[i-1].text == ".") {
			continue
		}
		q, name := identText(toks[i]), identText(toks[i+2])
		if q == "" || systemSchemas[q] {
			continue
		}
		rule, ok := r.ruledTable(name)
		if !ok {
			continue
		}
		ddl := st.ddl != nil || st.catalog != nil && st.catalog.kind == catalogDescribe
		switch {
		case !other && q != lowerDef && ddl && rule == "time-sharded table":
			// DDL and descriptions read their tables' databases (nameCheck): that database's table.
		case !other && q != lowerDef:
			return true, errorf("%w: the statement names %s.%s, the table of database %s named as the %s %s of the logical tables (in %s), which obroute does not tell apart by their databases; send it to the backend holding %s.%s with a backend hint (/*+ OBROUTE(backend=…) */)",
				ErrLogicalTable, nameOf(toks[i]), nameOf(toks[i+2]), nameOf(toks[i]), rule, name, def, nameOf(toks[i]), nameOf(toks[i+2]))
		case other && q == lowerDef:
			return true, errorf("%w: the statement names %s.%s, the %s of the logical tables, while the client session's database is %s; obroute maps the logical tables in %s only: USE %s first",
				ErrLogicalTable, nameOf(toks[i]), nameOf(toks[i+2]), rule, sess.Databases[0], def, def)
		}
	}
	if !other {
		return false, nil
	}
	p.single(UseRoutePolicy, ClassDefault, r.cfg.Settings.Default, st.SQL, in.Args)
	p.byDefault = true
	if in.Explain {
		p.Prompts = append(p.Prompts, fmt.Sprintf("Will route to the default backend %s as written: the client session's database is %s, where %s is that database's own table, not the logical one of %s", r.cfg.Settings.Default, sess.Databases[0], names[0], def))
	}
	return true, nil
}

// createdObject reads CREATE [OR REPLACE] [options] VIEW|TRIGGER [IF NOT EXISTS] name: the kind
// ("view", "trigger"), the name (lower case) and, for a trigger, the table after ON; ok is false
// for another statement.
func createdObject(toks []token) (kind, name, on string, ok bool) {
	if len(toks) < 3 || !toks[0].is("create") {
		return "", "", "", false
	}
	i := 1
	for ; i < len(toks) && i < 16; i++ {
		t := toks[i]
		if t.is("view") || t.is("trigger") {
			break
		}
		if t.is("table") || t.is("index") || t.is("as") || t.is("procedure") || t.is("function") || t.is("event") || (t.kind == tokPunct && t.text == "(") {
			return "", "", "", false
		}
	}
	if i >= len(toks) || i >= 16 {
		return "", "", "", false
	}
	kind = strings.ToLower(toks[i].text)
	i++
	if i+2 < len(toks) && toks[i].is("if") && toks[i+1].is("not") && toks[i+2].is("exists") {
		i += 3
	}
	qualified := func() string {
		if i >= len(toks) || identText(toks[i]) == "" {
			return ""
		}
		n := identText(toks[i])
		i++
		if i+1 < len(toks) && toks[i].kind == tokPunct && toks[i].text == "." && identText(toks[i+1]) != "" {
			n = identText(toks[i+1])
			i += 2
		}
		return n
	}
	if name = qualified(); name == "" {
		return "", "", "", false
	}
	if kind == "trigger" {
		for ; i < len(toks); i++ {
			if toks[i].is("on") {
				i++
				on = qualified()
				break
			}
		}
	}
	return kind, name, on, true
}

// createdObjectOf is createdObject of sql's tokens; a text without the word CREATE is not lexed.
func createdObjectOf(sql string) (kind, name, on string, ok bool) {
	if !containsFold(sql, "create") {
		return "", "", "", false
	}
	return createdObject(textTokens(sql))
}

// objectRoute refuses DDL (without a backend hint, in the logical tables' database) that would
// make an object the logical view cannot show, or that one server refuses for a table of the
// logical view obroute does not hold where the statement runs: a view named as a time-sharded
// or routed table (one server: 1050, or 1347 for CREATE OR REPLACE), a RENAME onto one (1050),
// and a table, view or trigger made from a table routed to a backend other than the default one,
// where its own name has no route (SHOW TABLES, a SELECT of it, SHOW CREATE and DROP TRIGGER
// would not find it). CREATE TEMPORARY TABLE … LIKE a time-sharded table is routed to the
// backend of its newest physical table and made like it, as DESCRIBE describes the logical
// table. It reports whether it routed p.
func (r *Router) objectRoute(p *Plan, st *Statement, in Input) (bool, error) {
	def := r.cfg.Settings.Default
	routedAway := func() (string, string) { // a table st names routed to a backend other than the default
		for _, list := range [][]string{st.Tables, st.mentions} {
			for _, t := range list {
				if b, ok := r.cfg.Settings.Routes[t]; ok && b != def {
					return t, b
				}
			}
		}
		return "", ""
	}
	lost := func(what, name, table, b string) error {
		return errorf("%w: %s %s would be made on backend %s (by the route of %s), where %s has no route: the logical view (SHOW TABLES, information_schema, a statement naming %s) would not see it; add the route %s: %s to the configuration's routes first, or send it with the backend hint /*+ OBROUTE(backend=%s) */ and reach it with that hint",
			ErrLogicalTable, what, name, b, table, name, name, name, b, b)
	}
	if kind, name, on, ok := createdObjectOf(st.SQL); ok {
		if rule, ruled := r.ruledTable(name); ruled && kind == "view" && rule == "time-sharded table" {
			// (A view named as a routed table goes to its route's backend, which answers.)
			return true, errorf("%w: CREATE VIEW %s: %s is a %s of the logical view, so one server would refuse it (1050: the table exists; 1347 with OR REPLACE: not a view); give the view another name",
				ErrLogicalTable, name, name, rule)
		}
		if kind == "trigger" {
			if b, ok := r.cfg.Settings.Routes[on]; ok && b != def {
				return true, errorf("%w: CREATE TRIGGER %s on %s would be made on backend %s, the table's, where SHOW CREATE TRIGGER and DROP TRIGGER, which name no table, do not reach it (they go to the default backend %s); create, show and drop it with the backend hint /*+ OBROUTE(backend=%s) */",
					ErrLogicalTable, name, on, b, def, b)
			}
			return false, nil
		}
		b, routed := r.cfg.Settings.Routes[name]
		if !routed {
			if table, b := routedAway(); table != "" {
				return true, lost("CREATE VIEW", name, table, b)
			}
			return false, nil
		}
		// A view with a route is made on its route's backend (which answers 1050 where a table
		// of that name is), with the tables it reads there.
		for _, list := range [][]string{st.Tables, st.mentions} {
			for _, t := range list {
				if tb, ok := r.cfg.Settings.Routes[t]; ok && tb != b || !ok && b != def {
					return true, errorf("%w: CREATE VIEW %s, routed to %s, reads %s, which lives on %s; a view reads the tables of its own backend: route them to one backend", ErrCrossBackend, name, b, t, orDefault(tb, def))
				}
			}
		}
		p.single(UseRoutePolicy, ClassDefault, b, st.SQL, in.Args)
		p.Static = true
		if in.Explain {
			p.Prompts = append(p.Prompts, fmt.Sprintf("Will route to backend %s by the route of view %s", b, name))
		}
		return true, nil
	}
	d := st.ddl
	if d == nil {
		return false, nil
	}
	for _, rn := range d.renamePairs() {
		if rule, ok := r.ruledTable(rn[1].name); ok && rn[1].name != rn[0].name && (rn[1].db == "" || rn[1].db == r.dsnDBs[def]) {
			return true, errorf("%w: %s %s TO %s: %s is a %s of the logical view, so one server would refuse it (1050: the table exists); rename to another name",
				ErrLogicalTable, d.verb, rn[0].written, rn[1].written, rn[1].written, rule)
		}
	}
	if d.action != ddlCreateTable || len(d.acts) == 0 {
		return false, nil
	}
	if d.temporary {
		return r.temporaryLike(p, st, in)
	}
	if _, routed := r.cfg.Settings.Routes[d.acts[0].name]; !routed {
		if _, ruled := r.ruledTable(d.acts[0].name); !ruled {
			if table, b := routedAway(); table != "" {
				return true, lost("CREATE TABLE", d.acts[0].written, table, b)
			}
		}
	}
	return false, nil
}

// temporaryLike routes CREATE TEMPORARY TABLE t LIKE L, L a time-sharded table, to the backend
// of L's newest physical table, made LIKE that table (the logical table's definition).
func (r *Router) temporaryLike(p *Plan, st *Statement, in Input) (bool, error) {
	d := st.ddl
	if r.time == nil || len(d.others) != 1 {
		return false, nil
	}
	ref := d.others[0]
	tt, ok := r.time.tables[ref.name]
	if !ok || ref.db != "" && ref.db != r.dsnDBs[r.cfg.Settings.Default] {
		return false, nil
	}
	before := strings.ToLower(strings.TrimRight(st.SQL[:ref.from], " \t\r\n("))
	if !strings.HasSuffix(before, "like") {
		return false, nil
	}
	t := r.time.forPlan(p)
	if t == nil {
		return true, noShadowSide(tt.Table)
	}
	if ref.written != tt.Table {
		return true, errorf("%w: %s names %s, the time-sharded table %s in another case; write %s", ErrLogicalTable, d.verb, ref.written, tt.Table, tt.Table)
	}
	snap := t.cfg.Snapshot()
	if snap == nil {
		return true, errorf("%w: no shard metadata snapshot is loaded yet; load the metadata before CREATE TEMPORARY TABLE … LIKE %s", ErrNoShardTable, tt.Table)
	}
	all := t.own(tt, snap.Logical(tt.Table))
	if len(all) == 0 {
		return true, errorf("%w: the shard metadata lists no table named %s_<digits>…, so the time-sharded table %s has no definition yet; add its physical tables to shard_metadata", ErrNoShardTable, tt.Table, tt.Table)
	}
	newest := &all[len(all)-1]
	b, err := t.location(newest)
	if err != nil {
		return true, err
	}
	p.single(UsePartitionLocationLookup, ClassDefault, b, st.SQL[:ref.from]+"`"+newest.Name+"`"+st.SQL[ref.to:], in.Args)
	p.Targets[0].Tables = []string{newest.Name}
	if in.Explain {
		p.Prompts = append(p.Prompts, fmt.Sprintf("%s is time-sharded: the temporary table is made on %s like its newest physical table %s", tt.Table, b, newest.Name))
	}
	return true, nil
}

// orDefault returns b, or def when b is "".
func orDefault(b, def string) string {
	if b == "" {
		return def
	}
	return b
}
