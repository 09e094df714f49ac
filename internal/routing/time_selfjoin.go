package routing

import (
	"strings"
	"time"

	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/obroute/obroute/metadata"
)

// A SELECT that reads the time-sharded table more than once (a subquery on it, a self-join)
// pairs rows of different physical tables, which no per-table sub-query sees together. It is
// answered only when every row any of its uses can read lies in one physical table: the range is
// the union of each use's range (read from the WHERE and inner-join ON conditions of the SELECT
// whose FROM names it), and it must lie within the span of the one table it overlaps. The
// statement is then sent whole to that table, every use renamed; no clamp is needed, since
// every row a use reads satisfies its range, which lies in the table's span.

// selfJoinRange compiles the range of sel when it reads the time-sharded table through several
// uses (logical is its lower-case name): the OR of each use's conditions, each read with the
// use's own name as the shard key's qualifier. ok is false when a use is not in the FROM of a
// SELECT, or is on the optional side of an outer join.
func selfJoinRange(sel *sqlparser.Select, uses []*sqlparser.AliasedTableExpr, logical, key string, typed map[*sqlparser.SQLVal]string) (rng *rangeNode, ok bool, err error) {
	found := make([]bool, len(uses))
	conds := make([]sqlparser.Expr, len(uses))
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		s, isSel := n.(*sqlparser.Select)
		if !isSel || s == nil {
			return true, nil
		}
		for i, use := range uses {
			if f, ons, err := findTable(fromExpr(s.From), use, false); f && err == nil && !found[i] {
				found[i], conds[i] = true, andAll(whereExpr(s.Where), ons)
			}
		}
		return true, nil
	}, sel)
	rng = &rangeNode{op: rOr}
	for i, use := range uses {
		if !found[i] {
			return nil, false, nil
		}
		q := logical
		if !use.As.IsEmpty() {
			q = strings.ToLower(use.As.String())
		}
		c := &rangeCompiler{key: key, quals: []string{q}, typed: typed}
		k, err := c.compile(conds[i])
		if err != nil {
			return nil, true, err
		}
		rng.kids = append(rng.kids, k)
	}
	return rng, true, nil
}

// selfJoinRefusal is the refusal of a SELECT reading table n times when its range needs more
// than one table.
func selfJoinRefusal(table string, n int) error {
	return errorf("%w: %s appears %d times (a self-join or subquery on it), which is answered only when the range of every use lies in one table; query each part on its own (run the subquery first and pass its value as a ? argument)", ErrTimeShardedJoin, table, n)
}

// withinTable reports whether every time of span lies in the span of tb (open above when open).
func withinTable(span interval, tb *metadata.Table, open bool) bool {
	if span.empty() || !span.lo.set || span.lo.t.Before(tb.Min) {
		return false
	}
	if open {
		return true
	}
	end := tb.Max.Truncate(time.Second).Add(time.Second)
	return span.hi.set && (span.hi.t.Before(end) || span.hi.t.Equal(end) && !span.hi.incl)
}
