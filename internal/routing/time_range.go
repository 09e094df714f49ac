package routing

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// rangeOp is the kind of a node of a compiled shard-key condition.
type rangeOp uint8

const (
	rAll     rangeOp = iota // a condition that does not bound the shard key
	rAnd                    // all children hold
	rOr                     // any child holds
	rNot                    // the child does not hold
	rCmp                    // key <op> value
	rIn                     // key IN (values)
	rNotIn                  // key NOT IN (values)
	rBetween                // key BETWEEN values[0] AND values[1]
)

// rangeNode is a shard-key condition compiled from WHERE/ON once per statement text; evaluating
// it with the arguments and the statement's clock gives the set of shard-key values the
// statement can read.
type rangeNode struct {
	op   rangeOp
	cmp  string // rCmp: the comparison operator, with the key on the left
	vals []*texpr
	kids []*rangeNode
	// why explains an rAll node that stops the range (for the ErrNoTimeRange message).
	why string
}

// conjunctive reports whether the node is an AND of simple bounds (or unbounded conditions), the
// shape of nearly every real query; such nodes are evaluated without allocating.
func (n *rangeNode) conjunctive() bool {
	switch n.op {
	case rAll, rBetween:
		return true
	case rCmp:
		return n.cmp != sqlparser.NotEqualStr && n.cmp != sqlparser.NullSafeEqualStr
	case rAnd:
		for _, k := range n.kids {
			if !k.conjunctive() {
				return false
			}
		}
		return true
	}
	return false
}

// rangeCompiler compiles a WHERE/ON condition for one shard key.
type rangeCompiler struct {
	key   string // shard-key column, lower case
	quals []string
	typed map[*sqlparser.SQLVal]string // typed literals (parser.go)
}

// isKey reports whether e is the shard-key column of the sharded table.
func (c *rangeCompiler) isKey(e sqlparser.Expr) bool {
	col, ok := unparen(e).(*sqlparser.ColName)
	if !ok || col.Name.Lowered() != c.key {
		return false
	}
	if col.Qualifier.IsEmpty() {
		return true
	}
	q := strings.ToLower(col.Qualifier.Name.String())
	return slices.Contains(c.quals, q)
}

// wrapsKey reports whether e contains the shard key below some function or operator (not in a
// subquery, whose columns are another scope).
func (c *rangeCompiler) wrapsKey(e sqlparser.Expr) bool {
	if c.isKey(e) {
		return false
	}
	found := false
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		if _, ok := n.(*sqlparser.Subquery); ok {
			return false, nil
		}
		if x, ok := n.(*sqlparser.ColName); ok && x != nil && c.isKey(x) {
			found = true
		}
		return !found, nil
	}, e)
	return found
}

func (c *rangeCompiler) functionError(e sqlparser.Expr) error {
	return errorf("%w: %s wraps the shard key %s, which defeats routing and the index; compare the column itself with a range, e.g. %s >= '2025-03-15' AND %s < '2025-03-16' instead of DATE(%s) = '2025-03-15', or %s >= NOW() - INTERVAL 7 DAY instead of %s + INTERVAL 7 DAY >= NOW()",
		ErrShardKeyFunction, nodeText(e), c.key, c.key, c.key, c.key, c.key, c.key)
}

// compile turns a condition into a range node. It fails only for a function on the shard key.
func (c *rangeCompiler) compile(e sqlparser.Expr) (*rangeNode, error) {
	switch x := e.(type) {
	case nil:
		return &rangeNode{op: rAll}, nil
	case *sqlparser.ParenExpr:
		return c.compile(x.Expr)
	case *sqlparser.AndExpr:
		return c.combine(rAnd, x.Left, x.Right)
	case *sqlparser.OrExpr:
		return c.combine(rOr, x.Left, x.Right)
	case *sqlparser.NotExpr:
		k, err := c.compile(x.Expr)
		if err != nil {
			return nil, err
		}
		return &rangeNode{op: rNot, kids: []*rangeNode{k}}, nil
	case *sqlparser.ComparisonExpr:
		return c.comparison(x)
	case *sqlparser.IsExpr:
		return c.opaque(e, x.Expr)
	case *sqlparser.RangeCond:
		if !c.isKey(x.Left) {
			return c.opaque(e, x.Left, x.From, x.To)
		}
		from, okF := c.constant(x.From)
		to, okT := c.constant(x.To)
		if !okF || !okT {
			return c.opaque(e, x.From, x.To)
		}
		n := &rangeNode{op: rBetween, vals: []*texpr{from, to}}
		if x.Operator == sqlparser.NotBetweenStr {
			n = &rangeNode{op: rNot, kids: []*rangeNode{n}}
		}
		return n, nil
	}
	return c.opaque(e, e)
}

