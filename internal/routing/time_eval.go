package routing

import (
	"database/sql/driver"
	"fmt"
	"math"
	"strconv"
	"time"
)

// tval is the value of a constant expression at one execution: somewhere in [lo, hi] (lo == hi
// when it is known exactly), NULL, or not known at all (unknown: the range widens).
type tval struct {
	lo, hi  time.Time
	null    bool
	unknown bool
}

func exactly(t time.Time) tval { return tval{lo: t, hi: t} }

var unknownValue = tval{unknown: true}

// stmtClock is the statement's clock: one instant for every clock function of the statement
// and every sub-query, and the client session's time zone.
type stmtClock struct {
	at   time.Time      // the instant, UTC
	zone *time.Location // the session's time zone; nil when unknown
	name string         // the zone as the session names it, for EXPLAIN ROUTE
}

// maxZoneOffset bounds the offset of any time zone from UTC: with the session's zone unknown,
// its wall clock is within this of UTC's.
const maxZoneOffset = 14 * time.Hour

// evalCtx is what folding needs for one execution.
type evalCtx struct {
	args  []driver.NamedValue
	key   string
	clock *stmtClock
	// notes collects what EXPLAIN ROUTE and refusals say of the folding: the folded
	// expressions and the values not read; nil when nobody asks.
	notes *foldNotes
}

// foldNotes are what folding found, for EXPLAIN ROUTE and the no-time-range refusal.
type foldNotes struct {
	folded  []string // "now() - interval 7 day = 2025-03-08 10:20:30"
	widened []string // why a value was not read
}

//go:noinline
func (n *foldNotes) add(list *[]string, s string) {
	for _, x := range *list {
		if x == s {
			return
		}
	}
	*list = append(*list, s)
}

// eval folds x.
func (x *texpr) eval(c *evalCtx) (tval, error) {
	if c.notes == nil {
		return x.fold(c)
	}
	v, err := x.fold(c)
	if err == nil && x.text != "" && !v.unknown {
		switch {
		case v.null:
			c.notes.add(&c.notes.folded, x.text+" = NULL")
		case v.lo.Equal(v.hi):
			c.notes.add(&c.notes.folded, x.text+" = "+formatTime(v.lo))
		default:
			c.notes.add(&c.notes.folded, x.text+" = between "+formatTime(v.lo)+" and "+formatTime(v.hi))
		}
	}
	return v, err
}

func (x *texpr) fold(c *evalCtx) (tval, error) {
	switch x.op {
	case xValue:
		if !x.val.ok {
			if c.notes != nil {
				c.notes.add(&c.notes.widened, x.why)
			}
			return unknownValue, nil
		}
		return tval{lo: x.val.lo, hi: x.val.hi}, nil
	case xNull:
		return tval{null: true}, nil
	case xArg:
		return argValue(c, x.arg)
	case xClock:
		return c.clock.value(x.clock, x.prec, c.notes), nil
	case xDate, xCast, xShift:
		v, err := x.kid.eval(c)
		if err != nil || v.null || v.unknown {
			return v, err
		}
		switch x.op {
		case xDate:
			return tval{lo: dateOf(v.lo), hi: dateOf(v.hi)}, nil
		case xCast:
			unit := precisionUnit(x.prec)
			lo, hi := v.lo.Truncate(unit), v.hi.Truncate(unit)
			if !hi.Equal(v.hi) { // digits beyond the precision: truncated or rounded, by SQL mode
				hi = hi.Add(unit)
			}
			return tval{lo: lo, hi: hi}, nil
		}
		n, neg, cv, err := x.count(c)
		if err != nil || cv.null || cv.unknown {
			return cv, err
		}
		lo, okLo := addInterval(v.lo, n, neg, x.unit)
		hi, okHi := addInterval(v.hi, n, neg, x.unit)
		if !okLo || !okHi {
			if c.notes != nil {
				c.notes.add(&c.notes.widened, x.text+" falls outside the years 1 to 9999")
			}
			return unknownValue, nil
		}
		return tval{lo: lo, hi: hi}, nil
	}
	return unknownValue, nil
}

// count returns the count of an xShift. A NULL count makes the result NULL (cv.null); an
// argument that is not a whole number is not read (cv.unknown).
func (x *texpr) count(c *evalCtx) (n int64, neg bool, cv tval, err error) {
	if x.arg < 0 {
		return x.n, x.neg, tval{}, nil
	}
	if x.arg >= len(c.args) {
		return 0, false, tval{}, errorf("%w: the statement has more ? placeholders than the %d arguments given; pass one argument per ?", ErrBadTimeValue, givenArgs(c.args))
	}
	// database/sql passes integers as int64, and uint64 beyond int64 through NamedValueChecker.
	ok := false
	switch v := c.args[x.arg].Value.(type) {
	case nil:
		return 0, false, tval{null: true}, nil
	case int64:
		n, ok = v, true
	case uint64:
		n, ok = int64(v), v <= 1<<62
	case string:
		var perr error
		n, perr = strconv.ParseInt(v, 10, 64)
		ok = perr == nil
	case *literal:
		var perr error
		n, perr = strconv.ParseInt(v.value(), 10, 64)
		ok = perr == nil
	}
	if !ok || n == math.MinInt64 {
		if c.notes != nil {
			c.notes.add(&c.notes.widened, fmt.Sprintf("argument %d (%v) is the INTERVAL count of %s and not a whole number; pass an integer", argNumber(c.args, x.arg), c.args[x.arg].Value, x.text))
		}
		return 0, false, unknownValue, nil
	}
	if n < 0 {
		return -n, !x.neg, tval{}, nil
	}
	return n, x.neg, tval{}, nil
}

