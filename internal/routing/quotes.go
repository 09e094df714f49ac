package routing

import (
	"strings"

	"github.com/obroute/obroute/config"
)

// Under ANSI_QUOTES (and ANSI, which holds it) a "double-quoted" text is a name, as a
// `backquoted` one is; obroute reads the tables a statement names with such a text taken as a
// string, so it would not see a routed table written "audit_log" and would send the statement
// where an unrouted one goes. A statement with a double-quoted text is refused while the
// client session's sql_mode (of production or of shadow traffic), or one a backend DSN starts
// its server sessions with, reads it as a name.

// quoteModeOf returns the mode of sql_mode mode that reads a "double-quoted" text as a name
// (ANSI_QUOTES, or ANSI, which holds it; a dialect mode's value read back from the server lists
// ANSI_QUOTES too), "" when none.
func quoteModeOf(mode string) string {
	for rest := mode; rest != ""; {
		var name string
		name, rest, _ = strings.Cut(rest, ",")
		if name = strings.TrimSpace(name); strings.EqualFold(name, "ANSI_QUOTES") || strings.EqualFold(name, "ANSI") {
			return name
		}
	}
	return ""
}

// dsnQuoteMode returns the first sql_mode DSN parameter of backends that reads a
// "double-quoted" text as a name, "" when none does.
func dsnQuoteMode(backends []config.Backend) string {
	for _, b := range backends {
		if b.MySQL == nil {
			continue
		}
		if m := quoteModeOf(strings.Trim(b.MySQL.Params["sql_mode"], "'\"")); m != "" {
			return m
		}
	}
	return ""
}

// quotesRefusal returns ErrUnreadable when st holds a double-quoted text and a sql_mode in
// effect for it reads that text as a name (or the client session set a sql_mode obroute does
// not know); nil otherwise. The text is lexed only when such a mode is in effect.
func (r *Router) quotesRefusal(st *Statement, sess *SessionState) error {
	mode := ""
	for _, m := range sess.SQLModes {
		switch {
		case !m.Set:
		case !m.Known:
			mode = "set to a value obroute does not know"
		default:
			if n := quoteModeOf(m.Value); n != "" {
				mode = n
			}
		}
		if mode != "" {
			break
		}
	}
	if mode == "" && !sess.SQLModes[0].Set {
		mode = r.dsnQuotes
	}
	if mode == "" {
		return nil
	}
	toks := textTokens(st.SQL)
	if modalTokens(toks)&modalDoubleQuote == 0 {
		return nil
	}
	if st.Kind == KindSet && !hasWord(toks, "select") {
		// SET x = "v": the server reads a name there as the value (SET time_zone = "+02:00"),
		// and no table is named without a subquery.
		return nil
	}
	name := ""
	for _, t := range toks {
		if t.kind == tokString && strings.HasPrefix(t.text, `"`) && r.hasLogicalView() && (systemSchemas[strings.ToLower(t.val)] || toks[0].is("show") || toks[0].is("describe") || toks[0].is("desc")) {
			// A catalog statement whose names obroute would not read: the default backend's
			// physical tables, not the logical ones.
			return errorf("%w: the statement holds \"%s\", which the sql_mode %s in effect reads as a name, in a catalog statement obroute answers for the logical tables only when it reads its names; write names in `backquotes` and strings in 'single quotes'", ErrCatalog, t.val, mode)
		}
		if t.kind == tokString && strings.HasPrefix(t.text, `"`) && r.routesName(strings.ToLower(t.val), sess) {
			name = t.val
			break
		}
	}
	if name == "" {
		// No double-quoted text is a name obroute routes by: as a column's or an unrouted
		// table's name it reaches the backend the statement goes to anyway, which reads it as
		// the server would.
		return nil
	}
	return errorf("%w: the statement holds \"%s\", which the sql_mode %s in effect reads as the name of a table obroute routes by, and obroute reads the tables a statement names with such a text taken as a string: it could send a statement on a routed table elsewhere; write names in `backquotes` and strings in 'single quotes'", ErrUnreadable, name, mode)
}

// hasWord reports whether toks hold the keyword w (lower case).
func hasWord(toks []token, w string) bool {
	for _, t := range toks {
		if t.is(w) {
			return true
		}
	}
	return false
}

// routesName reports whether name (lower case) is a table obroute routes by: a routed,
// shadow or time-sharded table, a physical table named like a time-sharded one
// (<table>_<digit>…), or a temporary table of the client session.
func (r *Router) routesName(name string, sess *SessionState) bool {
	if _, ok := r.routed[name]; ok {
		return true
	}
	if _, ok := sess.TempTables[name]; ok {
		return true
	}
	if r.time != nil {
		for logical := range r.time.tables {
			if rest, ok := strings.CutPrefix(name, logical+"_"); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
				return true
			}
		}
	}
	return false
}
