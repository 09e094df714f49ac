package routing

import (
	"slices"
	"strings"
)

// A statement the parser cannot read still runs — obroute never blocks valid SQL of a backend —
// but one that names a table with a rule (a static route, a time-sharded table, a shadow table)
// is routed by that rule or refused: the default backend serves only statements that name no
// such table. Its tables are read from its words: a name that stands where a table stands
// (after FROM, JOIN, INTO, TABLE, a leading UPDATE, …) is a table; a routed table named
// anywhere else is a mention, which obroute cannot place, so it refuses the statement.

// tableWords are the words after which a table name stands, anywhere in a statement (FROM and
// JOIN not inside an expression's parentheses: EXTRACT(YEAR FROM d) names no table).
var tableWords = map[string]bool{"from": true, "join": true, "straight_join": true, "into": true, "table": true, "tables": true, "using": true}

// leadingTableWords stand before a table only as a statement's first word.
var leadingTableWords = map[string]bool{"update": true, "insert": true, "replace": true, "truncate": true, "describe": true, "desc": true, "explain": true, "delete": true, "handler": true}

// tableModifiers may stand between a table word and the table.
var tableModifiers = map[string]bool{"low_priority": true, "delayed": true, "high_priority": true, "ignore": true, "into": true, "quick": true, "if": true, "not": true, "exists": true, "table": true, "from": true, "only": true}

// notNames are words that cannot be a table or an alias: clause keywords.
var notNames = map[string]bool{
	"select": true, "with": true, "values": true, "value": true, "set": true, "where": true, "on": true, "using": true,
	"join": true, "inner": true, "left": true, "right": true, "cross": true, "natural": true, "straight_join": true,
	"outer": true, "full": true, "order": true, "group": true, "having": true, "limit": true, "union": true,
	"except": true, "intersect": true, "partition": true, "use": true, "force": true, "for": true, "lock": true,
	"window": true, "into": true, "returning": true, "outfile": true, "dumpfile": true, "lateral": true,
	"dual": true, "as": true, "procedure": true, "rows": true, "offset": true, "default": true,
}

// scanTables reads the tables of st from its words (see above) and marks st as scanned.
func (r *Router) scanTables(st *Statement, toks []token, lexed bool) {
	st.scanned = true
	var tables []string
	lead := firstWordIndex(toks)
	var exprParens []bool // per open parenthesis: true when it holds an expression
	expect := false       // a table may stand next
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		inExpr := len(exprParens) > 0 && exprParens[len(exprParens)-1]
		w := ""
		if t.kind == tokWord {
			w = strings.ToLower(t.text)
		}
		switch {
		case t.kind == tokPunct && t.text == "(":
			sub := i+1 < len(toks) && (toks[i+1].is("select") || toks[i+1].is("with") || toks[i+1].text == "(")
			exprParens = append(exprParens, !expect && !sub)
			continue
		case t.kind == tokPunct && t.text == ")":
			if len(exprParens) > 0 {
				exprParens = exprParens[:len(exprParens)-1]
			}
			expect = false
			continue
		case expect && w != "" && tableModifiers[w]:
			continue
		case expect && (t.kind == tokIdent || w != "" && !notNames[w]):
			name, next := tableRef(toks, i)
			tables = appendNew(tables, name)
			i = next - 1
			// A comma after the table (and its alias) continues a list of tables.
			if next < len(toks) && toks[next].kind == tokPunct && toks[next].text == "," {
				i = next
				continue
			}
			expect = false
			continue
		case w == "using" && i+1 < len(toks) && toks[i+1].text == "(":
			expect = false // JOIN … USING (columns)
			continue
		case w == "straight_join" && i > 0 && (toks[i-1].is("select") || selectOptions[strings.ToUpper(toks[i-1].text)]):
			expect = false // SELECT STRAIGHT_JOIN: an option of the select list
			continue
		}
		expect = !inExpr && (tableWords[w] || i == lead && leadingTableWords[w] || w == "in" && showsTable(toks, lead, i))
	}
	st.Tables = tables
	if len(r.routed) == 0 || !lexed {
		if !lexed {
			// Its words could not all be read: any routed name in its text is a mention.
			lower := strings.ToLower(st.SQL)
			for name := range r.routed {
				if strings.Contains(lower, name) && !slices.Contains(tables, name) {
					st.mentions = appendNew(st.mentions, name)
				}
			}
			slices.Sort(st.mentions)
		}
		return
	}
	st.mentions = r.mentions(toks, tables)
}

