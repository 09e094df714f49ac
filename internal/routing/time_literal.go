package routing

import (
	"strings"
	"time"
)

// A value compared with a DATETIME column is converted to a DATETIME the way MySQL and MariaDB
// convert it (MariaDB's str_to_datetime_or_date and number_to_datetime_or_date). This file reads
// literals and arguments by those rules. A value read exactly is a point; a fraction of more
// than six digits is truncated by MariaDB and rounded by MySQL, so it is read as the two
// microseconds it may become. Anything the server reads with a warning (an invalid date such
// as '2025-02-30', a zero month or day, trailing characters, a sign, a value out of range) is
// not read: servers and SQL modes disagree on what it compares as, so the range widens instead.

// datetimeValue is a DATETIME read from a literal: lo is the value, hi is lo or the next
// microsecond (a fraction of more than six digits). ok is false for a value not read.
type datetimeValue struct {
	lo, hi time.Time
	ok     bool
}

// zeroDatetime stands for '0000-00-00 00:00:00', which compares below every date: one
// microsecond before 0000-01-01, where no shard table starts.
var zeroDatetime = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Microsecond)

// isSpace reports whether c is white space in MySQL's latin1 ctype.
func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

// isPunct reports whether c is punctuation in MySQL's latin1 ctype (ASCII punctuation).
func isPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// datetimeFields are the parts of a DATETIME as the server parses them, before validation.
type datetimeFields struct {
	year, month, day, hour, minute, second int
	usec                                   int  // microseconds, the first six fraction digits
	more                                   bool // fraction digits beyond six, not all zero
	yearLen                                int  // digits of the year as written (2 means YY)
	fields                                 int  // number of parts read
}

// readDatetimeString reads s as MySQL reads a string compared with a DATETIME column. The
// accepted forms are 'YYYY-MM-DD[ hh:mm:ss[.ffffff]]' with any punctuation as delimiter,
// unpadded parts ('2025-3-1 9:5:0'), 'T' or spaces between date and time, two-digit years
// ('25-03-01': 2000-2069, 1970-1999), digits alone ('20250301', '250301', '20250301101500',
// '20250301T101500', with a fraction after 12 or more digits), and leading and trailing spaces.
func readDatetimeString(s string) datetimeValue {
	if v, ok := readCanonical(s); ok {
		return v
	}
	// find_body: leading spaces, no sign, trailing spaces (anything else trailing is garbage).
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	j := len(s)
	for j > i && isSpace(s[j-1]) {
		j--
	}
	s = s[i:j]
	if s == "" || !isDigit(s[0]) {
		return datetimeValue{}
	}
	var f datetimeFields
	// The digits of the first part, with a 'T' and more digits, and a fraction after 12 or more
	// digits: all of s means the digits-only form.
	pos := 0
	for pos < len(s) && isDigit(s[pos]) {
		pos++
	}
	digits := pos
	if pos < len(s) && s[pos] == 'T' {
		pos++
		start := pos
		for pos < len(s) && isDigit(s[pos]) {
			pos++
		}
		digits += pos - start
	}
	if pos < len(s) && s[pos] == '.' && digits >= 12 {
		pos++
		for pos < len(s) && isDigit(s[pos]) {
			pos++
		}
	}
	p := &fieldParser{s: s}
	if pos == len(s) {
		f.yearLen = 2
		if digits == 4 || digits == 8 || digits >= 14 {
			f.yearLen = 4
		}
		for k, width := range [...]int{f.yearLen, 2, 2, -1, 2, 2, 2} { // YYMMDD T hhmmss
			if width < 0 { // an optional 'T' between date and time
				if p.i < len(s) && s[p.i] == 'T' {
					p.i++
				}
				continue
			}
			v, read, ok := p.digits(width)
			if !ok {
				return datetimeValue{}
			}
			if read {
				f.set(k, v)
			}
		}
	} else {
		start := p.i
		v, read, ok := p.digits(0)
		if !ok || !read {
			return datetimeValue{}
		}
		f.set(0, v)
		f.yearLen = p.i - start
		for _, k := range [...]int{1, 2, 4, 5, 6} { // month, day, hour, minute, second
			if k == 4 {
				if !p.dateTimeSeparator() {
					return datetimeValue{}
				}
			} else if !p.punct() {
				return datetimeValue{}
			}
			v, read, ok := p.digits(0)
			if !ok {
				return datetimeValue{}
			}
			if read {
				f.set(k, v)
			}
		}
	}
	if f.fields < 3 {
		return datetimeValue{}
	}
	if p.i < len(s) && s[p.i] == '.' {
		p.i++
		f.usec, f.more = p.fraction()
	}
	if p.i != len(s) { // characters left: the server truncates with a warning
		return datetimeValue{}
	}
	return f.value()
}

