package merge

import (
	"database/sql/driver"
	"math"
	"math/big"
	"testing"
	"time"
)

func TestCompareValues(t *testing.T) {
	utc := func(s string) time.Time {
		tm, err := time.Parse("2006-01-02 15:04:05.999999", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	b := func(s string) []byte { return []byte(s) }
	tests := []struct {
		kind kind
		a, b driver.Value
		want int
	}{
		{kindNumber, b("10"), b("9"), 1},
		{kindNumber, b("-0.5"), b("-0.50"), 0},
		{kindNumber, b("-0"), b("0.000"), 0},
		{kindNumber, b("-2"), b("-10"), 1},
		{kindNumber, b("0.1"), b("0.09"), 1},
		{kindNumber, b("007"), b("7"), 0},
		{kindNumber, b("12345678901234567890123"), b("12345678901234567890124"), -1},
		{kindNumber, int64(-1), uint64(18446744073709551615), -1},
		{kindNumber, int64(42), b("42.0"), 0},
		{kindNumber, uint64(3), b("2.99"), 1},
		{kindNumber, b("1e3"), b("999"), 1}, // not a DECIMAL literal: exact decimal
		{kindNumber, b("1.5e3"), b("1500"), 0},
		{kindNumber, b("-25E-3"), b("-0.025"), 0},
		{kindNumber, float64(0.1), b("0.1"), 1}, // the double nearest 0.1 is above it
		{kindNumber, float64(0.5), b("5e-1"), 0},
		{kindNumber, float64(1e300), b("1e300"), 1},
		{kindNumber, nil, b("-99"), -1},
		{kindNumber, nil, nil, 0},
		{kindFloat, b("1e3"), b("999.5"), 1},
		{kindFloat, float64(0.1), float32(0.1), -1},
		{kindDateTime, b("2025-01-02 10:00:00"), b("2025-01-02 10:00:00.000000"), 0},
		{kindDateTime, b("2025-01-02 10:00:00"), b("2025-01-02 10:00:00.000001"), -1},
		{kindDateTime, b("2025-01-02"), b("2024-12-31"), 1},
		// A date-only HAVING literal means midnight, as in MySQL: MIN(order_time) > '2024-11-01'.
		{kindDateTime, utc("2024-11-01 00:00:00"), "2024-11-01", 0},
		{kindDateTime, b("2024-11-01 00:00:00.000"), b("2024-11-01"), 0},
		{kindDateTime, utc("2024-11-01 00:00:01"), "2024-11-01", 1},
		{kindDateTime, b("2024-11-01"), b("2024-11-01 00:00:00.000001"), -1},
		{kindDateTime, utc("2025-01-02 10:00:00.5"), utc("2025-01-02 10:00:00.25"), 1},
		{kindDateTime, utc("2025-01-02 10:00:00"), b("2025-01-02 10:00:00"), 0},
		{kindTime, b("-00:00:01"), b("00:00:00"), -1},
		{kindTime, b("99:00:00"), b("100:00:00"), -1},
		{kindTime, b("00:00:01.5"), b("00:00:01.500000"), 0},
		// utf8mb4_general_ci, each result checked with STRCMP on MariaDB 10.11:
		{kindBinary, b("a"), b("A"), 1},
		{kindBinary, b("a"), b("a "), -1},
		{kindAuto, int64(2), float64(1.5), 1},
		{kindAuto, b("b"), b("B"), 1},
	}
	for _, tt := range tests {
		got := compareValues(tt.kind, tt.a, tt.b)
		back := compareValues(tt.kind, tt.b, tt.a)
		if got != tt.want || back != -tt.want {
			t.Errorf("kind %d: compare(%q, %q) = %d, reverse %d; want %d", tt.kind, render(tt.a), render(tt.b), got, back, tt.want)
		}
		ka := string(appendKey(nil, tt.kind, tt.a))
		kb := string(appendKey(nil, tt.kind, tt.b))
		if (ka == kb) != (tt.want == 0) {
			t.Errorf("kind %d: keys of %q and %q equal = %v, want %v", tt.kind, render(tt.a), render(tt.b), ka == kb, tt.want == 0)
		}
	}
}

func TestKindOfType(t *testing.T) {
	tests := map[string]kind{
		"BIGINT": kindNumber, "UNSIGNED INT": kindNumber, "DECIMAL": kindNumber, "YEAR": kindNumber,
		"DOUBLE": kindFloat, "FLOAT": kindFloat,
		"DATETIME": kindDateTime, "DATE": kindDateTime, "TIMESTAMP": kindDateTime, "TIME": kindTime,
		"VARCHAR": kindText, "LONGTEXT": kindText, "ENUM": kindText,
		"VARBINARY": kindBinary, "BLOB": kindBinary, "JSON": kindBinary,
		"": kindAuto, "NULL": kindAuto,
	}
	for name, want := range tests {
		if got := kindOfType(name); got != want {
			t.Errorf("kindOfType(%q) = %d, want %d", name, got, want)
		}
	}
}

// TestAppendDouble: expectations are what MariaDB 10.11 prints for these DOUBLEs.
func TestAppendDouble(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{1e15, "1e15"},
		{1e14, "100000000000000"},
		{1.5e16, "1.5e16"},
		{0.30000000000000004, "0.30000000000000004"},
		{1e-5, "0.00001"},
		{1e-15, "0.000000000000001"},
		{1e-16, "1e-16"},
		{1.25e-15, "0.00000000000000125"},
		{123456789.125, "123456789.125"},
		{1234567890123456.7, "1234567890123456.8"},
		{1e21, "1e21"},
		{2, "2"},
		{-0.00001, "-0.00001"},
		{0, "0"},
	}
	for _, tt := range tests {
		if got := string(appendDouble(nil, tt.f)); got != tt.want {
			t.Errorf("appendDouble(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}

func TestDecimalSum(t *testing.T) {
	tests := []struct {
		parts []string
		want  string
	}{
		{[]string{"12.50", "1.25"}, "13.75"},
		{[]string{"1", "0.005"}, "1.005"},
		{[]string{"-0.01", "0.01"}, "0.00"},
		{[]string{"9223372036854775807", "1"}, "9223372036854775808"},
		{[]string{"-9223372036854775808", "-1"}, "-9223372036854775809"},
		{[]string{"99999999999999999.99", "0.01"}, "100000000000000000.00"},
		{[]string{"0.000000000000000000000000000001", "1"}, "1.000000000000000000000000000001"},
		{[]string{".5", "-.25"}, "0.25"},
	}
	for _, tt := range tests {
		var d decSum
		for _, p := range tt.parts {
			if !d.addText([]byte(p)) {
				t.Fatalf("addText(%q) failed", p)
			}
		}
		if got := string(d.appendText(nil)); got != tt.want {
			t.Errorf("sum %q = %s, want %s", tt.parts, got, tt.want)
		}
	}
}

// FuzzCompareDecimal checks the digit-by-digit comparison and the decimal
// sum against math/big on any two decimal literals.
func FuzzCompareDecimal(f *testing.F) {
	for _, s := range [][2]string{{"10", "9"}, {"-0.5", "-0.50"}, {"-0", "0.000"}, {"007", "7"}, {"12.50", "1.25"}, {"9223372036854775807", "1"}, {".5", "-.25"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		_, oka := parseDec([]byte(a))
		_, okb := parseDec([]byte(b))
		if !oka || !okb {
			return
		}
		ra, ok1 := new(big.Rat).SetString(a)
		rb, ok2 := new(big.Rat).SetString(b)
		if !ok1 || !ok2 {
			t.Fatalf("parseDec accepted %q or %q that math/big rejects", a, b)
		}
		if got, want := compareNumber([]byte(a), []byte(b)), ra.Cmp(rb); got != want {
			t.Errorf("compare(%q, %q) = %d, math/big says %d", a, b, got, want)
		}
		var d decSum
		d.addText([]byte(a))
		d.addText([]byte(b))
		sum, ok := new(big.Rat).SetString(string(d.appendText(nil)))
		if !ok || sum.Cmp(new(big.Rat).Add(ra, rb)) != 0 {
			t.Errorf("%q + %q = %s, math/big says %s", a, b, d.appendText(nil), new(big.Rat).Add(ra, rb).FloatString(40))
		}
	})
}

// FuzzCompareExact checks numbers with exponents and floats, compared as the
// exact decimals they stand for, against math/big.
func FuzzCompareExact(f *testing.F) {
	for _, s := range [][2]string{{"1e3", "999"}, {"1.5e3", "1500"}, {"-25E-3", "-0.025"}, {"0e5", "-0"}, {".5e1", "5"}, {"1e-400", "0"}} {
		f.Add(s[0], s[1], 0.1)
	}
	f.Fuzz(func(t *testing.T, a, b string, x float64) {
		da, oka := parseExp([]byte(a))
		db, okb := parseExp([]byte(b))
		if !oka || !okb {
			return
		}
		ra, ok1 := new(big.Rat).SetString(a)
		rb, ok2 := new(big.Rat).SetString(b)
		if !ok1 || !ok2 {
			t.Fatalf("parseExp accepted %q or %q that math/big rejects", a, b)
		}
		if got, want := compareDec(da, db), ra.Cmp(rb); got != want {
			t.Errorf("compare(%q, %q) = %d, math/big says %d", a, b, got, want)
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		dx, ok := exactView(x)
		if !ok {
			t.Fatalf("exactView(%v) failed", x)
		}
		if got, want := compareDec(dx, da), new(big.Rat).SetFloat64(x).Cmp(ra); got != want {
			t.Errorf("compare(%v, %q) = %d, math/big says %d", x, a, got, want)
		}
	})
}