// value returns the clock function's value.
func (k *stmtClock) value(clock byte, prec int, notes *foldNotes) tval {
	at := k.at.UTC().Truncate(precisionUnit(prec))
	switch clock {
	case clockUTC:
		return exactly(at)
	case clockUTCDate:
		return exactly(dateOf(at))
	}
	if k.zone == nil {
		if notes != nil {
			notes.add(&notes.widened, "the session's time zone is unknown, so NOW() and CURDATE() are read as any wall clock within 14 hours of UTC; SET time_zone = '+hh:mm' to read them exactly")
		}
		lo, hi := at.Add(-maxZoneOffset), at.Add(maxZoneOffset)
		if clock == clockDate {
			return tval{lo: dateOf(lo), hi: dateOf(hi)}
		}
		return tval{lo: lo, hi: hi}
	}
	w := wallUTC(at.In(k.zone))
	if clock == clockDate {
		return exactly(dateOf(w))
	}
	return exactly(w)
}

// precisionUnit is the step of a DATETIME with prec fractional digits.
func precisionUnit(prec int) time.Duration {
	d := time.Second
	for range prec {
		d /= 10
	}
	return d
}

// dateOf returns midnight of t's day.
func dateOf(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// argValue reads the i-th argument as the server compares it with a DATETIME column:
// time.Time exactly (as wall clock in the backends' loc, see rangeArgs), a string or []byte by
// the rules of string literals, an integer (int64, uint64: what database/sql passes) by the
// rules of numbers, NULL as NULL. Anything else is not read.
func argValue(c *evalCtx, i int) (tval, error) {
	if i >= len(c.args) {
		return tval{}, errorf("%w: the statement has more ? placeholders than the %d arguments given; pass one argument per ?", ErrBadTimeValue, givenArgs(c.args))
	}
	var d datetimeValue
	switch v := c.args[i].Value.(type) {
	case nil:
		return tval{null: true}, nil
	case time.Time:
		return exactly(v.UTC()), nil
	case string:
		d = readDatetimeString(v)
	case []byte:
		d = readDatetimeString(string(v))
	case int64:
		d = readDatetimeDecimal(strconv.FormatInt(v, 10))
	case uint64:
		d = readDatetimeDecimal(strconv.FormatUint(v, 10))
	case *literal: // a literal of the statement, read as the literal is
		var why string
		if d, why = readLiteral(v.value(), v.num); !d.ok {
			if c.notes != nil {
				c.notes.add(&c.notes.widened, why)
			}
			return unknownValue, nil
		}
	}
	if d.ok {
		return tval{lo: d.lo, hi: d.hi}, nil
	}
	if c.notes != nil {
		var what string
		switch v := c.args[i].Value.(type) {
		case string:
			what = strconv.Quote(v)
		case []byte:
			what = strconv.Quote(string(v))
		case int64, uint64:
			what = fmt.Sprint(v)
		default:
			what = fmt.Sprintf("a %T", v)
		}
		c.notes.add(&c.notes.widened, fmt.Sprintf("argument %d (%s) is not a valid date and time; pass a time.Time or 'YYYY-MM-DD hh:mm:ss'", argNumber(c.args, i), what))
	}
	return unknownValue, nil
}

// addInterval adds n units (subtracts when neg) to t as the server does: microseconds to weeks
// as a span of wall-clock time, months to years on the calendar, ending on the last day of a
// shorter month. ok is false when the result is outside the years 1 to 9999 (the server
// gives NULL below year 0 and above 9999; year 0 is left unread).
func addInterval(t time.Time, n int64, neg bool, unit string) (time.Time, bool) {
	var perUnit int64 // microseconds
	months := int64(0)
	switch unit {
	case "microsecond":
		perUnit = 1
	case "second":
		perUnit = 1e6
	case "minute":
		perUnit = 60e6
	case "hour":
		perUnit = 3600e6
	case "day":
		perUnit = 86400e6
	case "week":
		perUnit = 7 * 86400e6
	case "month":
		months = 1
	case "quarter":
		months = 3
	case "year":
		months = 12
	default:
		return time.Time{}, false
	}
	const maxMonths = 10000 * 12
	if months > 0 {
		if n > maxMonths {
			return time.Time{}, false
		}
		k := n * months
		if neg {
			k = -k
		}
		period := int64(t.Year())*12 + int64(t.Month()) - 1 + k
		if period < 12 || period >= maxMonths {
			return time.Time{}, false
		}
		y, m := int(period/12), int(period%12)+1
		d := min(t.Day(), daysIn(y, m))
		return time.Date(y, time.Month(m), d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC), true
	}
	const maxDays = 10000 * 366
	if n > maxDays*86400e6/perUnit {
		return time.Time{}, false
	}
	us := n * perUnit
	if neg {
		us = -us
	}
	days := us / 86400e6
	rem := us % 86400e6
	out := t.AddDate(0, 0, int(days)).Add(time.Duration(rem) * time.Microsecond)
	if out.Year() < 1 || out.Year() > 9999 {
		return time.Time{}, false
	}
	return out, true
}
