package routing

import "strings"

// obroute reads a few things of a statement without the SQL parser, so that they do not depend
// on which parser is in use or on whether it knows the statement: the ? placeholders, the SET
// assignments as written, the select items as written, the tables of a statement the parser
// cannot read, and the literals a printed statement must keep. lex splits a statement into
// tokens the way MySQL and MariaDB do (backslash escapes on, as in the default sql_mode).

// tokKind is the kind of a token.
type tokKind uint8

const (
	tokWord   tokKind = iota + 1 // unquoted word: keyword or identifier, as written
	tokIdent                     // `quoted` identifier; val is the name
	tokString                    // string literal (adjacent literals joined); val is its value
	tokNumber                    // number, hex or bit literal, as written
	tokVar                       // @user or @@system variable; val is its name in lower case
	tokParam                     // ? placeholder
	tokPunct                     // operator or punctuation, as written
)

// token is one token of a statement: text is sql[pos:end].
type token struct {
	kind     tokKind
	text     string
	val      string
	pos, end int
	national bool // N'…'
}

// is reports whether t is the unquoted word w (case-insensitive).
//
// Not inlined: copied into each of its many call sites it would grow every
// binary that imports the driver (see driver/import_test.go).
//
//go:noinline
func (t token) is(w string) bool { return t.kind == tokWord && asciiFold(t.text, w) }

// asciiFold reports whether a and b are equal ignoring ASCII case only: the server reads its
// keywords in ASCII (ſELECT is no SELECT).
func asciiFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// lex splits sql into tokens. Comments are skipped, but the content of /*! … */ and /*M! … */
// is read as code, as the server reads it. ok is false when a string, quoted identifier or
// comment is not terminated.
func lex(sql string) (toks []token, ok bool) {
	l := lexer{s: sql}
	toks = make([]token, 0, len(sql)/6+8)
	for {
		t, more, good := l.next()
		if !good {
			return toks, false
		}
		if !more {
			return toks, true
		}
		toks = append(toks, t)
	}
}

type lexer struct {
	s    string
	i    int
	exec bool // inside an executable comment
	// dependent is the opening of the first executable comment whose version number leaves it
	// to the server's version whether it runs (see execComment).
	dependent string
	// edits, when not nil, collects where the executable comments' markers are (see plainText).
	edits *[]commentEdit
}

// commentEdit is n bytes at at of an executable comment's markers: the opening (/*!, /*M! and
// the version number) and closing */ of one that runs, blanked in plainText; the ! of one
// that does not, blanked to make it a plain comment.
type commentEdit struct{ at, n int }

// execComment reads the executable comment s starts with (/*! or /*M!), as MariaDB reads it:
// an optional version of 5 or 6 digits; without one the content runs. A version runs when it
// is not above the server's, except MySQL's versions from 50700 to 99999 in /*! (MariaDB skips
// those). open is the length of the opening; run reports whether MariaDB runs the content;
// known is false for a version above 100000 (MariaDB 10.0.0), which runs or not by the
// server's version.
func execComment(s string) (open int, run, known bool) {
	open = strings.IndexByte(s, '!') + 1
	maria := open == 4
	digits := 0
	for open+digits < len(s) && digits < 6 && isDigit(s[open+digits]) {
		digits++
	}
	if digits < 5 {
		return open, true, true
	}
	version := 0
	for _, c := range s[open : open+digits] {
		version = version*10 + int(c-'0')
	}
	open += digits
	switch {
	case version >= 50700 && version <= 99999 && !maria:
		return open, false, true
	case version > 100000:
		return open, true, false
	}
	return open, true, true
}

// plainText returns sql with its executable comments written as MariaDB reads them, at the
// same offsets: the markers of one that runs blanked (its content is plain SQL), one that
// does not made a plain comment. sql itself when it has none.
func plainText(sql string) string {
	if !strings.Contains(sql, "/*!") && !strings.Contains(sql, "/*M!") {
		return sql
	}
	var edits []commentEdit
	l := lexer{s: sql, edits: &edits}
	for {
		_, more, good := l.next()
		if !good || !more {
			break
		}
	}
	if len(edits) == 0 {
		return sql
	}
	b := []byte(sql)
	for _, e := range edits {
		for i := e.at; i < e.at+e.n && i < len(b); i++ {
			b[i] = ' '
		}
	}
	return string(b)
}

