package routing

import "strings"

// Foreign keys of a shadow table under a column-value rule.
//
// A foreign key with a referential action that writes the child's columns (ON UPDATE or ON
// DELETE CASCADE, SET NULL, SET DEFAULT) lets the server change the child's values when the
// parent's rows change, without obroute: an UPDATE of the parent (a table without a shadow
// rule, production traffic) that sets its key to a shadow value gives production's rows of the
// shadow table that shadow value. Creating such a constraint on a column the rule reads is
// refused, in either traffic and whatever the hint; constraints created outside obroute are not
// seen.

// foreignKeyRefusal refuses a CREATE TABLE or ALTER TABLE of a shadow table whose rule reads
// column values that declares a foreign key on a column the rule reads with a referential
// action that writes it.
func (r *Router) foreignKeyRefusal(st *Statement) error {
	if st.Kind != KindDDL || r.shadowColumnTables == nil {
		return nil
	}
	toks := textTokens(st.SQL)
	table := ddlTableName(toks)
	if table == "" || !r.shadowColumnTables[table] {
		return nil
	}
	ruled := map[string]bool{}
	for _, a := range r.cfg.Shadow.ColumnAlgorithms(table) {
		ruled[strings.ToLower(a.Column)] = true
	}
	for i, t := range toks {
		if !t.is("references") {
			continue
		}
		action := writingAction(toks[i+1:])
		if action == "" {
			continue
		}
		// The constraint's own columns are written between the separator before it (a comma or
		// the opening parenthesis of the column list, at the same depth) and REFERENCES: a
		// FOREIGN KEY (…) list, or the column whose definition holds REFERENCES. Every name
		// there is taken for a column (a constraint named as a column is refused too).
		depth := 0
		for k := i - 1; k >= 0; k-- {
			tk := toks[k]
			if tk.kind == tokPunct {
				switch tk.text {
				case ")":
					depth++
				case "(":
					depth--
				case ",":
					if depth == 0 {
						depth = -1
					}
				}
				if depth < 0 {
					break
				}
				continue
			}
			if col := identText(tk); ruled[col] {
				return errorf("%w: the statement declares a foreign key of the shadow table %s on its column %s with %s: the server then changes %s in the rows of %s when the referenced rows change, without obroute, so a production write could give a production row a shadow value (or a shadow write a shadow row a production value); declare it without a referential action that writes the column (RESTRICT or NO ACTION), or leave %s out of the key",
					ErrMixedShadow, table, col, action, col, table, col)
			}
		}
	}
	return nil
}

// ddlTableName returns the table (lower case) CREATE TABLE or ALTER TABLE acts on, "" for
// another statement.
func ddlTableName(toks []token) string {
	first := lowerWord(toks, 0)
	if first != "create" && first != "alter" {
		return ""
	}
	i := 1
	for ; i < len(toks) && i < 6 && !toks[i].is("table"); i++ {
		if w := lowerWord(toks, i); w != "or" && w != "replace" && w != "temporary" && w != "online" && w != "ignore" {
			return ""
		}
	}
	if i >= len(toks) || !toks[i].is("table") {
		return ""
	}
	for i++; i < len(toks) && (toks[i].is("if") || toks[i].is("not") || toks[i].is("exists")); i++ {
	}
	if i < len(toks) && i+2 < len(toks) && toks[i+1].text == "." {
		i += 2 // db.table
	}
	if i >= len(toks) {
		return ""
	}
	return identText(toks[i])
}

// writingAction returns the referential action (in upper case) of the REFERENCES clause whose
// tokens follow toks that writes the child's columns, "" when it has none.
func writingAction(toks []token) string {
	depth := 0
	for k, t := range toks {
		if t.kind == tokPunct {
			switch t.text {
			case "(":
				depth++
			case ")":
				depth--
			}
			if depth < 0 || depth == 0 && t.text == "," {
				return ""
			}
			continue
		}
		if depth != 0 || !t.is("on") || k+2 >= len(toks) || !toks[k+1].is("update") && !toks[k+1].is("delete") {
			continue
		}
		on := "ON " + strings.ToUpper(toks[k+1].text)
		switch a := toks[k+2]; {
		case a.is("cascade"):
			return on + " CASCADE"
		case a.is("set") && k+3 < len(toks) && (toks[k+3].is("null") || toks[k+3].is("default")):
			return on + " SET " + strings.ToUpper(toks[k+3].text)
		}
	}
	return ""
}
