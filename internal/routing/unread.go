package routing

import "strings"

// unreadOptions are the SELECT options MariaDB takes that the parser obroute uses does not read
// (or reads as a select item, SQL_BUFFER_RESULT), with their rewrite. None of them changes the
// rows of a statement: they are hints to the server's planner and its query cache.
var unreadOptions = map[string]string{
	"distinctrow":       "write DISTINCT for DISTINCTROW (the same)",
	"high_priority":     "remove HIGH_PRIORITY",
	"sql_small_result":  "remove SQL_SMALL_RESULT",
	"sql_big_result":    "remove SQL_BIG_RESULT",
	"sql_buffer_result": "remove SQL_BUFFER_RESULT",
}

// unreadForm names the first MariaDB form in toks that the parser does not read, or reads
// otherwise than the server, with its rewrite; "" when there is none it knows. It says why a
// statement on a time-sharded table, which must be read exactly to be split, is refused.
func unreadForm(toks []token) string {
	for i, t := range toks {
		switch {
		case t.is("select"):
			for j := i + 1; j < len(toks) && toks[j].kind == tokWord && selectOptions[strings.ToUpper(toks[j].text)]; j++ {
				if fix, ok := unreadOptions[strings.ToLower(toks[j].text)]; ok {
					return "the SELECT option " + strings.ToUpper(toks[j].text) + " is not read by obroute's parser (it does not change the rows): " + fix
				}
			}
		case t.is("group") && i+1 < len(toks) && toks[i+1].is("by"):
			if dir := groupDirection(toks[i+2:]); dir != "" {
				return "GROUP BY … " + dir + " (MariaDB orders the groups by it) is not read by obroute's parser: write GROUP BY x ORDER BY x " + dir
			}
		}
	}
	return ""
}

// groupDirection returns ASC or DESC when one follows a key of the GROUP BY list toks starts
// with (at its own depth of parentheses), "" otherwise.
func groupDirection(toks []token) string {
	depth := 0
	for _, t := range toks {
		switch {
		case t.kind == tokPunct && t.text == "(":
			depth++
		case t.kind == tokPunct && t.text == ")":
			if depth == 0 {
				return "" // the end of a subquery
			}
			depth--
		case depth > 0:
		case t.kind == tokPunct && t.text == ";":
			return ""
		case t.is("asc") || t.is("desc"):
			return strings.ToUpper(t.text)
		case t.kind == tokWord && (selectEnd[strings.ToLower(t.text)] || t.is("with")):
			return ""
		}
	}
	return ""
}
