package routing

import (
	"fmt"
	"strconv"
	"strings"

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
		fallthrough
	case sqlparser.IntVal, sqlparser.FloatVal:
		d, why := readLiteral(string(v.Val), v.Type != sqlparser.StrVal)
		return &texpr{op: xValue, val: d, why: why}
	}
	return notRead("%s is not a date and time; write it as 'YYYY-MM-DD hh:mm:ss'", nodeText(v))
}

// readLiteral reads a string literal's value, or a number as written (num), compared with the
// shard key; why says what is wrong when it is not read.
func readLiteral(v string, num bool) (d datetimeValue, why string) {
	if num {
		if d = readDatetimeDecimal(v); !d.ok {
			why = fmt.Sprintf("the number %s is not a date and time YYYYMMDD[hhmmss[.ffffff]]; write it as 'YYYY-MM-DD hh:mm:ss'", v)
		}
		return d, why
	}
	if d = readDatetimeString(v); !d.ok {
		why = fmt.Sprintf("'%s' is not a valid date and time (the server reads it with a warning, and servers disagree on its value); write it as 'YYYY-MM-DD hh:mm:ss'", v)
	}
	return d, why
}

// notRead is a value obroute does not read, with the reason.
//
// Not inlined: copied into each of its many call sites it would grow every
// binary that imports the driver (see driver/import_test.go).
//
//go:noinline
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
