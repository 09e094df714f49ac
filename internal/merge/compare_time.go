package merge

import (
	"bytes"
	"cmp"
	"database/sql/driver"
	"time"
)

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
