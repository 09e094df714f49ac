package merge

import (
	"database/sql/driver"
	"io"
	"reflect"
	"strings"
)

// Rows are the interfaces of the rows obroute hands to database/sql, merged here or read from
// one server (connector's): database/sql reads the result sets and column types through them.
type Rows interface {
	driver.Rows
	driver.RowsNextResultSet
	driver.RowsColumnTypeDatabaseTypeName
	driver.RowsColumnTypeLength
	driver.RowsColumnTypeNullable
	driver.RowsColumnTypePrecisionScale
	driver.RowsColumnTypeScanType
}

var _ Rows = (*mergedRows)(nil)

// New returns one result made of the rows of inputs, merged as spec says.
// The result owns the inputs: its Close closes every one of them, and so
// does New when it fails. New reads no rows; the first Next does.
//
// Every input must have the same columns (count, and names compared
// case-insensitively), else New returns an error wrapping ErrColumnsDiffer.
// An invalid spec gives an error wrapping ErrInvalidSpec.
func New(spec Spec, inputs []driver.Rows) (driver.Rows, error) {
	if len(inputs) == 0 {
		return nil, ErrNoInputs
	}
	in := newInputSet(inputs)
	m, err := build(&spec, in)
	if err != nil {
		_ = in.closeAll()
		return nil, err
	}
	return m, nil
}

func build(spec *Spec, in *inputSet) (*mergedRows, error) {
	names := in.rows[0].Columns()
	for i, r := range in.rows[1:] {
		other := r.Columns()
		if len(other) != len(names) {
			return nil, errorf("%w: input %d has %d columns, input 0 has %d; every sub-query must select the same columns", ErrColumnsDiffer, i+1, len(other), len(names))
		}
		for c := range names {
			if !strings.EqualFold(names[c], other[c]) {
				return nil, errorf("%w: input %d column %d is %q, input 0 has %q; every sub-query must select the same columns in the same order", ErrColumnsDiffer, i+1, c, other[c], names[c])
			}
		}
	}
	width := len(names)
	visible, err := spec.validate(width, len(in.rows))
	if err != nil {
		return nil, err
	}
	types := spec.ColumnTypes
	if types == nil {
		types = ReadColumnTypes(in.rows[spec.TypesFrom])
	}
	lead := spec.Leading
	if lead > 0 {
		visible = width // the hidden columns lead, the rest are visible
	}
	m := &mergedRows{in: in, names: names[lead:visible:visible], types: types[lead:visible:visible], lead: lead, offset: spec.Offset, limit: spec.Limit}

	uses := make([]use, width)
	for _, k := range spec.OrderBy {
		uses[k.Column] |= useOrderBy
	}
	for _, g := range spec.GroupBy {
		uses[g] |= useEqual
	}
	for _, a := range spec.Aggregates {
		if a.Func == AggMin || a.Func == AggMax {
			uses[a.Column] |= useOrder
		}
		for _, c := range a.Distinct {
			uses[c] |= useEqual
		}
	}
	if spec.Distinct {
		for i := lead; i < visible; i++ {
			uses[i] |= useEqual
		}
	}
	cols, err := newColumns(spec, names, types, uses)
	if err != nil {
		return nil, err
	}
	if len(cols.weighted) > 0 {
		in.check = cols.check
	}
	var having evalFunc
	if spec.Having != nil {
		if having, _, err = spec.Having.bind(cols); err != nil {
			return nil, err
		}
	}
	order := make([]sortKey, len(spec.OrderBy))
	for i, k := range spec.OrderBy {
		order[i] = sortKey{comparer: cols.cmp[k.Column], desc: k.Desc}
	}
	maxHeld := spec.MaxHeldRows
	if maxHeld == 0 {
		maxHeld = DefaultMaxHeldRows
	}

	var p stage
	switch {
	case len(spec.GroupBy) == 0 && len(spec.Aggregates) == 0:
		if len(order) > 0 {
			p = newMergeSource(in, width, order)
		} else {
			p = newUnionSource(in, width)
		}
		if having != nil {
			p = &filterStage{src: p, keep: func(row []driver.Value) (bool, error) { return keep(having, row), nil }}
		}
	case len(spec.GroupBy) == 0 || spec.StreamsGroups():
		// Scalar aggregates form one group; sorted inputs give adjacent groups.
		var src stage
		if len(spec.GroupBy) > 0 {
			src = newMergeSource(in, width, order[:len(spec.GroupBy)])
		} else {
			src = newUnionSource(in, width)
		}
		g, err := newGrouper(spec, cols, types)
		if err != nil {
			return nil, err
		}
		sg := &streamGroup{grouper: g, src: src, empty: spec.EmptyGroup && len(spec.GroupBy) == 0}
		if spec.Rollup {
			sg.rollup = newRollup(g)
		}
		p = sg
		if having != nil {
			p = &filterStage{src: p, keep: func(row []driver.Value) (bool, error) { return keep(having, row), nil }}
		}
	default:
		g, err := newGrouper(spec, cols, types)
		if err != nil {
			return nil, err
		}
		p = &hashGroup{grouper: g, src: newUnionSource(in, width), having: having, order: order, maxHeld: maxHeld}
	}
	if spec.Distinct {
		p = newDistinct(p, cols.cmp[lead:visible], maxHeld)
	}
	m.pipe = p
	return m, nil
}

