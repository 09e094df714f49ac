package merge

import (
	"database/sql/driver"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// aggregator is one Aggregate with the comparison of its column.
type aggregator struct {
	Aggregate
	kind Kind
}

// aggState is the running merge of one aggregate within one group.
type aggState struct {
	seen     bool         // a non-NULL partial was seen
	goType   driver.Value // a sample of the first non-NULL partial's Go type, for the output
	asFloat  bool         // SUM/AVG of FLOAT/DOUBLE: summed as float64
	sum      decSum
	fsum     float64
	count    int64
	countTyp driver.Value // sample of the COUNT partial's Go type (COUNT, AVG)
	val      driver.Value // MIN/MAX so far (owned copy)
}

// group is one merged group: an owned copy of its first row plus its aggregates.
type group struct {
	row  []driver.Value
	aggs []aggState
}

// grouper holds what both the streaming and the hash GROUP BY need.
type grouper struct {
	keys   []int
	kinds  []Kind
	aggs   []aggregator
	aggCol []bool // columns written by an aggregate
}

func newGrouper(spec *Spec, kinds []Kind) *grouper {
	g := &grouper{keys: spec.GroupBy, kinds: kinds, aggCol: make([]bool, len(kinds))}
	for _, a := range spec.Aggregates {
		g.aggs = append(g.aggs, aggregator{a, kinds[a.Column]})
		g.aggCol[a.Column] = true
		if a.Func == AggAvg {
			g.aggCol[a.CountColumn] = true
		}
	}
	return g
}

func (g *grouper) newGroup() *group {
	return &group{row: make([]driver.Value, len(g.kinds)), aggs: make([]aggState, len(g.aggs))}
}

// start makes gr the group of row: copies its plain columns, resets and
// feeds the aggregates.
func (g *grouper) start(gr *group, row []driver.Value) error {
	for i, v := range row {
		if g.aggCol[i] {
			gr.row[i] = nil // written by finish; never share a buffer with aggState.val
			continue
		}
		gr.row[i] = copyValue(gr.row[i], v)
	}
	for i := range gr.aggs {
		val := gr.aggs[i].val
		gr.aggs[i] = aggState{val: val}
	}
	return g.add(gr, row)
}

// sameKey reports whether row belongs to the group whose first row was gr.row.
func (g *grouper) sameKey(gr *group, row []driver.Value) bool {
	for _, c := range g.keys {
		if compareValues(g.kinds[c], gr.row[c], row[c]) != 0 {
			return false
		}
	}
	return true
}

// add merges the partial aggregates of row into gr.
func (g *grouper) add(gr *group, row []driver.Value) error {
	for i, a := range g.aggs {
		st := &gr.aggs[i]
		switch a.Func {
		case AggCount:
			if err := st.addCount(row[a.Column], a.Column); err != nil {
				return err
			}
		case AggSum:
			if err := st.addSum(a.kind, row[a.Column], a.Column); err != nil {
				return err
			}
		case AggAvg:
			if err := st.addSum(a.kind, row[a.Column], a.Column); err != nil {
				return err
			}
			if err := st.addCount(row[a.CountColumn], a.CountColumn); err != nil {
				return err
			}
		case AggMin, AggMax:
			v := row[a.Column]
			if v == nil {
				continue
			}
			c := 0
			if st.seen {
				c = compareValues(a.kind, v, st.val)
			}
			if !st.seen || (a.Func == AggMin && c < 0) || (a.Func == AggMax && c > 0) {
				st.val = copyValue(st.val, v)
				st.seen = true
			}
		}
	}
	return nil
}

// finish writes the merged aggregates into gr.row.
func (g *grouper) finish(gr *group) {
	for i, a := range g.aggs {
		st := &gr.aggs[i]
		switch a.Func {
		case AggCount:
			gr.row[a.Column] = st.countValue()
		case AggSum:
			gr.row[a.Column] = st.sumValue()
		case AggAvg:
			gr.row[a.CountColumn] = st.countValue()
			gr.row[a.Column] = st.avgValue()
		case AggMin, AggMax:
			if st.seen {
				gr.row[a.Column] = st.val
			} else {
				gr.row[a.Column] = nil
			}
		}
	}
}

func badValue(col int, what string, v driver.Value) error {
	return fmt.Errorf("%w: column %d: %s partial %q (%T) is not a number", ErrBadValue, col, what, asBytes(v), v)
}

func (st *aggState) addCount(v driver.Value, col int) error {
	var n int64
	switch x := v.(type) {
	case nil:
		return nil
	case int64:
		n = x
	case uint64:
		if x > math.MaxInt64 {
			return badValue(col, "COUNT", v)
		}
		n = int64(x)
	case []byte:
		var err error
		if n, err = strconv.ParseInt(string(x), 10, 64); err != nil {
			return badValue(col, "COUNT", v)
		}
	default:
		return badValue(col, "COUNT", v)
	}
	if st.countTyp == nil {
		st.countTyp = v
	}
	st.count += n
	return nil
}

func (st *aggState) countValue() driver.Value {
	switch st.countTyp.(type) {
	case []byte:
		return strconv.AppendInt(nil, st.count, 10)
	case uint64:
		return uint64(st.count)
	}
	return st.count
}

func (st *aggState) addSum(k Kind, v driver.Value, col int) error {
	if v == nil {
		return nil
	}
	if !st.seen {
		st.seen = true
		st.goType = v
		_, isFloat := toFloatType(v)
		st.asFloat = k == KindFloat || isFloat
	}
	if !st.asFloat {
		if _, isFloat := toFloatType(v); isFloat { // a float partial after exact ones
			f, _ := strconv.ParseFloat(string(st.sum.appendText(nil)), 64)
			st.fsum, st.asFloat = f, true
		}
	}
	if st.asFloat {
		f, ok := toFloat(v)
		if !ok {
			return badValue(col, "SUM", v)
		}
		st.fsum += f
		return nil
	}
	switch x := v.(type) {
	case int64:
		st.sum.addInt(x)
	case uint64:
		st.sum.addUint(x)
	case []byte:
		if !st.sum.addText(x) {
			return badValue(col, "SUM", v)
		}
	default:
		return badValue(col, "SUM", v)
	}
	return nil
}

func toFloatType(v driver.Value) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	}
	return 0, false
}

