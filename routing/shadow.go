package routing

import (
	"database/sql/driver"
	"fmt"
	"strings"

	"vitess.io/vitess/go/vt/sqlparser"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/shadow"
)

// shadowCondition gathers what the shadow rule's algorithms look at: the statement's tables and
// operation, the shadow hint, and for DML the values its columns are compared with or given.
func (r *Router) shadowCondition(st *Statement, hints hint.Set, args []driver.NamedValue) shadow.Condition {
	c := shadow.Condition{Tables: st.Tables, Hint: hints.Shadow == hint.ShadowOn}
	switch st.Kind {
	case KindSelect:
		c.Operation = shadow.OpSelect
	case KindInsert:
		c.Operation = shadow.OpInsert
	case KindUpdate:
		c.Operation = shadow.OpUpdate
	case KindDelete:
		c.Operation = shadow.OpDelete
	default:
		return c
	}
	if st.ast != nil && r.shadowColumnTables != nil {
		for _, t := range st.Tables {
			if r.shadowColumnTables[t] {
				c.Columns = columnValues(st.ast, args)
				break
			}
		}
	}
	return c
}

// columnValues collects, for a DML statement, the values its columns are given (INSERT) or
// compared with by = and IN in the top-level AND conjuncts of its WHERE clause (SELECT,
// UPDATE, DELETE). A comparison under OR or NOT does not say that the rows have that value,
// and an UPDATE's SET values are what the rows become, not which rows are touched: both are
// left out, as ShardingSphere reads only the WHERE conditions.
func columnValues(ast sqlparser.Statement, args []driver.NamedValue) map[string][]string {
	out := map[string][]string{}
	add := func(col string, e sqlparser.Expr) {
		if v, ok := literalText(e, args); ok {
			out[col] = append(out[col], v)
		}
	}
	var where *sqlparser.Where
	switch n := ast.(type) {
	case *sqlparser.Insert:
		if rows, ok := n.Rows.(sqlparser.Values); ok {
			for _, row := range rows {
				for i, col := range n.Columns {
					if i < len(row) {
						add(col.Lowered(), row[i])
					}
				}
			}
		}
	case *sqlparser.Update:
		where = n.Where
	case *sqlparser.Delete:
		where = n.Where
	case *sqlparser.Select:
		where = n.Where
	}
	if where == nil {
		return out
	}
	for _, conjunct := range sqlparser.SplitAndExpression(nil, where.Expr) {
		cmp, ok := conjunct.(*sqlparser.ComparisonExpr)
		if !ok {
			continue
		}
		col, ok := cmp.Left.(*sqlparser.ColName)
		if !ok {
			continue
		}
		switch cmp.Operator {
		case sqlparser.EqualOp:
			add(col.Name.Lowered(), cmp.Right)
		case sqlparser.InOp:
			if tuple, ok := cmp.Right.(sqlparser.ValTuple); ok {
				for _, e := range tuple {
					add(col.Name.Lowered(), e)
				}
			}
		}
	}
	return out
}

// literalText renders a literal or a bound argument as the text a value algorithm compares.
func literalText(e sqlparser.Expr, args []driver.NamedValue) (string, bool) {
	switch v := e.(type) {
	case *sqlparser.Literal:
		return v.Val, true
	case *sqlparser.Argument:
		i := argIndex(v.Name)
		if i < 0 || i >= len(args) {
			return "", false
		}
		return valueText(args[i].Value)
	case sqlparser.BoolVal:
		if v {
			return "1", true
		}
		return "0", true
	}
	return "", false
}

// argIndex maps vitess's name for the n-th ? placeholder (":v1", ":v2", …) to its 0-based index.
func argIndex(name string) int {
	if !strings.HasPrefix(name, "v") {
		return -1
	}
	n := 0
	for _, c := range name[1:] {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n - 1
}

func valueText(v driver.Value) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case []byte:
		return string(x), true
	case string:
		return x, true
	default:
		return fmt.Sprint(x), true
	}
}
