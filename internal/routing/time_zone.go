package routing

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// The clock functions of a statement on a time-sharded table (NOW(), CURDATE(),
// UTC_TIMESTAMP(), …) are evaluated once, by obroute, at its clock's instant when the statement
// is routed: the range is folded with that instant, and every sub-query is sent it as a literal
// in place of the function, so that routing and every hot and cold part agree on "now", to the
// microsecond. NOW() is the instant's wall clock in the client session's time zone: the one it
// set with SET time_zone, else the backends' default (TimeConfig.TimeZone). A zone obroute
// cannot read (SYSTEM on a server whose system zone is not UTC, a name TimeConfig.LoadZone does
// not know) is unknown: NOW() is then folded as any wall clock within 14 hours of UTC (the range
// widens), and the sub-queries are sent the instant for the server to convert:
// CONVERT_TZ(TIMESTAMP '<UTC>', '+00:00', @@session.time_zone).

// zoneCache holds the locations of the time zone names a router has met (nil: unknown),
// bounded since the names come from the application's SET statements.
type zoneCache struct {
	m sync.Map
	n atomic.Int32
}

const maxZones = 1024

// zoneOf returns the location of a time_zone value as MySQL writes it: an offset '+08:00' or
// '-5:30', SYSTEM, or a named zone (TimeConfig.LoadZone); nil when unknown.
func (t *timeRouter) zoneOf(name string) *time.Location {
	switch {
	case name == "":
		return nil
	case strings.EqualFold(name, "system"):
		_, system := t.defaults()
		return system
	}
	if loc, ok := t.zones.m.Load(name); ok {
		return loc.(*time.Location)
	}
	var loc *time.Location
	if name[0] == '+' || name[0] == '-' {
		loc = offsetZone(name)
	} else if t.cfg.LoadZone != nil && name != "Local" {
		if l, err := t.cfg.LoadZone(name); err == nil {
			loc = l
		}
	}
	if t.zones.n.Add(1) <= maxZones {
		t.zones.m.Store(name, loc)
	}
	return loc
}

// defaultZone is the time zone a server session starts with, as read back from a backend.
type defaultZone struct {
	name   string
	system *time.Location
}

// SetDefaultTimeZone sets the time_zone a server session starts with (as the server names it)
// and the zone SYSTEM stands for (nil: unknown), replacing TimeConfig.TimeZone and
// SystemTimeZone. The connector calls it once it has read them back from a backend, before the
// first statement on a time-sharded table is routed. Without time tables it does nothing.
func (r TimeFacts) SetDefaultTimeZone(name string, system *time.Location) {
	if r.time != nil {
		r.time.defaultZone.Store(&defaultZone{name: name, system: system})
		r.time.facts.gen.Add(1)
	}
}

// defaults returns the default time zone's name and what SYSTEM stands for.
func (t *timeRouter) defaults() (string, *time.Location) {
	if dz := t.defaultZone.Load(); dz != nil {
		return dz.name, dz.system
	}
	return t.cfg.TimeZone, t.cfg.SystemTimeZone
}

// offsetZone reads '+hh:mm' (one or two digits each) as a fixed zone; nil when malformed.
func offsetZone(s string) *time.Location {
	h, m, ok := strings.Cut(s[1:], ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || len(h) > 2 || len(m) > 2 || h[0] == '+' || m[0] == '+' || hh > 14 || mm > 59 {
		return nil
	}
	secs := hh*3600 + mm*60
	if s[0] == '-' {
		secs = -secs
	}
	return time.FixedZone(s, secs)
}

// clockFor returns the statement's clock: the instant at and the client session's time zone.
func (t *timeRouter) clockFor(at time.Time, sess *SessionState) stmtClock {
	name, _ := t.defaults()
	if sess != nil && sess.TimeZone != "" {
		name = sess.TimeZone
	}
	return stmtClock{at: at.UTC(), zone: t.zoneOf(name), name: name}
}

// sessionClock returns the instant a statement's clock functions read in the client session:
// the SET timestamp it made (seconds since 1970, with a fraction), else at. ok is false when
// the session set timestamp to a value obroute does not read.
func sessionClock(at time.Time, sess *SessionState) (time.Time, bool) {
	if sess == nil || sess.Timestamp == nil {
		return at, true
	}
	lit, ok := sess.Timestamp.Literal()
	if !ok {
		if strings.EqualFold(strings.TrimSpace(assignedText(sess.Timestamp.Assignment)), "default") {
			return at, true
		}
		return at, false
	}
	secs, err := strconv.ParseFloat(lit, 64)
	if err != nil || secs < 0 {
		return at, false
	}
	if secs == 0 { // SET timestamp = 0: the server's clock again
		return at, true
	}
	whole := int64(secs)
	micro := int64((secs-float64(whole))*1e6 + 0.5)
	return time.Unix(whole, micro*1000).UTC(), true
}

// assignedText returns what follows the first = or := of an assignment.
func assignedText(assignment string) string {
	if i := strings.Index(assignment, "="); i >= 0 {
		return assignment[i+1:]
	}
	return ""
}

// Literal returns the value the assignment gives when it is one string or number literal, as
// written (letter case kept): "Asia/Shanghai" for time_zone = 'Asia/Shanghai'.
func (v SessionVar) Literal() (string, bool) {
	toks, ok := lex(v.Assignment)
	if !ok {
		return "", false
	}
	for i, tk := range toks {
		if tk.kind == tokPunct && (tk.text == "=" || tk.text == ":=") {
			if i+2 != len(toks) {
				return "", false
			}
			switch val := toks[i+1]; val.kind {
			case tokString:
				return val.val, true
			case tokNumber:
				return val.text, true
			}
			return "", false
		}
	}
	return "", false
}

// clockLen bounds the length of the literal a clock function is sent as.
const clockLen = 96

// clockMark is the marker of a clock function in a printed statement, followed by the
// function's kind and its precision digit.
const clockMark = "\x00K"

// writeClockMark prints f as a clock marker when it is a clock function of the statement.
func writeClockMark(buf *sqlparser.TrackedBuffer, f *sqlparser.FuncExpr) bool {
	clock, prec, ok := clockCall(f)
	if !ok {
		return false
	}
	buf.WriteString(clockMark)
	buf.WriteByte(clock)
	buf.WriteByte(byte('0' + prec))
	return true
}

// hasClock reports whether e calls a clock function (outside subqueries too).
func hasClock(e sqlparser.SQLNode) bool {
	found := false
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		if f, ok := n.(*sqlparser.FuncExpr); ok && f != nil {
			if _, _, ok := clockCall(f); ok {
				found = true
			}
		}
		return !found, nil
	}, e)
	return found
}

