package routing

import (
	"database/sql/driver"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// bound is one end of an interval of shard-key values; an unset bound is infinite.
type bound struct {
	t    time.Time
	set  bool
	incl bool
}

// interval is a set of shard-key values between two bounds.
type interval struct{ lo, hi bound }

// everything is the interval of all non-NULL shard-key values.
var everything = interval{}

func (iv interval) empty() bool {
	if !iv.lo.set || !iv.hi.set {
		return false
	}
	c := iv.lo.t.Compare(iv.hi.t)
	return c > 0 || c == 0 && !(iv.lo.incl && iv.hi.incl)
}

func (iv interval) unbounded() bool { return !iv.lo.set && !iv.hi.set }

// raiseLo narrows the lower bound to b when b is tighter.
func (iv *interval) raiseLo(b bound) {
	if !iv.lo.set {
		iv.lo = b
		return
	}
	c := b.t.Compare(iv.lo.t)
	if c > 0 || c == 0 && !b.incl {
		iv.lo = b
	}
}

// lowerHi narrows the upper bound to b when b is tighter.
func (iv *interval) lowerHi(b bound) {
	if !iv.hi.set {
		iv.hi = b
		return
	}
	c := b.t.Compare(iv.hi.t)
	if c < 0 || c == 0 && !b.incl {
		iv.hi = b
	}
}

func (iv interval) intersect(o interval) interval {
	if o.lo.set {
		iv.raiseLo(o.lo)
	}
	if o.hi.set {
		iv.lowerHi(o.hi)
	}
	return iv
}

// String writes the interval in mathematical notation with DATETIME values.
func (iv interval) String() string { return string(appendInterval(nil, iv)) }

func appendInterval(b []byte, iv interval) []byte {
	if iv.lo.set && iv.lo.incl {
		b = append(b, '[')
	} else {
		b = append(b, '(')
	}
	if iv.lo.set {
		b = appendTime(b, iv.lo.t)
	} else {
		b = append(b, "-inf"...)
	}
	b = append(b, ", "...)
	if iv.hi.set {
		b = appendTime(b, iv.hi.t)
	} else {
		b = append(b, "+inf"...)
	}
	if iv.hi.set && iv.hi.incl {
		return append(b, ']')
	}
	return append(b, ')')
}

// rangeSet is a sorted list of disjoint, non-empty intervals.
type rangeSet []interval

func (s rangeSet) String() string {
	if len(s) == 0 {
		return "(empty)"
	}
	parts := make([]string, len(s))
	for i, iv := range s {
		parts[i] = iv.String()
	}
	return strings.Join(parts, " ∪ ")
}

// lowBefore orders lower bounds: an infinite bound first, then by time, inclusive before exclusive.
func lowBefore(a, b bound) int {
	switch {
	case !a.set && !b.set:
		return 0
	case !a.set:
		return -1
	case !b.set:
		return 1
	}
	if c := a.t.Compare(b.t); c != 0 {
		return c
	}
	switch {
	case a.incl == b.incl:
		return 0
	case a.incl:
		return -1
	}
	return 1
}

// touches reports whether interval b, starting at or after a's start, overlaps or adjoins a.
func touches(a, b interval) bool {
	if !a.hi.set || !b.lo.set {
		return true
	}
	c := b.lo.t.Compare(a.hi.t)
	return c < 0 || c == 0 && (a.hi.incl || b.lo.incl)
}

// normalize sorts, drops empty intervals and merges overlapping ones.
func normalize(s rangeSet) rangeSet {
	s = slices.DeleteFunc(s, interval.empty)
	slices.SortFunc(s, func(a, b interval) int { return lowBefore(a.lo, b.lo) })
	out := s[:0]
	for _, iv := range s {
		if n := len(out); n > 0 && touches(out[n-1], iv) {
			last := &out[n-1]
			if last.hi.set && (!iv.hi.set || iv.hi.t.After(last.hi.t) || iv.hi.t.Equal(last.hi.t) && iv.hi.incl) {
				last.hi = iv.hi
			}
			continue
		}
		out = append(out, iv)
	}
	return out
}

func union(a, b rangeSet) rangeSet {
	return normalize(append(slices.Clip(a), b...))
}

func intersect(a, b rangeSet) rangeSet {
	var out rangeSet
	for _, x := range a {
		for _, y := range b {
			if iv := x.intersect(y); !iv.empty() {
				out = append(out, iv)
			}
		}
	}
	return normalize(out)
}

// complement returns the non-NULL values outside s.
func complement(s rangeSet) rangeSet {
	var out rangeSet
	cur := bound{}
	for _, iv := range s {
		if iv.lo.set {
			out = append(out, interval{lo: cur, hi: bound{t: iv.lo.t, set: true, incl: !iv.lo.incl}})
		}
		if !iv.hi.set {
			return normalize(out)
		}
		cur = bound{t: iv.hi.t, set: true, incl: !iv.hi.incl}
	}
	out = append(out, interval{lo: cur})
	return normalize(out)
}

// span is the smallest interval holding the whole set.
func (s rangeSet) span() interval {
	if len(s) == 0 {
		return interval{lo: bound{set: true}, hi: bound{set: true}} // empty
	}
	return interval{lo: s[0].lo, hi: s[len(s)-1].hi}
}

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

// timeValue is a constant of a condition: a literal read at analysis, or the i-th argument.
type timeValue struct {
	arg int // index of the ? argument, -1 for a literal
	t   time.Time
}

// rangeNode is a shard-key condition compiled from WHERE/ON once per statement text; evaluating
// it with the arguments gives the set of shard-key values the statement can read.
type rangeNode struct {
	op   rangeOp
	cmp  string // rCmp: the comparison operator, with the key on the left
	vals []timeValue
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
	return fmt.Errorf("%w: %s wraps the shard key %s, which defeats routing and the index; compare the column itself with a range, e.g. %s >= '2025-03-15' AND %s < '2025-03-16' instead of DATE(%s) = '2025-03-15'",
		ErrShardKeyFunction, nodeText(e), c.key, c.key, c.key, c.key)
}

// compile turns a condition into a range node. It fails only for a function on the shard key
// or an unreadable time literal.
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
		from, okF, err := c.value(x.From)
		if err != nil {
			return nil, err
		}
		to, okT, err := c.value(x.To)
		if err != nil {
			return nil, err
		}
		if !okF || !okT {
			return c.opaque(e, x.From, x.To)
		}
		n := &rangeNode{op: rBetween, vals: []timeValue{from, to}}
		if x.Operator == sqlparser.NotBetweenStr {
			n = &rangeNode{op: rNot, kids: []*rangeNode{n}}
		}
		return n, nil
	}
	return c.opaque(e, e)
}