// mentions returns the routed tables toks name that are not among tables.
func (r *Router) mentions(toks []token, tables []string) []string {
	var out []string
	for _, t := range toks {
		name := ""
		switch t.kind {
		case tokWord:
			name = strings.ToLower(t.text)
		case tokIdent:
			name = strings.ToLower(t.val)
		}
		if _, ok := r.routed[name]; ok && !slices.Contains(tables, name) {
			out = appendNew(out, name)
		}
	}
	return out
}

// showsTable reports whether the IN at toks[i] names a table: SHOW … COLUMNS IN t (or FIELDS,
// INDEX, INDEXES, KEYS), lead being the index of the statement's first word.
func showsTable(toks []token, lead, i int) bool {
	if lead < 0 || i == 0 || !toks[lead].is("show") {
		return false
	}
	switch p := toks[i-1]; {
	case p.is("columns"), p.is("fields"), p.is("index"), p.is("indexes"), p.is("keys"):
		return true
	}
	return false
}

func firstWordIndex(toks []token) int {
	for i, t := range toks {
		if t.kind == tokWord {
			return i
		}
	}
	return -1
}

// tableRef reads a table reference at toks[i] — name or qualifier.name, then an optional alias —
// and returns the table's name in lower case and the index after it.
func tableRef(toks []token, i int) (string, int) {
	name := func(t token) string {
		if t.kind == tokIdent {
			return strings.ToLower(t.val)
		}
		return strings.ToLower(t.text)
	}
	table := name(toks[i])
	i++
	if i+1 < len(toks) && toks[i].text == "." && toks[i].kind == tokPunct && (toks[i+1].kind == tokWord || toks[i+1].kind == tokIdent) {
		table = name(toks[i+1])
		i += 2
	}
	if i < len(toks) && toks[i].is("as") {
		i++
	}
	if i < len(toks) && (toks[i].kind == tokIdent || toks[i].kind == tokWord && !notNames[strings.ToLower(toks[i].text)]) {
		i++ // the alias
	}
	return table, i
}

//go:noinline
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// unreadableRoute checks a statement whose tables were read from its words (scanned) against
// the routed tables: one it names where no table stands, or a time-sharded table, which needs
// the statement read exactly to be split, refuses it.
func (r *Router) unreadableRoute(st *Statement) error {
	why := "its syntax tree does not say which tables it uses"
	if st.ParseErr != nil {
		why = "the parser cannot read it (" + st.parseProblem() + ")"
		if form := unreadForm(textTokens(st.SQL)); form != "" {
			why += ": " + form
		}
	}
	if len(st.mentions) > 0 {
		return errorf("%w: the statement names %s, a table with a %s, but not where obroute can read it as a table: %s; write it in syntax obroute reads, or send it to the table's backend with a backend hint", ErrUnreadable, st.mentions[0], r.routed[st.mentions[0]], why)
	}
	if r.time == nil {
		return nil
	}
	for _, t := range st.Tables {
		if tt, ok := r.time.tables[t]; ok {
			return errorf("%w: the statement names the time-sharded table %s, whose rows are split across physical tables, and %s; write it in syntax obroute reads (e.g. without MariaDB-only clauses), or send it to one backend with a backend hint and the physical table names", ErrUnreadable, tt.Table, why)
		}
	}
	return nil
}

