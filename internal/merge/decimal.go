package merge

import (
	"database/sql/driver"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
)

// decSum is an exact decimal accumulator: value = unscaled / 10^scale. It
// stays in an int64 until that would overflow, then moves to a big.Int.
type decSum struct {
	small int64
	big   *big.Int
	scale int
}

var pow10 = [...]int64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

func (d *decSum) toBig() {
	if d.big == nil {
		d.big = big.NewInt(d.small)
	}
}

// rescale raises the accumulator's scale to s (never lowers it).
func (d *decSum) rescale(s int) {
	if s <= d.scale {
		return
	}
	diff := s - d.scale
	d.scale = s
	if d.big == nil && diff < len(pow10) {
		hi, lo := bits.Mul64(uint64(abs64(d.small)), uint64(pow10[diff]))
		if hi == 0 && lo <= math.MaxInt64 {
			d.small *= pow10[diff]
			return
		}
	}
	d.toBig()
	d.big.Mul(d.big, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(diff)), nil))
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x // MinInt64 stays negative; Mul64 then sees a huge value and goes big
	}
	return x
}

// addText adds a decimal literal; it reports false if b is not one.
func (d *decSum) addText(b []byte) bool {
	v, ok := parseDec(b)
	if !ok {
		return false
	}
	// The scale of the text as written counts ("12.50" has scale 2), not the trimmed view.
	scale := 0
	for i := range b {
		if b[i] == '.' {
			scale = len(b) - i - 1
			break
		}
	}
	d.rescale(scale)
	// unscaled = intp digits, frac digits, then zeros up to d.scale.
	pad := d.scale - len(v.frac)
	if d.big == nil && len(v.intp)+len(v.frac)+pad <= 18 {
		var u int64
		for _, c := range v.intp {
			u = u*10 + int64(c-'0')
		}
		for _, c := range v.frac {
			u = u*10 + int64(c-'0')
		}
		u *= pow10[pad]
		if v.neg {
			u = -u
		}
		if s, overflow := addInt64(d.small, u); !overflow {
			d.small = s
			return true
		}
	}
	d.toBig()
	digits := make([]byte, 0, 1+len(v.intp)+len(v.frac)+pad)
	if v.neg {
		digits = append(digits, '-')
	}
	digits = append(digits, v.intp...)
	digits = append(digits, v.frac...)
	for range pad {
		digits = append(digits, '0')
	}
	if len(v.intp)+len(v.frac) == 0 {
		return true
	}
	x, _ := new(big.Int).SetString(string(digits), 10)
	d.big.Add(d.big, x)
	return true
}

func addInt64(a, b int64) (int64, bool) {
	s := a + b
	return s, (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0)
}

// addInt adds an integer partial (binary protocol BIGINT).
func (d *decSum) addInt(x int64) {
	var buf [24]byte
	d.addText(strconv.AppendInt(buf[:0], x, 10))
}

// addUint adds an unsigned integer partial.
func (d *decSum) addUint(x uint64) {
	var buf [24]byte
	d.addText(strconv.AppendUint(buf[:0], x, 10))
}

// unscaled returns the accumulator as a big.Int (a copy).
func (d *decSum) unscaled() *big.Int {
	if d.big != nil {
		return new(big.Int).Set(d.big)
	}
	return big.NewInt(d.small)
}

// int64Value returns the sum as an int64 when it is an integer that fits.
func (d *decSum) int64Value() (int64, bool) {
	if d.big == nil && d.scale < len(pow10) {
		if d.small%pow10[d.scale] != 0 {
			return 0, false
		}
		return d.small / pow10[d.scale], true
	}
	u := d.unscaled()
	if d.scale > 0 {
		q, r := new(big.Int).QuoRem(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.scale)), nil), new(big.Int))
		if r.Sign() != 0 {
			return 0, false
		}
		u = q
	}
	return u.Int64(), u.IsInt64()
}

// appendText appends the sum as MySQL prints a DECIMAL of the sum's scale.
func (d *decSum) appendText(buf []byte) []byte {
	if d.big == nil {
		var tmp [24]byte
		return appendScaled(buf, strconv.AppendInt(tmp[:0], d.small, 10), d.scale)
	}
	return appendScaled(buf, d.big.Append(nil, 10), d.scale)
}

// appendScaled formats the integer text digits (optionally "-"-prefixed)
// with scale decimals: ("-5", 2) → "-0.05".
//
//go:noinline
func appendScaled(buf, digits []byte, scale int) []byte {
	if len(digits) > 0 && digits[0] == '-' {
		buf = append(buf, '-')
		digits = digits[1:]
	}
	if scale == 0 {
		return append(buf, digits...)
	}
	if len(digits) <= scale {
		buf = append(buf, '0', '.')
		for range scale - len(digits) {
			buf = append(buf, '0')
		}
		return append(buf, digits...)
	}
	buf = append(buf, digits[:len(digits)-scale]...)
	buf = append(buf, '.')
	return append(buf, digits[len(digits)-scale:]...)
}