// ReadColumnTypes reads what rows reports about each of its columns through the
// database/sql/driver RowsColumnType* interfaces it implements.
func ReadColumnTypes(rows driver.Rows) []ColumnType {
	n := len(rows.Columns())
	out := make([]ColumnType, n)
	name, _ := rows.(driver.RowsColumnTypeDatabaseTypeName)
	length, _ := rows.(driver.RowsColumnTypeLength)
	nullable, _ := rows.(driver.RowsColumnTypeNullable)
	scale, _ := rows.(driver.RowsColumnTypePrecisionScale)
	scan, _ := rows.(driver.RowsColumnTypeScanType)
	for i := range out {
		t := &out[i]
		if name != nil {
			t.DatabaseTypeName = name.ColumnTypeDatabaseTypeName(i)
		}
		if length != nil {
			t.Length, t.HasLength = length.ColumnTypeLength(i)
		}
		if nullable != nil {
			t.Nullable, t.HasNullable = nullable.ColumnTypeNullable(i)
		}
		if scale != nil {
			t.Precision, t.Scale, t.HasPrecisionScale = scale.ColumnTypePrecisionScale(i)
		}
		if scan != nil {
			t.ScanType = scan.ColumnTypeScanType(i)
		}
	}
	return out
}

// StreamsGroups reports whether a GROUP BY merge streams: the leading len(GroupBy) OrderBy keys
// are the group columns, so inputs sorted by them (as they must then be) keep equal groups
// adjacent. Otherwise groups are hash-merged and inputs may come in any order.
func (s Spec) StreamsGroups() bool {
	if len(s.GroupBy) == 0 || len(s.OrderBy) < len(s.GroupBy) {
		return false
	}
	for _, g := range s.GroupBy {
		found := false
		for _, k := range s.OrderBy[:len(s.GroupBy)] {
			found = found || k.Column == g
		}
		if !found {
			return false
		}
	}
	return true
}

// filterStage passes the rows keep accepts.
type filterStage struct {
	src  stage
	keep func([]driver.Value) (bool, error)
}

func (f *filterStage) next() ([]driver.Value, error) {
	for {
		r, err := f.src.next()
		if err != nil {
			return nil, err
		}
		ok, err := f.keep(r)
		if err != nil {
			return nil, err
		}
		if ok {
			return r, nil
		}
	}
}