// dependentComment returns the opening of sql's first executable comment that runs or not by
// the server's version, "" when it has none.
func dependentComment(sql string) string {
	if !strings.Contains(sql, "/*!") && !strings.Contains(sql, "/*M!") {
		return ""
	}
	l := lexer{s: sql}
	for l.dependent == "" {
		_, more, good := l.next()
		if !good || !more {
			break
		}
	}
	return l.dependent
}

// skip moves past blanks and comments.
func (l *lexer) skip() bool {
	s := l.s
	for l.i < len(s) {
		c := s[l.i]
		if c != ' ' && c != '#' && c != '-' && c != '*' && c != '/' && (c < '\t' || c > '\r') {
			return true // the start of a token
		}
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.i++
		case c == '#' || c == '-' && strings.HasPrefix(s[l.i:], "--") && (l.i+2 == len(s) || s[l.i+2] <= ' ' || s[l.i+2] == 0x7f):
			// "--" starts a comment only before a blank or a control character (DEL included):
			// "--1" is two minus signs to MariaDB.
			if j := strings.IndexByte(s[l.i:], '\n'); j >= 0 {
				l.i += j + 1
			} else {
				l.i = len(s)
			}
		case l.exec && strings.HasPrefix(s[l.i:], "*/"):
			if l.edits != nil {
				*l.edits = append(*l.edits, commentEdit{at: l.i, n: 2})
			}
			l.i += 2
			l.exec = false
		case strings.HasPrefix(s[l.i:], "/*!") || strings.HasPrefix(s[l.i:], "/*M!"):
			start := l.i
			open, run, known := execComment(s[l.i:])
			if !run {
				// MariaDB skips it as a comment (a MySQL version from 5.7 on).
				if l.edits != nil {
					*l.edits = append(*l.edits, commentEdit{at: start + strings.IndexByte(s[start:], '!'), n: 1})
				}
				j := strings.Index(s[l.i+2:], "*/")
				if j < 0 {
					return false
				}
				l.i += j + 4
				continue
			}
			if !known && l.dependent == "" {
				l.dependent = s[start : start+open]
			}
			if l.edits != nil {
				*l.edits = append(*l.edits, commentEdit{at: start, n: open})
			}
			l.i += open
			l.exec = true
		case strings.HasPrefix(s[l.i:], "/*"):
			j := strings.Index(s[l.i+2:], "*/")
			if j < 0 {
				return false
			}
			l.i += j + 4
		default:
			return true
		}
	}
	return true
}

// next returns the next token; more is false at the end of the text, ok false on an
// unterminated construct.
func (l *lexer) next() (t token, more, ok bool) {
	if !l.skip() {
		return t, false, false
	}
	s := l.s
	if l.i >= len(s) {
		return t, false, !l.exec
	}
	start := l.i
	c := s[l.i]
	t = token{pos: start}
	switch {
	case c == '\'' || c == '"':
		t.kind = tokString
		if !l.literals(&t) {
			return t, false, false
		}
	case (c == 'N' || c == 'n') && l.at(1) == '\'':
		l.i++
		t.kind, t.national = tokString, true
		if !l.literals(&t) {
			return t, false, false
		}
	case (c == 'X' || c == 'x' || c == 'B' || c == 'b') && l.at(1) == '\'':
		j := strings.IndexByte(s[l.i+2:], '\'')
		if j < 0 {
			return t, false, false
		}
		t.kind = tokNumber
		l.i += j + 3
	case c == '`':
		t.kind = tokIdent
		v, good := l.quoted('`')
		if !good {
			return t, false, false
		}
		t.val = v
	case c == '@':
		t.kind = tokVar
		l.i++
		if l.at(0) == '@' {
			l.i++
		}
		if q := l.at(0); q == '\'' || q == '"' || q == '`' {
			at := s[start:l.i] // @ or @@: a quoted system variable keeps both
			v, good := l.quoted(q)
			if !good {
				return t, false, false
			}
			t.val = strings.ToLower(at + v)
		} else {
			for l.i < len(s) && (isWordByte(s[l.i]) || s[l.i] == '.') {
				l.i++
			}
			t.val = strings.ToLower(s[start:l.i])
		}
	case c == '?':
		t.kind = tokParam
		l.i++
	case isDigit(c) || c == '.' && isDigit(l.at(1)):
		t.kind = tokNumber
		l.number()
		if l.i < len(s) && isWordByte(s[l.i]) { // 1x, 0x4g: an identifier that starts with digits
			t.kind = tokWord
			l.word()
		}
	case isWordByte(c):
		t.kind = tokWord
		l.word()
	default:
		t.kind = tokPunct
		l.i++
		if l.i < len(s) && strings.IndexByte("=<>|&-", s[l.i]) >= 0 { // the second byte of every operator below
			for _, op := range [...]string{"<=>", "->>", "<=", ">=", "<>", "!=", "<<", ">>", "&&", "||", ":=", "->"} {
				if strings.HasPrefix(s[start:], op) {
					l.i = start + len(op)
					break
				}
			}
		}
	}
	t.end = l.i
	t.text = s[start:l.i]
	return t, true, true
}