// floatValue returns f in the Go type of the partials.
func (st *aggState) floatValue(f float64) driver.Value {
	switch st.goType.(type) {
	case float64:
		return f
	case float32:
		return float32(f)
	}
	return appendDouble(nil, f)
}

func (st *aggState) sumValue() driver.Value {
	if !st.seen {
		return nil
	}
	if st.asFloat {
		return st.floatValue(st.fsum)
	}
	switch st.goType.(type) {
	case int64:
		if n, ok := st.sum.int64Value(); ok {
			return n
		}
	case uint64:
		if n, ok := st.sum.int64Value(); ok && n >= 0 {
			return uint64(n)
		}
	}
	return st.sum.appendText(nil)
}

func (st *aggState) avgValue() driver.Value {
	if !st.seen || st.count == 0 {
		return nil
	}
	if st.asFloat {
		return st.floatValue(st.fsum / float64(st.count))
	}
	return appendAvg(nil, &st.sum, st.count)
}

// copyValue returns src, with a []byte copied into dst's buffer when it has one.
func copyValue(dst, src driver.Value) driver.Value {
	b, ok := src.([]byte)
	if !ok {
		return src
	}
	d, _ := dst.([]byte)
	d = append(d[:0], b...)
	if d == nil {
		d = []byte{} // an empty string is not NULL
	}
	return d
}

// streamGroup merges groups from a source sorted by the group keys; it holds
// one group and reads one row ahead.
type streamGroup struct {
	*grouper
	src     stage
	cur     *group
	pending []driver.Value // first row of the next group, still valid in src
	done    bool
}

func (s *streamGroup) next() ([]driver.Value, error) {
	first := s.pending
	s.pending = nil
	if first == nil {
		if s.done {
			return nil, io.EOF
		}
		r, err := s.src.next()
		if err != nil {
			return nil, err
		}
		first = r
	}
	if s.cur == nil {
		s.cur = s.newGroup()
	}
	if err := s.start(s.cur, first); err != nil {
		return nil, err
	}
	for {
		r, err := s.src.next()
		if err == io.EOF {
			s.done = true
			break
		}
		if err != nil {
			return nil, err
		}
		if !s.sameKey(s.cur, r) {
			s.pending = r
			break
		}
		if err := s.add(s.cur, r); err != nil {
			return nil, err
		}
	}
	s.finish(s.cur)
	return s.cur.row, nil
}

// hashGroup reads every input row into groups keyed by the group columns,
// then returns the groups that pass HAVING, sorted by the ORDER BY keys if
// any, else in the order their first rows arrived.
type hashGroup struct {
	*grouper
	src     stage
	having  evalFunc
	order   []sortKey
	maxHeld int
	groups  []*group
	built   bool
	pos     int
}

func (h *hashGroup) build() error {
	index := make(map[string]*group)
	var key []byte
	for {
		r, err := h.src.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		key = key[:0]
		for _, c := range h.keys {
			key = appendKey(key, h.kinds[c], r[c])
		}
		if gr, ok := index[string(key)]; ok {
			if err := h.add(gr, r); err != nil {
				return err
			}
			continue
		}
		if len(h.groups) >= h.maxHeld {
			return fmt.Errorf("%w: GROUP BY needs more than %d groups in memory (Spec.MaxHeldRows); the inputs are not sorted by the group keys", ErrTooManyRows, h.maxHeld)
		}
		gr := h.newGroup()
		if err := h.start(gr, r); err != nil {
			return err
		}
		index[string(key)] = gr
		h.groups = append(h.groups, gr)
	}
	kept := h.groups[:0]
	for _, gr := range h.groups {
		h.finish(gr)
		if h.having == nil || keep(h.having, gr.row) {
			kept = append(kept, gr)
		}
	}
	h.groups = kept
	if len(h.order) > 0 {
		slices.SortStableFunc(h.groups, func(a, b *group) int { return compareRows(h.order, a.row, b.row) })
	}
	return nil
}

func (h *hashGroup) next() ([]driver.Value, error) {
	if !h.built {
		h.built = true
		if err := h.build(); err != nil {
			return nil, err
		}
	}
	if h.pos >= len(h.groups) {
		return nil, io.EOF
	}
	h.pos++
	return h.groups[h.pos-1].row, nil
}

// keep evaluates a HAVING condition: only TRUE keeps the row.
func keep(cond evalFunc, row []driver.Value) bool {
	v, known := truth(cond(row))
	return known && v
}
