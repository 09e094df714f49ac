package routing

import (
	"encoding/hex"
	"errors"
	"strings"
	"unicode/utf8"
)

// errSetPlaceholder refuses SET statements with ? placeholders: the client session replays SET
// text on other server sessions, where the arguments would be gone.
var errSetPlaceholder = errors.New("obroute: SET with ? placeholders cannot be recorded as session state; write the value into the statement")

// classifySet reads a SET statement from its words (toks[0] is SET) and reports whether it is
// one: session and user variable assignments, kept as the application wrote them so that a
// replay on another server session means the same (a printed syntax tree could drop a COLLATE
// or change a literal). SET PASSWORD, SET ROLE and SET DEFAULT ROLE are not session state:
// false, and the statement is read as any other; so is SET STATEMENT … FOR a statement other
// than a SET of variables (see setStatementForSet).
func classifySet(st *Statement, toks []token, body string) bool {
	at := func(i int) token {
		if i < len(toks) {
			return toks[i]
		}
		return token{}
	}
	switch {
	case at(1).is("statement"):
		return setStatementForSet(st, toks, body)
	case at(1).is("password"), at(1).is("role"), at(1).is("default"):
		return false
	}
	st.Kind = KindSet
	if st.Params > 0 {
		st.ParseErr = errSetPlaceholder
		return true
	}
	text := strings.TrimSpace(body)
	switch {
	case at(1).is("transaction"):
		// SET TRANSACTION without a scope applies to the next transaction only.
		st.NextTransaction = text
		return true
	case (at(1).is("session") || at(1).is("local")) && at(2).is("transaction"):
		// It sets tx_isolation, tx_read_only or both, which the client session reads back.
		for i := 3; i < len(toks); i++ {
			switch {
			case toks[i].is("isolation"):
				st.Vars = append(st.Vars, SessionVar{Name: "tx_isolation", Assignment: text})
			case toks[i].is("read") && (at(i+1).is("only") || at(i+1).is("write")):
				st.Vars = append(st.Vars, SessionVar{Name: "tx_read_only", Assignment: text})
			}
		}
		return true
	case at(1).is("global") && at(2).is("transaction"):
		st.GlobalSet = true
		return true
	}
	rest := toks[1:]
	if n := len(rest); n > 0 && rest[n-1].text == ";" {
		rest = rest[:n-1]
	}
	global := false // the last scope keyword was GLOBAL: it holds for the assignments after it
	var vars []SessionVar
	for len(rest) > 0 {
		end := listItemEnd(rest)
		v, isGlobal, ok := readAssignment(rest[:end], body, &global)
		if !ok {
			st.Kind = KindOther
			return false
		}
		if isGlobal {
			st.GlobalSet = true
		} else {
			vars = append(vars, v)
		}
		rest = rest[min(end+1, len(rest)):]
	}
	st.Vars = vars
	return true
}

// setStatementForSet reads SET STATEMENT assignments FOR SET assignments (toks[0] is SET): the
// server makes the inner assignments with the outer ones in force, then restores the outer
// variables, so that an inner assignment of one of them is undone. It is session state as the
// inner SET is, each variable recorded with the value the server holds after the statement
// (none is taken from its literal). FOR any other statement, or FOR a SET obroute keeps
// otherwise (SET TRANSACTION, SET STATEMENT, SET PASSWORD …), it reports false: the statement
// is read as any other (one that may change session state pins the client session, see
// invisible).
func setStatementForSet(st *Statement, toks []token, body string) bool {
	i := topLevelWord(toks, "for")
	if i < 0 || i+1 >= len(toks) || !toks[i+1].is("set") {
		return false
	}
	inner := toks[i+1:]
	switch w := lowerWord(inner, 1); {
	case w == "statement", w == "password", w == "role", w == "default", w == "transaction",
		(w == "session" || w == "local" || w == "global") && lowerWord(inner, 2) == "transaction":
		return false
	}
	if !classifySet(st, inner, body) {
		return false
	}
	for k := range st.Vars {
		st.Vars[k].Value = ""
	}
	return true
}