// write writes the literal a clock function (code: its kind and precision digit) stands for in
// a sub-query: TIMESTAMP '…', DATE '…' or TIME '…' with the function's precision, or, in a
// session time zone obroute does not know, the instant converted by the server.
func (k *stmtClock) write(b *strings.Builder, code string) {
	var buf [clockLen]byte
	b.Write(k.appendLiteral(buf[:0], code[0], int(code[1]-'0')))
}

func (k *stmtClock) appendLiteral(b []byte, clock byte, prec int) []byte {
	at := k.at.UTC().Truncate(precisionUnit(prec))
	if clock == clockUnix {
		// NULLIF(n, NULL): one server types UNIX_TIMESTAMP() a nullable BIGINT, and a number
		// literal is NOT NULL.
		b = append(b, "nullif("...)
		b = strconv.AppendInt(b, at.Unix(), 10)
		return append(b, ", NULL)"...)
	}
	utc := clock == clockUTC || clock == clockUTCDate || clock == clockUTCTime
	if !utc && k.zone == nil {
		if clock != clockNow {
			b = append(b, "cast("...)
		}
		b = append(b, "convert_tz(TIMESTAMP'"...)
		b = appendDatetime(b, at, prec)
		b = append(b, "', '+00:00', @@session.time_zone)"...)
		switch clock {
		case clockDate:
			b = append(b, " as date)"...)
		case clockTime:
			b = append(b, " as time("...)
			b = append(b, byte('0'+prec), ')', ')')
		}
		return b
	}
	w := at
	if !utc {
		w = wallUTC(at.In(k.zone))
	}
	switch clock {
	case clockDate, clockUTCDate:
		b = appendDate(append(b, "DATE'"...), w)
	case clockTime, clockUTCTime:
		b = appendTimeOfDay(append(b, "TIME'"...), w, prec)
	default:
		b = appendDatetime(append(b, "TIMESTAMP'"...), w, prec)
	}
	return append(b, '\'')
}

// appendDatetime writes t as 'YYYY-MM-DD hh:mm:ss' with exactly prec fractional digits.
func appendDatetime(b []byte, t time.Time, prec int) []byte {
	return appendTimeOfDay(append(appendDate(b, t), ' '), t, prec)
}

// appendDate writes t's date as YYYY-MM-DD.
func appendDate(b []byte, t time.Time) []byte {
	y, mo, d := t.Date()
	return append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+mo/10), byte('0'+mo%10), '-', byte('0'+d/10), byte('0'+d%10))
}

// appendTimeOfDay writes t's time of day as hh:mm:ss with exactly prec fractional digits.
func appendTimeOfDay(b []byte, t time.Time, prec int) []byte {
	h, mi, s := t.Clock()
	b = append(b, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+s/10), byte('0'+s%10))
	if prec > 0 {
		b = append(b, '.')
		us := t.Nanosecond() / 1000
		for div := 100000; prec > 0; div, prec = div/10, prec-1 {
			b = append(b, byte('0'+us/div%10))
		}
	}
	return b
}

// wallUTC reads t's wall clock as a UTC time, the form of metadata times.
func wallUTC(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}