// pow10Big returns 10^n.
func pow10Big(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// roundQuo returns n / d at scale digits as an unscaled integer: truncated when trunc is set,
// else rounded half away from zero, as the server rounds a DECIMAL for display. n is unscaled
// at scale from; d > 0.
func roundQuo(n *big.Int, from int, d *big.Int, scale int, trunc bool) *big.Int {
	n = new(big.Int).Set(n)
	if scale >= from {
		n.Mul(n, pow10Big(scale-from))
	} else {
		d = new(big.Int).Mul(d, pow10Big(from-scale))
	}
	neg := n.Sign() < 0
	n.Abs(n)
	q, r := new(big.Int).QuoRem(n, d, new(big.Int))
	if !trunc && r.Lsh(r, 1).Cmp(d) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	return q
}

// appendRounded appends the sum at scale digits, rounded half away from zero: a DECIMAL result
// as the server prints it.
func (d *decSum) appendRounded(buf []byte, scale int) []byte {
	if d.scale <= scale {
		// Nothing to round: the digits, then zeros up to the scale.
		buf = d.appendText(buf)
		if d.scale == scale {
			return buf
		}
		if d.scale == 0 {
			buf = append(buf, '.')
		}
		for range scale - d.scale {
			buf = append(buf, '0')
		}
		return buf
	}
	q := roundQuo(d.unscaled(), d.scale, big.NewInt(1), scale, false)
	return appendScaled(buf, q.Append(nil, 10), scale)
}

// appendAvg appends sum/count at scale digits: truncated when trunc is set, else rounded half
// away from zero.
func appendAvg(buf []byte, sum *decSum, count int64, scale int, trunc bool) []byte {
	q := roundQuo(sum.unscaled(), sum.scale, big.NewInt(count), scale, trunc)
	return appendScaled(buf, q.Append(nil, 10), scale)
}

// ceil9 rounds n up to a whole number of the server's 9-digit decimal words.
func ceil9(n int) int { return (n + 8) / 9 * 9 }

// avgMode is how the server turns the exact quotient sum/count into an AVG of the result's
// scale. The server divides in 9-digit words: the quotient keeps F = ceil9(f + incr) fraction
// digits, f being the fraction digits the sum carries and incr the div_precision_increment, and
// drops the rest; it then rounds those F digits half up to the scale. When F > scale the AVG is
// the exact quotient rounded; when F = scale it is the quotient truncated.
type avgMode uint8

const (
	avgUnknown avgMode = iota
	avgRound
	avgTruncate
)

// staticAvgMode decides the mode from the scale, the increment and the argument where that is
// enough. f is the argument's scale for a column, and at least that for arithmetic, whose
// scale is the result's minus incr: F > scale whenever the scale is not a whole number of
// words. For anything else only F ≥ ceil9(incr) is known; the sub-queries then say it (see
// Aggregate.Mode).
func staticAvgMode(scale, incr int, arg ArgKind) avgMode {
	switch {
	case ceil9(incr) > scale:
		return avgRound
	case scale%9 != 0 && arg != ArgOther:
		return avgRound
	case arg == ArgColumn:
		return avgTruncate
	}
	return avgUnknown
}

// avgModeSQL is the expression whose value tells an AVG's mode (see Aggregate.Mode); \x00
// stands for the SUM of the argument. Multiplied by 0 and added 2, the sum keeps its fraction
// digits, and 2/3 is divided as the AVG is: it shows ...67 when the quotient's digits are
// rounded to the scale, ...66 when they are cut.
const avgModeSQL = "(\x00 * 0 + 2) / 3"

// AvgModeSQL returns, in the pieces WeightSQL uses, the SQL text of an AVG's mode column: the
// SUM of the argument is written between the pieces.
func AvgModeSQL() []string { return strings.Split(avgModeSQL, "\x00") }

// readAvgMode reads the value of a mode column (2/3 at the AVG's scale).
func readAvgMode(v driver.Value) avgMode {
	b, ok := v.([]byte)
	if !ok || len(b) == 0 {
		return avgUnknown
	}
	switch b[len(b)-1] {
	case '7', '1':
		return avgRound
	case '6', '0':
		return avgTruncate
	}
	return avgUnknown
}

// appendDouble appends f as MySQL/MariaDB print a DOUBLE in the text
// protocol: the shortest text that reads back as f, in positional notation
// unless that needs 15 or more zeros before or after the digits ("1e15",
// "1e-16", but "100000000000000" and "0.000000000000001").
func appendDouble(buf []byte, f float64) []byte {
	if f == 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		if f == 0 {
			return append(buf, '0')
		}
		return strconv.AppendFloat(buf, f, 'g', -1, 64)
	}
	e := strconv.AppendFloat(nil, f, 'e', -1, 64) // [-]d[.ddd]e±xx
	mant := e
	exp := 0
	for i := len(e) - 1; i >= 0; i-- {
		if e[i] == 'e' {
			mant = e[:i]
			exp, _ = strconv.Atoi(string(e[i+1:]))
			break
		}
	}
	digits := len(mant)
	if mant[0] == '-' {
		digits--
	}
	if len(mant) > 2 && (mant[1] == '.' || mant[2] == '.') {
		digits--
	}
	if exp-digits+1 >= 15 || exp < -15 {
		buf = append(buf, mant...)
		buf = append(buf, 'e')
		return strconv.AppendInt(buf, int64(exp), 10)
	}
	return strconv.AppendFloat(buf, f, 'f', -1, 64)
}
