package merge

import (
	"database/sql/driver"
	"strings"
)

// computer is a bound Computed.
type computer struct {
	Computed
	eval valueFunc
	// decimal: the result is a DECIMAL of scale; else an integer.
	decimal bool
	scale   int
	sample  int // Go type of the sub-queries' values: 0 unknown, 1 text, 2 int64
}

func (g *grouper) bindComputed(spec *Spec, cols *columns, types []ColumnType) error {
	for _, c := range spec.Computed {
		b := &valueBinder{g: g, cols: cols, types: types}
		f, err := c.Expr.bindValue(b)
		if err != nil {
			return err
		}
		if b.divide && c.Increment == 0 {
			return invalidf("computed column %d divides but has no div_precision_increment column", c.Column)
		}
		t := types[c.Column]
		if cols.kinds[c.Column] != kindNumber {
			return notExactf("column %d (%s) is a %s: only integer and DECIMAL expressions over aggregates are computed exactly after merging; select the aggregates themselves and compute the expression in the application, or narrow the range to one table",
				c.Column+1, cols.names[c.Column], t.DatabaseTypeName)
		}
		cp := computer{Computed: c, eval: f, decimal: strings.EqualFold(t.DatabaseTypeName, "DECIMAL"), scale: int(t.Scale)}
		g.computed = append(g.computed, cp)
		g.aggCol[c.Column] = true
	}
	return nil
}

// addComputed reads, from one partial row of gr, the session's div_precision_increment and the
// Go type the sub-queries send each computed column in.
func (g *grouper) addComputed(gr *group, row []driver.Value) error {
	for i := range g.computed {
		c := &g.computed[i]
		if c.Increment != 0 {
			n, ok := readInt(row[c.Increment])
			if !ok || n < 0 {
				return badValue(c.Increment, "div_precision_increment", row[c.Increment])
			}
			if gr.incr >= 0 && int(n) != gr.incr {
				return notExactf("the sub-queries ran with different div_precision_increment (%d and %d); set it on every backend alike", gr.incr, n)
			}
			gr.incr = int(n)
		}
		if c.sample != 0 {
			continue
		}
		switch row[c.Column].(type) {
		case []byte:
			c.sample = 1
		case int64, uint64:
			c.sample = 2
		}
	}
	return nil
}

// finishComputed writes the computed columns of gr, after its aggregates.
func (g *grouper) finishComputed(gr *group) error {
	for i := range g.computed {
		c := &g.computed[i]
		env := &valueEnv{g: g, gr: gr, incr: gr.incr}
		v, err := c.eval(env)
		if err != nil {
			return err
		}
		if v.null {
			gr.row[c.Column] = nil
			continue
		}
		if !c.decimal {
			if v.frac > 0 {
				v = roundNumber(v, 0, 0)
			}
			if !v.u.IsInt64() && (v.u.Sign() < 0 || !v.u.IsUint64()) {
				return notExactf("column %d: %s is out of the range of a BIGINT, where the server fails the statement; compute it in the application", c.Column+1, c.Expr)
			}
			if c.sample == 2 && v.u.IsInt64() {
				gr.row[c.Column] = v.u.Int64()
				continue
			}
			gr.row[c.Column] = v.u.Append(nil, 10)
			continue
		}
		v = roundNumber(v, c.scale, c.scale)
		gr.row[c.Column] = appendScaled(nil, v.u.Append(nil, 10), c.scale)
	}
	return nil
}