// listItemEnd returns the index of the first comma of toks outside parentheses, len(toks) when
// there is none.
func listItemEnd(toks []token) int {
	depth := 0
	for i, t := range toks {
		switch t.text {
		case "(":
			depth++
		case ")":
			depth--
		case ",":
			if depth == 0 && t.kind == tokPunct {
				return i
			}
		}
	}
	return len(toks)
}

// readAssignment reads one assignment of a SET list. global carries the scope of the last
// scope keyword (GLOBAL, SESSION, LOCAL), which holds for the assignments that follow it.
func readAssignment(p []token, body string, global *bool) (v SessionVar, isGlobal, ok bool) {
	if len(p) == 0 {
		return v, false, false
	}
	v.Assignment = body[p[0].pos:p[len(p)-1].end]
	name, i := p[0], 1
	switch {
	case name.is("global"), name.is("persist"), name.is("persist_only"):
		*global = true
		name, i = tokenAt(p, 1), 2
	case name.is("session"), name.is("local"):
		*global = false
		name, i = tokenAt(p, 1), 2
	case name.is("names"):
		v.Name = "names"
		v.Assignment = "NAMES" + body[p[0].end:p[len(p)-1].end]
		return v, false, len(p) > 1
	case name.is("charset"):
		v.Name = "names"
		return v, false, len(p) > 1
	case name.is("character") && tokenAt(p, 1).is("set"):
		v.Name = "names"
		return v, false, len(p) > 2
	}
	switch name.kind {
	case tokVar:
		if i == 2 {
			return v, false, false // SESSION @@name, GLOBAL @v: the server's syntax error
		}
		var n int
		if v.Name, isGlobal, n, ok = systemVariable(p); !ok {
			return v, false, false
		}
		if isGlobal {
			return v, true, true
		}
		i = n
	case tokWord:
		v.Name, isGlobal = strings.ToLower(name.text), *global
	case tokIdent:
		v.Name, isGlobal = strings.ToLower(name.val), *global
	default:
		return v, false, false
	}
	if op := tokenAt(p, i); op.kind != tokPunct || op.text != "=" && op.text != ":=" {
		return v, false, false
	}
	value := p[i+1:]
	if len(value) == 1 {
		switch t := value[0]; t.kind {
		case tokString:
			// A user variable's string has the connection's character set and collation; a
			// double-quoted string is a name under ANSI_QUOTES, a backslash an escape or not under
			// NO_BACKSLASH_ESCAPES: those values are read back, and replayed in a spelling that
			// means the same on any server session.
			if !strings.HasPrefix(v.Name, "@") && t.text[0] != '"' && !strings.ContainsRune(t.val, '\\') {
				v.Value = strings.ToLower(t.val)
			}
		case tokNumber:
			v.Value = strings.ToLower(t.text)
		case tokWord:
			switch w := strings.ToLower(t.text); w {
			case "true":
				v.Value = "1"
			case "false":
				v.Value = "0"
			case "default":
			default:
				v.Value = w // SET autocommit = ON
			}
		}
	}
	return v, isGlobal, len(value) > 0
}

// systemVariable reads the variable p starts with (p[0] is a tokVar), as the server reads it:
// @name or @`name` (a user variable: "@name"), @@name, @@`name`, @@scope.name with the name
// quoted or not and spaces or comments around the dot (scope GLOBAL, PERSIST, PERSIST_ONLY or
// SESSION, LOCAL; global says which); n is the number of tokens read. A structured variable (@@key_cache.name, which is global and which a session
// SET refuses) or a name the server would not read is not ok.
func systemVariable(p []token) (name string, global bool, n int, ok bool) {
	t := p[0]
	sys, isSys := strings.CutPrefix(t.text, "@@")
	if !isSys {
		return t.val, false, 1, true
	}
	if sys == "" {
		return "", false, 0, false
	}
	if q := sys[0]; q == '`' {
		return strings.TrimPrefix(t.val, "@@"), false, 1, true
	} else if q == '\'' || q == '"' {
		return "", false, 0, false // @@'name': the server's syntax error
	}
	sys = strings.ToLower(sys)
	scope, name, dotted := strings.Cut(sys, ".")
	n = 1
	if !dotted {
		if dot := tokenAt(p, 1); dot.kind != tokPunct || dot.text != "." {
			return sys, false, 1, true
		}
		n = 2 // @@scope . name
	}
	if name == "" {
		switch nt := tokenAt(p, n); nt.kind {
		case tokWord:
			name = strings.ToLower(nt.text)
		case tokIdent, tokString:
			name = strings.ToLower(nt.val)
		default:
			return "", false, 0, false
		}
		n++
	}
	if name == "" || strings.Contains(name, ".") {
		return "", false, 0, false
	}
	switch scope {
	case "global", "persist", "persist_only":
		return name, true, n, true
	case "session", "local":
		return name, false, n, true
	}
	return "", false, 0, false // a structured variable
}

