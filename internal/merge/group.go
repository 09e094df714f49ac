package merge

import (
	"database/sql/driver"
	"io"
	"slices"
	"strings"
)

// group is one merged group: an owned copy of its first row plus its aggregates.
type group struct {
	row  []driver.Value
	aggs []aggState
	incr int // the sessions' div_precision_increment, for computed columns; -1 until read
}

// grouper holds what both the streaming and the hash GROUP BY need.
type grouper struct {
	keys   []*comparer
	width  int
	aggs   []aggregator
	aggCol []bool // columns written by an aggregate or a computed expression
	// computed are the expressions over aggregates, written after the aggregates.
	computed []computer
	checks   []Check
}

func newGrouper(spec *Spec, cols *columns, types []ColumnType) (*grouper, error) {
	g := &grouper{width: len(cols.kinds), aggCol: make([]bool, len(cols.kinds)), keys: make([]*comparer, 0, len(spec.GroupBy)), aggs: make([]aggregator, 0, len(spec.Aggregates))}
	for _, k := range spec.GroupBy {
		g.keys = append(g.keys, cols.cmp[k])
	}
	g.checks = spec.Checks
	for _, a := range spec.Aggregates {
		ag := aggregator{Aggregate: a, cmp: cols.cmp[a.Column]}
		for _, c := range a.Distinct {
			ag.args = append(ag.args, cols.cmp[c])
			g.aggCol[c] = true
		}
		t := types[a.Column]
		if (a.Func == AggMin || a.Func == AggMax) && len(spec.GroupBy) == 0 && strings.EqualFold(t.DatabaseTypeName, "BIT") {
			// MariaDB (10.11) types it BIT but sends the number's decimal digits when one table
			// answers without GROUP BY, and the bits from a UNION or a grouped query: which of
			// the two a sub-query's value is cannot be told from the value.
			return nil, notExactf("column %d is %s of a BIT column, which one server sends as the number's decimal digits (a BIT typed column holding \"4095\"), and as its bits from several tables; select %s(col + 0) for the number, or narrow the range to one table", a.Column+1, a.Func, a.Func)
		}
		ag.float = cols.kinds[a.Column] == kindFloat
		if cols.kinds[a.Column] == kindNumber && t.HasPrecisionScale {
			ag.scale, ag.hasScale = int(t.Scale), true
		}
		g.aggs = append(g.aggs, ag)
		g.aggCol[a.Column] = true
		for _, c := range []int{a.Sum, a.Exact, a.Count, a.Increment, a.Mode} {
			if c != 0 {
				g.aggCol[c] = true
			}
		}
		for _, c := range a.Carry {
			g.aggCol[c] = true
		}
		if w := ag.cmp.w; w != nil && (a.Func == AggMin || a.Func == AggMax) {
			g.aggCol[w.weight] = true
		}
	}
	return g, g.bindComputed(spec, cols, types)
}

func (g *grouper) newGroup() *group {
	return &group{row: make([]driver.Value, g.width), aggs: make([]aggState, len(g.aggs))}
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
		st := &gr.aggs[i]
		*st = aggState{val: st.val, weight: st.weight[:0], carry: st.carry[:0], out: st.out, countOut: st.countOut, incr: -1}
	}
	gr.incr = -1
	return g.add(gr, row)
}

// sameKey reports whether row belongs to the group whose first row was gr.row.
func (g *grouper) sameKey(gr *group, row []driver.Value) bool {
	for _, c := range g.keys {
		if c.compare(gr.row, row) != 0 {
			return false
		}
	}
	return true
}

// add merges the partial aggregates of row into gr.
func (g *grouper) add(gr *group, row []driver.Value) error {
	for _, c := range g.checks {
		if v, known := truth(row[c.Column]); !v || !known {
			return notExactf("%s", c.Refusal)
		}
	}
	for i := range g.aggs {
		a := &g.aggs[i]
		st := &gr.aggs[i]
		var err error
		if len(a.Distinct) > 0 {
			if a.Func == AggAvg {
				err = st.readIncrement(row[a.Increment], a.Increment)
			}
			if err == nil {
				err = st.addDistinct(a, row)
			}
			if err != nil {
				return err
			}
			continue
		}
		switch a.Func {
		case AggCount:
			err = st.addCount(row[a.Column], a.Column)
		case AggSum:
			err = st.addSum(a, row, a.Column)
		case AggAvg:
			if err = st.readIncrement(row[a.Increment], a.Increment); err == nil {
				err = st.addAvg(a, row)
			}
		case AggMin, AggMax:
			st.addMinMax(a, row)
		case AggBitAnd, AggBitOr, AggBitXor:
			err = st.addBits(a, row[a.Column])
		}
		if err != nil {
			return err
		}
	}
	return g.addComputed(gr, row)
}

