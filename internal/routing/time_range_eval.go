package routing

import (
	"time"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// emptyInterval holds no value.
var emptyInterval = interval{lo: bound{set: true}, hi: bound{set: true}}

// evalConj narrows iv by a conjunctive node without allocating: a comparison with NULL, never
// true, makes iv empty; a value not read leaves iv as it is (the range widens).
func (n *rangeNode) evalConj(iv *interval, c *evalCtx) error {
	switch n.op {
	case rAll:
	case rAnd:
		for _, k := range n.kids {
			if err := k.evalConj(iv, c); err != nil {
				return err
			}
		}
	case rCmp:
		v, err := n.vals[0].eval(c)
		if err != nil {
			return err
		}
		narrow(iv, n.cmp, v)
	case rBetween:
		from, err := n.vals[0].eval(c)
		if err != nil {
			return err
		}
		to, err := n.vals[1].eval(c)
		if err != nil {
			return err
		}
		narrow(iv, sqlparser.GreaterEqualStr, from)
		narrow(iv, sqlparser.LessEqualStr, to)
	}
	return nil
}

// narrow intersects iv with the key values for which key <op> v may be true.
func narrow(iv *interval, op string, v tval) {
	switch {
	case v.unknown:
		return
	case v.null:
		*iv = emptyInterval
		return
	}
	switch op {
	case sqlparser.EqualStr:
		iv.raiseLo(bound{t: v.lo, set: true, incl: true})
		iv.lowerHi(bound{t: v.hi, set: true, incl: true})
	case sqlparser.LessThanStr, sqlparser.LessEqualStr:
		iv.lowerHi(bound{t: v.hi, set: true, incl: op == sqlparser.LessEqualStr})
	case sqlparser.GreaterThanStr, sqlparser.GreaterEqualStr:
		iv.raiseLo(bound{t: v.lo, set: true, incl: op == sqlparser.GreaterEqualStr})
	}
}

// eval evaluates any node in three-valued logic: t holds every key value for which the
// condition may be TRUE, f every one for which it may be FALSE (a value for which it is NULL
// is in neither). NOT swaps them, so NOT (key < a OR status = 'paid') reads key >= a: a
// condition that does not bound the key may be TRUE and FALSE for every value, and a value not
// read exactly bounds t and f on the safe side. The rows of t are a superset of the rows the
// condition selects.
func (n *rangeNode) eval(c *evalCtx) (t, f rangeSet, err error) {
	all := rangeSet{everything}
	switch n.op {
	case rAll:
		return all, all, nil
	case rAnd, rOr:
		t, f = all, nil
		if n.op == rOr {
			t, f = nil, all
		}
		for _, k := range n.kids {
			kt, kf, err := k.eval(c)
			if err != nil {
				return nil, nil, err
			}
			if n.op == rAnd {
				t, f = intersect(t, kt), union(f, kf)
			} else {
				t, f = union(t, kt), intersect(f, kf)
			}
		}
		return t, f, nil
	case rNot:
		kt, kf, err := n.kids[0].eval(c)
		return kf, kt, err
	case rCmp:
		v, err := n.vals[0].eval(c)
		if err != nil {
			return nil, nil, err
		}
		t, f = compareSets(n.cmp, v)
		return t, f, nil
	case rBetween:
		from, err := n.vals[0].eval(c)
		if err != nil {
			return nil, nil, err
		}
		to, err := n.vals[1].eval(c)
		if err != nil {
			return nil, nil, err
		}
		t1, f1 := compareSets(sqlparser.GreaterEqualStr, from)
		t2, f2 := compareSets(sqlparser.LessEqualStr, to)
		return intersect(t1, t2), union(f1, f2), nil
	case rIn, rNotIn:
		t, f = nil, all
		for _, x := range n.vals {
			v, err := x.eval(c)
			if err != nil {
				return nil, nil, err
			}
			vt, vf := compareSets(sqlparser.EqualStr, v)
			t, f = union(t, vt), intersect(f, vf)
		}
		if n.op == rNotIn {
			return f, t, nil
		}
		return t, f, nil
	}
	return all, all, nil
}

// compareSets returns the key values for which key <op> v may be TRUE and those for which it
// may be FALSE. v somewhere in [lo, hi] bounds each on its safe side: key < v may be true below
// hi and false from lo on.
func compareSets(op string, v tval) (t, f rangeSet) {
	all := rangeSet{everything}
	switch {
	case v.unknown:
		return all, all
	case v.null:
		if op == sqlparser.NullSafeEqualStr { // key <=> NULL is key IS NULL: false for any value
			return nil, all
		}
		return nil, nil
	}
	at := func(tm time.Time, incl bool) bound { return bound{t: tm, set: true, incl: incl} }
	switch op {
	case sqlparser.LessThanStr:
		return rangeSet{{hi: at(v.hi, false)}}, rangeSet{{lo: at(v.lo, true)}}
	case sqlparser.LessEqualStr:
		return rangeSet{{hi: at(v.hi, true)}}, rangeSet{{lo: at(v.lo, false)}}
	case sqlparser.GreaterThanStr:
		return rangeSet{{lo: at(v.lo, false)}}, rangeSet{{hi: at(v.hi, true)}}
	case sqlparser.GreaterEqualStr:
		return rangeSet{{lo: at(v.lo, true)}}, rangeSet{{hi: at(v.hi, false)}}
	}
	eq := rangeSet{{lo: at(v.lo, true), hi: at(v.hi, true)}}
	ne := all
	if v.lo.Equal(v.hi) {
		ne = rangeSet{{hi: at(v.lo, false)}, {lo: at(v.lo, false)}}
	}
	if op == sqlparser.NotEqualStr {
		return ne, eq
	}
	return eq, ne // = and <=> with a value
}

// whyUnbounded returns the first explanation of an unbounded condition in the tree.
func (n *rangeNode) whyUnbounded() string {
	if n.why != "" {
		return n.why
	}
	for _, k := range n.kids {
		if w := k.whyUnbounded(); w != "" {
			return w
		}
	}
	return ""
}