func (l *lexer) at(k int) byte {
	if l.i+k < len(l.s) {
		return l.s[l.i+k]
	}
	return 0
}

func (l *lexer) word() {
	for l.i < len(l.s) && isWordByte(l.s[l.i]) {
		l.i++
	}
}

func (l *lexer) number() {
	s := l.s
	if s[l.i] == '0' && (l.at(1) == 'x' || l.at(1) == 'b') {
		j := l.i + 2
		for j < len(s) && (isDigit(s[j]) || l.at(1) == 'x' && strings.IndexByte("abcdefABCDEF", s[j]) >= 0) {
			j++
		}
		if j > l.i+2 {
			l.i = j
			return
		}
	}
	for l.i < len(s) && isDigit(s[l.i]) {
		l.i++
	}
	if l.at(0) == '.' {
		l.i++
		for l.i < len(s) && isDigit(s[l.i]) {
			l.i++
		}
	}
	if e := l.at(0); (e == 'e' || e == 'E') && (isDigit(l.at(1)) || (l.at(1) == '+' || l.at(1) == '-') && isDigit(l.at(2))) {
		l.i += 2
		for l.i < len(s) && isDigit(s[l.i]) {
			l.i++
		}
	}
}

// literals reads a string literal and the literals that follow it separated by blanks only,
// which MySQL joins into one.
func (l *lexer) literals(t *token) bool {
	var b strings.Builder
	for n := 0; ; n++ {
		v, ok := l.quoted(l.s[l.i])
		if !ok {
			return false
		}
		if n == 0 {
			t.val = v
		} else {
			if n == 1 {
				b.WriteString(t.val)
			}
			b.WriteString(v)
			t.val = ""
		}
		j := l.i
		for j < len(l.s) && (l.s[j] == ' ' || l.s[j] == '\t' || l.s[j] == '\n' || l.s[j] == '\r') {
			j++
		}
		if j >= len(l.s) || l.s[j] != '\'' && l.s[j] != '"' {
			break
		}
		l.i = j
	}
	if b.Len() > 0 {
		t.val = b.String()
	}
	return true
}

// quoted reads a quoted string or identifier starting at l.i and returns its value: a doubled
// quote stands for one; in strings, a backslash escapes the next character as MySQL does.
func (l *lexer) quoted(q byte) (string, bool) {
	s := l.s
	// Most literals have no escape: their value is their text.
	if end := strings.IndexByte(s[l.i+1:], q); end >= 0 {
		end += l.i + 1
		plain := end+1 >= len(s) || s[end+1] != q
		if plain && (q == '`' || strings.IndexByte(s[l.i+1:end], '\\') < 0) {
			v := s[l.i+1 : end]
			l.i = end + 1
			return v, true
		}
	}
	var b strings.Builder
	for i := l.i + 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			if i+1 < len(s) && s[i+1] == q {
				b.WriteByte(q)
				i++
				continue
			}
			l.i = i + 1
			return b.String(), true
		case c == '\\' && q != '`' && i+1 < len(s):
			i++
			b.WriteString(unescape(s[i]))
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}

// unescape is the value of the escape sequence \c in a MySQL string literal. \% and \_ keep
// their backslash, so that LIKE patterns can match the characters themselves.
func unescape(c byte) string {
	switch c {
	case '0':
		return "\x00"
	case 'b':
		return "\b"
	case 'n':
		return "\n"
	case 'r':
		return "\r"
	case 't':
		return "\t"
	case 'Z':
		return "\x1a"
	case '%', '_':
		return "\\" + string(c)
	}
	return string(c)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isWordByte reports whether c may be part of an unquoted identifier (any byte of a multi-byte
// UTF-8 character may).
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c) || c == '_' || c == '$' || c >= 0x80
}

// countParams counts the ? placeholders among toks, as the server counts them.
func countParams(toks []token) int {
	n := 0
	for _, t := range toks {
		if t.kind == tokParam {
			n++
		}
	}
	return n
}