func (c *rangeCompiler) combine(op rangeOp, l, r sqlparser.Expr) (*rangeNode, error) {
	a, err := c.compile(l)
	if err != nil {
		return nil, err
	}
	b, err := c.compile(r)
	if err != nil {
		return nil, err
	}
	n := &rangeNode{op: op}
	for _, k := range []*rangeNode{a, b} {
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
		why = fmt.Sprintf("the condition %s on %s is not a comparison with a literal or ? argument", nodeText(e), c.key)
	}
	return &rangeNode{op: rAll, why: why}, nil
}

func (c *rangeCompiler) mentionsKey(e sqlparser.Expr) bool {
	found := false
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		if x, ok := n.(*sqlparser.ColName); ok && x != nil && c.isKey(x) {
			found = true
		}
		return !found, nil
	}, e)
	return found
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
			tv, ok, err := c.value(v)
			if err != nil {
				return nil, err
			}
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
	tv, ok, err := c.value(right)
	if err != nil {
		return nil, err
	}
	if !ok {
		return c.opaque(x, right)
	}
	return &rangeNode{op: rCmp, cmp: op, vals: []timeValue{tv}}, nil
}

// value reads a literal or ? argument compared with the key; ok is false for anything else.
func (c *rangeCompiler) value(e sqlparser.Expr) (timeValue, bool, error) {
	v, ok := unparen(e).(*sqlparser.SQLVal)
	if !ok {
		return timeValue{}, false, nil
	}
	switch v.Type {
	case sqlparser.ValArg:
		i := argIndex(string(v.Val))
		if i < 0 {
			return timeValue{}, false, nil
		}
		return timeValue{arg: i}, true, nil
	case sqlparser.StrVal:
		if c.typed[v] == "time" { // TIME '10:00' is no point in time
			return timeValue{}, false, nil
		}
		t, err := parseTime(string(v.Val))
		if err != nil {
			return timeValue{}, false, fmt.Errorf("%w: the literal '%s' compared with %s: %v", ErrBadTimeValue, v.Val, c.key, err)
		}
		return timeValue{arg: -1, t: t}, true, nil
	}
	return timeValue{}, false, nil
}