// newDistinct drops rows whose visible columns equal an earlier row's; it
// holds one key per distinct row, at most maxHeld.
func newDistinct(src stage, visible []*comparer, maxHeld int) stage {
	seen := make(map[string]struct{})
	var key []byte
	return &filterStage{src: src, keep: func(row []driver.Value) (bool, error) {
		key = key[:0]
		for _, c := range visible {
			key = c.appendKey(key, row)
		}
		if _, dup := seen[string(key)]; dup {
			return false, nil
		}
		if len(seen) >= maxHeld {
			return false, errorf("%w: DISTINCT needs more than %d distinct rows in memory (Spec.MaxHeldRows)", ErrTooManyRows, maxHeld)
		}
		seen[string(key)] = struct{}{}
		return true, nil
	}}
}

// mergedRows is the driver.Rows New returns.
type mergedRows struct {
	in      *inputSet
	names   []string
	types   []ColumnType // one server's, for the visible columns
	lead    int          // hidden columns before the visible ones
	pipe    stage
	offset  int64
	limit   int64
	skipped int64
	emitted int64
	err     error // sticky: io.EOF or the first error
}

// Columns implements driver.Rows: the names of the visible columns.
func (m *mergedRows) Columns() []string { return m.names }

// Close implements driver.Rows: it closes every input and returns the first
// error any of them returned.
func (m *mergedRows) Close() error {
	if m.err == nil {
		m.err = io.EOF
	}
	return m.in.closeAll()
}

// Next implements driver.Rows. An input's error is returned unchanged, so it
// reads exactly as it would from one server (a *mysql.MySQLError stays one).
func (m *mergedRows) Next(dest []driver.Value) error {
	if m.err != nil {
		return m.err
	}
	if m.limit >= 0 && m.emitted >= m.limit {
		return m.end()
	}
	for m.skipped < m.offset {
		if _, err := m.pipe.next(); err != nil {
			return m.fail(err)
		}
		m.skipped++
	}
	row, err := m.pipe.next()
	if err != nil {
		return m.fail(err)
	}
	copy(dest, row[m.lead:m.lead+len(m.names)])
	m.emitted++
	return nil
}

// end finishes the result early or at its end: the inputs are closed now so
// their server sessions are free before the caller closes the result.
func (m *mergedRows) end() error {
	m.err = io.EOF
	_ = m.in.closeAll() // Close reports the error
	return io.EOF
}

func (m *mergedRows) fail(err error) error {
	if err == io.EOF {
		return m.end()
	}
	m.err = err
	return err
}

// HasNextResultSet implements driver.RowsNextResultSet: a merged result is one result set.
func (m *mergedRows) HasNextResultSet() bool { return false }

// NextResultSet implements driver.RowsNextResultSet; there is never another result set.
func (m *mergedRows) NextResultSet() error { return io.EOF }

// ColumnTypeDatabaseTypeName implements driver.RowsColumnTypeDatabaseTypeName: one server's.
func (m *mergedRows) ColumnTypeDatabaseTypeName(i int) string { return m.types[i].DatabaseTypeName }

// ColumnTypeLength implements driver.RowsColumnTypeLength: one server's.
func (m *mergedRows) ColumnTypeLength(i int) (int64, bool) {
	return m.types[i].Length, m.types[i].HasLength
}

// ColumnTypeNullable implements driver.RowsColumnTypeNullable: one server's.
func (m *mergedRows) ColumnTypeNullable(i int) (bool, bool) {
	return m.types[i].Nullable, m.types[i].HasNullable
}

// ColumnTypePrecisionScale implements driver.RowsColumnTypePrecisionScale: one server's.
func (m *mergedRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	t := &m.types[i]
	return t.Precision, t.Scale, t.HasPrecisionScale
}

// ColumnTypeScanType implements driver.RowsColumnTypeScanType: one server's, else the type of
// any (database/sql's default).
func (m *mergedRows) ColumnTypeScanType(i int) reflect.Type {
	if t := m.types[i].ScanType; t != nil {
		return t
	}
	return reflect.TypeFor[any]()
}
