package main

import (
	"database/sql/driver"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/obroute/obroute/hint"
)

// A general log writes a prepared statement's Prepare line with its text (the ? in it) and each
// Execute line with the text the server ran: each ? replaced by its value, written as a literal
// (NULL, a number, a quoted string, escaped as the session's sql_mode escapes). It writes the
// same two lines for an SQL PREPARE / EXECUTE and for EXECUTE IMMEDIATE, after their Query
// line, and no Execute line when the EXECUTE fails (an unknown name, a wrong number of values).
// preparedConn follows which statement each Execute line of one connection ran.

// maxPrepared bounds the binary-protocol statements followed per connection: the log does not
// say which statement a Close stmt line closes.
const maxPrepared = 256

// expectation is what the Query line before a Prepare or Execute line announced.
type expectation uint8

const (
	expectNothing    expectation = iota
	expectPrepare                // PREPARE name FROM …, EXECUTE IMMEDIATE …: a Prepare line
	expectExecute                // EXECUTE name: an Execute line of the statement's text
	expectAnyExecute             // EXECUTE name of a statement prepared before the log began
)

// preparedConn is what one connection of a general log prepared.
type preparedConn struct {
	fromStart bool // its Connect line was read: it prepared nothing before the log
	// backslash is how its strings are read, as the last SET sql_mode of the log set it: 1
	// with backslash escapes, 2 under NO_BACKSLASH_ESCAPES, 0 not known (newLexStateFor).
	backslash int8
	named     map[string]string // SQL PREPAREd statements by lower-case name: their text
	binary    []string          // texts of the binary-protocol statements, the latest last
	expect    expectation
	name      string // for expectPrepare: the name PREPARE gives ("" for EXECUTE IMMEDIATE)
	text      string // for expectExecute: the text the Execute line runs
	// from are, for expectPrepare, the texts the Prepare line may hold when the statement
	// gives a string literal (its value read with backslash escapes, and without); nil when
	// it gives something else (@q, CONCAT(…)). A Prepare line of another text is a
	// binary-protocol statement's: the server prepared nothing, it wrote no Prepare line.
	from []string
}

// query reads a Query line of the connection (an SQL statement it sent).
func (p *preparedConn) query(text []byte) {
	p.expect = expectNothing
	words := leadingWords(text, 3)
	if len(words) < 2 {
		return
	}
	switch verb, name := strings.ToLower(words[0]), strings.ToLower(unquoteName(words[1])); {
	case verb == "prepare":
		// A statement of that name is deallocated first, even when the new one fails.
		delete(p.named, name)
		p.expect, p.name, p.from = expectPrepare, name, preparedFrom(text)
	case verb == "execute" && strings.EqualFold(words[1], "immediate"): // `immediate` is a name
		p.expect, p.name, p.from = expectPrepare, "", preparedFrom(text)
	case verb == "execute":
		if t, ok := p.named[name]; ok {
			p.expect, p.text = expectExecute, t
			if placeholders(t) > 0 && !usingClause.Match(text) {
				// The server refuses an EXECUTE without values for the ?: no Execute line.
				p.expect = expectNothing
			}
		} else if !p.fromStart {
			p.expect = expectAnyExecute
		} // else the EXECUTE fails (an unknown prepared statement): no Execute line
	case (verb == "deallocate" || verb == "drop") && name == "prepare" && len(words) == 3:
		delete(p.named, strings.ToLower(unquoteName(words[2])))
	}
}

// prepare reads a Prepare line: of an SQL PREPARE or EXECUTE IMMEDIATE after their Query
// line, else of a binary-protocol statement.
func (p *preparedConn) prepare(text string) {
	if p.expect == expectPrepare && p.from != nil && !slices.Contains(p.from, text) {
		p.expect = expectNothing // the SQL statement failed: this is a binary-protocol one
	}
	if p.expect == expectPrepare {
		if p.name == "" {
			p.expect, p.text = expectExecute, text
		} else {
			if p.named == nil {
				p.named = map[string]string{}
			}
			p.named[p.name], p.expect = text, expectNothing
		}
		return
	}
	p.expect = expectNothing
	for i, t := range p.binary {
		if t == text {
			p.binary = append(p.binary[:i], p.binary[i+1:]...)
			break
		}
	}
	if len(p.binary) == maxPrepared {
		p.binary = p.binary[1:]
	}
	p.binary = append(p.binary, text)
}

// execute reads an Execute line: sqlExecute is set when it is the statement an SQL EXECUTE or
// EXECUTE IMMEDIATE ran (the Query line before is the statement the application sent);
// otherwise, when it runs one of the binary-protocol statements, prepared is its text and args
// the values of its ?.
func (p *preparedConn) execute(ran string) (sqlExecute bool, prepared string, args []driver.NamedValue) {
	expect := p.expect
	p.expect = expectNothing
	switch expect {
	case expectAnyExecute:
		return true, "", nil
	case expectExecute:
		if _, ok := bindExecute(p.text, ran); ok {
			return true, "", nil
		}
	}
	for i := len(p.binary) - 1; i >= 0; i-- {
		if args, ok := bindExecute(p.binary[i], ran); ok && !slices.ContainsFunc(args, isLogDefault) {
			return false, p.binary[i], args
		}
	}
	return false, "", nil
}

// preparedStatement matches the start of PREPARE name FROM and EXECUTE IMMEDIATE, up to the
// text they prepare.
var preparedStatement = regexp.MustCompile(`(?is)^(?:prepare\s+(?:` + "`[^`]*`" + `|\S+)\s+from|execute\s+immediate)\s*`)

