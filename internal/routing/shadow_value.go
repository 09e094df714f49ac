package routing

import (
	"database/sql/driver"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// A column algorithm of the shadow rule (value_match, regex_match) classifies the rows a
// statement writes or reads by the value of one column, as the server compares them: the value
// an INSERT gives is the value the column stores (an INT column stores 0.4 and '0' as 0, a
// DECIMAL(10,2) stores 0 as 0.00), and a WHERE compares the column with a value by the rules of
// its type (an INT column and '0' compare as doubles). So the router reads the values of a
// statement into svalues, and the column's type (from information_schema, TableColumn) says
// what each becomes. What obroute cannot read exactly is unread: the statement is refused
// rather than guessed.

// svKind is what an svalue holds.
type svKind uint8

const (
	svNull   svKind = iota
	svExact         // an exact number: an integer or DECIMAL literal, an integer argument
	svDouble        // a DOUBLE: a literal with an exponent, a float argument
	svString        // a string: a quoted literal, X'…', a string or []byte argument
	svHybrid        // 0x… or b'…': a number in a numeric context, bytes in a string context
)

// svalue is the value of an expression of a statement.
type svalue struct {
	kind svKind
	num  exactNum // svExact; svHybrid's numeric value
	f    float64  // svDouble
	str  string   // svString; svHybrid's bytes
}

// exactNum is the exact number mant / 10^scale.
type exactNum struct {
	mant  *big.Int
	scale int
}

func exactInt(n int64) exactNum { return exactNum{mant: big.NewInt(n)} }

// parseExact reads a decimal number written without an exponent: an optional sign, digits and
// an optional fraction ("-0", "0.50", ".5", "5.").
func parseExact(s string) (exactNum, bool) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" || !allDigits(intPart) || !allDigits(frac) {
		return exactNum{}, false
	}
	m, ok := new(big.Int).SetString("0"+intPart+frac, 10)
	if !ok {
		return exactNum{}, false
	}
	if neg {
		m.Neg(m)
	}
	return exactNum{mant: m, scale: len(frac)}, true
}

// parseScientific reads a number with an optional exponent ("2.5e0", "1E-3") exactly.
func parseScientific(s string) (exactNum, bool) {
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	n, ok := parseExact(mant)
	if !ok || !hasExp {
		return n, ok
	}
	e, err := strconv.Atoi(exp)
	if err != nil || e > 100 || e < -100 {
		return exactNum{}, false
	}
	n.scale -= e
	if n.scale < 0 {
		n.mant.Mul(n.mant, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-n.scale)), nil))
		n.scale = 0
	}
	return n, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// cmp compares two exact numbers.
