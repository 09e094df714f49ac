package merge

import (
	"bytes"
	"cmp"
	"database/sql/driver"
	"math"
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
	return d.trimmed(), true
}

// trimmed drops leading integer zeros and trailing fraction zeros; zero is
// never negative.
func (d decView) trimmed() decView {
	for len(d.intp) > 0 && d.intp[0] == '0' {
		d.intp = d.intp[1:]
	}
	for len(d.frac) > 0 && d.frac[len(d.frac)-1] == '0' {
		d.frac = d.frac[:len(d.frac)-1]
	}
	if len(d.intp)+len(d.frac) == 0 {
		d.neg = false
	}
	return d
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

// compareIntUint compares a signed and an unsigned integer exactly.
func compareIntUint(x int64, y uint64) int {
	if x < 0 {
		return -1
	}
	return cmp.Compare(uint64(x), y)
}

func compareNumber(a, b driver.Value) int {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, y)
		case uint64:
			return compareIntUint(x, y)
		}
	case uint64:
		switch y := b.(type) {
		case uint64:
			return cmp.Compare(x, y)
		case int64:
			return -compareIntUint(y, x)
		}
	}
	var ba, bb [24]byte
	da, oka := numberView(a, ba[:])
	db, okb := numberView(b, bb[:])
	if oka && okb {
		return compareDec(da, db)
	}
	// Exponents, floats in an integer column, a literal like 1.5e3: exact decimals.
	if !oka {
		da, oka = exactView(a)
	}
	if !okb {
		db, okb = exactView(b)
	}
	switch {
	case oka && okb:
		return compareDec(da, db)
	case oka:
		return -1
	case okb:
		return 1
	}
	return bytes.Compare(asBytes(a), asBytes(b))
}

// maxExactDigits bounds the digits exactView writes out: a double needs at
// most 767 significant digits and an exponent of ±1074, a DECIMAL 65 digits.
const maxExactDigits = 4096

// exactView reads a float or a decimal literal with an exponent (1.5e3) as
// the exact decimal it stands for.
func exactView(v driver.Value) (decView, bool) {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return decView{}, false
		}
		// 767 significant digits write any double exactly.
		return parseExp(strconv.AppendFloat(nil, x, 'e', 767, 64))
	case float32:
		return exactView(float64(x))
	}
	return parseExp(asBytes(v))
}

// parseExp reads [+-]digits[.digits][(e|E)[+-]digits] exactly.
func parseExp(b []byte) (decView, bool) {
	e := bytes.IndexAny(b, "eE")
	if e < 0 {
		return parseDec(b)
	}
	d, ok := parseDec(b[:e])
	exp, err := strconv.Atoi(string(b[e+1:]))
	if !ok || err != nil || exp > maxExactDigits || exp < -maxExactDigits {
		return decView{}, false
	}
	digits := append(append([]byte(nil), d.intp...), d.frac...)
	point := len(d.intp) + exp
	switch {
	case point <= 0:
		d.intp, d.frac = nil, append(bytes.Repeat([]byte{'0'}, -point), digits...)
	case point >= len(digits):
		d.intp, d.frac = append(digits, bytes.Repeat([]byte{'0'}, point-len(digits))...), nil
	default:
		d.intp, d.frac = digits[:point], digits[point:]
	}
	return d.trimmed(), true
}