// readCanonical reads the usual forms 'YYYY-MM-DD', 'YYYY-MM-DD hh:mm:ss' and
// 'YYYY-MM-DD hh:mm:ss.f' (up to six digits) at fixed positions, which the general reading
// would read the same; ok is false for any other string.
func readCanonical(s string) (datetimeValue, bool) {
	n := len(s)
	if n != 10 && (n < 19 || n == 20 || n > 26) || s[4] != '-' || s[7] != '-' ||
		n > 10 && (s[10] != ' ' || s[13] != ':' || s[16] != ':') || n > 19 && s[19] != '.' {
		return datetimeValue{}, false
	}
	var f datetimeFields
	ok := digitsAt(s, 0, 4, &f.year) && digitsAt(s, 5, 7, &f.month) && digitsAt(s, 8, 10, &f.day)
	if n > 10 {
		ok = ok && digitsAt(s, 11, 13, &f.hour) && digitsAt(s, 14, 16, &f.minute) && digitsAt(s, 17, 19, &f.second)
	}
	if n > 19 {
		ok = ok && digitsAt(s, 20, n, &f.usec)
		for i := n; i < 26; i++ {
			f.usec *= 10
		}
	}
	if !ok {
		return datetimeValue{}, false
	}
	zero := f.year == 0 && f.month == 0 && f.day == 0 && f.hour == 0 && f.minute == 0 && f.second == 0 && f.usec == 0
	return f.checked(zero), true
}

// digitsAt reads s[from:to], all digits, into v.
func digitsAt(s string, from, to int, v *int) bool {
	n := 0
	for i := from; i < to; i++ {
		if !isDigit(s[i]) {
			return false
		}
		n = n*10 + int(s[i]-'0')
	}
	*v = n
	return true
}

// set stores the k-th part (0 year, 1 month, 2 day, 4 hour, 5 minute, 6 second) and counts it.
func (f *datetimeFields) set(k, v int) {
	if p := [...]*int{&f.year, &f.month, &f.day, nil, &f.hour, &f.minute, &f.second}[k]; p != nil {
		*p = v
	}
	f.fields++
}

// value validates the parts as the server does and returns the DATETIME they make.
func (f *datetimeFields) value() datetimeValue {
	zero := f.year == 0 && f.month == 0 && f.day == 0 && f.hour == 0 && f.minute == 0 && f.second == 0 && f.usec == 0 && !f.more
	if f.yearLen == 2 && !zero {
		if f.year < 70 {
			f.year += 2000
		} else {
			f.year += 1900
		}
	}
	return f.checked(zero)
}

// checked returns the DATETIME of parts already converted (two-digit years resolved); zero is
// the zero date, which the server accepts and compares below every date.
func (f *datetimeFields) checked(zero bool) datetimeValue {
	if zero {
		return datetimeValue{lo: zeroDatetime, hi: zeroDatetime, ok: true}
	}
	if f.year > 9999 || f.month < 1 || f.month > 12 || f.day < 1 || f.day > daysIn(f.year, f.month) ||
		f.hour > 23 || f.minute > 59 || f.second > 59 {
		return datetimeValue{}
	}
	if f.year == 0 { // year 0 is a leap year for Go, not for the server: no shard table holds it
		return datetimeValue{}
	}
	t := time.Date(f.year, time.Month(f.month), f.day, f.hour, f.minute, f.second, f.usec*1000, time.UTC)
	v := datetimeValue{lo: t, hi: t, ok: true}
	if f.more {
		v.hi = t.Add(time.Microsecond)
	}
	return v
}

// daysIn returns the number of days of a month (1-12) of the proleptic Gregorian calendar.
func daysIn(year, month int) int {
	if month == 2 && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		return 29
	}
	return int("\x1f\x1c\x1f\x1e\x1f\x1e\x1f\x1f\x1e\x1f\x1e\x1f"[month-1])
}

// fieldParser reads the parts of a DATETIME string.
type fieldParser struct {
	s string
	i int
}

