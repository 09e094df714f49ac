package routing

import (
	"database/sql/driver"
	"math"
	"strconv"
)

// argRowCount reads the i-th argument as the row count of a LIMIT or OFFSET (what names which);
// def is returned when the clause has no argument (i < 0). Every integer type and decimal
// digits in a string or []byte are accepted; a count beyond int64 means "no practical limit"
// (MaxInt64, as MySQL's LIMIT 18446744073709551615). Anything else, negative or not an integer,
// refuses the statement: read as 0 it would silently return no rows.
func argRowCount(args []driver.NamedValue, i int, def int64, what string) (int64, error) {
	if i < 0 {
		return def, nil
	}
	if i >= len(args) {
		return 0, errorf("%w: the statement has more ? placeholders than the %d arguments given; pass one argument per ?", ErrBadLimit, givenArgs(args))
	}
	bad := func(v any) error { return notARowCount(argNumber(args, i), v, what) }
	var u uint64
	switch v := args[i].Value.(type) {
	case int64:
		if v < 0 {
			return 0, bad(v)
		}
		return v, nil
	case int:
		return rowCountInt(int64(v), bad)
	case int32:
		return rowCountInt(int64(v), bad)
	case int16:
		return rowCountInt(int64(v), bad)
	case int8:
		return rowCountInt(int64(v), bad)
	case uint64:
		u = v
	case uint:
		u = uint64(v)
	case uint32:
		u = uint64(v)
	case uint16:
		u = uint64(v)
	case uint8:
		u = uint64(v)
	case string:
		n, ok := parseRowCount(v)
		if !ok {
			return 0, bad(strconv.Quote(v))
		}
		return n, nil
	case []byte:
		n, ok := parseRowCount(string(v))
		if !ok {
			return 0, bad(strconv.Quote(string(v)))
		}
		return n, nil
	case nil:
		return 0, errorf("%w: argument %d for %s is NULL; pass a non-negative integer", ErrBadLimit, argNumber(args, i), what)
	default:
		return 0, errorf("%w: argument %d for %s is a %T; pass a non-negative integer", ErrBadLimit, argNumber(args, i), what, v)
	}
	return int64(min(u, math.MaxInt64)), nil
}

// notARowCount is the error for a LIMIT or OFFSET argument that is not a row
// count. It is not inlined: argRowCount names it for every argument type.
//
//go:noinline
func notARowCount(n int, v any, what string) error {
	return errorf("%w: argument %d (%v) for %s is not a row count; pass a non-negative integer", ErrBadLimit, n, v, what)
}

func rowCountInt(n int64, bad func(any) error) (int64, error) {
	if n < 0 {
		return 0, bad(n)
	}
	return n, nil
}

// parseRowCount reads decimal digits (no sign, no fraction) as a row count, saturated at
// MaxInt64.
func parseRowCount(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	u, err := strconv.ParseUint(s, 10, 64)
	if err != nil { // beyond uint64: still only digits
		return math.MaxInt64, true
	}
	return int64(min(u, math.MaxInt64)), true
}

// addRows adds two row counts, saturating at MaxInt64 instead of overflowing.
func addRows(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

//go:noinline
func appendInt(b []byte, n int64) []byte {
	if n == 0 {
		return append(b, '0')
	}
	var tmp [20]byte
	i := len(tmp)
	for n > 0 {
		i--
		tmp[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, tmp[i:]...)
}
