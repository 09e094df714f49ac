package routing

import (
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// MySQL names a select item without an alias by its text as the application wrote it
// ("COUNT(*)", "AVG(amount)"). A rewritten statement is printed from the parse tree
// ("count(*)", "count(`status`)"), so the backend would name the column differently.
// withColumnNames pins the names: every unaliased item whose printed text differs from what
// was written gets the written text as its alias.

// maxAliasLen is the longest alias MySQL accepts; longer items are left unnamed.
const maxAliasLen = 256

// withColumnNames returns sel, or a copy of it whose unaliased select items that would print
// differently carry their written text as alias. sql is the statement sel was parsed from.
func withColumnNames(sel *sqlparser.Select, sql string) *sqlparser.Select {
	items := sel.SelectExprs
	var texts []string
	var out *sqlparser.Select
	for i, se := range items {
		ae, ok := se.(*sqlparser.AliasedExpr)
		if !ok || !ae.As.IsEmpty() {
			continue
		}
		if _, isCol := ae.Expr.(*sqlparser.ColName); isCol {
			continue // a column is named by itself, however it is printed
		}
		if texts == nil {
			if texts = selectItemTexts(sql); len(texts) != len(items) {
				return sel // the select list was not found where expected: leave it as it is
			}
		}
		text := texts[i]
		if text == "" || len(text) > maxAliasLen || isStringLiteral(text) || text == nodeText(ae.Expr) && !hasClock(ae.Expr) {
			// A string literal is named by its value, however it is written; a clock function is
			// sent as a literal, so it keeps the name it was written with.
			continue
		}
		if out == nil {
			out = shallowSelect(sel)
		}
		out.SelectExprs[i].(*sqlparser.AliasedExpr).As = sqlparser.NewColIdent(text)
	}
	if out == nil {
		return sel
	}
	return out
}

// isStringLiteral reports whether text is one string literal (or adjacent ones, joined).
//
//go:noinline
func isStringLiteral(text string) bool {
	toks, ok := lex(text)
	return ok && len(toks) == 1 && toks[0].kind == tokString && !toks[0].national
}

// selectEnd are the words that end a top-level select list.
var selectEnd = map[string]bool{
	"from": true, "into": true, "where": true, "group": true, "having": true, "order": true, "limit": true,
	"union": true, "except": true, "intersect": true, "for": true, "lock": true, "window": true,
}

// selectOptions are the keywords that may stand between SELECT and the first item.
var selectOptions = map[string]bool{
	"ALL": true, "DISTINCT": true, "DISTINCTROW": true, "HIGH_PRIORITY": true, "STRAIGHT_JOIN": true,
	"SQL_SMALL_RESULT": true, "SQL_BIG_RESULT": true, "SQL_BUFFER_RESULT": true, "SQL_NO_CACHE": true,
	"SQL_CACHE": true, "SQL_CALC_FOUND_ROWS": true,
}

// selectItemTexts returns the written text of each item of the first top-level select list of
// sql, trimmed; an item with a comment inside is "" (its name is not worth guessing). It
// returns nil when it cannot read the list.
func selectItemTexts(sql string) []string {
	toks, ok := lex(sql)
	if !ok {
		return nil
	}
	depth, i := 0, -1
find:
	for j, t := range toks {
		switch {
		case t.kind == tokPunct && t.text == "(":
			depth++
		case t.kind == tokPunct && t.text == ")":
			depth--
		case depth == 0 && t.is("select"):
			i = j + 1
			break find
		}
	}
	if i < 0 {
		return nil
	}
	for i < len(toks) && toks[i].kind == tokWord && selectOptions[strings.ToUpper(toks[i].text)] {
		i++
	}
	var out []string
	start := i
	// item ends the item that starts at toks[start] where toks[end] (or the text) starts.
	item := func(end int) {
		to := len(sql)
		if end < len(toks) {
			to = toks[end].pos
		}
		text := ""
		if start < len(toks) {
			text = strings.TrimSpace(sql[toks[start].pos:to])
		}
		if strings.Contains(text, "/*") || strings.Contains(text, "--") || strings.Contains(text, "#") {
			text = ""
		}
		out = append(out, text)
	}
	for ; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == tokPunct && t.text == "(":
			depth++
		case t.kind == tokPunct && t.text == ")":
			depth--
		case depth == 0 && t.kind == tokPunct && t.text == ",":
			item(i)
			start = i + 1
		case depth == 0 && (t.kind == tokPunct && t.text == ";" || t.kind == tokWord && selectEnd[strings.ToLower(t.text)]):
			item(i)
			return out
		}
	}
	item(len(toks))
	return out
}
