package merge

import "database/sql/driver"

// textValue is a text column value a group writes anew for each group, in the same buffer: a
// merged row is valid until the next row is read (the driver.Rows contract), so the text of one
// group's SUM, AVG or COUNT can be rewritten in place for the next. Boxing a []byte in a
// driver.Value allocates; the boxed value is kept too, and returned again while the text is the
// same slice (same array and length).
type textValue struct {
	val driver.Value // a []byte, or nil before the first
}

// buf returns the buffer to append the next text to, empty.
func (t *textValue) buf() []byte {
	b, _ := t.val.([]byte)
	return b[:0]
}

// set makes b, appended to buf(), the value and returns it.
func (t *textValue) set(b []byte) driver.Value {
	if old, ok := t.val.([]byte); ok && sameSlice(old, b) {
		return t.val
	}
	t.val = b
	return t.val
}

// sameSlice reports whether a and b are the same slice: same length, capacity and array (two
// empty slices of no capacity count as the same).
func sameSlice(a, b []byte) bool {
	if len(a) != len(b) || cap(a) != cap(b) || (a == nil) != (b == nil) {
		return false
	}
	return cap(a) == 0 || &a[:1][0] == &b[:1][0]
}
