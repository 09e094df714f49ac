package routing

import (
	"slices"
	"strconv"
	"strings"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/merge"
)

// SessionReads is a set of the session functions a statement reads, whose values belong to the
// server session of a previous statement.
type SessionReads uint8

// Session functions.
const (
	ReadsFoundRows   SessionReads = 1 << iota // FOUND_ROWS()
	ReadsRowCount                             // ROW_COUNT()
	ReadsInsertID                             // LAST_INSERT_ID(), @@identity, @@last_insert_id
	ReadsDiagnostics                          // SHOW WARNINGS/ERRORS, SHOW COUNT(*) …, @@warning_count, @@error_count, GET DIAGNOSTICS
)

// sessionFunctions are the functions whose result belongs to the previous statement's server session.
var sessionFunctions = map[string]SessionReads{"found_rows": ReadsFoundRows, "row_count": ReadsRowCount, "last_insert_id": ReadsInsertID}

// sessionVariables are the variables that are the same.
var sessionVariables = map[string]SessionReads{"identity": ReadsInsertID, "last_insert_id": ReadsInsertID, "warning_count": ReadsDiagnostics, "error_count": ReadsDiagnostics}

// sessionReads returns the session functions the tokens call or read: FOUND_ROWS(), ROW_COUNT(),
// LAST_INSERT_ID(), @@identity, @@last_insert_id, @@warning_count, @@error_count, and GET
// DIAGNOSTICS.
func sessionReads(toks []token) SessionReads {
	var r SessionReads
	for i, t := range toks {
		switch t.kind {
		case tokWord:
			if i+1 < len(toks) && toks[i+1].text == "(" {
				if setsInsertID(toks, i) {
					continue // LAST_INSERT_ID(expr) sets the value, it reads no previous one
				}
				r |= sessionFunctions[strings.ToLower(t.text)]
			}
		case tokVar:
			name, ok := strings.CutPrefix(t.val, "@@")
			if !ok {
				continue
			}
			for _, scope := range [...]string{"session.", "local.", "global."} {
				name = strings.TrimPrefix(name, scope)
			}
			r |= sessionVariables[name]
		}
	}
	if getDiagnostics(toks) {
		r |= ReadsDiagnostics
	}
	return r
}

// getDiagnostics reports whether toks are GET [CURRENT | STACKED] DIAGNOSTICS.
func getDiagnostics(toks []token) bool {
	if len(toks) < 2 || !toks[0].is("get") {
		return false
	}
	if toks[1].is("current") || toks[1].is("stacked") {
		return len(toks) > 2 && toks[2].is("diagnostics")
	}
	return toks[1].is("diagnostics")
}

// setsInsertID reports whether toks[i] starts a call LAST_INSERT_ID(expr), which sets the
// value LAST_INSERT_ID() then returns.
func setsInsertID(toks []token, i int) bool {
	return toks[i].is("last_insert_id") && i+2 < len(toks) && toks[i+1].text == "(" && toks[i+2].text != ")"
}

// callsSetInsertID reports whether the tokens call LAST_INSERT_ID(expr).
func callsSetInsertID(toks []token) bool {
	for i := range toks {
		if setsInsertID(toks, i) {
			return true
		}
	}
	return false
}

