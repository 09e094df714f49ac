package routing

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/obroute/obroute/sqltest"
)

// literalCase is a value compared with a DATETIME column and what obroute reads: lo (and hi
// when a fraction of more than six digits leaves two values), or "" for a value not read.
type literalCase struct {
	in     string
	lo, hi string
	// warned, for a value not read: MariaDB compares it with a DATETIME with a warning; false
	// for a value it compares silently but MySQL reads otherwise (an invalid date MariaDB places
	// between two days, a DOUBLE), which obroute leaves unread all the same.
	warned bool
}

// stringLiterals are strings compared with a DATETIME column, with the values written by hand
// from MySQL's rules for DATETIME literals.
var stringLiterals = []literalCase{
	{in: "2026-09-01", lo: "2026-09-01 00:00:00"},
	{in: "2026-09-01 10:00:00", lo: "2026-09-01 10:00:00"},
	{in: "2026/09/01 10:00:00", lo: "2026-09-01 10:00:00"},
	{in: "2026.09.01 10.20.30", lo: "2026-09-01 10:20:30"},
	{in: "2026@09@01 10^20^30", lo: "2026-09-01 10:20:30"},
	{in: "20260901", lo: "2026-09-01 00:00:00"},
	{in: "20260901120000", lo: "2026-09-01 12:00:00"},
	{in: "20260901T120000", lo: "2026-09-01 12:00:00"},
	{in: "20260901120000.25", lo: "2026-09-01 12:00:00.25"},
	{in: "2026-9-1", lo: "2026-09-01 00:00:00"},
	{in: "2026-9-1 1:2:3", lo: "2026-09-01 01:02:03"},
	{in: "26-09-01", lo: "2026-09-01 00:00:00"},
	{in: "69-12-31 23:59:59", lo: "2069-12-31 23:59:59"},
	{in: "70-01-01", lo: "1970-01-01 00:00:00"},
	{in: "99-12-31", lo: "1999-12-31 00:00:00"},
	{in: "260901", lo: "2026-09-01 00:00:00"},
	{in: "700101", lo: "1970-01-01 00:00:00"},
	{in: "260901120000", lo: "2026-09-01 12:00:00"},
	{in: "2026-09-01T10:00:00", lo: "2026-09-01 10:00:00"},
	{in: "2026-09-01   10:00:00", lo: "2026-09-01 10:00:00"},
	{in: "  2026-09-01 10:00:00  ", lo: "2026-09-01 10:00:00"},
	{in: "2026-09-01 10", lo: "2026-09-01 10:00:00"},
	{in: "2026-09-01 10:30", lo: "2026-09-01 10:30:00"},
	{in: "2026-09-01 10:00:00.5", lo: "2026-09-01 10:00:00.5"},
	{in: "2026-09-01 10:00:00.123456", lo: "2026-09-01 10:00:00.123456"},
	{in: "2026-09-01 10:00:00.", lo: "2026-09-01 10:00:00"},
	{in: "2026-09-01 10:00:00.1234567", lo: "2026-09-01 10:00:00.123456", hi: "2026-09-01 10:00:00.123457"},
	{in: "2026-09-01 10:00:00.1234560", lo: "2026-09-01 10:00:00.123456"},
	{in: "2024-02-29", lo: "2024-02-29 00:00:00"},
	{in: "9999-12-31 23:59:59.999999", lo: "9999-12-31 23:59:59.999999"},
	{in: "1000-01-01", lo: "1000-01-01 00:00:00"},
	{in: "0000-00-00", lo: "0000-00-00"},
	{in: "0000-00-00 00:00:00", lo: "0000-00-00"},
	// Not read: invalid dates MariaDB compares silently as a day between two others (Feb 30
	// after Feb 28), which MySQL reads otherwise, and values read with a warning.
	{in: "2026-02-30"},
	{in: "2026-09-00"},
	{in: "2026-00-10"},
	{in: "2025-02-29"},
	{in: "2026-13-01", warned: true},
	{in: "2026-09-32", warned: true},
	{in: "2026-09-01 24:00:00", warned: true},
	{in: "2026-09-01 10:60:00", warned: true},
	{in: "2026-09-01 10:00:00abc", warned: true},
	{in: "2026-09-01x", warned: true},
	{in: "2026-09-01 10:00:00+08:00", warned: true},
	{in: "2026--09-01", warned: true},
	{in: "yesterday", warned: true},
	{in: "", warned: true},
	{in: "-2026-09-01", warned: true},
	{in: "2026", warned: true},
	{in: "2026-09", warned: true},
	{in: "20260901.5", warned: true},
	{in: "202609011", warned: true},
	{in: "10000-01-01", warned: true},
	{in: "0000-01-01"}, // read by the server; obroute leaves year 0 unread
}

