package routing

import (
	"strconv"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// limit reads LIMIT and OFFSET and decides what the legs get.
func (p *mergePlanner) limit(mp *mergePlan, grouped bool) error {
	l := p.sel.Limit
	if l == nil || l.Rowcount == nil {
		return nil
	}
	read := func(e sqlparser.Expr, argOut *int) (int64, error) {
		v, ok := e.(*sqlparser.SQLVal)
		switch {
		case e == nil:
			return 0, nil
		case ok && v.Type == sqlparser.ValArg:
			*argOut = argIndex(string(v.Val))
			return 0, nil
		case ok:
			// Up to 18446744073709551615, MySQL's "all the rows": saturated at MaxInt64.
			n, isCount := parseRowCount(string(v.Val))
			if !isCount || v.Type != sqlparser.IntVal {
				return 0, notMergeable("LIMIT %s is not a row count", v.Val)
			}
			return n, nil
		}
		return 0, notMergeable("LIMIT %s is not a number or ?", nodeText(e))
	}
	var err error
	if p.spec.Offset, err = read(l.Offset, &mp.offsetArg); err != nil {
		return err
	}
	if p.spec.Limit, err = read(l.Rowcount, &mp.limitArg); err != nil {
		return err
	}
	if grouped {
		return nil
	}
	// Each DISTINCT leg's first offset+limit rows are enough, but a per-backend UNION ALL of
	// several legs repeats values across them: limiting it could keep only copies of a few
	// values. Its rows are deduplicated by the merge instead.
	mp.pushLimit = !p.spec.Distinct
	if p.spec.Distinct && len(p.weightOf) > 0 {
		// A leg's DISTINCT also compares the weights, which tell apart values its collation
		// holds equal ('a' and 'a '): its first rows may hold fewer distinct values than the
		// LIMIT needs. Where a text column is weighed, its rows are all read (the LIMIT is
		// rendered as unbounded) and deduplicated by the merge.
		mp.distinctWeighed = true
	}
	if mp.limitArg >= 0 || mp.offsetArg >= 0 || mp.distinctWeighed {
		p.leg.Limit = &sqlparser.Limit{Rowcount: sqlparser.NewColName(limitColumn)}
	} else {
		p.leg.Limit = &sqlparser.Limit{Rowcount: sqlparser.NewIntVal([]byte(strconv.FormatInt(addRows(p.spec.Offset, p.spec.Limit), 10)))}
	}
	return nil
}
