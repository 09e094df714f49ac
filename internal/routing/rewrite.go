package routing

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// A template is a statement printed once at analysis with markers where the per-execution parts
// go: the physical table name, the clamp predicate of the table's span, a computed LIMIT, and
// (for INSERT) the rows. Rendering a template is string concatenation, no parsing or printing.
type template struct {
	pieces []piece
	// args are the indexes of the statement's arguments in the order their ? appear in the text.
	args []int
	// rowsAt is the number of args printed before the rows marker (INSERT only).
	rowsAt int
	size   int
	clocks int // clock pieces, each rendered as a literal of up to clockLen bytes
	// snips are the snippets (hidden columns of a merge leg written as SQL text) in the order
	// they appear, each with the args printed inside it; a rendering may print NULL instead.
	snips []snipSpan
}

// snipSpan is one snippet of a template: its marker name and its args, t.args[from:to].
type snipSpan struct {
	name     string
	from, to int
}

type pieceKind uint8

const (
	pText    pieceKind = iota
	pTable             // the physical table name
	pClamp             // the clamp predicate: the table's span on the shard key
	pLimit             // a LIMIT row count computed per execution
	pRows              // the VALUES rows of an INSERT
	pClock             // a clock function, sent as the statement's instant (text: kind, precision)
	pSnip              // the start of a snippet, up to the matching pSnipEnd
	pSnipEnd           // the end of a snippet
	pLit               // a literal of the statement, written as the application wrote it
)

type piece struct {
	kind pieceKind
	text string
	lit  int // pLit: the index of the literal in Statement.lits
}

// Markers written by the printer; \x00 never appears in printed SQL (the printer escapes it in
// string literals).
const (
	markTable = "\x00T"
	markClamp = "\x00C"
	markLimit = "\x00L"
	markRows  = "\x00R"
	markSnip  = "\x00S"
	markEnd   = "\x00E"
	markLit   = "\x00A" // followed by the literal's index and ';'
	// placeholder column names standing for the clamp and the computed LIMIT in an AST.
	clampColumn = "__obroute_clamp__"
	limitColumn = "__obroute_limit__"
)

// printer prints a syntax tree with ? for arguments, markers for the logical table, and typed
// literals as written. Comments inside the statement (optimizer hints) are printed as written,
// NUL bytes excepted.
type printer struct {
	logical string // lower case; "" prints every table as it is
	rows    bool   // print VALUES as the rows marker
	clock   bool   // print clock functions (NOW(), …) as clock markers
	typed   map[*sqlparser.SQLVal]string
	// rollup is the GROUP BY printed with WITH ROLLUP, which the parser does not read.
	rollup sqlparser.GroupBy
	// snippets are the hidden columns of a merge leg written as SQL text, by marker name.
	snippets map[string]snippet
	// subst are columns (select aliases) printed as other expressions.
	subst map[*sqlparser.ColName]sqlparser.Expr
	// lits are the placeholders that stand for literals of the statement (Statement.litSlots):
	// printed as literal markers, rendered as the literals were written.
	lits   []int32
	args   []int
	rowsAt int
	snips  []snipSpan
}

