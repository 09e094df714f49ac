package routing

import (
	"database/sql/driver"
	"slices"
	"strconv"
	"strings"
	"time"

	"vitess.io/vitess/go/vt/sqlparser"
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
}

type pieceKind uint8

const (
	pText  pieceKind = iota
	pTable           // the physical table name
	pClamp           // the clamp predicate: the table's span on the shard key
	pLimit           // a LIMIT row count computed per execution
	pRows            // the VALUES rows of an INSERT
)

type piece struct {
	kind pieceKind
	text string
}

// Markers written by the printer; \x00 never appears in printed SQL (the printer escapes it in
// string literals).
const (
	markTable = "\x00T"
	markClamp = "\x00C"
	markLimit = "\x00L"
	markRows  = "\x00R"
	// placeholder column names standing for the clamp and the computed LIMIT in an AST.
	clampColumn = "__obroute_clamp__"
	limitColumn = "__obroute_limit__"
)

// printer prints an AST with ? for arguments and markers for the logical table. Comments
// inside the statement (optimizer hints) are printed as written, NUL bytes excepted.
type printer struct {
	logical string // lower case
	rows    bool   // print VALUES as the rows marker
	args    []int
	rowsAt  int
}

func (p *printer) format(buf *sqlparser.TrackedBuffer, node sqlparser.SQLNode) {
	switch n := node.(type) {
	case *sqlparser.Argument:
		buf.WriteString("?")
		p.args = append(p.args, argIndex(n.Name))
		return
	case sqlparser.TableName:
		if strings.EqualFold(n.Name.String(), p.logical) {
			if n.Qualifier.NotEmpty() {
				buf.Myprintf("%v.", n.Qualifier)
			}
			buf.WriteString(markTable)
			return
		}
	case *sqlparser.ColName:
		switch n.Name.String() {
		case clampColumn:
			buf.WriteString(markClamp)
			return
		case limitColumn:
			buf.WriteString(markLimit)
			return
		}
	case *sqlparser.ParsedComments:
		// A NUL byte in a comment would read as a marker: print the comments without it.
		if n != nil && slices.ContainsFunc(n.GetComments(), func(c string) bool { return strings.IndexByte(c, 0) >= 0 }) {
			cs := slices.Clone(n.GetComments())
			for i := range cs {
				cs[i] = strings.ReplaceAll(cs[i], "\x00", " ")
			}
			sqlparser.Comments(cs).Parsed().Format(buf)
			return
		}
	case sqlparser.Values:
		if p.rows {
			p.rowsAt = len(p.args)
			buf.WriteString("values " + markRows)
			return
		}
	}
	node.Format(buf)
}

// print prints node into a template.
func (p *printer) print(node sqlparser.SQLNode) template {
	p.args = nil
	buf := sqlparser.NewTrackedBuffer(p.format)
	p.format(buf, node)
	t := splitTemplate(buf.String(), p.args)
	t.rowsAt = p.rowsAt
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
		}
		t.pieces = append(t.pieces, piece{kind: k})
		s = s[i+2:]
	}
	if s != "" {
		t.pieces = append(t.pieces, piece{kind: pText, text: s})
	}
	return t
}

// leg is what one sub-query fills into a template.
type leg struct {
	table    string    // physical table
	qual     string    // qualifier of the shard key in the clamp ("" = the physical table)
	key      string    // shard-key column
	min, max time.Time // the table's span
	open     bool      // the span is open above: the clamp has no upper bound
	empty    bool      // no table overlaps the range: the clamp is false
	limit    int64     // computed LIMIT row count
	rows     []template
}

// clampLen is an upper bound of the clamp predicate's length beyond names.
const clampLen = 96

func (t *template) estimate(l *leg) int {
	return t.size + 4*len(l.table) + 2*len(l.qual) + 2*len(l.key) + clampLen
}

// render appends the template filled for l.
func (t *template) render(b *strings.Builder, l *leg) {
	for i := range t.pieces {
		switch pc := &t.pieces[i]; pc.kind {
		case pText:
			b.WriteString(pc.text)
		case pTable:
			b.WriteString(l.table)
		case pClamp:
			writeClamp(b, l)
		case pLimit:
			var buf [20]byte
			b.Write(strconv.AppendInt(buf[:0], l.limit, 10))
		case pRows:
			for j := range l.rows {
				if j > 0 {
					b.WriteString(", ")
				}
				for _, rp := range l.rows[j].pieces {
					b.WriteString(rp.text)
				}
			}
		}
	}
}

// writeClamp writes the table's span as a predicate on the shard key: key >= min_time and
// key < max_time + 1s. max_time is a DATETIME, whole seconds, so rows with a fraction of its
// last second (DATETIME(6) columns) belong to the table too. A span open above has no upper
// bound.
func writeClamp(b *strings.Builder, l *leg) {
	if l.empty {
		b.WriteString("1 = 0")
		return
	}
	var buf [32]byte
	for i, op := range [2]string{" >= '", " < '"} {
		if i > 0 && l.open {
			break
		}
		if i > 0 {
			b.WriteString(" and ")
		}
		if l.qual != "" {
			b.WriteString(l.qual)
		} else {
			b.WriteString(l.table)
		}
		b.WriteByte('.')
		b.WriteString(l.key)
		b.WriteString(op)
		t := l.min
		if i > 0 {
			t = l.max.Truncate(time.Second).Add(time.Second)
		}
		b.Write(appendTime(buf[:0], t))
		b.WriteByte('\'')
	}
}

// appendArgs appends the arguments of one rendering of t, renumbering ordinals from len(dst)+1.
func (t *template) appendArgs(dst, args []driver.NamedValue, l *leg) []driver.NamedValue {
	add := func(idx []int) {
		for _, i := range idx {
			v := driver.NamedValue{Ordinal: len(dst) + 1}
			if i >= 0 && i < len(args) {
				v.Value = args[i].Value
			}
			dst = append(dst, v)
		}
	}
	if l == nil || len(l.rows) == 0 {
		add(t.args)
		return dst
	}
	add(t.args[:t.rowsAt])
	for j := range l.rows {
		add(l.rows[j].args)
	}
	add(t.args[t.rowsAt:])
	return dst
}

// argCount is the number of arguments one rendering of t takes.
func (t *template) argCount(l *leg) int {
	n := len(t.args)
	if l != nil {
		for j := range l.rows {
			n += len(l.rows[j].args)
		}
	}
	return n
}
