package routing

import (
	"strings"

	"github.com/obroute/obroute/hint"
)

// A statement on a time-sharded table is sent rewritten for its physical tables, printed from
// the parser's syntax tree, and the parser reads the text as the default sql_mode does. A mode
// that reads the same text otherwise (ANSI_QUOTES: "x" is a name; PIPES_AS_CONCAT: || joins
// strings; NO_BACKSLASH_ESCAPES: a backslash is text; HIGH_NOT_PRECEDENCE; EMPTY_STRING_IS_NULL;
// the dialect modes) would have the rewrite mean something else than what the application
// wrote: such a statement is refused, as shadow values are (shadow_read.go's modeProblem).

// allModal is every construct a sql_mode may read in another way.
const allModal = modalDoubleQuote | modalPipes | modalBackslash | modalNot | modalEmpty

// modeRefusal returns ErrUnreadable when the sql_mode the statement would run in reads its
// text otherwise than the parser: the client session's, when it set one, else the one the
// server sessions of each backend read back start with (a backend not read yet is taken to
// start with the default mode). nil otherwise, without reading the text when no mode in effect
// reads anything otherwise (the common case costs no lexing).
func (t *timeRouter) modeRefusal(st *Statement, sess *SessionState) error {
	var name, why string
	check := func(mode string, known bool) bool {
		if known {
			if !modeReadsAny(mode) {
				return false
			}
			if n, w := modeReads(0, mode); w != "" { // a dialect: whatever the text holds
				name, why = n, w
				return true
			}
		}
		toks := textTokens(st.SQL)
		m := modalTokens(toks)
		if doubledQuote(toks) {
			// The rewrite writes 'it''s' as 'it\'s', which NO_BACKSLASH_ESCAPES reads otherwise.
			m |= modalBackslash
		}
		if m == 0 {
			return false
		}
		if !known {
			name, why = "", "the session set sql_mode to a value obroute does not know, which may change how the server reads the statement; SET sql_mode to a literal"
			return true
		}
		name, why = modeReads(m, mode)
		return why != ""
	}
	found := false
	if sess != nil && sess.SQLMode.Set {
		found = check(sess.SQLMode.Value, sess.SQLMode.Known)
	} else if f := t.facts.p.Load(); f != nil {
		for _, s := range f.servers {
			if s.modal {
				if found = check(s.mode, true); found {
					break
				}
			}
		}
	}
	if !found {
		return nil
	}
	table := st.time.table.Table
	if name == "" {
		return errorf("%w: the statement on the time-sharded table %s is rewritten for its physical tables as the default sql_mode reads it, and %s", ErrUnreadable, table, why)
	}
	return errorf("%w: the statement on the time-sharded table %s is rewritten for its physical tables as the default sql_mode reads it, and the sql_mode %s in effect %s; write it without that (single-quoted strings, CONCAT() for ||, no backslash in strings, parentheses around NOT), or run it in a session without %s",
		ErrUnreadable, table, name, why, name)
}

// doubledQuote reports whether a string of toks holds its own quote, doubled ('it”s').
func doubledQuote(toks []token) bool {
	for _, t := range toks {
		if t.kind != tokString {
			continue
		}
		i := strings.IndexAny(t.text, `'"`) // after N of N'…'
		if i >= 0 && len(t.text)-i > 2 && strings.IndexByte(t.text[i+1:len(t.text)-1], t.text[i]) >= 0 {
			return true // adjacent strings ('a' 'b') too, which the rewrite joins: read alike, refused alike
		}
	}
	return false
}

// modeReadsAny reports whether sql_mode mode reads some statement text otherwise than the parser.
func modeReadsAny(mode string) bool {
	n, _ := modeReads(allModal, mode)
	return n != ""
}

// textTokens lexes a statement's own text (not the analysis's normalized one, whose literals
// are ?) as the server runs it: from its first word, executable comments opened.
func textTokens(sql string) []token {
	body, _ := execComments(sql[hint.StatementStart(sql):])
	toks, _ := lex(body)
	return toks
}
