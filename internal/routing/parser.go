package routing

import (
	"context"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// The SQL parser is dolthub's fork of the vitess parser: importing it registers no flag, starts
// no logger and sets no global state that obroute depends on. This file is the seam to it:
// reading a statement, printing a syntax tree back, and checking that the printed text means
// what the application wrote. The other files walk the syntax tree (vitess's node types); the
// placeholders, SET assignments, select items and the tables of statements the parser cannot
// read come from obroute's own lexer (lex.go), whatever the parser.

// parsed is a statement as the parser read it.
type parsed struct {
	ast  sqlparser.Statement
	text string  // the text the parser read, before the rewrite of misread literals
	toks []token // text's tokens
	// typed are the DATE, TIME and TIMESTAMP literals, by node: the parser reads them as plain
	// strings, and printed as strings they would compare and convert as strings.
	typed map[*sqlparser.SQLVal]string
}

// typedMark starts the text of a string literal that stood for a typed literal, while the
// parser reads it; the letter after it names the type. NUL never appears in printed SQL (the
// printer writes it as \0), and a statement with a NUL byte of its own is not marked.
const typedMark = '\x00'

var typedNames = map[byte]string{'D': "date", 'T': "time", 'S': "timestamp"}

// parse reads sql, whose tokens are toks (nil: lexed here). The parser reads two things differently from the server, so they are
// rewritten first into what the server reads the same way: \% and \_ in a string literal (the
// server keeps the backslash, the parser drops it: 'a\%' becomes 'a\\%'), and typed temporal
// literals (DATE '2025-01-01' becomes a marked string, restored after parsing).
func parse(sql string, toks []token) (*parsed, error) {
	if toks == nil {
		toks, _ = lex(sql)
	}
	input, marked := parseInput(sql, toks)
	// The parser reads /*! … */ whatever its version and skips /*M! … */: it reads the text as
	// MariaDB does.
	input = plainText(input)
	ast, err := sqlparser.ParseWithOptions(context.Background(), input, sqlparser.ParserOptions{})
	if err != nil {
		return nil, err
	}
	p := &parsed{ast: ast, text: sql, toks: toks}
	if marked {
		p.typed = map[*sqlparser.SQLVal]string{}
		_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
			if v, ok := n.(*sqlparser.SQLVal); ok && v != nil && v.Type == sqlparser.StrVal && len(v.Val) >= 2 && v.Val[0] == typedMark {
				p.typed[v] = typedNames[v.Val[1]]
				v.Val = v.Val[2:]
			}
			return true, nil
		}, ast)
	}
	return p, nil
}

// parseInput returns sql with the string literals the parser would misread rewritten, a space
// between two adjacent minus signs, and whether typed literals were marked.
func parseInput(sql string, toks []token) (string, bool) {
	var b strings.Builder
	last, marked := 0, false
	canMark := strings.IndexByte(sql, 0) < 0
	for i, t := range toks {
		if t.kind == tokPunct && t.text == "-" && i+1 < len(toks) && toks[i+1].pos == t.end &&
			toks[i+1].kind == tokPunct && strings.HasPrefix(toks[i+1].text, "-") {
			// "--1" is two minus signs to MariaDB (a comment needs a blank or a control character
			// after "--") and a comment to the parser: it reads "- -1".
			if b.Len() == 0 {
				b.Grow(len(sql) + 16)
			}
			writeString(&b, sql[last:t.end])
			writeByte(&b, ' ')
			last = t.end
			continue
		}
		if t.kind != tokString || t.national {
			continue
		}
		start, mark := t.pos, byte(0)
		if i > 0 && canMark && toks[i-1].kind == tokWord {
			switch strings.ToLower(toks[i-1].text) {
			case "date":
				mark = 'D'
			case "time":
				mark = 'T'
			case "timestamp":
				mark = 'S'
			}
		}
		if mark != 0 {
			start = toks[i-1].pos
		} else if !strings.Contains(t.text, `\%`) && !strings.Contains(t.text, `\_`) {
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(sql) + 16)
		}
		writeString(&b, sql[last:start])
		writeByte(&b, '\'')
		if mark != 0 {
			writeByte(&b, typedMark)
			writeByte(&b, mark)
			marked = true
		}
		writeEscaped(&b, t.val)
		writeByte(&b, '\'')
		last = t.end
	}
	if last == 0 {
		return sql, false
	}
	writeString(&b, sql[last:])
	return b.String(), marked
}

// writeEscaped writes v as the body of a single-quoted literal.
func writeEscaped(b *strings.Builder, v string) {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\', '\'':
			writeByte(b, '\\')
			writeByte(b, c)
		case 0:
			writeString(b, `\0`)
		default:
			writeByte(b, c)
		}
	}
}

// argIndex maps the parser's name for the n-th ? placeholder (":v1", ":v2", …) to its 0-based
// index; -1 for any other name.
func argIndex(name string) int {
	name = strings.TrimPrefix(name, ":")
	if !strings.HasPrefix(name, "v") {
		return -1
	}
	n, err := strconv.Atoi(name[1:])
	if err != nil || n < 1 {
		return -1
	}
	return n - 1
}

// argOf returns the placeholder index of e, ok false when e is not a ? placeholder.
func argOf(e sqlparser.Expr) (int, bool) {
	v, ok := e.(*sqlparser.SQLVal)
	if !ok || v.Type != sqlparser.ValArg {
		return 0, false
	}
	return argIndex(string(v.Val)), true
}

