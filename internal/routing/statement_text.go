package routing

import (
	"slices"
	"strings"
)

// sessionFunctions are the functions whose result belongs to the previous statement's server session.
var sessionFunctions = map[string]bool{"found_rows": true, "row_count": true, "last_insert_id": true}

// callsSessionFunction reports whether the statement calls FOUND_ROWS(), ROW_COUNT() or
// LAST_INSERT_ID(), or reads @@identity or @@last_insert_id, which are the same.
func callsSessionFunction(toks []token) bool {
	for i, t := range toks {
		switch t.kind {
		case tokWord:
			if i+1 < len(toks) && toks[i+1].text == "(" && sessionFunctions[strings.ToLower(t.text)] {
				return true
			}
		case tokVar:
			name, ok := strings.CutPrefix(t.val, "@@")
			if !ok {
				continue
			}
			for _, scope := range [...]string{"session.", "local.", "global."} {
				name = strings.TrimPrefix(name, scope)
			}
			if name == "identity" || name == "last_insert_id" {
				return true
			}
		}
	}
	return false
}

// assignedUserVars returns the user variables the tokens assign outside SET: `@v := …` anywhere
// and the list after INTO (`SELECT … INTO @a, @b`), each once, in lower case.
func assignedUserVars(toks []token) []string {
	var names []string
	add := func(name string) {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	into := false
	for i, t := range toks {
		switch {
		case t.is("into"):
			into = true
			continue
		case t.kind == tokVar && !strings.HasPrefix(t.val, "@@"):
			if into || i+1 < len(toks) && toks[i+1].kind == tokPunct && toks[i+1].text == ":=" {
				add(t.val)
			}
			continue
		case into && t.kind == tokPunct && t.text == ",":
			continue
		}
		into = false
	}
	return names
}

// LogText is the statement text for logs, observers and EXPLAIN ROUTE: the SQL itself, except
// that a statement that may carry a password has every string literal replaced by '***'.
func (st *Statement) LogText() string {
	if st.logText != "" {
		return st.logText
	}
	return st.SQL
}

// parseProblem says why the statement could not be parsed, without quoting a statement that may
// carry a password (the parser's message quotes the text near the error).
func (st *Statement) parseProblem() string {
	if st.logText != "" {
		return "the statement could not be parsed"
	}
	return st.ParseErr.Error()
}

// maskSecrets returns sql with its string literals masked when it may carry a password, "" when
// it may not.
func maskSecrets(sql string) string {
	if !containsFold(sql, "identified") && !containsFold(sql, "password") {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		if c != '\'' && c != '"' {
			b.WriteByte(c)
			continue
		}
		// Skip the literal: a doubled quote or a backslash escapes the next character.
		for i++; i < len(sql); i++ {
			if sql[i] == '\\' {
				i++
			} else if sql[i] == c {
				if i+1 < len(sql) && sql[i+1] == c {
					i++
					continue
				}
				break
			}
		}
		b.WriteString("'***'")
	}
	return b.String()
}

// containsFold reports whether s contains the lower-case ASCII word w in any case, without
// copying s.
func containsFold(s, w string) bool {
	for _, first := range [2]byte{w[0], w[0] - 'a' + 'A'} {
		for i := 0; ; {
			j := strings.IndexByte(s[i:], first)
			if j < 0 {
				break
			}
			i += j
			if len(s)-i >= len(w) && strings.EqualFold(s[i:i+len(w)], w) {
				return true
			}
			i++
		}
	}
	return false
}

// readsDiagnostics reports whether a SHOW statement reads the previous statement's diagnostics:
// SHOW WARNINGS, SHOW ERRORS, SHOW COUNT(*) WARNINGS / ERRORS.
func readsDiagnostics(show string) bool {
	words := strings.Fields(strings.ToLower(show))
	if len(words) < 2 {
		return false
	}
	switch w := words[1]; {
	case strings.HasPrefix(w, "warnings"), strings.HasPrefix(w, "errors"), strings.HasPrefix(w, "count"):
		return true
	}
	return false
}
