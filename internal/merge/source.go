package merge

import (
	"database/sql/driver"
	"io"
)

// stage is one step of the merge pipeline. next returns the next row, valid
// until the following call, or io.EOF when there are no more.
type stage interface {
	next() ([]driver.Value, error)
}

// inputSet owns the sub-query results and closes each exactly once.
type inputSet struct {
	rows     []driver.Rows
	closed   []bool
	closeErr error
	// check validates each row read from an input (the weights of its text values); nil: none.
	check func([]driver.Value) error
}

// next reads the next row of input i into dest and checks it.
func (s *inputSet) next(i int, dest []driver.Value) error {
	if err := s.rows[i].Next(dest); err != nil {
		return err
	}
	if s.check != nil {
		return s.check(dest)
	}
	return nil
}

func newInputSet(rows []driver.Rows) *inputSet {
	return &inputSet{rows: rows, closed: make([]bool, len(rows))}
}

// close closes input i (once) and remembers the first error.
func (s *inputSet) close(i int) {
	if s.closed[i] {
		return
	}
	s.closed[i] = true
	if err := s.rows[i].Close(); err != nil && s.closeErr == nil {
		s.closeErr = err
	}
}

// closeAll closes every input and returns the first error any Close returned.
func (s *inputSet) closeAll() error {
	for i := range s.rows {
		s.close(i)
	}
	return s.closeErr
}

// unionSource streams input 0 to its end, then input 1, and so on, closing
// each input as soon as it is exhausted.
type unionSource struct {
	in  *inputSet
	cur int
	buf []driver.Value
}

func newUnionSource(in *inputSet, width int) *unionSource {
	return &unionSource{in: in, buf: make([]driver.Value, width)}
}

func (u *unionSource) next() ([]driver.Value, error) {
	for u.cur < len(u.in.rows) {
		err := u.in.next(u.cur, u.buf)
		if err == nil {
			return u.buf, nil
		}
		if err != io.EOF {
			return nil, err
		}
		u.in.close(u.cur)
		u.cur++
	}
	return nil, io.EOF
}

// sortKey is an OrderKey with the comparison of its column.
type sortKey struct {
	*comparer
	desc bool
}

// compareRows orders two rows by keys (NULL first ascending, last descending).
func compareRows(keys []sortKey, a, b []driver.Value) int {
	for _, k := range keys {
		c := k.compare(a, b)
		if c != 0 {
			if k.desc {
				return -c
			}
			return c
		}
	}
	return 0
}

// mergeSource is a k-way merge of inputs each sorted by keys. Each input's
// current row stays in the input's own dest buffer (no copy): an input is
// advanced only when the caller asks for the row after the one it supplied,
// so a []byte the caller holds is valid until its next Next, as the
// driver.Rows contract says. It reads at most one row per input ahead.
type mergeSource struct {
	in      *inputSet
	keys    []sortKey
	rows    [][]driver.Value // current row of each input
	heap    []int            // input indexes, heap-ordered by their current rows
	started bool
	last    int // input whose row was returned last, to advance on the next call; -1 none
}

func newMergeSource(in *inputSet, width int, keys []sortKey) *mergeSource {
	n := len(in.rows)
	m := &mergeSource{in: in, keys: keys, rows: make([][]driver.Value, n), heap: make([]int, 0, n), last: -1}
	cells := make([]driver.Value, n*width) // one allocation for every input's row
	for i := range m.rows {
		m.rows[i] = cells[i*width : (i+1)*width : (i+1)*width]
	}
	return m
}

// advance reads the next row of input i; it reports false at the input's end.
func (m *mergeSource) advance(i int) (bool, error) {
	err := m.in.next(i, m.rows[i])
	if err == nil {
		return true, nil
	}
	if err == io.EOF {
		m.in.close(i)
		return false, nil
	}
	return false, err
}

func (m *mergeSource) less(i, j int) bool {
	return compareRows(m.keys, m.rows[m.heap[i]], m.rows[m.heap[j]]) < 0
}

func (m *mergeSource) down(i int) {
	n := len(m.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && m.less(r, l) {
			c = r
		}
		if !m.less(c, i) {
			return
		}
		m.heap[i], m.heap[c] = m.heap[c], m.heap[i]
		i = c
	}
}

func (m *mergeSource) next() ([]driver.Value, error) {
	if !m.started {
		m.started = true
		for i := range m.rows {
			ok, err := m.advance(i)
			if err != nil {
				return nil, err
			}
			if ok {
				m.heap = append(m.heap, i)
			}
		}
		for i := len(m.heap)/2 - 1; i >= 0; i-- {
			m.down(i)
		}
	} else if m.last >= 0 {
		ok, err := m.advance(m.last)
		m.last = -1
		if err != nil {
			return nil, err
		}
		if !ok {
			n := len(m.heap) - 1
			m.heap[0] = m.heap[n]
			m.heap = m.heap[:n]
		}
		m.down(0)
	}
	if len(m.heap) == 0 {
		return nil, io.EOF
	}
	m.last = m.heap[0]
	return m.rows[m.last], nil
}
