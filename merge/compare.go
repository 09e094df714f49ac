package merge

import (
	"bytes"
	"cmp"
	"database/sql/driver"
	"encoding/binary"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// kind is how the values of a column are compared, for ORDER BY, GROUP BY,
// DISTINCT, MIN/MAX and HAVING.
type kind uint8

// Column kinds. A column whose type name is unknown keeps kindAuto and is
// compared by the Go types of its values (numbers numerically, time.Time
// temporally, bytes bytewise).
const (
	kindAuto     kind = iota
	kindNumber        // integers, YEAR and DECIMAL: exact numeric comparison
	kindFloat         // FLOAT, DOUBLE
	kindDateTime      // DATE, DATETIME, TIMESTAMP
	kindTime          // TIME (a signed duration up to ±838:59:59)
	kindText          // CHAR, VARCHAR, TEXT, ENUM, SET: by the server's weights (weight.go)
	kindBinary        // BINARY, VARBINARY, BLOB, BIT, JSON, GEOMETRY: bytewise
)

// kindOfType maps a go-sql-driver/mysql ColumnTypeDatabaseTypeName to a kind.
func kindOfType(name string) kind {
	name = strings.TrimPrefix(strings.ToUpper(name), "UNSIGNED ")
	switch name {
	case "TINYINT", "SMALLINT", "MEDIUMINT", "INT", "INTEGER", "BIGINT", "YEAR", "DECIMAL", "NUMERIC", "BOOL", "BOOLEAN":
		return kindNumber
	case "FLOAT", "DOUBLE", "REAL":
		return kindFloat
	case "DATE", "DATETIME", "TIMESTAMP":
		return kindDateTime
	case "TIME":
		return kindTime
	case "CHAR", "VARCHAR", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT", "ENUM", "SET":
		return kindText
	case "BINARY", "VARBINARY", "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB", "BIT", "JSON", "GEOMETRY", "VECTOR":
		return kindBinary
	}
	return kindAuto
}

// kindOfValue infers a kind from a Go value (HAVING literals, untyped columns).
func kindOfValue(v driver.Value) kind {
	switch v.(type) {
	case int64, uint64, int, int32, bool:
		return kindNumber
	case float64, float32:
		return kindFloat
	case time.Time:
		return kindDateTime
	case string:
		return kindText
	}
	return kindBinary
}

// compareValues orders a and b as a column of kind k: NULL (nil) first,
// then by the kind's rules. It never fails: a value that cannot be read as
// the kind says is compared bytewise after the readable ones.
func compareValues(k kind, a, b driver.Value) int {
	if a == nil || b == nil {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		}
		return 1
	}
	if k == kindAuto {
		ka, kb := kindOfValue(a), kindOfValue(b)
		if ka == kb || (ka == kindNumber && kb == kindFloat) || (ka == kindFloat && kb == kindNumber) {
			k = max(ka, kb)
		} else {
			k = kindBinary
		}
		if k == kindText {
			k = kindBinary
		}
	}
	switch k {
	case kindNumber:
		return compareNumber(a, b)
	case kindFloat:
		fa, oka := toFloat(a)
		fb, okb := toFloat(b)
		if oka && okb {
			return cmp.Compare(fa, fb)
		}
	case kindDateTime:
		return compareDateTime(a, b)
	case kindTime:
		da, oka := parseTimeOfDay(asBytes(a))
		db, okb := parseTimeOfDay(asBytes(b))
		if oka && okb {
			return cmp.Compare(da, db)
		}
	}
	return bytes.Compare(asBytes(a), asBytes(b))
}

// asBytes returns the text of a value as the text protocol would send it.
func asBytes(v driver.Value) []byte {
	switch x := v.(type) {
	case []byte:
		return x
	case string:
		return []byte(x)
	case int64:
		return strconv.AppendInt(nil, x, 10)
	case uint64:
		return strconv.AppendUint(nil, x, 10)
	case float64:
		return appendDouble(nil, x)
	case float32:
		return appendDouble(nil, float64(x))
	case bool:
		if x {
			return []byte("1")
		}
		return []byte("0")
	case time.Time:
		return x.AppendFormat(nil, "2006-01-02 15:04:05.999999")
	}
	return nil
}

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

// compareDateTime orders DATE/DATETIME/TIMESTAMP values given as
// "YYYY-MM-DD[ hh:mm:ss[.ffffff]]" text or as time.Time (parseTime=true).
func compareDateTime(a, b driver.Value) int {
	ta, oka := a.(time.Time)
	tb, okb := b.(time.Time)
	if oka && okb {
		return ta.Compare(tb)
	}
	return compareDateTimeText(asBytes(a), asBytes(b))
}

