package routing

import (
	"testing"
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

// FuzzParseTime checks that the fast literal reader agrees with the layout-based one.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"2025-03-01", "2025-03-01 10:00:00", "2025-03-01 10:00:00.123456", "2025-02-30", "2025-13-01", "2025-03-01T10:00:00", "9999-12-31 23:59:59"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, ok := parseTimeFast(s)
		if !ok {
			return
		}
		slow, err := parseTime(" " + s) // the leading space skips the fast path
		if err != nil || !slow.Equal(fast) {
			t.Fatalf("%q: fast %s, layouts %s (%v)", s, fast, slow, err)
		}
		if got := formatTime(fast); got[:10] != s[:10] {
			t.Fatalf("%q formats as %q", s, got)
		}
	})
}