// finish writes the merged aggregates into gr.row.
func (g *grouper) finish(gr *group) error {
	for i := range g.aggs {
		a := &g.aggs[i]
		st := &gr.aggs[i]
		switch a.Func {
		case AggCount:
			gr.row[a.Column] = st.countValue()
		case AggSum:
			gr.row[a.Column] = st.sumValue(a)
		case AggAvg:
			gr.row[a.Count] = st.countValue()
			v, err := st.avgValue(a)
			if err != nil {
				return err
			}
			gr.row[a.Column] = v
		case AggBitAnd, AggBitOr, AggBitXor:
			gr.row[a.Column] = st.bitsValue()
		case AggMin, AggMax:
			gr.row[a.Column] = nil
			if st.seen {
				gr.row[a.Column] = st.val
			}
			if a.cmp.w != nil {
				gr.row[a.cmp.w.weight] = nil
				if st.seen && st.weight != nil {
					gr.row[a.cmp.w.weight] = st.weight
				}
			}
			for j, c := range a.Carry {
				gr.row[c] = nil
				if st.seen && j < len(st.carry) {
					gr.row[c] = st.carry[j]
				}
			}
		}
	}
	return g.finishComputed(gr)
}

// copyValue returns src, with a []byte copied into dst's buffer when it has one; dst itself
// when the copy is the same slice (no new boxed value: see textValue).
func copyValue(dst, src driver.Value) driver.Value {
	b, ok := src.([]byte)
	if !ok {
		return src
	}
	old, _ := dst.([]byte)
	d := append(old[:0], b...)
	if d == nil {
		d = []byte{} // an empty string is not NULL
	}
	if old != nil && sameSlice(old, d) {
		return dst
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
	// empty: return the group of no rows when the source has none (Spec.EmptyGroup).
	empty    bool
	returned bool
	// rollup adds the subtotal rows of WITH ROLLUP; nil without.
	rollup *rollupLevels
}

func (s *streamGroup) next() ([]driver.Value, error) {
	if s.rollup != nil {
		if row := s.rollup.pop(); row != nil {
			return row, nil
		}
	}
	first := s.pending
	s.pending = nil
	if first == nil {
		if s.done {
			return nil, io.EOF
		}
		r, err := s.src.next()
		if err == io.EOF && s.empty && !s.returned {
			return s.emptyGroup()
		}
		if err != nil {
			return nil, err
		}
		first = r
	}
	s.returned = true
	if s.cur == nil {
		s.cur = s.newGroup()
	}
	if err := s.start(s.cur, first); err != nil {
		return nil, err
	}
	if err := s.addRollup(first); err != nil {
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
		if err := s.addRollup(r); err != nil {
			return nil, err
		}
	}
	if err := s.finish(s.cur); err != nil {
		return nil, err
	}
	if s.rollup != nil {
		// The subtotals that end here follow the group; pending is still valid in src.
		if err := s.rollup.end(s.grouper, s.cur, s.pending); err != nil {
			return nil, err
		}
	}
	return s.cur.row, nil
}

func (s *streamGroup) addRollup(row []driver.Value) error {
	if s.rollup == nil {
		return nil
	}
	return s.rollup.add(s.grouper, row)
}

// emptyGroup returns the aggregates over no rows, once.
func (s *streamGroup) emptyGroup() ([]driver.Value, error) {
	s.returned, s.done = true, true
	gr := s.newGroup()
	for i := range gr.aggs {
		gr.aggs[i].incr = -1
	}
	gr.incr = -1
	if err := s.finish(gr); err != nil {
		return nil, err
	}
	return gr.row, nil
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
			key = c.appendKey(key, r)
		}
		if gr, ok := index[string(key)]; ok {
			if err := h.add(gr, r); err != nil {
				return err
			}
			continue
		}
		if len(h.groups) >= h.maxHeld {
			return errorf("%w: GROUP BY needs more than %d groups in memory (Spec.MaxHeldRows); the inputs are not sorted by the group keys", ErrTooManyRows, h.maxHeld)
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
		if err := h.finish(gr); err != nil {
			return err
		}
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
