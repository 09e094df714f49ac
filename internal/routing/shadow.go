package routing

import (
	"database/sql/driver"
	"fmt"

	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/shadow"
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
	if st.shadowCols != nil {
		c.Columns = map[string][]string{}
		for _, v := range st.shadowCols {
			text, ok := v.lit, v.arg < 0
			if !ok && v.arg < len(args) {
				text, ok = valueText(args[v.arg].Value)
			}
			if ok {
				c.Columns[v.column] = append(c.Columns[v.column], text)
			}
		}
	}
	return c
}

// readsShadowColumns reports whether st names a shadow table whose algorithm reads column values.
func (r *Router) readsShadowColumns(st *Statement) (string, bool) {
	for _, t := range st.Tables {
		if r.shadowColumnTables[t] {
			return t, true
		}
	}
	return "", false
}

// columnValue is a value a DML statement gives a column (INSERT) or compares it with (WHERE):
// a literal, or the arg-th argument.
type columnValue struct {
	column string // lower case
	lit    string
	arg    int // -1 for a literal
}

// shadowColumns collects, once per statement text, the column values the shadow rule reads when
// the statement names a shadow table with a column algorithm: the values an INSERT gives its
// columns, and the values the top-level AND conjuncts of a WHERE clause compare columns with
// by = and IN (SELECT, UPDATE, DELETE). A comparison under OR or NOT does not say that the rows
// have that value, and an UPDATE's SET values are what the rows become, not which rows are
// touched: both are left out, as ShardingSphere reads only the WHERE conditions.
func (r *Router) shadowColumns(st *Statement, p *parsed) []columnValue {
	if _, ok := r.readsShadowColumns(st); !ok || !st.Kind.IsDML() {
		return nil
	}
	out := []columnValue{}
	add := func(col string, e sqlparser.Expr) {
		if v, ok := literalValue(e); ok {
			v.column = col
			out = append(out, v)
		}
	}
	var where *sqlparser.Where
	switch n := p.ast.(type) {
	case *sqlparser.Insert:
		if rows, ok := insertValues(n); ok {
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
	for _, conjunct := range conjuncts(where.Expr, nil) {
		cmp, ok := conjunct.(*sqlparser.ComparisonExpr)
		if !ok {
			continue
		}
		col, ok := unparen(cmp.Left).(*sqlparser.ColName)
		if !ok {
			continue
		}
		switch cmp.Operator {
		case sqlparser.EqualStr:
			add(col.Name.Lowered(), cmp.Right)
		case sqlparser.InStr:
			if tuple, ok := unparen(cmp.Right).(sqlparser.ValTuple); ok {
				for _, e := range tuple {
					add(col.Name.Lowered(), e)
				}
			}
		}
	}
	return out
}

// insertValues returns the VALUES rows of an INSERT; ok is false for INSERT … SELECT.
func insertValues(n *sqlparser.Insert) (sqlparser.Values, bool) {
	switch rows := n.Rows.(type) {
	case *sqlparser.AliasedValues:
		return rows.Values, true
	case sqlparser.AliasedValues:
		return rows.Values, true
	case sqlparser.Values:
		return rows, true
	}
	return nil, false
}

// literalValue reads a literal or a ? argument as the text a value algorithm compares.
func literalValue(e sqlparser.Expr) (columnValue, bool) {
	switch v := unparen(e).(type) {
	case *sqlparser.SQLVal:
		switch v.Type {
		case sqlparser.ValArg:
			return columnValue{arg: argIndex(string(v.Val))}, argIndex(string(v.Val)) >= 0
		case sqlparser.StrVal, sqlparser.IntVal, sqlparser.FloatVal, sqlparser.HexNum:
			return columnValue{lit: string(v.Val), arg: -1}, true
		}
	case sqlparser.BoolVal:
		if v {
			return columnValue{lit: "1", arg: -1}, true
		}
		return columnValue{lit: "0", arg: -1}, true
	}
	return columnValue{}, false
}

func valueText(v driver.Value) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case []byte:
		return string(x), true
	case string:
		return x, true
	case *literal: // a literal of the statement
		return x.value(), true
	default:
		return fmt.Sprint(x), true
	}
}