// numberLiterals are numbers compared with a DATETIME column.
var numberLiterals = []literalCase{
	{in: "20260901", lo: "2026-09-01 00:00:00"},
	{in: "20261001000000", lo: "2026-10-01 00:00:00"},
	{in: "20261001000000.5", lo: "2026-10-01 00:00:00.5"},
	{in: "20261001000000.000001", lo: "2026-10-01 00:00:00.000001"},
	{in: "20261001000000.1234567", lo: "2026-10-01 00:00:00.123456", hi: "2026-10-01 00:00:00.123457"},
	{in: "20260901.5", lo: "2026-09-01 00:00:00"}, // a DATE: the fraction is dropped
	{in: "260901", lo: "2026-09-01 00:00:00"},
	{in: "691231", lo: "2069-12-31 00:00:00"},
	{in: "700101", lo: "1970-01-01 00:00:00"},
	{in: "991231", lo: "1999-12-31 00:00:00"},
	{in: "101", lo: "2000-01-01 00:00:00"},
	{in: "1231", lo: "2000-12-31 00:00:00"},
	{in: "10000101", lo: "1000-01-01 00:00:00"},
	{in: "99991231", lo: "9999-12-31 00:00:00"},
	{in: "101000000", lo: "2000-01-01 00:00:00"},
	{in: "260901123456", lo: "2026-09-01 12:34:56"},
	{in: "991231235959", lo: "1999-12-31 23:59:59"},
	{in: "0", lo: "0000-00-00"},
	{in: "100", warned: true},
	{in: "691232", warned: true},
	{in: "20261301", warned: true},
	{in: "20260931"}, // September 31st: compared silently as a day after Sep 30
	{in: "20260901246000", warned: true},
	{in: "100000101000000", warned: true},
	{in: "-20260901", warned: true},
	{in: "2.0260901e7"}, // a DOUBLE: not read
}

func TestReadDatetimeString(t *testing.T) {
	for _, c := range stringLiterals {
		checkLiteral(t, c, readDatetimeString(c.in))
	}
}

func TestReadDatetimeNumber(t *testing.T) {
	for _, c := range numberLiterals {
		checkLiteral(t, c, readDatetimeDecimal(c.in))
	}
}

func checkLiteral(t *testing.T, c literalCase, v datetimeValue) {
	t.Helper()
	if c.lo == "" {
		if v.ok {
			t.Errorf("%q read as %s, want it not read", c.in, formatTime(v.lo))
		}
		return
	}
	want := zeroDatetime
	if c.lo != "0000-00-00" {
		want = day(c.lo)
	}
	hi := want
	if c.hi != "" {
		hi = day(c.hi)
	}
	if !v.ok || !v.lo.Equal(want) || !v.hi.Equal(hi) {
		t.Errorf("%q read as %+v, want [%s, %s]", c.in, v, formatTime(want), formatTime(hi))
	}
}

// TestDatetimeLiteralsOnMariaDB checks the hand-written values of the literal tables against
// MariaDB: each value read compares equal (or between its two values) with the literal, and a
// value not read makes the server warn exactly when the table says so.
func TestDatetimeLiteralsOnMariaDB(t *testing.T) {
	ctx := context.Background()
	conn := probeSession(t, "lit")
	check := func(c literalCase, lit string) {
		t.Helper()
		if c.lo == "0000-00-00" {
			c.lo, c.hi = "0000-00-00 00:00:00", ""
		}
		if c.lo == "" {
			var x sql.NullInt64
			if err := conn.QueryRowContext(ctx, "SELECT TIMESTAMP'2026-01-01 00:00:00' < "+lit+" FROM one").Scan(&x); err != nil {
				t.Fatalf("%s: %v", lit, err)
			}
			if n := warnings(t, conn, true); (n > 0) != c.warned {
				t.Errorf("%s: MariaDB compares it with a DATETIME with %d warnings; the table says warned=%v", lit, n, c.warned)
			}
			return
		}
		hi := c.hi
		if hi == "" {
			hi = c.lo
		}
		q := fmt.Sprintf("SELECT TIMESTAMP'%s' <= %s AND %s <= TIMESTAMP'%s', TIMESTAMP'%s' = %s FROM one", with6(c.lo), lit, lit, with6(hi), with6(c.lo), lit)
		var between, equal bool
		if err := conn.QueryRowContext(ctx, q).Scan(&between, &equal); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if !between || c.hi == "" && !equal {
			t.Errorf("%s: MariaDB: between %s and %s: %v, equal to %s: %v", lit, c.lo, hi, between, c.lo, equal)
		}
	}
	for _, c := range stringLiterals {
		check(c, "'"+strings.ReplaceAll(c.in, "'", "''")+"'")
	}
	for _, c := range numberLiterals {
		check(c, c.in)
	}
}

