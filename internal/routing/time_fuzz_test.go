package routing

import (
	"testing"
	"time"
)

// FuzzTimeRoute routes arbitrary WHERE clauses over the time-sharded table: routing may refuse
// a statement, but must never panic, and a route always has targets.
func FuzzTimeRoute(f *testing.F) {
	for _, s := range []string{
		"order_time >= '2025-03-01' and order_time < '2025-04-01'",
		"order_time between ? and ? or order_time in ('2024-09-01', ?)",
		"not (order_time < '2025-01-01' or order_time > '2025-02-01 10:00:00.5')",
		"date(order_time) = '2025-03-15'",
		"order_time <> ? and order_time > timestamp '2024-12-31 23:59:59'",
		"o.order_time >= date '2025-02-30'",
		"order_time >= now() - interval 7 day and order_time < curdate() + interval ? month",
		"order_time between date_sub(utc_timestamp(6), interval 3 week) and timestampadd(hour, 2, now())",
		"not (order_time < 20250101 or status = 'paid') and order_time < cast(? as datetime(3))",
		"order_time in (20250301120000.5, '25/3/1', adddate(curdate(), -1)) or order_time <=> ?",
	} {
		f.Add(s, "2025-01-15 08:00:00")
	}
	fx := standard(f)
	f.Fuzz(func(t *testing.T, cond, arg string) {
		st := fx.r.Analyze("select id from orders o where " + cond)
		p, err := fx.r.Route(Input{Statement: st, Args: args(arg, arg, arg, arg)})
		if err == nil && len(p.Targets) == 0 {
			t.Fatalf("route without targets for %q", cond)
		}
	})
}

// FuzzReadDatetime reads arbitrary strings as DATETIME literals: never a panic, the usual forms
// read the same at fixed positions as by the general rules, and a value read prints back as a
// literal read as the same value.
func FuzzReadDatetime(f *testing.F) {
	for _, s := range []string{"2025-03-01", "2025-03-01 10:00:00", "2025-03-01 10:00:00.123456", "2025-02-30", "2025-13-01",
		"2025-03-01T10:00:00", "9999-12-31 23:59:59", "20250301", "250301", "20250301101500.5", "2025/3/1 1:2:3", " 25-03-01 ",
		"2025-03-01 10:00:00.1234567", "0000-00-00", "2025-03-01x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := readDatetimeString(s)
		// The usual forms are read at fixed positions; the general reading (which a leading space
		// sends s to) must agree.
		if c, ok := readCanonical(s); ok {
			if g := readDatetimeString(" " + s); g != c {
				t.Fatalf("%q: fixed positions read %+v, the general reading %+v", s, c, g)
			}
		}
		if !v.ok || v.lo.Year() < 1000 {
			return
		}
		if v.hi.Before(v.lo) || v.hi.Sub(v.lo) > time.Microsecond {
			t.Fatalf("%q: read as [%s, %s]", s, v.lo, v.hi)
		}
		back := readDatetimeString(formatTime(v.lo))
		if !back.ok || !back.lo.Equal(v.lo) || !back.hi.Equal(v.lo) {
			t.Fatalf("%q reads as %s, which prints as %q and reads back as %+v", s, v.lo, formatTime(v.lo), back)
		}
	})
}