// assignedUserVars returns the user variables the tokens assign outside SET: `@v := …` anywhere,
// the list after INTO (`SELECT … INTO @a, @b`), and the targets of GET [CURRENT] DIAGNOSTICS
// (`@n = NUMBER`, `@m = MESSAGE_TEXT`), each once, in lower case.
func assignedUserVars(toks []token) []string {
	var names []string
	add := func(name string) {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if getDiagnostics(toks) {
		for i, t := range toks {
			if t.kind == tokVar && !strings.HasPrefix(t.val, "@@") && i+1 < len(toks) && toks[i+1].kind == tokPunct && toks[i+1].text == "=" {
				add(t.val)
			}
		}
		return names
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

// readsDiagnostics returns ReadsDiagnostics for a SHOW statement that reads the previous
// statement's diagnostics: SHOW WARNINGS, SHOW ERRORS, SHOW COUNT(*) WARNINGS / ERRORS.
func readsDiagnostics(show string) SessionReads {
	words := strings.Fields(strings.ToLower(show))
	if len(words) < 2 {
		return 0
	}
	switch w := words[1]; {
	case strings.HasPrefix(w, "warnings"), strings.HasPrefix(w, "errors"), strings.HasPrefix(w, "count"):
		return ReadsDiagnostics
	}
	return 0
}

// SessionValues are values of session functions the client session holds, to be written into a
// statement that reads them (see WithSessionValues).
type SessionValues struct {
	// Reads are the functions given: FoundRows, RowCount, InsertID for their flags, WarningCount
	// and ErrorCount for ReadsDiagnostics.
	Reads                                                   SessionReads
	FoundRows, RowCount, InsertID, WarningCount, ErrorCount int64
}

// Set gives the value of function r (ReadsDiagnostics: the warning count).
func (v *SessionValues) Set(r SessionReads, n int64) {
	v.Reads |= r
	switch r {
	case ReadsFoundRows:
		v.FoundRows = n
	case ReadsRowCount:
		v.RowCount = n
	case ReadsInsertID:
		v.InsertID = n
	case ReadsDiagnostics:
		v.WarningCount = n
	}
}

// bigint writes n as a literal the server types as a BIGINT, as it types ROW_COUNT() and
// FOUND_ROWS(): twenty characters.
func bigint(n int64) string {
	if n < 0 {
		return "-" + strings.Repeat("0", 19-len(strconv.FormatInt(-n, 10))) + strconv.FormatInt(-n, 10)
	}
	s := strconv.FormatInt(n, 10)
	return strings.Repeat("0", max(20-len(s), 0)) + s
}

// unsignedCount writes n as an expression the server types as a nullable BIGINT UNSIGNED, as it
// types @@warning_count.
func unsignedCount(n int64) string { return "NULLIF(CAST(" + bigint(n) + " AS UNSIGNED), NULL)" }

// WithSessionValues returns the statement's text with the session functions of v written in as
// their values: FOUND_ROWS(), ROW_COUNT(), LAST_INSERT_ID() (without argument), @@identity,
// @@last_insert_id, @@warning_count, @@error_count; SHOW COUNT(*) WARNINGS and ERRORS become the
// SELECT of the count. A select item that holds one and has no alias is named as the server
// names it, by its text. ok is false when a function of v is read where its value cannot be
// written (GET DIAGNOSTICS, LAST_INSERT_ID(expr) …).
func (st *Statement) WithSessionValues(v SessionValues) (string, bool) {
	start := hint.StatementStart(st.SQL)
	body := st.SQL[start:]
	toks, ok := lex(body)
	if !ok {
		return "", false
	}
	if len(toks) > 0 && toks[0].is("show") {
		if v.Reads&ReadsDiagnostics == 0 || len(toks) < 5 || !toks[1].is("count") {
			return "", false
		}
		switch {
		case toks[len(toks)-1].is("warnings"):
			return st.SQL[:start] + "SELECT " + unsignedCount(v.WarningCount) + " AS `@@session.warning_count`", true
		case toks[len(toks)-1].is("errors"):
			return st.SQL[:start] + "SELECT " + unsignedCount(v.ErrorCount) + " AS `@@session.error_count`", true
		}
		return "", false
	}
	if getDiagnostics(toks) {
		return "", false
	}
	type edit struct {
		from, to int
		text     string
	}
	var edits []edit
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.kind {
		case tokWord:
			r := sessionFunctions[strings.ToLower(t.text)]
			if r == 0 || v.Reads&r == 0 || i+1 >= len(toks) || toks[i+1].text != "(" {
				continue
			}
			if i+2 >= len(toks) || toks[i+2].text != ")" {
				return "", false // LAST_INSERT_ID(expr) sets it
			}
			lit := ""
			switch r {
			case ReadsFoundRows:
				lit = bigint(v.FoundRows)
			case ReadsRowCount:
				lit = bigint(v.RowCount)
			default:
				lit = "CAST(" + bigint(v.InsertID) + " AS UNSIGNED)"
			}
			edits = append(edits, edit{t.pos, toks[i+2].end, lit})
			i += 2
		case tokVar:
			name, ok := strings.CutPrefix(t.val, "@@")
			if !ok {
				continue
			}
			for _, scope := range [...]string{"session.", "local.", "global."} {
				name = strings.TrimPrefix(name, scope)
			}
			r := sessionVariables[name]
			if r == 0 || v.Reads&r == 0 {
				continue
			}
			lit := ""
			switch name {
			case "warning_count":
				lit = unsignedCount(v.WarningCount)
			case "error_count":
				lit = unsignedCount(v.ErrorCount)
			default:
				lit = "CAST(" + bigint(v.InsertID) + " AS UNSIGNED)"
			}
			edits = append(edits, edit{t.pos, t.end, lit})
		}
	}
	if len(edits) == 0 {
		return st.SQL, true
	}
	// The select items of the top-level SELECT that hold an edit and have no alias get one.
	var aliases []edit
	if i := topLevelWord(toks, "select"); i >= 0 {
		end := len(toks)
		for k := i + 1; k < len(toks); k++ {
			if depthAt(toks, i, k) == 0 && (toks[k].kind == tokWord && clauseWords[strings.ToLower(toks[k].text)] || toks[k].text == ";") {
				end = k
				break
			}
		}
		item := i + 1
		for item < len(toks) && toks[item].kind == tokWord && selectOptions[strings.ToUpper(toks[item].text)] {
			item++
		}
		for k := item; k <= end; k++ {
			if k < end && !(toks[k].kind == tokPunct && toks[k].text == "," && depthAt(toks, i, k) == 0) {
				continue
			}
			if k > item && !itemHasAlias(toks[item:k]) && slices.ContainsFunc(edits, func(e edit) bool { return e.from >= toks[item].pos && e.from < toks[k-1].end }) {
				text := body[toks[item].pos:toks[k-1].end]
				aliases = append(aliases, edit{toks[k-1].end, toks[k-1].end, " AS `" + strings.ReplaceAll(text, "`", "``") + "`"})
			}
			item = k + 1
		}
	}
	// Each alias goes after the edits before its place: both lists are in text order.
	for _, a := range aliases {
		i := len(edits)
		for i > 0 && edits[i-1].from > a.from {
			i--
		}
		edits = slices.Insert(edits, i, a)
	}
	var b strings.Builder
	b.WriteString(st.SQL[:start])
	last := 0
	for _, e := range edits {
		b.WriteString(body[last:e.from])
		b.WriteString(e.text)
		last = e.to
	}
	b.WriteString(body[last:])
	return b.String(), true
}

// clauseWords end a select list.
var clauseWords = map[string]bool{"from": true, "into": true, "where": true, "group": true, "having": true, "window": true,
	"order": true, "limit": true, "union": true, "except": true, "intersect": true, "for": true, "lock": true, "procedure": true}

// depthAt returns the parenthesis depth of toks[k] counted from toks[from].
func depthAt(toks []token, from, k int) int {
	depth := 0
	for _, t := range toks[from:k] {
		switch {
		case t.kind == tokPunct && t.text == "(":
			depth++
		case t.kind == tokPunct && t.text == ")":
			depth--
		}
	}
	return depth
}

// ShowDiagnostics reads SHOW WARNINGS or SHOW ERRORS [LIMIT [offset,] count]: the statement
// without its LIMIT, the offset, and the count (merge.NoLimit without one). ok is false for any
// other statement.
func ShowDiagnostics(sql string) (show string, offset, limit int64, ok bool) {
	toks, lexed := lex(sql[hint.StatementStart(sql):])
	if n := len(toks); n > 0 && toks[n-1].text == ";" {
		toks = toks[:n-1]
	}
	if !lexed || len(toks) < 2 || !toks[0].is("show") || !toks[1].is("warnings") && !toks[1].is("errors") {
		return "", 0, 0, false
	}
	show, limit = "SHOW "+strings.ToUpper(toks[1].text), merge.NoLimit
	rest := toks[2:]
	num := func(t token) (int64, bool) {
		n, err := strconv.ParseInt(t.text, 10, 64)
		return n, t.kind == tokNumber && err == nil && n >= 0
	}
	switch {
	case len(rest) == 0:
		return show, 0, limit, true
	case len(rest) == 2 && rest[0].is("limit"):
		limit, ok = num(rest[1])
	case len(rest) == 4 && rest[0].is("limit") && rest[2].text == ",":
		offset, ok = num(rest[1])
		var ok2 bool
		limit, ok2 = num(rest[3])
		ok = ok && ok2
	}
	return show, offset, limit, ok
}

// systemSchemas are the schemas of the server's own tables.
var systemSchemas = map[string]bool{"information_schema": true, "performance_schema": true, "mysql": true, "sys": true}

// systemQualified returns the tables the tokens name qualified by a system schema
// (information_schema.innodb_trx …), lower case, each once.
func systemQualified(toks []token) []string {
	var names []string
	for i := 0; i+2 < len(toks); i++ {
		if toks[i+1].kind != tokPunct || toks[i+1].text != "." {
			continue
		}
		schema, table := identText(toks[i]), identText(toks[i+2])
		if schema != "" && table != "" && systemSchemas[schema] && !slices.Contains(names, table) {
			names = append(names, table)
		}
	}
	return names
}

// identText returns a word or quoted identifier token as a lower-case name, "" for another token.
func identText(t token) string {
	switch t.kind {
	case tokIdent:
		return strings.ToLower(t.val)
	case tokWord:
		return strings.ToLower(t.text)
	}
	return ""
}