func (p *printer) format(buf *sqlparser.TrackedBuffer, node sqlparser.SQLNode) {
	switch n := node.(type) {
	case *sqlparser.SQLVal:
		if n == nil {
			break
		}
		if n.Type == sqlparser.ValArg {
			i := argIndex(string(n.Val))
			if k := slices.Index(p.lits, int32(i)); k >= 0 && i >= 0 {
				writeString(buf.Builder, markLit)
				writeString(buf.Builder, strconv.Itoa(k))
				writeByte(buf.Builder, ';')
				return
			}
			writeString(buf.Builder, "?")
			p.args = append(p.args, i)
			return
		}
		if t := p.typed[n]; t != "" {
			writeString(buf.Builder, t)
			writeByte(buf.Builder, ' ')
		}
		if n.Type == sqlparser.StrVal && !needsEscape(n.Val) {
			// As the parser prints it, without its byte-by-byte encoder: long values are common.
			writeByte(buf.Builder, '\'')
			buf.Write(n.Val)
			writeByte(buf.Builder, '\'')
			return
		}
	case *sqlparser.FuncExpr:
		if p.clock && n != nil && writeClockMark(buf, n) {
			return
		}
	case sqlparser.TableName:
		if p.logical != "" && strings.EqualFold(n.Name.String(), p.logical) {
			if !n.DbQualifier.IsEmpty() {
				buf.Myprintf("%v.", n.DbQualifier)
			}
			writeString(buf.Builder, markTable)
			return
		}
	case *sqlparser.ColName:
		if n == nil {
			break
		}
		switch n.Name.String() {
		case clampColumn:
			writeString(buf.Builder, markClamp)
			return
		case limitColumn:
			writeString(buf.Builder, markLimit)
			return
		}
		if sn, ok := p.snippets[n.Name.String()]; ok {
			span := snipSpan{name: n.Name.String(), from: len(p.args)}
			writeString(buf.Builder, markSnip)
			for i, piece := range sn.pieces {
				if i > 0 {
					buf.Myprintf("%v", sn.arg)
				}
				writeString(buf.Builder, piece)
			}
			writeString(buf.Builder, markEnd)
			span.to = len(p.args)
			p.snips = append(p.snips, span)
			return
		}
		if e, ok := p.subst[n]; ok {
			buf.Myprintf("(%v)", e)
			return
		}
	case sqlparser.GroupBy:
		if len(n) > 0 && len(p.rollup) > 0 && &n[0] == &p.rollup[0] {
			n.Format(buf)
			writeString(buf.Builder, " with rollup")
			return
		}
	case sqlparser.Comments:
		// A NUL byte in a comment would read as a marker: print the comments without it.
		for _, c := range n {
			writeString(buf.Builder, strings.ReplaceAll(string(c), "\x00", " "))
			writeByte(buf.Builder, ' ')
		}
		return
	case *sqlparser.AliasedValues:
		if n != nil {
			p.values(buf, *n)
			return
		}
	case sqlparser.AliasedValues:
		p.values(buf, n)
		return
	case sqlparser.Values:
		if p.rows {
			p.rowsAt = len(p.args)
			writeString(buf.Builder, "values "+markRows)
			return
		}
	}
	node.Format(buf)
}

// writeString and writeByte write to a printer's buffer. They are not inlined: format writes at
// many places, and each inlined copy would grow every binary that imports the driver (see
// driver/import_test.go).
//
//go:noinline
func writeString(b *strings.Builder, s string) { b.WriteString(s) }

//go:noinline
func writeByte(b *strings.Builder, c byte) { b.WriteByte(c) }

// needsEscape reports whether a string literal's value has a byte the printer escapes.
func needsEscape(v []byte) bool {
	for _, c := range [...]byte{0, '\'', '"', '\b', '\n', '\r', '\t', 26, '\\'} {
		if bytes.IndexByte(v, c) >= 0 {
			return true
		}
	}
	return false
}

// values prints the rows of an INSERT: as the rows marker when asked. The parser's own Format
// prints them without the formatter, which would print ? as :v1.
func (p *printer) values(buf *sqlparser.TrackedBuffer, n sqlparser.AliasedValues) {
	if p.rows {
		p.rowsAt = len(p.args)
		buf.WriteString("values " + markRows)
	} else {
		buf.Myprintf("%v", n.Values)
	}
	if !n.As.IsEmpty() {
		buf.Myprintf(" as %v%v", n.As, n.Columns)
	}
}

// print prints node into a template.
func (p *printer) print(node sqlparser.SQLNode) template {
	p.args, p.snips = nil, nil
	buf := sqlparser.NewTrackedBuffer(p.format)
	p.format(buf, node)
	t := splitTemplate(buf.String(), p.args)
	t.rowsAt = p.rowsAt
	t.snips = p.snips
	return t
}

func splitTemplate(s string, args []int) template {
	t := template{args: args, size: len(s)}
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			break
		}
		if i > 0 {
			t.pieces = append(t.pieces, piece{kind: pText, text: s[:i]})
		}
		if s[i+1] == clockMark[1] {
			t.pieces = append(t.pieces, piece{kind: pClock, text: s[i+2 : i+4]})
			t.clocks++
			s = s[i+4:]
			continue
		}
		if s[i+1] == markLit[1] {
			j := strings.IndexByte(s[i:], ';')
			k, _ := strconv.Atoi(s[i+2 : i+j])
			t.pieces = append(t.pieces, piece{kind: pLit, lit: k})
			s = s[i+j+1:]
			continue
		}
		var k pieceKind
		switch s[i+1] {
		case 'T':
			k = pTable
		case 'C':
			k = pClamp
		case 'L':
			k = pLimit
		case 'R':
			k = pRows
		case 'S':
			k = pSnip
		case 'E':
			k = pSnipEnd
		}
		t.pieces = append(t.pieces, piece{kind: k})
		s = s[i+2:]
	}
	if s != "" {
		t.pieces = append(t.pieces, piece{kind: pText, text: s})
	}
	return t
}
