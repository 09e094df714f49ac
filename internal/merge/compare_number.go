package merge

import (
	"bytes"
	"cmp"
	"database/sql/driver"
	"math"
	"math/big"
	"strconv"
)

func toFloat(v driver.Value) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case []byte:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

// decView is a decimal literal split into parts, without leading integer
// zeros or trailing fraction zeros; zero is never negative.
type decView struct {
	neg        bool
	intp, frac []byte
}

// parseDec reads [+-]digits[.digits] without allocating.
func parseDec(b []byte) (decView, bool) {
	var d decView
	i := 0
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		d.neg = b[0] == '-'
		i++
	}
	start := i
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	d.intp = b[start:i]
	if i < len(b) && b[i] == '.' {
		i++
		fs := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		d.frac = b[fs:i]
	}
	if i != len(b) || len(d.intp)+len(d.frac) == 0 {
		return decView{}, false
	}
	for len(d.intp) > 0 && d.intp[0] == '0' {
		d.intp = d.intp[1:]
	}
	for len(d.frac) > 0 && d.frac[len(d.frac)-1] == '0' {
		d.frac = d.frac[:len(d.frac)-1]
	}
	if len(d.intp)+len(d.frac) == 0 {
		d.neg = false
	}
	return d, true
}

func compareDec(a, b decView) int {
	if a.neg != b.neg {
		if a.neg {
			return -1
		}
		return 1
	}
	c := cmp.Compare(len(a.intp), len(b.intp))
	if c == 0 {
		c = bytes.Compare(a.intp, b.intp)
	}
	if c == 0 {
		c = bytes.Compare(a.frac, b.frac)
	}
	if a.neg {
		return -c
	}
	return c
}

// numberView reads an integer or decimal value of any wire type; buf is
// scratch space for formatting integers.
func numberView(v driver.Value, buf []byte) (decView, bool) {
	switch x := v.(type) {
	case []byte:
		return parseDec(x)
	case string:
		return parseDec([]byte(x))
	case int64:
		return parseDec(strconv.AppendInt(buf[:0], x, 10))
	case uint64:
		return parseDec(strconv.AppendUint(buf[:0], x, 10))
	case bool:
		if x {
			return parseDec(append(buf[:0], '1'))
		}
		return parseDec(append(buf[:0], '0'))
	}
	return decView{}, false
}

func compareNumber(a, b driver.Value) int {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, y)
		case uint64:
			if x < 0 {
				return -1
			}
			return cmp.Compare(uint64(x), y)
		}
	case uint64:
		switch y := b.(type) {
		case uint64:
			return cmp.Compare(x, y)
		case int64:
			if y < 0 {
				return 1
			}
			return cmp.Compare(x, uint64(y))
		}
	}
	var ba, bb [24]byte
	da, oka := numberView(a, ba[:])
	db, okb := numberView(b, bb[:])
	if oka && okb {
		return compareDec(da, db)
	}
	// Exponents, floats in an integer column, a literal like 1.5e3: exact rationals.
	ra, oka := toRat(a)
	rb, okb := toRat(b)
	switch {
	case oka && okb:
		return ra.Cmp(rb)
	case oka:
		return -1
	case okb:
		return 1
	}
	return bytes.Compare(asBytes(a), asBytes(b))
}

func toRat(v driver.Value) (*big.Rat, bool) {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		return new(big.Rat).SetFloat64(x), true
	case float32:
		return toRat(float64(x))
	}
	r, ok := new(big.Rat).SetString(string(asBytes(v)))
	return r, ok
}