// unparen strips the parentheses around e.
//
// Not inlined: copied into each of its many call sites it would grow every
// binary that imports the driver (see driver/import_test.go).
//
//go:noinline
func unparen(e sqlparser.Expr) sqlparser.Expr {
	for {
		p, ok := e.(*sqlparser.ParenExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}

// conjuncts splits e into the terms of its top-level AND.
func conjuncts(e sqlparser.Expr, out []sqlparser.Expr) []sqlparser.Expr {
	switch x := unparen(e).(type) {
	case nil:
		return out
	case *sqlparser.AndExpr:
		return conjuncts(x.Right, conjuncts(x.Left, out))
	default:
		return append(out, x)
	}
}

// nodeText prints a node for messages and keys.
//
// Not inlined: copied into each of its many call sites it would grow every
// binary that imports the driver (see driver/import_test.go).
//
//go:noinline
func nodeText(n sqlparser.SQLNode) string { return sqlparser.String(n) }

// faithful checks that printing the statement keeps what its meaning rests on and the parser
// might lose: every literal (with its type or N prefix), variable and placeholder of the text it
// read. It fails with ErrUnreadable naming what would change.
func (p *parsed) faithful() error {
	pr := &printer{typed: p.typed}
	buf := sqlparser.NewTrackedBuffer(pr.format)
	pr.format(buf, p.ast)
	want := p.toks
	got, ok := lex(buf.String())
	if !ok {
		return errorf("%w: the statement as the parser printed it cannot be read back; query the physical tables directly", ErrUnreadable)
	}
	if sameAtoms(want, got) {
		return nil
	}
	count := map[string]int{}
	for _, a := range atoms(want) {
		count[a.key]++
	}
	for _, a := range atoms(got) {
		count[a.key]--
	}
	// A string written as an alias (AS 'total') is printed as a name (AS total): the names the
	// printed text has and the written text has not.
	names := map[string]int{}
	for _, t := range got {
		if n, ok := identName(t); ok {
			names[n]++
		}
	}
	for _, t := range want {
		if n, ok := identName(t); ok {
			names[n]--
		}
	}
	for _, a := range atoms(want) {
		if count[a.key] > 0 && strings.HasPrefix(a.key, "s:") && names[a.key[2:]] > 0 {
			count[a.key]--
			names[a.key[2:]]--
		}
		if count[a.key] > 0 {
			return errorf("%w: the parser reads %s differently from the server, so the statement rewritten for its physical tables would change; %s", ErrUnreadable, a.text, a.fix())
		}
	}
	for _, a := range atoms(got) {
		if count[a.key] < 0 && a.key != "#0" { // the printer writes UTC_TIMESTAMP as UTC_TIMESTAMP(0)
			return errorf("%w: the parser reads the statement with %s that the server would not see; write the statement without it", ErrUnreadable, a.text)
		}
	}
	return nil
}

// identName returns the name an identifier token stands for.
func identName(t token) (string, bool) {
	switch t.kind {
	case tokWord:
		return t.text, true
	case tokIdent:
		return t.val, true
	}
	return "", false
}

// atom is one thing a statement's meaning rests on: a literal, variable or placeholder.
type atom struct {
	key  string // kind and value
	text string // as written
}

func (a atom) fix() string {
	switch a.key[0] {
	case 'n':
		return "write the string without the N prefix"
	case 'd', 't':
		return "write the value as a plain string or with CAST('…' AS type)"
	case '@':
		return "write the variable name with backquotes (@`name`)"
	}
	return "write it another way"
}

func atoms(toks []token) []atom {
	var out []atom
	for i, t := range toks {
		if kind, val, ok := atomOf(toks, i); ok {
			text := t.text
			switch {
			case t.kind == tokParam:
				text = "a ? placeholder"
			case kind != "s:" && kind != "n:" && t.kind == tokString:
				text = toks[i-1].text + " " + t.text
			}
			out = append(out, atom{kind + val, text})
		}
	}
	return out
}

// atomOf returns the kind and value of toks[i] when it is an atom, without allocating.
func atomOf(toks []token, i int) (kind, val string, ok bool) {
	switch t := toks[i]; t.kind {
	case tokString:
		if t.national {
			return "n:", t.val, true
		}
		if i > 0 && toks[i-1].kind == tokWord {
			for _, w := range [...]string{"date", "time", "timestamp"} {
				if strings.EqualFold(toks[i-1].text, w) {
					return w + ":", t.val, true
				}
			}
		}
		return "s:", t.val, true
	case tokNumber:
		return "#", strings.ToLower(t.text), true
	case tokVar:
		return "", t.val, true
	case tokParam:
		return "?", "", true
	}
	return "", "", false
}

// sameAtoms reports whether a and b have the same atoms in the same order, the common case,
// checked without allocating.
func sameAtoms(a, b []token) bool {
	i, j := 0, 0
	for {
		for i < len(a) && a[i].kind == tokWord || i < len(a) && a[i].kind == tokIdent || i < len(a) && a[i].kind == tokPunct {
			i++
		}
		for j < len(b) && b[j].kind == tokWord || j < len(b) && b[j].kind == tokIdent || j < len(b) && b[j].kind == tokPunct {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		ka, va, _ := atomOf(a, i)
		kb, vb, _ := atomOf(b, j)
		if ka != kb || va != vb {
			return false
		}
		i, j = i+1, j+1
	}
}
