package routing

import (
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/obroute/obroute/hint"
)

// A text of several statements (a backend DSN with multiStatements=true lets the application
// send one) is one COM_QUERY: it runs on one server session, as a whole. With more than one
// backend obroute routes each of its statements and sends the text where they all go; it
// refuses the text when they would go to different places, or when one of them changes what
// the client session tracks (session variables, transactions, temporary tables, the USE'd
// database) or reads the previous statement's session: obroute follows those only in a
// statement of its own.

// statementPieces splits body, lexed into toks, into its statements at the semicolons that end
// them (see splitPieces), leaving out empty ones (MariaDB runs "SELECT 1;;" and "SELECT 1; -- c"
// as one statement);
// nil when it holds one statement, could not be lexed to its end, or is a compound statement
// whose body has semicolons of its own (see compoundStart), which the server reads as one.
func statementPieces(body string, toks []token, lexed bool) []string {
	if !lexed || len(toks) == 0 || compoundStart(toks) {
		return nil
	}
	pieces, rest := splitPieces(body, toks)
	if last := toks[len(toks)-1]; last.pos >= len(body)-len(rest) { // rest holds a statement, not only comments
		pieces = append(pieces, strings.TrimSpace(rest))
	}
	if len(pieces) < 2 {
		return nil
	}
	return pieces
}

// splitPieces splits text, lexed into toks, at the semicolons that end its statements: those
// outside parentheses and outside the body of a compound statement (a stored program's
// definition, BEGIN … END, see compoundEnd). It returns the statements ended by one, trimmed,
// empty ones (nothing but blanks and comments) left out, and the text after the last of them.
func splitPieces(text string, toks []token) (pieces []string, rest string) {
	from, depth := 0, 0
	for k, first := 0, 0; k < len(toks); k++ {
		t := toks[k]
		if k == first && compoundStart(toks[k:]) {
			end := k + compoundEnd(toks[k:])
			if end == len(toks) {
				break // its end is not in text
			}
			t, k = toks[end], end
		} else if t.kind != tokPunct {
			continue
		}
		switch {
		case t.text == "(":
			depth++
		case t.text == ")":
			depth = max(depth-1, 0)
		case t.text == ";" && depth == 0:
			if k > first { // a statement with tokens, not only blanks and comments
				pieces = append(pieces, strings.TrimSpace(text[from:t.pos]))
			}
			from, first = t.end, k+1
		}
	}
	return pieces, text[from:]
}

// compoundEnd returns the index of the semicolon that ends the compound statement toks starts
// (see compoundStart), len(toks) when toks hold no such semicolon: the first one outside
// parentheses once every block of its body is closed. BEGIN and CASE open a block anywhere;
// IF, LOOP, WHILE, REPEAT and FOR where a statement of the body starts (REPEAT( and IF( are
// functions, FOR UPDATE and FOR EACH ROW clauses); END closes one, with the word that may follow
// it (END IF, END LOOP …).
func compoundEnd(toks []token) int {
	blocks, parens := 0, 0
	start := true // toks[k] may start a statement of the body
	for k := 0; k < len(toks); k++ {
		t := toks[k]
		atStart := start
		start = false
		switch {
		case t.kind == tokPunct:
			switch t.text {
			case "(":
				parens++
			case ")":
				parens = max(parens-1, 0)
			case ";":
				if parens == 0 && blocks == 0 {
					return k
				}
				start = parens == 0
			case ":":
				start = true // after a label
			}
		case t.kind != tokWord:
		case t.is("begin"), t.is("case"):
			blocks++
			start = t.is("begin")
		case t.is("end"):
			blocks = max(blocks-1, 0)
			if k+1 < len(toks) && closesWith(toks[k+1]) {
				k++
			}
		case atStart && (t.is("if") || t.is("while") || t.is("for")):
			blocks++
		case atStart && (t.is("loop") || t.is("repeat")):
			blocks++
			start = true
		case t.is("then"), t.is("else"), t.is("do"), t.is("row"):
			// ROW: a trigger's body follows FOR EACH ROW.
			start = true
		}
	}
	return len(toks)
}

// closesWith reports whether t is the word after END that names the block it closes.
func closesWith(t token) bool {
	return t.is("if") || t.is("case") || t.is("loop") || t.is("while") || t.is("repeat") || t.is("for")
}

// SplitScript splits a script, a text of statements each ended by a semicolon (a file of them,
// as the mysql client reads one), into its statements, the way a text of several is split (see
// statementPieces): not at a semicolon inside a string, a quoted identifier, a comment,
// parentheses or the body of a stored program or compound statement. It returns the statements
// ended by a semicolon, trimmed, and the text after the last one, which holds an unfinished
// statement, or nothing but blanks and comments. open is set when a string, quoted identifier
// or comment is left open in rest (its statement may go on in more text).
func SplitScript(script string) (statements []string, rest string, open bool) {
	toks, lexed := lex(script)
	statements, rest = splitPieces(script, toks)
	return statements, rest, !lexed
}

