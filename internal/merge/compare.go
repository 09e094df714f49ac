package merge

import (
	"bytes"
	"cmp"
	"database/sql/driver"
	"encoding/binary"
	"math"
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
		d, ok := numberView(v, scratch[:])
		if !ok {
			d, ok = exactView(v)
		}
		if ok {
			if d.neg {
				buf = append(buf, '-')
			}
			buf = append(buf, d.intp...)
			buf = append(buf, '.')
			buf = append(buf, d.frac...)
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