// timeLayouts are the literal forms accepted for the shard key, tried in order.
var timeLayouts = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04",
}

// parseTime reads a DATE or DATETIME literal as a UTC wall-clock time (as shard metadata is
// read). A date alone means midnight, which is what MySQL compares with a DATETIME column.
func parseTime(s string) (time.Time, error) {
	if t, ok := parseTimeFast(s); ok {
		return t, nil
	}
	s = strings.TrimSpace(s)
	for _, layout := range timeLayouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("write it as 'YYYY-MM-DD' or 'YYYY-MM-DD hh:mm:ss[.ffffff]'")
}

// argTime reads a bound argument as a shard-key time. NULL gives ok=false.
func argTime(args []driver.NamedValue, i int, key string) (t time.Time, ok bool, err error) {
	if i >= len(args) {
		return time.Time{}, false, fmt.Errorf("%w: the statement has more ? placeholders than the %d arguments given; pass one argument per ?", ErrBadTimeValue, len(args))
	}
	switch v := args[i].Value.(type) {
	case nil:
		return time.Time{}, false, nil
	case time.Time:
		return v.UTC(), true, nil
	case string:
		t, err := parseTime(v)
		if err != nil {
			return time.Time{}, false, fmt.Errorf("%w: argument %d (%q) for %s: %v", ErrBadTimeValue, i+1, v, key, err)
		}
		return t, true, nil
	case []byte:
		t, err := parseTime(string(v))
		if err != nil {
			return time.Time{}, false, fmt.Errorf("%w: argument %d (%q) for %s: %v", ErrBadTimeValue, i+1, v, key, err)
		}
		return t, true, nil
	default:
		return time.Time{}, false, fmt.Errorf("%w: argument %d for %s is a %T; pass a time.Time or a 'YYYY-MM-DD hh:mm:ss' string", ErrBadTimeValue, i+1, key, v)
	}
}

func (v timeValue) get(args []driver.NamedValue, key string) (time.Time, bool, error) {
	if v.arg < 0 {
		return v.t, true, nil
	}
	return argTime(args, v.arg, key)
}

// evalConj narrows iv by a conjunctive node without allocating; a comparison with NULL, never
// true, makes iv empty.
func (n *rangeNode) evalConj(iv *interval, args []driver.NamedValue, key string) error {
	switch n.op {
	case rAll:
	case rAnd:
		for _, k := range n.kids {
			if err := k.evalConj(iv, args, key); err != nil {
				return err
			}
		}
	case rCmp:
		t, ok, err := n.vals[0].get(args, key)
		if err != nil {
			return err
		}
		if !ok {
			*iv = interval{lo: bound{set: true}, hi: bound{set: true}}
			return nil
		}
		b := bound{t: t, set: true, incl: n.cmp != sqlparser.LessThanStr && n.cmp != sqlparser.GreaterThanStr}
		switch n.cmp {
		case sqlparser.EqualStr:
			iv.raiseLo(b)
			iv.lowerHi(b)
		case sqlparser.LessThanStr, sqlparser.LessEqualStr:
			iv.lowerHi(b)
		case sqlparser.GreaterThanStr, sqlparser.GreaterEqualStr:
			iv.raiseLo(b)
		}
	case rBetween:
		from, okF, err := n.vals[0].get(args, key)
		if err != nil {
			return err
		}
		to, okT, err := n.vals[1].get(args, key)
		if err != nil {
			return err
		}
		if !okF || !okT {
			*iv = interval{lo: bound{set: true}, hi: bound{set: true}}
			return nil
		}
		iv.raiseLo(bound{t: from, set: true, incl: true})
		iv.lowerHi(bound{t: to, set: true, incl: true})
	}
	return nil
}

