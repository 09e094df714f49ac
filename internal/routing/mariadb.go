package routing

import (
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// MariaDB clauses the parser does not know are set aside while it reads the rest of the
// statement; the statement is routed by what the rest names and sent as written:
//
//   - INSERT / REPLACE / DELETE … RETURNING select_list
//   - SELECT … LIMIT [n [OFFSET m]] ROWS EXAMINED k
//   - SELECT … GROUP BY … WITH ROLLUP
//
// Only clauses of the top-level statement are recognised; elsewhere the statement stays
// unreadable and is routed by the tables it names (scan.go).

// asideKind names a clause set aside.
type asideKind uint8

const (
	asideReturning asideKind = iota + 1
	asideRowsExamined
	asideRollup
)

// asideClause is one clause set aside.
type asideClause struct {
	kind   asideKind
	text   string // as written
	params int    // ? placeholders in text
}

// setAside returns body without the MariaDB clauses of its top-level statement, and the
// clauses; nil when it has none. toks are body's tokens.
func setAside(body string, toks []token) (string, []asideClause) {
	if len(toks) == 0 || toks[0].kind != tokWord {
		return body, nil
	}
	first := strings.ToLower(toks[0].text)
	var clauses []asideClause
	var cut [][2]int // byte ranges of body removed
	depth := 0
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.text == "(" && t.kind == tokPunct:
			depth++
		case t.text == ")" && t.kind == tokPunct:
			depth--
		case depth != 0:
		case t.is("returning") && (first == "insert" || first == "replace" || first == "delete") && i+1 < len(toks) && startsSelectItem(toks[i+1]):
			end := len(toks)
			if toks[end-1].text == ";" {
				end--
			}
			clauses = append(clauses, asideClause{kind: asideReturning, text: body[t.pos:toks[end-1].end], params: countParams(toks[i:end])})
			cut = append(cut, [2]int{t.pos, len(body)})
			i = len(toks)
		case t.is("rows") && i+2 < len(toks) && toks[i+1].is("examined") && toks[i+2].kind == tokNumber:
			from := t.pos
			if i > 0 && toks[i-1].is("limit") {
				from = toks[i-1].pos
			}
			clauses = append(clauses, asideClause{kind: asideRowsExamined, text: body[from:toks[i+2].end]})
			cut = append(cut, [2]int{from, toks[i+2].end})
			i += 2
		case t.is("with") && i+1 < len(toks) && toks[i+1].is("rollup"):
			clauses = append(clauses, asideClause{kind: asideRollup, text: body[t.pos:toks[i+1].end]})
			cut = append(cut, [2]int{t.pos, toks[i+1].end})
			i++
		}
	}
	if len(clauses) == 0 {
		return body, nil
	}
	var b strings.Builder
	last := 0
	for _, c := range cut {
		b.WriteString(body[last:c[0]])
		b.WriteByte(' ')
		last = c[1]
	}
	b.WriteString(body[last:])
	return b.String(), clauses
}

// startsSelectItem reports whether t can start the select list of RETURNING (and so RETURNING
// is not a column named returning, as in SET returning = 1).
func startsSelectItem(t token) bool {
	switch t.kind {
	case tokWord, tokIdent, tokString, tokNumber, tokVar, tokParam:
		return true
	}
	return t.text == "*" || t.text == "(" || t.text == "-"
}

// asideFits reports whether the clauses set aside belong to the statement the parser read:
// RETURNING to an INSERT or DELETE, ROWS EXAMINED to a query, WITH ROLLUP to a SELECT that
// groups.
func asideFits(clauses []asideClause, ast sqlparser.Statement) bool {
	for _, c := range clauses {
		switch c.kind {
		case asideReturning:
			switch ast.(type) {
			case *sqlparser.Insert, *sqlparser.Delete:
			default:
				return false
			}
		case asideRowsExamined:
			switch ast.(type) {
			case *sqlparser.Select, *sqlparser.SetOp:
			default:
				return false
			}
		case asideRollup:
			if sel, ok := ast.(*sqlparser.Select); !ok || len(sel.GroupBy) == 0 {
				return false
			}
		}
	}
	return true
}

// hasAside reports whether st had a clause of kind set aside, and returns it.
func (st *Statement) hasAside(kind asideKind) (asideClause, bool) {
	for _, c := range st.aside {
		if c.kind == kind {
			return c, true
		}
	}
	return asideClause{}, false
}

// returningTail adds a RETURNING clause set aside to the end of a rewritten statement: the
// clause as written, its ? placeholders after the statement's own. It refuses a clause that
// names the logical table, which the rewritten statement no longer has.
func returningTail(t *template, c asideClause, logical string, stmtParams int) error {
	toks, _ := lex(c.text)
	for _, tk := range toks {
		if (tk.kind == tokWord && strings.EqualFold(tk.text, logical)) || (tk.kind == tokIdent && strings.EqualFold(tk.val, logical)) {
			return errorf("%w: RETURNING names the time-sharded table %s, whose rows are in its physical tables; name the columns without the table", ErrNotMergeable, logical)
		}
	}
	t.pieces = append(t.pieces, piece{kind: pText, text: " " + c.text})
	t.size += len(c.text) + 1
	for i := range c.params {
		t.args = append(t.args, stmtParams-c.params+i)
	}
	return nil
}