// compoundStart reports whether toks start a statement that may hold others, separated by
// semicolons the server reads inside it: a stored program's definition (CREATE or ALTER …
// PROCEDURE, FUNCTION, TRIGGER, EVENT, PACKAGE), or one of MariaDB's compound statements run
// outside a program (BEGIN NOT ATOMIC, IF, CASE, LOOP, WHILE, REPEAT, FOR, a label).
func compoundStart(toks []token) bool {
	first := toks[0]
	switch {
	case first.is("create"), first.is("alter"):
		// The object's kind comes within the first words (OR REPLACE, DEFINER = …, AGGREGATE).
		for _, t := range toks[1:min(len(toks), 12)] {
			switch {
			case t.is("procedure"), t.is("function"), t.is("trigger"), t.is("event"), t.is("package"):
				return true
			case t.is("table"), t.is("view"), t.is("index"), t.is("database"), t.is("schema"),
				t.is("temporary"), t.is("user"), t.is("role"), t.is("sequence"), t.is("server"):
				return false
			}
		}
	case first.is("begin"):
		rest := toks[1:]
		if len(rest) > 0 && rest[0].is("work") {
			rest = rest[1:]
		}
		return len(rest) > 0 && !(rest[0].kind == tokPunct && rest[0].text == ";")
	case first.is("if"), first.is("case"), first.is("loop"), first.is("while"), first.is("repeat"), first.is("for"):
		return true
	case first.kind == tokWord && len(toks) > 1 && toks[1].kind == tokPunct && toks[1].text == ":":
		return true // label: BEGIN … END, label: LOOP …
	}
	return false
}

// multiProblem says why piece, statement n of a text of several, cannot run inside that text;
// "" when it can. (Creating or dropping a temporary table is DDL, refused as not DML.) Analysis
// stores it in the piece's multiWhy.
func multiProblem(piece *Statement) string {
	switch {
	case piece.HintErr != nil || piece.RouteErr != nil:
		return ""
	case !piece.Kind.IsDML():
		return fmt.Sprintf("is a %s statement, whose effect on the session obroute follows only in a statement of its own", piece.Kind)
	case len(piece.UserVars) > 0:
		return "assigns user variables, which obroute reads back only after a statement of its own"
	case piece.SessionDependent:
		return "reads the previous statement's session (FOUND_ROWS(), ROW_COUNT(), LAST_INSERT_ID(), SHOW WARNINGS)"
	case piece.catalog != nil:
		return "reads the catalog (information_schema), which obroute answers for the logical tables only in a statement of its own"
	}
	return ""
}

// routeMulti routes a text of several statements: each statement as if it came alone (with the
// hints in force, the session and its own arguments), then the text as one target where they all
// go.
func (r *Router) routeMulti(in Input, hints hint.Set, sess *SessionState) (*Plan, error) {
	st := in.Statement
	var (
		first     *Plan
		prompts   []string
		rewritten bool     // a statement is sent otherwise than written (time routing)
		sqls      []string // the statements as sent, once one was rewritten
		args      []driver.NamedValue
		tables    []string
		off       int
	)
	for i, piece := range st.pieces {
		pin := in
		pin.Statement, pin.Hints, pin.Session = piece, hints, sess
		end := min(off+piece.Params, len(in.Args))
		pin.Args = in.Args[min(off, end):end]
		why := piece.multiWhy
		if why == "" {
			pp, err := r.route(pin)
			if err != nil {
				return nil, errorf("statement %d of %d: %w", i+1, len(st.pieces), err)
			}
			if why = multiMismatch(pp, first); why == "" {
				if first == nil {
					first = pp
				}
				t := pp.Targets[0]
				if !rewritten && (t.SQL != piece.SQL || len(t.Args) != len(pin.Args)) {
					// The first rewritten statement: the ones before it are sent as written.
					rewritten = true
					for _, before := range st.pieces[:i] {
						sqls = append(sqls, before.SQL)
					}
					args = append(args, in.Args[:min(off, len(in.Args))]...)
				}
				if rewritten {
					sqls, args = append(sqls, t.SQL), append(args, t.Args...)
				}
				for _, tb := range t.Tables {
					tables = appendNew(tables, tb)
				}
				for j := 0; in.Explain && j < len(pp.Prompts); j++ {
					prompts = append(prompts, fmt.Sprintf("Statement %d: %s", i+1, pp.Prompts[j]))
				}
			}
		}
		if why != "" {
			return nil, errorf("%w: statement %d of %d %s; send the statements one by one", ErrMultiStatement, i+1, len(st.pieces), why)
		}
		off += piece.Params
	}
	if in.Explain {
		prompts = append(prompts, fmt.Sprintf("The text holds %d statements, each routed to backend %s: sent there as one text", len(st.pieces), where(first)))
	}
	first.Statement, first.Hints, first.Prompts = st, hints, prompts
	t := &first.Targets[0]
	t.SQL, t.Args, t.Tables = st.SQL, in.Args, tables
	if rewritten {
		t.SQL, t.Args = strings.Join(sqls, "; "), args
	}
	return first, nil
}

// multiMismatch says why the plan pp of one statement of a text of several cannot join first's
// (nil for the text's first statement); "" when it can.
func multiMismatch(pp, first *Plan) string {
	switch {
	case len(pp.Targets) != 1 || pp.Merge != nil:
		return fmt.Sprintf("runs as %d sub-queries (it is split across tables)", len(pp.Targets))
	case first == nil:
		return ""
	case pp.Targets[0].Backend != first.Targets[0].Backend || pp.Targets[0].Cold != first.Targets[0].Cold || pp.Shadow != first.Shadow:
		return fmt.Sprintf("goes to backend %s and statement 1 to backend %s", where(pp), where(first))
	case pp.Level != first.Level || pp.Budget != first.Budget:
		return fmt.Sprintf("has query level %s (time budget %v) and statement 1 %s (%v); a text runs under one budget", pp.Level, pp.Budget, first.Level, first.Budget)
	}
	return ""
}

// where names the backend of a single-target plan, with its channel and shadow flag.
func where(p *Plan) string {
	s := p.Targets[0].Backend
	if p.Targets[0].Cold {
		s += " (cold_query)"
	}
	if p.Shadow {
		s += " (shadow)"
	}
	return s
}