// eval evaluates any node into a set of intervals. exact reports that the set is exactly the
// key values for which the condition is true (so NOT may complement it); otherwise the set is a
// superset, which is always safe to read.
func (n *rangeNode) eval(args []driver.NamedValue, key string) (s rangeSet, exact bool, err error) {
	all := rangeSet{everything}
	none := rangeSet{}
	switch n.op {
	case rAll:
		return all, false, nil
	case rAnd, rOr:
		s, exact = all, true
		if n.op == rOr {
			s = none
		}
		for _, k := range n.kids {
			ks, kx, err := k.eval(args, key)
			if err != nil {
				return nil, false, err
			}
			if n.op == rAnd {
				s = intersect(s, ks)
			} else {
				s = union(s, ks)
			}
			exact = exact && kx
		}
		return s, exact, nil
	case rNot:
		ks, kx, err := n.kids[0].eval(args, key)
		if err != nil {
			return nil, false, err
		}
		if !kx {
			return all, false, nil
		}
		return complement(ks), true, nil
	case rIn, rNotIn:
		var pts rangeSet
		exact = true
		for _, v := range n.vals {
			t, ok, err := v.get(args, key)
			if err != nil {
				return nil, false, err
			}
			if !ok { // a NULL in the list: IN may still match the others, NOT IN never holds
				if n.op == rNotIn {
					return none, false, nil
				}
				exact = false
				continue
			}
			b := bound{t: t, set: true, incl: true}
			pts = append(pts, interval{lo: b, hi: b})
		}
		pts = normalize(pts)
		if n.op == rNotIn {
			return complement(pts), true, nil
		}
		return pts, exact, nil
	case rCmp:
		t, ok, err := n.vals[0].get(args, key)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			if n.cmp == sqlparser.NullSafeEqualStr { // key <=> NULL is key IS NULL: no range
				return all, false, nil
			}
			return none, false, nil
		}
		b := bound{t: t, set: true, incl: true}
		x := bound{t: t, set: true}
		switch n.cmp {
		case sqlparser.EqualStr, sqlparser.NullSafeEqualStr:
			return rangeSet{{lo: b, hi: b}}, true, nil
		case sqlparser.NotEqualStr:
			return rangeSet{{hi: x}, {lo: x}}, true, nil
		case sqlparser.LessThanStr:
			return rangeSet{{hi: x}}, true, nil
		case sqlparser.LessEqualStr:
			return rangeSet{{hi: b}}, true, nil
		case sqlparser.GreaterThanStr:
			return rangeSet{{lo: x}}, true, nil
		case sqlparser.GreaterEqualStr:
			return rangeSet{{lo: b}}, true, nil
		}
	case rBetween:
		iv := everything
		if err := n.evalConj(&iv, args, key); err != nil {
			return nil, false, err
		}
		if iv.empty() {
			return none, !iv.lo.t.IsZero() || !iv.hi.t.IsZero(), nil
		}
		return rangeSet{iv}, true, nil
	}
	return all, false, nil
}

// why returns the first explanation of an unbounded condition in the tree.
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

// formatTime writes t as a DATETIME literal body, with microseconds only when it has them.
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

// parseTimeFast reads 'YYYY-MM-DD', 'YYYY-MM-DD hh:mm:ss' and 'YYYY-MM-DD hh:mm:ss.ffffff'
// without the generic layout machinery.
func parseTimeFast(s string) (time.Time, bool) {
	num := func(p string) (int, bool) {
		n := 0
		for i := 0; i < len(p); i++ {
			c := p[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	if len(s) != 10 && len(s) < 19 || s[4] != '-' || s[7] != '-' {
		return time.Time{}, false
	}
	y, ok1 := num(s[0:4])
	mo, ok2 := num(s[5:7])
	d, ok3 := num(s[8:10])
	if !ok1 || !ok2 || !ok3 || mo < 1 || mo > 12 || d < 1 || d > 31 {
		return time.Time{}, false
	}
	var h, mi, sec, ns int
	if len(s) > 10 {
		if s[10] != ' ' || s[13] != ':' || s[16] != ':' {
			return time.Time{}, false
		}
		var ok4, ok5, ok6 bool
		h, ok4 = num(s[11:13])
		mi, ok5 = num(s[14:16])
		sec, ok6 = num(s[17:19])
		if !ok4 || !ok5 || !ok6 || h > 23 || mi > 59 || sec > 59 {
			return time.Time{}, false
		}
		if len(s) > 19 {
			frac := s[20:]
			if s[19] != '.' || len(frac) == 0 || len(frac) > 9 {
				return time.Time{}, false
			}
			f, ok := num(frac)
			if !ok {
				return time.Time{}, false
			}
			for i := len(frac); i < 9; i++ {
				f *= 10
			}
			ns = f
		}
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, ns, time.UTC)
	if t.Day() != d { // 2025-02-30 and the like
		return time.Time{}, false
	}
	return t, true
}