func (c *rangeCompiler) combine(op rangeOp, l, r sqlparser.Expr) (*rangeNode, error) {
	kids, err := translateEach(c.compile, l, r)
	if err != nil {
		return nil, err
	}
	n := &rangeNode{op: op}
	for _, k := range kids {
		if k.op == op {
			n.kids = append(n.kids, k.kids...)
		} else {
			n.kids = append(n.kids, k)
		}
	}
	return n, nil
}

// opaque is a condition that does not bound the key; it fails when one of parts wraps the key.
func (c *rangeCompiler) opaque(e sqlparser.Expr, parts ...sqlparser.Expr) (*rangeNode, error) {
	for _, p := range parts {
		if c.wrapsKey(p) {
			return nil, c.functionError(p)
		}
	}
	why := ""
	if c.mentionsKey(e) {
		why = fmt.Sprintf("the condition %s on %s is not a comparison with a literal, a ? argument or a constant time expression obroute folds (NOW(), CURDATE(), INTERVAL arithmetic, CAST)", nodeText(e), c.key)
	}
	return &rangeNode{op: rAll, why: why}, nil
}

func (c *rangeCompiler) mentionsKey(e sqlparser.Expr) bool {
	return anyNode(e, func(n sqlparser.SQLNode) bool {
		x, ok := n.(*sqlparser.ColName)
		return ok && x != nil && c.isKey(x)
	})
}

var flipped = map[string]string{
	sqlparser.EqualStr: sqlparser.EqualStr, sqlparser.NotEqualStr: sqlparser.NotEqualStr,
	sqlparser.NullSafeEqualStr: sqlparser.NullSafeEqualStr,
	sqlparser.LessThanStr:      sqlparser.GreaterThanStr, sqlparser.GreaterThanStr: sqlparser.LessThanStr,
	sqlparser.LessEqualStr: sqlparser.GreaterEqualStr, sqlparser.GreaterEqualStr: sqlparser.LessEqualStr,
}

func (c *rangeCompiler) comparison(x *sqlparser.ComparisonExpr) (*rangeNode, error) {
	switch x.Operator {
	case sqlparser.InStr, sqlparser.NotInStr:
		tuple, ok := x.Right.(sqlparser.ValTuple)
		if !c.isKey(x.Left) || !ok {
			return c.opaque(x, x.Left, x.Right)
		}
		n := &rangeNode{op: rIn}
		if x.Operator == sqlparser.NotInStr {
			n.op = rNotIn
		}
		for _, v := range tuple {
			tv, ok := c.constant(v)
			if !ok {
				return c.opaque(x, tuple...)
			}
			n.vals = append(n.vals, tv)
		}
		return n, nil
	}
	op, ok := flipped[x.Operator]
	if !ok {
		return c.opaque(x, x.Left, x.Right)
	}
	left, right := x.Left, x.Right
	if !c.isKey(left) && c.isKey(right) {
		left, right = right, left
	} else {
		op = x.Operator
	}
	if !c.isKey(left) {
		return c.opaque(x, x.Left, x.Right)
	}
	tv, ok := c.constant(right)
	if !ok {
		return c.opaque(x, right)
	}
	return &rangeNode{op: rCmp, cmp: op, vals: []*texpr{tv}}, nil
}

// formatTime writes t as a DATETIME literal body, with microseconds only when it has them.
//
// Not inlined: copied into each of its many call sites it would grow every
// binary that imports the driver (see driver/import_test.go).
//
//go:noinline
func formatTime(t time.Time) string {
	var buf [32]byte
	return string(appendTime(buf[:0], t))
}

func appendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	h, mi, sec := t.Clock()
	if y < 0 || y > 9999 {
		return t.AppendFormat(b, "2006-01-02 15:04:05.999999")
	}
	b = append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+mo/10), byte('0'+mo%10), '-', byte('0'+d/10), byte('0'+d%10), ' ',
		byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+sec/10), byte('0'+sec%10))
	if us := t.Nanosecond() / 1000; us != 0 {
		b = append(b, '.')
		for div := 100000; div > 0 && us != 0; div /= 10 {
			b = append(b, byte('0'+us/div))
			us %= div
		}
	}
	return b
}