func tokenAt(toks []token, i int) token {
	if i < len(toks) {
		return toks[i]
	}
	return token{}
}

// wordsHoldSubquery reports whether a statement's words hold a subquery: a parenthesis opening a
// SELECT, WITH, TABLE or VALUES.
func wordsHoldSubquery(toks []token) bool {
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].kind == tokPunct && toks[i].text == "(" {
			switch n := toks[i+1]; {
			case n.is("select"), n.is("with"), n.is("table"), n.is("values"):
				return true
			}
		}
	}
	return false
}

// setRoute routes a SET whose values read tables in subqueries: where those tables are, as a
// SELECT of them would go (the client session then records the values the server computed, and
// replays them elsewhere); a SET reading a time-sharded table, whose rows no one server holds, is
// refused. pinned as staticRoute says.
func (r *Router) setRoute(p *Plan, st *Statement, in Input) (pinned bool, err error) {
	if len(st.mentions) > 0 {
		return false, r.unreadableRoute(st)
	}
	if r.time != nil {
		for _, t := range st.Tables {
			if tt, ok := r.time.tables[t]; ok {
				return false, errorf("%w: the SET reads the time-sharded table %s in a subquery, whose rows are split across physical tables; SELECT the value on its own (it is split and merged) and SET the variable to it as a literal",
					ErrNotMergeable, tt.Table)
			}
		}
	}
	if pinned, err := r.staticRoute(p, st, in); pinned || err != nil {
		return pinned, err
	}
	r.defaultRoute(p, st, in)
	return false, nil
}

// StringValue returns the string a user variable's assignment gives it, as the client session
// records it: a string literal, or the value read back (_charset X'…' COLLATE …) in a character
// set whose bytes are the text's. ok is false for any other value.
func (v SessionVar) StringValue() (string, bool) {
	toks, ok := lex(v.Assignment)
	if !ok || len(toks) < 3 || toks[1].text != "=" && toks[1].text != ":=" {
		return "", false
	}
	val := toks[2:]
	switch {
	case len(val) == 1 && val[0].kind == tokString:
		return val[0].val, true
	case len(val) == 4 && val[0].kind == tokWord && val[1].kind == tokNumber && val[2].is("collate"):
		switch strings.ToLower(val[0].text) {
		case "_utf8mb4", "_utf8mb3", "_utf8", "_binary", "_ascii":
		default:
			return "", false
		}
		h := val[1].text
		if len(h) < 3 || h[0]|0x20 != 'x' || h[1] != '\'' || h[len(h)-1] != '\'' {
			return "", false
		}
		b, err := hex.DecodeString(h[2 : len(h)-1])
		if err != nil || !utf8.Valid(b) {
			return "", false
		}
		return string(b), true
	}
	return "", false
}

// spentVariables are the session variables the server spends: insert_id goes to the next
// AUTO_INCREMENT value generated, and RAND() moves rand_seed1 and rand_seed2 on. Replayed to
// another server session, or set again on one replacing a lost one, they would be spent twice.
var spentVariables = map[string]string{"insert_id": "the next AUTO_INCREMENT value an INSERT generates", "rand_seed1": "the next RAND()", "rand_seed2": "the next RAND()"}

// spentVariable refuses a SET of a variable the server spends (see spentVariables), with
// several backends: obroute replays session variables to each server session.
func spentVariable(st *Statement) error {
	for _, v := range st.Vars {
		name := strings.ToLower(v.Name)
		if what, ok := spentVariables[name]; ok {
			return errorf("%w: SET %s gives %s on one server session, and obroute replays session variables to the server session of every backend, where it would be spent again; write SET STATEMENT %s = … FOR the statement that spends it",
				ErrSessionState, name, what, name)
		}
	}
	return nil
}