// compareDateTimeText compares temporal text; "10:00:00" equals "10:00:00.000", and a date
// equals midnight of that day ("2025-01-02" = "2025-01-02 00:00:00"), as MySQL compares a
// DATETIME with a date-only string.
func compareDateTimeText(a, b []byte) int {
	n := min(len(a), len(b))
	if c := bytes.Compare(a[:n], b[:n]); c != 0 {
		return c
	}
	if zeroTail(a[n:], n) && zeroTail(b[n:], n) {
		return 0
	}
	return cmp.Compare(len(a), len(b))
}

// zeroTail reports whether b, the rest of a temporal text after its first n bytes, adds
// nothing: empty, a zero fraction, or (after a 10-byte date) a midnight time of day.
func zeroTail(b []byte, n int) bool {
	if n == len("2006-01-02") && bytes.HasPrefix(b, []byte(" 00:00:00")) {
		b = b[len(" 00:00:00"):]
	}
	return zeroFraction(b)
}

// zeroFraction reports whether b is empty or ".000…".
func zeroFraction(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	if b[0] != '.' {
		return false
	}
	for _, c := range b[1:] {
		if c != '0' {
			return false
		}
	}
	return true
}

// trimZeroFraction drops a trailing ".000…" so equal instants have one text.
func trimZeroFraction(b []byte) []byte {
	if i := bytes.LastIndexByte(b, '.'); i >= 0 {
		f := bytes.TrimRight(b[i+1:], "0")
		if len(f) == 0 {
			return b[:i]
		}
		return b[:i+1+len(f)]
	}
	return b
}

// trimMidnight drops the time of day " 00:00:00" from a datetime text written at buf[start:]
// (its fraction already trimmed), so that a date and midnight of that day have one key.
func trimMidnight(buf []byte, start int) []byte {
	if t := buf[start:]; len(t) == len("2006-01-02 00:00:00") && bytes.HasSuffix(t, []byte(" 00:00:00")) {
		return buf[:start+len("2006-01-02")]
	}
	return buf
}

// parseTimeOfDay reads a TIME value "[-]h+:mm:ss[.ffffff]" as microseconds.
func parseTimeOfDay(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var parts [3]int64
	p := 0
	i := 0
	for ; i < len(b) && b[i] != '.'; i++ {
		switch c := b[i]; {
		case c == ':':
			p++
			if p > 2 {
				return 0, false
			}
		case '0' <= c && c <= '9':
			parts[p] = parts[p]*10 + int64(c-'0')
		default:
			return 0, false
		}
	}
	if p != 2 {
		return 0, false
	}
	us := ((parts[0]*60+parts[1])*60 + parts[2]) * 1_000_000
	if i < len(b) {
		scale := int64(100_000)
		for _, c := range b[i+1:] {
			if c < '0' || c > '9' {
				return 0, false
			}
			us += int64(c-'0') * scale
			scale /= 10
		}
	}
	if neg {
		us = -us
	}
	return us, true
}

// appendKey appends a canonical encoding of v under kind k: two values get
// the same encoding exactly when compareValues says they are equal.
func appendKey(buf []byte, k kind, v driver.Value) []byte {
	if v == nil {
		return append(buf, 0)
	}
	start := len(buf)
	buf = append(buf, 1, 0, 0, 0, 0) // tag, then the body length
	if k == kindAuto {
		k = kindOfValue(v)
		if k == kindText {
			k = kindBinary
		}
	}
	switch k {
	case kindNumber:
		var scratch [24]byte
		if d, ok := numberView(v, scratch[:]); ok {
			if d.neg {
				buf = append(buf, '-')
			}
			buf = append(buf, d.intp...)
			buf = append(buf, '.')
			buf = append(buf, d.frac...)
		} else if r, ok := toRat(v); ok {
			buf = append(buf, r.RatString()...)
		} else {
			buf = append(buf, asBytes(v)...)
		}
	case kindFloat:
		if f, ok := toFloat(v); ok {
			if f == 0 {
				f = 0 // -0 equals 0
			}
			buf = binary.BigEndian.AppendUint64(buf, math.Float64bits(f))
		} else {
			buf = append(buf, asBytes(v)...)
		}
	case kindDateTime:
		if t, ok := v.(time.Time); ok {
			buf = trimMidnight(t.UTC().AppendFormat(buf, "2006-01-02 15:04:05.999999999"), len(buf))
		} else {
			buf = trimMidnight(append(buf, trimZeroFraction(asBytes(v))...), len(buf))
		}
	case kindTime:
		if us, ok := parseTimeOfDay(asBytes(v)); ok {
			buf = binary.BigEndian.AppendUint64(buf, uint64(us))
		} else {
			buf = append(buf, asBytes(v)...)
		}
	default:
		buf = append(buf, asBytes(v)...)
	}
	binary.BigEndian.PutUint32(buf[start+1:], uint32(len(buf)-start-5))
	return buf
}
