package merge

import (
	"database/sql/driver"
	"math"
	"strconv"
)

// aggregator is one Aggregate with what the result's type says about it.
type aggregator struct {
	Aggregate
	cmp  *comparer   // MIN, MAX: the comparison of Column
	args []*comparer // DISTINCT: the comparisons of the arguments' columns
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
	// distinct holds the keys of the values of a DISTINCT aggregate's argument seen so far.
	distinct map[string]struct{}
	// bits is the BIT_AND, BIT_OR or BIT_XOR of the partials so far (seen: one was read).
	bits uint64
	// out and countOut are the text values last written for the group (SUM or AVG, and COUNT or
	// AVG's count), rewritten in place by the next group.
	out, countOut textValue
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

// addBits merges the partial BIT_AND, BIT_OR or BIT_XOR v: a BIGINT UNSIGNED, never NULL (over no
// rows the server gives the operation's identity, which merges as no partial).
func (st *aggState) addBits(a *aggregator, v driver.Value) error {
	var n uint64
	switch x := v.(type) {
	case uint64:
		n = x
	case int64:
		if x < 0 {
			return badValue(a.Column, a.Func.String(), v)
		}
		n = uint64(x)
	case []byte:
		var err error
		if n, err = strconv.ParseUint(string(x), 10, 64); err != nil {
			return badValue(a.Column, a.Func.String(), v)
		}
	default:
		return badValue(a.Column, a.Func.String(), v)
	}
	if st.goType == nil {
		st.goType = v
	}
	switch {
	case !st.seen:
		st.bits = n
	case a.Func == AggBitAnd:
		st.bits &= n
	case a.Func == AggBitOr:
		st.bits |= n
	default:
		st.bits ^= n
	}
	st.seen = true
	return nil
}

// bitsValue is the merged BIT_AND, BIT_OR or BIT_XOR, in the Go type its partials came in (text
// protocol: the digits).
func (st *aggState) bitsValue() driver.Value {
	if _, text := st.goType.([]byte); text {
		return st.out.set(strconv.AppendUint(st.out.buf(), st.bits, 10))
	}
	return st.bits
}

func badValue(col int, what string, v driver.Value) error {
	return errorf("%w: column %d: %s partial %q (%T) is not a number", ErrBadValue, col, what, asBytes(v), v)
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
	st.learnAvgMode(a, row)
	return nil
}

// learnAvgMode learns from row how the server rounds the AVG, when the types do not tell.
func (st *aggState) learnAvgMode(a *aggregator, row []driver.Value) {
	if st.asFloat || !a.hasScale || st.mode == avgRound || st.incr < 0 {
		return
	}
	if m := staticAvgMode(a.scale, st.incr, a.Arg); m != avgUnknown {
		st.mode = m
		return
	}
	if a.Mode != 0 {
		if m := readAvgMode(row[a.Mode]); m != avgUnknown {
			st.mode = m
		}
	}
}

// addDistinct adds the value (list of values) of a DISTINCT aggregate's arguments in row, unless
// the group has seen an equal one: COUNT counts it, SUM adds it, AVG does both.
func (st *aggState) addDistinct(a *aggregator, row []driver.Value) error {
	if st.countTyp == nil && row[a.Column] != nil {
		st.countTyp = row[a.Column] // COUNT(DISTINCT x) is sent as a COUNT is
	}
	var key []byte
	for _, c := range a.args {
		if row[c.col] == nil {
			return nil // a list with a NULL is not counted
		}
		key = c.appendKey(key, row)
	}
	if _, dup := st.distinct[string(key)]; dup {
		return nil
	}
	if st.distinct == nil {
		st.distinct = map[string]struct{}{}
	}
	st.distinct[string(key)] = struct{}{}
	if a.Func != AggCount {
		// A DOUBLE SUM or AVG adds the argument's value as the server converts it to DOUBLE (a
		// FLOAT widened, not its shortest text read as a DOUBLE): the aggregate's own column,
		// the SUM or AVG of one value in the sub-query's group of that value.
		raw := a.Distinct[0]
		if a.float {
			raw = a.Column
		}
		if err := st.addSum(a, row, raw); err != nil {
			return err
		}
	}
	st.count++
	if a.Func == AggAvg {
		st.learnAvgMode(a, row)
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
		return st.countOut.set(strconv.AppendInt(st.countOut.buf(), st.count, 10))
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
		st.asFloat = a.float || isFloat(v)
	}
	if !st.asFloat {
		if isFloat(v) { // a float partial after exact ones
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
		if clipped(x) {
			return notExactf("a partial %s of column %d is the largest DECIMAL(65) value, where a sub-query's UNION ALL of its tables clips a sum that one server carries beyond 65 digits; narrow the range to one table, or sum in the application", a.Func, a.Column+1)
		}
		if !st.sum.addText(x) {
			return badValue(raw, "SUM", v)
		}
	default:
		return badValue(raw, "SUM", v)
	}
	return nil
}

// clipped reports whether the decimal text b is 65 nines (with a sign and a point): the most
// a DECIMAL holds, to which MariaDB (10.11) clips a SUM that a UNION ALL passes on, though
// one table's SUM shows more digits.
func clipped(b []byte) bool {
	n := 0
	for _, c := range b {
		switch c {
		case '9':
			n++
		case '-', '.':
		default:
			return false
		}
	}
	return n == 65
}

// isFloat reports whether v is a float (a FLOAT or DOUBLE column's value).
func isFloat(v driver.Value) bool {
	switch v.(type) {
	case float64, float32:
		return true
	}
	return false
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
		return st.out.set(st.sum.appendRounded(st.out.buf(), a.scale))
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
	return st.out.set(st.sum.appendText(st.out.buf()))
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
		return st.out.set(appendAvg(st.out.buf(), &st.sum, st.count, a.scale, st.mode == avgTruncate)), nil
	}
	t := appendAvg(nil, &st.sum, st.count, a.scale, true)
	if r := appendAvg(nil, &st.sum, st.count, a.scale, false); string(t) != string(r) {
		return nil, notExactf("AVG in column %d: with div_precision_increment = %d and a result of scale %d, whether the server rounds or truncates this average depends on digits the sub-queries do not show; select SUM and COUNT of the expression and divide in the application, or narrow the range to one table",
			a.Column+1, st.incr, a.scale)
	}
	return t, nil
}