// explainRouteAt returns where the statement explained by "EXPLAIN ROUTE <statement>" starts in
// the text toks were read from, -1 when the text is not one. "EXPLAIN route id" (one name or
// pattern after ROUTE) is MySQL's DESCRIBE of column id of a table named route, and is left to
// the server.
func explainRouteAt(toks []token, lexed bool) int {
	if len(toks) < 3 || !toks[0].is("explain") || !toks[1].is("route") {
		return -1
	}
	rest := toks[2:]
	if n := len(rest); n > 0 && rest[n-1].kind == tokPunct && rest[n-1].text == ";" {
		rest = rest[:n-1]
	}
	switch {
	case len(rest) == 0:
		return -1
	case lexed && len(rest) == 1 && (rest[0].kind == tokWord || rest[0].kind == tokIdent || rest[0].kind == tokString):
		return -1
	}
	return toks[1].end
}

// handlerAlias refuses HANDLER t OPEN [AS] alias on a routed table t: the HANDLER alias READ and
// CLOSE statements after it name the alias, which no rule routes (nil otherwise).
func (r *Router) handlerAlias(st *Statement, toks []token) error {
	if len(toks) < 4 || !toks[0].is("handler") || len(st.Tables) == 0 {
		return nil
	}
	rule, ok := r.routed[st.Tables[0]]
	if !ok {
		return nil
	}
	for i := 1; i+1 < len(toks); i++ {
		if toks[i].is("open") {
			if next := toks[i+1]; next.text != ";" {
				return errorf("%w: HANDLER … OPEN names %s, a table with a %s, under an alias: the HANDLER statements after it name the alias, which obroute cannot route; open it without an alias (HANDLER %s OPEN) and name the table in its READ and CLOSE",
					ErrUnreadable, st.Tables[0], rule, st.Tables[0])
			}
		}
	}
	return nil
}

// runsWhere says where a stored program of a kind runs.
func runsWhere(kind string) string {
	if kind == "trigger" {
		return "its table lives"
	}
	return "CALL and a statement naming no routed table go"
}

// programTables refuses the definition of a stored program (CREATE or ALTER … PROCEDURE,
// FUNCTION, TRIGGER, EVENT, PACKAGE) whose words name a table with a rule that does not live
// where the program runs: a program runs on the server where it is called (a trigger where its
// table is, the others on the default backend, where CALL and a statement naming no routed
// table go), and there a table of that name is another table. nil otherwise.
func (r *Router) programTables(st *Statement, toks []token) error {
	if len(r.routed) == 0 {
		return nil
	}
	kind, on := "", r.cfg.Settings.Default
	for i, t := range toks[1:min(len(toks), 12)] {
		if t.is("procedure") || t.is("function") || t.is("trigger") || t.is("event") || t.is("package") {
			kind = strings.ToLower(t.text)
			if kind == "trigger" {
				// CREATE TRIGGER name {BEFORE|AFTER} event ON table …
				for k := i + 2; k+1 < len(toks); k++ {
					if toks[k].is("on") {
						table, _ := tableRef(toks, k+1)
						if b, ok := r.cfg.Settings.Routes[table]; ok {
							on = b
						}
						break
					}
				}
			}
			break
		}
	}
	if kind == "" {
		return nil
	}
	for _, t := range toks {
		name := identText(t)
		rule, ok := r.routed[name]
		if !ok || rule == "static route" && r.cfg.Settings.Routes[name] == on {
			continue
		}
		where := "it has a " + rule
		if rule == "static route" {
			where = "it lives on backend " + r.cfg.Settings.Routes[name]
		}
		return errorf("%w: the stored %s names table %s, and %s; the %s would run on backend %s (where %s), whose table of that name is another table; create it with a backend hint naming the table's backend (and call it with one), or write its statements in the application",
			ErrSessionState, kind, name, where, kind, on, runsWhere(kind))
	}
	return nil
}