// digits reads a number of at most width digits (0: any number). read is false at the end of
// the string; ok is false when something other than a digit stands there.
func (p *fieldParser) digits(width int) (v int, read, ok bool) {
	if p.i >= len(p.s) {
		return 0, false, true
	}
	if !isDigit(p.s[p.i]) {
		return 0, false, false
	}
	end := len(p.s)
	if width > 0 {
		end = min(end, p.i+width)
	}
	for p.i < end && isDigit(p.s[p.i]) {
		if v > 1_000_000 { // far beyond any part: out of range all the same
			v = 1_000_000
		} else {
			v = v*10 + int(p.s[p.i]-'0')
		}
		p.i++
	}
	return v, true, true
}

// punct skips one punctuation character; false when something else stands there.
func (p *fieldParser) punct() bool {
	if p.i >= len(p.s) {
		return true
	}
	if isPunct(p.s[p.i]) {
		p.i++
		return true
	}
	return false
}

// dateTimeSeparator skips what stands between date and time: 'T', one punctuation character,
// or spaces.
func (p *fieldParser) dateTimeSeparator() bool {
	if p.i >= len(p.s) {
		return true
	}
	switch c := p.s[p.i]; {
	case c == 'T' || isPunct(c):
		p.i++
		return true
	case isSpace(c):
		for p.i < len(p.s) && isSpace(p.s[p.i]) {
			p.i++
		}
		return true
	}
	return false
}

// fraction reads the digits after the decimal point: the first six as microseconds, and
// whether any digit after them is not zero.
func (p *fieldParser) fraction() (usec int, more bool) {
	n := 0
	for p.i < len(p.s) && isDigit(p.s[p.i]) {
		d := int(p.s[p.i] - '0')
		if n < 6 {
			usec = usec*10 + d
		} else if d != 0 {
			more = true
		}
		n++
		p.i++
	}
	for ; n < 6; n++ {
		usec *= 10
	}
	return usec, more
}

// readDatetimeNumber reads a number compared with a DATETIME column, given as its integer
// digits and the digits of its fraction (""): YYYYMMDD, YYMMDD, YYYYMMDDhhmmss or
// YYMMDDhhmmss, with a fraction for the latter two (a fraction of a date is dropped).
func readDatetimeNumber(intPart, frac string) datetimeValue {
	intPart = strings.TrimLeft(intPart, "0")
	if len(intPart) > 14 {
		return datetimeValue{}
	}
	var nr int64
	for i := 0; i < len(intPart); i++ {
		if !isDigit(intPart[i]) {
			return datetimeValue{}
		}
		nr = nr*10 + int64(intPart[i]-'0')
	}
	var f datetimeFields
	fp := fieldParser{s: frac}
	f.usec, f.more = fp.fraction()
	if fp.i != len(frac) {
		return datetimeValue{}
	}
	date := true
	switch {
	case nr == 0:
		if f.usec == 0 && !f.more {
			return datetimeValue{lo: zeroDatetime, hi: zeroDatetime, ok: true}
		}
		return datetimeValue{} // 0.5: a zero date with a fraction
	case nr >= 10000101000000:
		date = false
	case nr < 101:
		return datetimeValue{}
	case nr <= 691231:
		nr = (nr + 20000000) * 1000000
	case nr < 700101:
		return datetimeValue{}
	case nr <= 991231:
		nr = (nr + 19000000) * 1000000
	case nr < 10000101:
		return datetimeValue{}
	case nr <= 99991231:
		nr *= 1000000
	case nr < 101000000:
		return datetimeValue{}
	case nr <= 691231235959:
		nr += 20000000000000
		date = false
	case nr < 700101000000:
		return datetimeValue{}
	default:
		if nr <= 991231235959 {
			nr += 19000000000000
		}
		date = false
	}
	if date { // 20250301.5 is a DATE: the fraction is dropped
		f.usec, f.more = 0, false
	}
	d, t := nr/1000000, nr%1000000
	f.year, f.month, f.day = int(d/10000), int(d/100%100), int(d%100)
	f.hour, f.minute, f.second = int(t/10000), int(t/100%100), int(t%100)
	return f.checked(false)
}

// readDatetimeDecimal reads the text of a numeric literal (digits, an optional sign and
// fraction) as a DATETIME. An exponent (a DOUBLE) or a negative number is not read.
func readDatetimeDecimal(text string) datetimeValue {
	text = strings.TrimPrefix(text, "+")
	if strings.ContainsAny(text, "eE-") {
		return datetimeValue{}
	}
	intPart, frac, _ := strings.Cut(text, ".")
	if intPart == "" && frac == "" {
		return datetimeValue{}
	}
	return readDatetimeNumber(intPart, frac)
}
