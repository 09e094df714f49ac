package routing

import (
	"database/sql/driver"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// A value compared with the shard key is a constant expression: a literal, a ? argument, the
// statement's clock (NOW(), CURDATE(), UTC_TIMESTAMP(), …), INTERVAL arithmetic on one of them
// (DATE_SUB, DATE_ADD, ADDDATE, SUBDATE, TIMESTAMPADD, + and - INTERVAL), or a conversion of
// one (CAST … AS DATETIME or DATE, CONVERT, TIMESTAMP(x), DATE(x)). It is compiled once per
// statement text (texpr) and folded at every execution, with that execution's arguments and
// clock, into the values it may have (tval). Folding follows the server's arithmetic: wall-clock
// units with no time zone in between, a month added to the 31st ends on the month's last day.

// texprOp is the kind of a node of a constant expression.
type texprOp uint8

const (
	xValue texprOp = iota // a value read at analysis (or not read: val.ok false)
	xNull                 // NULL
	xArg                  // the arg-th ? argument
	xClock                // a clock function of the statement: clock, prec
	xShift                // kid plus a count of unit (n, or the arg-th argument, negated by neg)
	xDate                 // the date of kid: DATE(x), CAST(x AS DATE)
	xCast                 // kid as DATETIME(prec): CAST, CONVERT
)

// texpr is a compiled constant expression.
type texpr struct {
	op    texprOp
	val   datetimeValue
	why   string // xValue not read: why, said in EXPLAIN ROUTE and refusals
	arg   int    // xArg; xShift: the argument holding the count, -1 for a literal count
	n     int64  // xShift: the literal count
	neg   bool   // xShift: the count is subtracted
	unit  string // xShift: microsecond, second, minute, hour, day, week, month, quarter, year
	clock byte   // xClock: clockNow, clockUTC, clockDate, clockUTCDate
	prec  int    // xClock, xCast: fractional digits
	kid   *texpr
	text  string // a folded expression as written, for EXPLAIN ROUTE; "" for a literal or argument
}

// Clock functions by what they return. The time-of-day ones and UNIX_TIMESTAMP() are never
// compared with the key but are sent as the statement's instant like the others.
const (
	clockNow     byte = 'n' // NOW(), CURRENT_TIMESTAMP, LOCALTIME, LOCALTIMESTAMP: session wall clock
	clockUTC     byte = 'u' // UTC_TIMESTAMP()
	clockDate    byte = 'd' // CURDATE(), CURRENT_DATE: session date
	clockUTCDate byte = 'D' // UTC_DATE()
	clockTime    byte = 't' // CURTIME(), CURRENT_TIME: session time of day
	clockUTCTime byte = 'T' // UTC_TIME()
	clockUnix    byte = 'x' // UNIX_TIMESTAMP() without argument
)

var clockFuncs = map[string]byte{
	"now": clockNow, "current_timestamp": clockNow, "localtime": clockNow, "localtimestamp": clockNow,
	"utc_timestamp": clockUTC, "curdate": clockDate, "current_date": clockDate, "utc_date": clockUTCDate,
	"curtime": clockTime, "current_time": clockTime, "utc_time": clockUTCTime, "unix_timestamp": clockUnix,
}

// clockCall returns the clock function f calls and its precision; ok is false for any other
// call (UNIX_TIMESTAMP with an argument, a precision that is not a digit 0-6).
func clockCall(f *sqlparser.FuncExpr) (clock byte, prec int, ok bool) {
	clock, ok = clockFuncs[f.Name.Lowered()]
	if !ok || !f.Qualifier.IsEmpty() || f.Distinct || f.Over != nil {
		return 0, 0, false
	}
	switch len(f.Exprs) {
	case 0:
		return clock, 0, true
	case 1:
		ae, isAE := f.Exprs[0].(*sqlparser.AliasedExpr)
		if !isAE || clock == clockUnix || clock == clockDate || clock == clockUTCDate {
			return 0, 0, false
		}
		v, isVal := ae.Expr.(*sqlparser.SQLVal)
		if !isVal || v.Type != sqlparser.IntVal || len(v.Val) != 1 || v.Val[0] < '0' || v.Val[0] > '6' {
			return 0, 0, false
		}
		return clock, int(v.Val[0] - '0'), true
	}
	return 0, 0, false
}

// intervalUnits are the INTERVAL units folded.
var intervalUnits = map[string]bool{"microsecond": true, "second": true, "minute": true, "hour": true,
	"day": true, "week": true, "month": true, "quarter": true, "year": true}

// constant compiles e as a constant time expression; ok is false when e is none.
func (c *rangeCompiler) constant(e sqlparser.Expr) (*texpr, bool) {
	e = unparen(e)
	switch x := e.(type) {
	case *sqlparser.SQLVal:
		return c.literal(x), true
	case *sqlparser.NullVal:
		return &texpr{op: xNull}, true
	case *sqlparser.UnaryExpr:
		if x.Operator == sqlparser.UPlusStr {
			return c.constant(x.Expr)
		}
		if _, isVal := unparen(x.Expr).(*sqlparser.SQLVal); isVal && x.Operator == sqlparser.UMinusStr {
			return notRead("%s is a negative number, which is no date", nodeText(e)), true
		}
	case *sqlparser.FuncExpr:
		return c.function(x)
	case *sqlparser.ConvertExpr:
		if x.Type == nil {
			return nil, false
		}
		kid, ok := c.constant(x.Expr)
		if !ok {
			return nil, false
		}
		switch strings.ToLower(x.Type.Type) {
		case "date":
			return &texpr{op: xDate, kid: kid, text: nodeText(e)}, true
		case "datetime":
			prec := 0
			if x.Type.Length != nil {
				p, err := strconv.Atoi(string(x.Type.Length.Val))
				if err != nil || p < 0 || p > 6 {
					return nil, false
				}
				prec = p
			}
			return &texpr{op: xCast, kid: kid, prec: prec, text: nodeText(e)}, true
		}
	case *sqlparser.BinaryExpr:
		switch {
		case x.Operator == sqlparser.PlusStr || x.Operator == sqlparser.MinusStr:
			base, iv := x.Left, x.Right
			if i, ok := base.(*sqlparser.IntervalExpr); ok && x.Operator == sqlparser.PlusStr {
				base, iv = iv, i
			}
			i, ok := iv.(*sqlparser.IntervalExpr)
			if !ok {
				return nil, false
			}
			return c.shift(e, base, i.Expr, i.Unit, x.Operator == sqlparser.MinusStr)
		}
	case *sqlparser.TimestampFuncExpr:
		if strings.EqualFold(x.Name, "timestampadd") {
			return c.shift(e, x.Expr2, x.Expr1, x.Unit, false)
		}
	}
	return nil, false
}

// literal reads a literal or ? placeholder compared with the key.
func (c *rangeCompiler) literal(v *sqlparser.SQLVal) *texpr {
	switch v.Type {
	case sqlparser.ValArg:
		if i := argIndex(string(v.Val)); i >= 0 {
			return &texpr{op: xArg, arg: i}
		}
		return notRead("the placeholder %s is not a ? argument", v.Val)
	case sqlparser.StrVal:
		if c.typed[v] == "time" {
			return notRead("TIME '%s' is a time of day, not a point in time", v.Val)
		}
		if d := readDatetimeString(string(v.Val)); d.ok {
			return &texpr{op: xValue, val: d}
		}
		return notRead("'%s' is not a valid date and time (the server reads it with a warning, and servers disagree on its value); write it as 'YYYY-MM-DD hh:mm:ss'", v.Val)
	case sqlparser.IntVal, sqlparser.FloatVal:
		if d := readDatetimeDecimal(string(v.Val)); d.ok {
			return &texpr{op: xValue, val: d}
		}
		return notRead("the number %s is not a date and time YYYYMMDD[hhmmss[.ffffff]]; write it as 'YYYY-MM-DD hh:mm:ss'", v.Val)
	}
	return notRead("%s is not a date and time; write it as 'YYYY-MM-DD hh:mm:ss'", nodeText(v))
}

// notRead is a value obroute does not read, with the reason.
func notRead(format string, a ...any) *texpr {
	return &texpr{op: xValue, why: fmt.Sprintf(format, a...)}
}

// function compiles a function call.
func (c *rangeCompiler) function(f *sqlparser.FuncExpr) (*texpr, bool) {
	if clock, prec, ok := clockCall(f); ok {
		if clock == clockNow || clock == clockUTC || clock == clockDate || clock == clockUTCDate {
			return &texpr{op: xClock, clock: clock, prec: prec, text: nodeText(f)}, true
		}
		return notRead("%s is a time of day or a number, not a point in time", nodeText(f)), true
	}
	if !f.Qualifier.IsEmpty() || f.Distinct || f.Over != nil {
		return nil, false
	}
	argv := make([]sqlparser.Expr, len(f.Exprs))
	for i, se := range f.Exprs {
		ae, ok := se.(*sqlparser.AliasedExpr)
		if !ok {
			return nil, false
		}
		argv[i] = ae.Expr
	}
	switch name := f.Name.Lowered(); {
	case name == "sysdate" && len(argv) <= 1:
		return notRead("SYSDATE() is the moment each backend runs the statement, not the statement's time; compare with NOW()"), true
	case (name == "date_add" || name == "date_sub" || name == "adddate" || name == "subdate") && len(argv) == 2:
		sub := name == "date_sub" || name == "subdate"
		if iv, ok := argv[1].(*sqlparser.IntervalExpr); ok {
			return c.shift(f, argv[0], iv.Expr, iv.Unit, sub)
		}
		if name == "adddate" || name == "subdate" { // ADDDATE(x, n): n days
			return c.shift(f, argv[0], argv[1], "day", sub)
		}
	case name == "timestamp" && len(argv) == 1:
		kid, ok := c.constant(argv[0])
		if !ok {
			return nil, false
		}
		return &texpr{op: xCast, kid: kid, prec: 6, text: nodeText(f)}, true
	case name == "date" && len(argv) == 1:
		kid, ok := c.constant(argv[0])
		if !ok {
			return nil, false
		}
		return &texpr{op: xDate, kid: kid, text: nodeText(f)}, true
	}
	return nil, false
}

// shift compiles base plus (or minus, sub) count units; whole is the expression, for EXPLAIN.
func (c *rangeCompiler) shift(whole sqlparser.SQLNode, base, count sqlparser.Expr, unit string, sub bool) (*texpr, bool) {
	kid, ok := c.constant(base)
	if !ok {
		return nil, false
	}
	x := &texpr{op: xShift, kid: kid, arg: -1, neg: sub, unit: strings.ToLower(unit), text: nodeText(whole)}
	if !intervalUnits[x.unit] {
		return notRead("INTERVAL … %s is not folded; use MICROSECOND, SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER or YEAR", strings.ToUpper(unit)), true
	}
	cnt := unparen(count)
	if u, isU := cnt.(*sqlparser.UnaryExpr); isU && u.Operator == sqlparser.UMinusStr {
		x.neg = !x.neg
		cnt = unparen(u.Expr)
	}
	v, isVal := cnt.(*sqlparser.SQLVal)
	switch {
	case isVal && v.Type == sqlparser.ValArg:
		if x.arg = argIndex(string(v.Val)); x.arg < 0 {
			return nil, false
		}
	case isVal && (v.Type == sqlparser.IntVal || v.Type == sqlparser.StrVal):
		text := string(v.Val)
		if strings.HasPrefix(text, "-") && v.Type == sqlparser.IntVal {
			x.neg, text = !x.neg, text[1:]
		}
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil || n < 0 {
			return notRead("the INTERVAL count %s is not a whole number of %s", nodeText(v), x.unit), true
		}
		x.n = n
	default:
		return notRead("the INTERVAL count %s is not a whole number or ? argument", nodeText(count)), true
	}
	return x, true
}

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
	v, err := x.fold(c)
	if err == nil && c.notes != nil && x.text != "" && !v.unknown {
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
		return 0, false, tval{}, fmt.Errorf("%w: the statement has more ? placeholders than the %d arguments given; pass one argument per ?", ErrBadTimeValue, len(c.args))
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
	}
	if !ok || n == math.MinInt64 {
		if c.notes != nil {
			c.notes.add(&c.notes.widened, fmt.Sprintf("argument %d (%v) is the INTERVAL count of %s and not a whole number; pass an integer", x.arg+1, c.args[x.arg].Value, x.text))
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
		return tval{}, fmt.Errorf("%w: the statement has more ? placeholders than the %d arguments given; pass one argument per ?", ErrBadTimeValue, len(c.args))
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
		c.notes.add(&c.notes.widened, fmt.Sprintf("argument %d (%s) is not a valid date and time; pass a time.Time or 'YYYY-MM-DD hh:mm:ss'", i+1, what))
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
