package routing

import (
	"strings"

	"vitess.io/vitess/go/vt/sqlparser"
)

// MySQL names a select item without an alias by its text as the application wrote it
// ("COUNT(*)", "AVG(amount)"). A rewritten statement is printed from the parse tree
// ("count(*)", "count(`status`)") and a merge leg may even compute another expression in the
// item's place (AVG split into SUM and COUNT), so the backend would name the column
// differently. withColumnNames pins the names: every unaliased item whose printed text differs
// from what was written gets the written text as its alias, and so does every unaliased AVG,
// whose merge leg computes SUM in its place.

// maxAliasLen is the longest alias MySQL accepts; longer items are left unnamed.
const maxAliasLen = 256

// withColumnNames returns sel, or a copy of it whose unaliased select items that would print
// differently carry their written text as alias. sql is the statement sel was parsed from.
func withColumnNames(p *sqlparser.Parser, sel *sqlparser.Select, sql string) *sqlparser.Select {
	items := sel.GetColumns()
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
			if texts = selectItemTexts(p, sql); len(texts) != len(items) {
				return sel // the select list was not found where expected: leave it as it is
			}
		}
		text, printed := texts[i], sqlparser.String(ae.Expr)
		_, avg := ae.Expr.(*sqlparser.Avg)
		switch {
		case avg && (text == "" || len(text) > maxAliasLen):
			// Not nameable as written: the printed AVG is nearer than the leg's SUM.
			if len(printed) > maxAliasLen {
				continue
			}
			text = printed
		case text == "" || len(text) > maxAliasLen:
			continue
		case text == printed && !avg:
			continue
		}
		if out == nil {
			out = sqlparser.CloneRefOfSelect(sel)
		}
		out.GetColumns()[i].(*sqlparser.AliasedExpr).As = sqlparser.NewIdentifierCI(text)
	}
	if out == nil {
		return sel
	}
	return out
}

// selectEnd are the keywords that end a top-level select list.
var selectEnd = map[int]bool{
	sqlparser.FROM: true, sqlparser.INTO: true, sqlparser.WHERE: true, sqlparser.GROUP: true,
	sqlparser.HAVING: true, sqlparser.ORDER: true, sqlparser.LIMIT: true, sqlparser.UNION: true,
	sqlparser.FOR: true, sqlparser.LOCK: true, sqlparser.WINDOW: true, ';': true,
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
func selectItemTexts(p *sqlparser.Parser, sql string) []string {
	tkn := p.NewStringTokenizer(sql)
	depth, inList, options := 0, false, false
	start := 0
	var out []string
	for {
		before := tkn.Pos
		typ, val := tkn.Scan()
		if typ == sqlparser.LEX_ERROR {
			return nil
		}
		if !inList {
			switch {
			case typ == 0:
				return nil
			case typ == '(':
				depth++
			case typ == ')':
				depth--
			case typ == sqlparser.SELECT && depth == 0:
				inList, options, start = true, true, tkn.Pos
			}
			continue
		}
		if options {
			if selectOptions[strings.ToUpper(val)] {
				start = tkn.Pos
				continue
			}
			options = false
		}
		switch {
		case typ == '(':
			depth++
		case typ == ')':
			depth--
		case depth == 0 && (typ == ',' || typ == 0 || selectEnd[typ]):
			text := strings.TrimSpace(sql[start:before])
			if strings.Contains(text, "/*") || strings.Contains(text, "--") || strings.Contains(text, "#") {
				text = ""
			}
			out = append(out, text)
			if typ != ',' {
				return out
			}
			start = tkn.Pos
		}
	}
}