func (a exactNum) cmp(b exactNum) int {
	x, y := a.mant, b.mant
	switch {
	case a.scale < b.scale:
		x = new(big.Int).Mul(x, pow10(b.scale-a.scale))
	case a.scale > b.scale:
		y = new(big.Int).Mul(y, pow10(a.scale-b.scale))
	}
	return x.Cmp(y)
}

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// round returns a rounded to scale digits, half away from zero (as MariaDB stores a DECIMAL or
// a string into an integer or DECIMAL column); a with fewer digits is returned scaled up.
func (a exactNum) round(scale int) exactNum {
	if a.scale <= scale {
		return exactNum{mant: new(big.Int).Mul(a.mant, pow10(scale-a.scale)), scale: scale}
	}
	d := pow10(a.scale - scale)
	q, r := new(big.Int).QuoRem(a.mant, d, new(big.Int))
	r.Abs(r).Mul(r, big.NewInt(2))
	if r.Cmp(d) >= 0 {
		if a.mant.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return exactNum{mant: q, scale: scale}
}

// exactAt reports whether a has no digit beyond scale.
func (a exactNum) exactAt(scale int) bool { return a.round(scale).cmp(a) == 0 }

// text writes a with exactly scale fraction digits, as the server prints such a column.
func (a exactNum) text(scale int) string {
	r := a.round(scale)
	s := new(big.Int).Abs(r.mant).String()
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if r.mant.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// float returns a as the nearest double.
func (a exactNum) float() float64 {
	f, _ := strconv.ParseFloat(a.text(a.scale), 64)
	return f
}

func (a exactNum) add(b exactNum, sign int) exactNum {
	s := max(a.scale, b.scale)
	x, y := a.round(s).mant, b.round(s).mant
	out := new(big.Int)
	if sign < 0 {
		out.Sub(x, y)
	} else {
		out.Add(x, y)
	}
	return exactNum{mant: out, scale: s}
}

func (a exactNum) mul(b exactNum) exactNum {
	return exactNum{mant: new(big.Int).Mul(a.mant, b.mant), scale: a.scale + b.scale}
}

// hexBytes returns the bytes of hexadecimal digits (a leading 0 added to an odd count).
func hexBytes(digits string) (string, bool) {
	if len(digits)%2 == 1 {
		digits = "0" + digits
	}
	b := make([]byte, len(digits)/2)
	for i := range b {
		v, err := strconv.ParseUint(digits[2*i:2*i+2], 16, 8)
		if err != nil {
			return "", false
		}
		b[i] = byte(v)
	}
	return string(b), true
}

// hybrid is the value of a hexadecimal or bit literal of bytes b: the unsigned big-endian number
// in a numeric context, the bytes in a string context. More than 8 bytes is not read.
func hybrid(b string) (svalue, bool) {
	if len(b) > 8 {
		return svalue{}, false
	}
	return svalue{kind: svHybrid, num: exactNum{mant: new(big.Int).SetBytes([]byte(b))}, str: b}, true
}

// bitBytes returns the bytes of binary digits, padded on the left to whole bytes.
func bitBytes(digits string) (string, bool) {
	n, ok := new(big.Int).SetString("0"+digits, 2)
	if !ok {
		return "", false
	}
	return string(n.FillBytes(make([]byte, (len(digits)+7)/8))), true
}

// boundValue reads the value of a bound argument as the server receives it; ok false for a type
// whose reading depends on how go-sql-driver sends it.
func boundValue(v driver.Value) (svalue, string, bool) {
	switch x := v.(type) {
	case nil:
		return svalue{kind: svNull}, "", true
	case int64:
		return svalue{kind: svExact, num: exactInt(x)}, "", true
	case uint64:
		return svalue{kind: svExact, num: exactNum{mant: new(big.Int).SetUint64(x)}}, "", true
	case bool:
		if x {
			return svalue{kind: svExact, num: exactInt(1)}, "", true
		}
		return svalue{kind: svExact, num: exactInt(0)}, "", true
	case float64:
		// Sent as a DOUBLE, or written as a DECIMAL literal with interpolateParams: only an
		// integer reads alike both ways.
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return svalue{kind: svExact, num: exactInt(int64(x))}, "", true
		}
		return svalue{}, "a float argument with a fraction, which go-sql-driver sends as a DOUBLE or, with interpolateParams, as a DECIMAL literal", false
	case string:
		return stringValue(x)
	case []byte:
		return stringValue(string(x))
	case *literal:
		return x.svalue()
	}
	return svalue{}, fmt.Sprintf("an argument of Go type %T", v), false
}

// stringValue is a string value; one with a byte outside ASCII is not read (the connection's
// character set decides what the column holds).
func stringValue(s string) (svalue, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return svalue{}, "a string with a character outside ASCII", false
		}
	}
	return svalue{kind: svString, str: s}, "", true
}

// svalue reads a literal the cache key replaced, as written.
func (l *literal) svalue() (svalue, string, bool) {
	if l.num {
		return numberValue(l.text)
	}
	if strings.IndexByte(l.text, '\\') >= 0 {
		return svalue{}, "a string literal with a backslash (its value depends on sql_mode NO_BACKSLASH_ESCAPES)", false
	}
	return stringValue(l.value())
}

// numberValue reads a number literal: with an exponent a DOUBLE, else exact.
func numberValue(text string) (svalue, string, bool) {
	if strings.ContainsAny(text, "eE") {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(f, 0) {
			return svalue{}, "the number " + text, false
		}
		return svalue{kind: svDouble, f: f}, "", true
	}
	n, ok := parseExact(text)
	if !ok {
		return svalue{}, "the number " + text, false
	}
	return svalue{kind: svExact, num: n}, "", true
}

// numeric returns v in a numeric context (strings as the server reads a number in them: only a
// string that is a number with nothing else but surrounding spaces is read); ok false when it
// cannot be read, isNull for NULL.
func (v svalue) numeric() (n svalue, why string, ok bool) {
	switch v.kind {
	case svNull, svExact, svDouble:
		return v, "", true
	case svHybrid:
		return svalue{kind: svExact, num: v.num}, "", true
	}
	s := strings.Trim(v.str, " ")
	if n, ok := parseScientific(s); ok && s != "" {
		return svalue{kind: svExact, num: n}, "", true
	}
	return svalue{}, "the string " + strconv.Quote(v.str) + ", which the server reads as a number by its leading digits", false
}