// probeSession returns one session of MariaDB (a fresh database on the shared server) with a
// one-row table one: warnings are reset only by statements that read a table, so every probe
// reads this one.
func probeSession(t *testing.T, name string) *sql.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := sqltest.Shared(t, name)[0].DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	for _, q := range []string{"CREATE TEMPORARY TABLE one (x INT)", "INSERT INTO one VALUES (1)"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

// with6 writes a DATETIME literal body with six fractional digits, so that the TIMESTAMP
// literal keeps every digit.
func with6(s string) string {
	if len(s) == len("2006-01-02 15:04:05") {
		return s + ".000000"
	}
	return s + strings.Repeat("0", len("2006-01-02 15:04:05.000000")-len(s))
}

// warnings counts the warnings of the last statement; notes (a fraction truncated) count only
// with notes set.
func warnings(t *testing.T, conn *sql.Conn, notes ...bool) int {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), "SHOW WARNINGS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var level, msg string
		var code int
		if err := rows.Scan(&level, &code, &msg); err != nil {
			t.Fatal(err)
		}
		if level != "Note" || len(notes) > 0 && notes[0] {
			n++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDatetimeStringsAgreeWithMariaDB draws 600 strings shaped like DATETIME literals (parts of
// every width, every delimiter, digits alone, fractions, stray characters) and checks each one
// obroute reads against MariaDB: the server compares it equal to the value read (or between
// the two values of a long fraction), without a warning.
func TestDatetimeStringsAgreeWithMariaDB(t *testing.T) {
	ctx := context.Background()
	conn := probeSession(t, "litfuzz")
	rng := rand.New(rand.NewPCG(11, 13))
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + rng.IntN(10))
		}
		return string(b)
	}
	part := func(max int) string {
		switch rng.IntN(4) {
		case 0:
			return fmt.Sprint(rng.IntN(max + 2))
		case 1:
			return fmt.Sprintf("%02d", rng.IntN(max+1))
		}
		return fmt.Sprint(1 + rng.IntN(max))
	}
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	read, unread := 0, 0
	for range 600 {
		var s string
		if rng.IntN(3) == 0 {
			s = digits(4 + rng.IntN(13))
			if rng.IntN(4) == 0 {
				s = s[:len(s)/2] + "T" + s[len(s)/2:]
			}
			if rng.IntN(3) == 0 {
				s += "." + digits(rng.IntN(9))
			}
		} else {
			s = pick(fmt.Sprint(1990+rng.IntN(50)), fmt.Sprintf("%02d", rng.IntN(100)), fmt.Sprint(rng.IntN(10000))) +
				pick("-", "/", ".", ":", "@", "-") + part(12) + pick("-", "/", ".", "-") + part(31)
			if rng.IntN(4) > 0 {
				s += pick(" ", "T", "  ", ".", "\t", "-") + part(23) + pick(":", ".", ":") + part(59)
				if rng.IntN(3) > 0 {
					s += pick(":", ".", ":") + part(59)
				}
				if rng.IntN(3) == 0 {
					s += "." + digits(rng.IntN(9))
				}
			}
		}
		s = pick("", "", "", " ") + s + pick("", "", "", "", " ", "x", ".", "Z")
		v := readDatetimeString(s)
		if !v.ok {
			unread++
			continue
		}
		read++
		lit := "'" + s + "'"
		q := fmt.Sprintf("SELECT TIMESTAMP'%s' <= %s AND %s <= TIMESTAMP'%s' FROM one", appendDatetime(nil, v.lo, 6), lit, lit, appendDatetime(nil, v.hi, 6))
		if v.lo.Equal(zeroDatetime) {
			q = "SELECT TIMESTAMP'0000-00-00 00:00:00' = " + lit + " FROM one"
		}
		var ok bool
		if err := conn.QueryRowContext(ctx, q).Scan(&ok); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		// A fraction of more than six digits is truncated with a note, not a warning.
		if n := warnings(t, conn); !ok || n > 0 {
			t.Errorf("%q: obroute reads [%s, %s]; MariaDB: in that range %v, %d warnings", s, formatTime(v.lo), formatTime(v.hi), ok, n)
		}
	}
	t.Logf("%d strings read, each as MariaDB reads it; %d left unread", read, unread)
}
