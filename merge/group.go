package merge

import (
	"database/sql/driver"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// aggregator is one Aggregate with what the result's type says about it.
type aggregator struct {
	Aggregate
	cmp *comparer // MIN, MAX: the comparison of Column
	// float: SUM or AVG of FLOAT/DOUBLE, summed as float64.
	float bool
	// scale is the result's scale (DECIMAL), when known (hasScale): the merged
	// SUM or AVG is rounded to it as the server rounds its own.
	scale    int
	hasScale bool
}

// aggState is the running merge of one aggregate within one group.
type aggState struct {
	seen     bool         // a non-NULL partial was seen
	goType   driver.Value // a sample of the first non-NULL partial's Go type, for the output
	asFloat  bool         // summed as float64
	sum      decSum
	fsum     float64
	count    int64
	countTyp driver.Value // sample of the COUNT partial's Go type (COUNT, AVG)
	incr     int          // AVG: the sessions' div_precision_increment; -1 until read
	// mode is, for AVG, how the server rounds it, learned from the partials when not known
	// from the types alone.
	mode   avgMode
	val    driver.Value // MIN/MAX so far (owned copy)
	weight []byte       // its weight (owned copy)
	carry  []driver.Value
}

// group is one merged group: an owned copy of its first row plus its aggregates.
type group struct {
	row  []driver.Value
	aggs []aggState
}

// grouper holds what both the streaming and the hash GROUP BY need.
type grouper struct {
	keys   []*comparer
	width  int
	aggs   []aggregator
	aggCol []bool // columns written by an aggregate
}

func newGrouper(spec *Spec, cols *columns, types []ColumnType) *grouper {
	g := &grouper{width: len(cols.kinds), aggCol: make([]bool, len(cols.kinds))}
	for _, k := range spec.GroupBy {
		g.keys = append(g.keys, cols.cmp[k])
	}
	for _, a := range spec.Aggregates {
		ag := aggregator{Aggregate: a, cmp: cols.cmp[a.Column]}
		t := types[a.Column]
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
	return g
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
		*st = aggState{val: st.val, weight: st.weight[:0], carry: st.carry[:0], incr: -1}
	}
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
	for i := range g.aggs {
		a := &g.aggs[i]
		st := &gr.aggs[i]
		var err error
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
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// addMinMax keeps the row's value when it beats the group's so far, with its weight and the
// columns carried with it.
func (st *aggState) addMinMax(a *aggregator, row []driver.Value) {
	v := row[a.Column]
	if v == nil {
		return
	}
	var w driver.Value
	if a.cmp.w != nil {
		w = row[a.cmp.w.weight]
	}
	if st.seen {
		var c int
		if a.cmp.w != nil {
			var cur driver.Value
			if st.weight != nil {
				cur = st.weight
			}
			c = a.cmp.w.comparePair(v, w, st.val, cur)
		} else {
			c = compareValues(a.cmp.kind, v, st.val)
		}
		if (a.Func == AggMin && c >= 0) || (a.Func == AggMax && c <= 0) {
			return
		}
	}
	st.seen = true
	st.val = copyValue(st.val, v)
	st.weight = st.weight[:0]
	if b, ok := w.([]byte); ok {
		st.weight = append(st.weight[:0:0], b...)
	} else {
		st.weight = nil
	}
	st.carry = st.carry[:0]
	for _, c := range a.Carry {
		st.carry = append(st.carry, copyValue(nil, row[c]))
	}
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
	return nil
}

func badValue(col int, what string, v driver.Value) error {
	return fmt.Errorf("%w: column %d: %s partial %q (%T) is not a number", ErrBadValue, col, what, asBytes(v), v)
}

// readInt reads a whole number partial: COUNT, div_precision_increment.
func readInt(v driver.Value) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case uint64:
		return int64(x), x <= math.MaxInt64
	case []byte:
		n, err := strconv.ParseInt(string(x), 10, 64)
		return n, err == nil
	}
	return 0, false
}

func (st *aggState) addCount(v driver.Value, col int) error {
	if v == nil {
		return nil
	}
	n, ok := readInt(v)
	if !ok {
		return badValue(col, "COUNT", v)
	}
	if st.countTyp == nil {
		st.countTyp = v
	}
	st.count += n
	return nil
}

// addAvg adds the partial SUM and COUNT of an AVG and, when the types do not tell, reads from
// the partial's mode column how the server rounds (see avgMode): the total's quotient keeps as
// many digits as the partial's with the most, so one partial that rounds makes the total round.
func (st *aggState) addAvg(a *aggregator, row []driver.Value) error {
	if err := st.addSum(a, row, a.Sum); err != nil {
		return err
	}
	if err := st.addCount(row[a.Count], a.Count); err != nil {
		return err
	}
	if st.asFloat || !a.hasScale || st.mode == avgRound || st.incr < 0 {
		return nil
	}
	if m := staticAvgMode(a.scale, st.incr, a.Arg); m != avgUnknown {
		st.mode = m
		return nil
	}
	if a.Mode != 0 {
		if m := readAvgMode(row[a.Mode]); m != avgUnknown {
			st.mode = m
		}
	}
	return nil
}

// readIncrement reads the div_precision_increment of the server session a partial AVG came from.
func (st *aggState) readIncrement(v driver.Value, col int) error {
	n, ok := readInt(v)
	if !ok || n < 0 {
		return badValue(col, "div_precision_increment", v)
	}
	if st.incr >= 0 && int(n) != st.incr {
		return notExactf("the sub-queries ran with different div_precision_increment (%d and %d); set it on every backend alike", st.incr, n)
	}
	st.incr = int(n)
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

// addSum adds the partial sum of row held in column raw (SUM's own column, AVG's hidden SUM),
// or its exact form when the aggregate has one and the sum is not a float.
func (st *aggState) addSum(a *aggregator, row []driver.Value, raw int) error {
	v := row[raw]
	if v == nil {
		return nil
	}
	if !st.seen {
		st.seen = true
		st.goType = v
		_, isFloat := toFloatType(v)
		st.asFloat = a.float || isFloat
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
			return badValue(raw, "SUM", v)
		}
		st.fsum += f
		return nil
	}
	if a.Exact != 0 {
		e := row[a.Exact]
		if e == nil {
			return notExactf("a partial %s of column %d has more digits than DECIMAL(65,38) holds; select SUM and COUNT of a simpler expression, or narrow the range to one table", a.Func, a.Column+1)
		}
		v, raw = e, a.Exact
	}
	switch x := v.(type) {
	case int64:
		st.sum.addInt(x)
	case uint64:
		st.sum.addUint(x)
	case []byte:
		if !st.sum.addText(x) {
			return badValue(raw, "SUM", v)
		}
	default:
		return badValue(raw, "SUM", v)
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

func (st *aggState) sumValue(a *aggregator) driver.Value {
	if !st.seen {
		return nil
	}
	if st.asFloat {
		return st.floatValue(st.fsum)
	}
	if a.hasScale {
		return st.sum.appendRounded(nil, a.scale)
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

func (st *aggState) avgValue(a *aggregator) (driver.Value, error) {
	if !st.seen || st.count == 0 {
		return nil, nil
	}
	if st.asFloat {
		return st.floatValue(st.fsum / float64(st.count)), nil
	}
	if !a.hasScale {
		return nil, notExactf("AVG in column %d: the result's scale is not known", a.Column+1)
	}
	switch st.mode {
	case avgRound, avgTruncate:
		return appendAvg(nil, &st.sum, st.count, a.scale, st.mode == avgTruncate), nil
	}
	t := appendAvg(nil, &st.sum, st.count, a.scale, true)
	if r := appendAvg(nil, &st.sum, st.count, a.scale, false); string(t) != string(r) {
		return nil, notExactf("AVG in column %d: with div_precision_increment = %d and a result of scale %d, whether the server rounds or truncates this average depends on digits the sub-queries do not show; select SUM and COUNT of the expression and divide in the application, or narrow the range to one table",
			a.Column+1, st.incr, a.scale)
	}
	return t, nil
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
	if err := s.finish(s.cur); err != nil {
		return nil, err
	}
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
			key = c.appendKey(key, r)
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