// usingClause matches the USING of an EXECUTE.
var usingClause = regexp.MustCompile(`(?i)\busing\b`)

// preparedFrom returns the texts a PREPARE or EXECUTE IMMEDIATE prepares when it gives them
// as a string literal (read with backslash escapes, and without), else nil.
func preparedFrom(text []byte) []string {
	s := string(text)
	s = s[hint.StatementStart(s):]
	m := preparedStatement.FindStringIndex(s)
	if m == nil {
		return nil
	}
	s = s[m[1]:]
	var from []string
	for _, backslash := range []bool{true, false} {
		if v, _, ok := readLogLiteral(s, backslash); ok {
			if t, ok := v.(string); ok && s[0] == '\'' {
				from = append(from, strings.TrimSpace(t))
			}
		}
	}
	return from
}

// placeholders counts the ? of a prepared statement's text, outside strings and comments.
func placeholders(text string) int {
	m := lexMode{backslash: true}
	n := 0
	for i := 0; i < len(text); i++ {
		if text[i] == '?' && m.quote == 0 && !m.block && !m.line {
			n++
		}
		m.feed([]byte{text[i]})
	}
	return n
}

// other reads any other line of the connection.
func (p *preparedConn) other() { p.expect = expectNothing }

// leadingWords returns the first n words of a statement, after its leading comments.
func leadingWords(text []byte, n int) []string {
	s := string(text[:min(len(text), 512)])
	words := strings.Fields(s[hint.StatementStart(s):])
	return words[:min(n, len(words))]
}

// unquoteName returns a prepared statement's name without its backquotes.
func unquoteName(w string) string {
	if len(w) >= 2 && w[0] == '`' && w[len(w)-1] == '`' {
		return strings.ReplaceAll(w[1:len(w)-1], "``", "`")
	}
	return w
}

// bindExecute reads ran, an Execute line's text, as prepared with each ? replaced by a
// literal, as the server writes it: the literals' values, or ok false when ran is not prepared
// run. Strings are read with backslash escapes, else as under NO_BACKSLASH_ESCAPES (the
// session's sql_mode, which decides how the server escaped them, is not known here).
func bindExecute(prepared, ran string) ([]driver.NamedValue, bool) {
	for _, backslash := range []bool{true, false} {
		if args, ok := bindExecuteMode(prepared, ran, backslash); ok {
			return args, true
		}
	}
	return nil, false
}

func bindExecuteMode(prepared, ran string, backslash bool) ([]driver.NamedValue, bool) {
	m := lexMode{backslash: backslash}
	var args []driver.NamedValue
	j := 0
	for i := 0; i < len(prepared); i++ {
		c := prepared[i]
		if c == '?' && m.quote == 0 && !m.block && !m.line {
			v, n, ok := readLogLiteral(ran[j:], backslash)
			if !ok {
				return nil, false
			}
			args = append(args, driver.NamedValue{Ordinal: len(args) + 1, Value: v})
			j += n
			m.feed([]byte{' '})
			continue
		}
		if j >= len(ran) || ran[j] != c {
			return nil, false
		}
		j++
		m.feed([]byte{c})
	}
	return args, j == len(ran)
}

// readLogLiteral reads the literal a general log writes for a placeholder's value at the start
// of s: NULL (nil), a number (int64, or its text), a quoted string (its value as a string; a
// binary value is written as one too). n is the literal's length.
func readLogLiteral(s string, backslash bool) (v driver.Value, n int, ok bool) {
	switch {
	case strings.HasPrefix(s, "NULL"):
		return nil, 4, true
	case strings.HasPrefix(s, "DEFAULT"):
		// EXECUTE … USING DEFAULT: the column's default (an SQL EXECUTE's line only).
		return logDefault{}, len("DEFAULT"), true
	case strings.HasPrefix(s, "TIMESTAMP'"), strings.HasPrefix(s, "DATE'"), strings.HasPrefix(s, "TIME'"):
		// A time value of an SQL EXECUTE … USING (NOW(), DATE'…'), written as a typed literal.
		q := strings.IndexByte(s, '\'')
		v, n, ok := readLogLiteral(s[q:], backslash)
		return v, q + n, ok
	case s != "" && s[0] == '\'':
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			c := s[i]
			switch {
			case c == '\\' && backslash && i+1 < len(s):
				i++
				b.WriteByte(unescape(s[i]))
			case c == '\'' && i+1 < len(s) && s[i+1] == '\'':
				i++
				b.WriteByte('\'')
			case c == '\'':
				return b.String(), i + 1, true
			default:
				b.WriteByte(c)
			}
		}
		return nil, 0, false
	}
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() {
		for i < len(s) && isDigitByte(s[i]) {
			i++
		}
	}
	start := i
	digits()
	if i < len(s) && s[i] == '.' {
		i++
		digits()
	}
	if i == start {
		return nil, 0, false
	}
	if i+1 < len(s) && (s[i] == 'e' || s[i] == 'E') {
		k := i + 1
		if s[k] == '-' || s[k] == '+' {
			k++
		}
		if k < len(s) && isDigitByte(s[k]) {
			i = k
			digits()
		}
	}
	if x, err := strconv.ParseInt(s[:i], 10, 64); err == nil {
		return x, i, true
	}
	return s[:i], i, true
}

// logDefault is the value DEFAULT of an Execute line.
type logDefault struct{}

func isLogDefault(v driver.NamedValue) bool { _, ok := v.Value.(logDefault); return ok }

// unescape is the byte a backslash escape stands for in a MariaDB string.
func unescape(c byte) byte {
	switch c {
	case '0':
		return 0
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'Z':
		return 26
	}
	return c
}
