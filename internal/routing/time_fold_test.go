package routing

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"testing"
	"time"
)

// foldClock is the statement clock of the folding tests.
var foldClock = time.Date(2026, 11, 30, 10, 0, 0, 654321000, time.UTC)

// foldFixture is the standard fixture with the clock at foldClock, the backends' default time
// zone SYSTEM, which is UTC, and named zones from Go's zone database.
func foldFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixtureWith(t, ordersTable(), monthlyTables("2024-07-01", "2025-03-01", "2025-01-01"), "2025-03-15", func(c *TimeConfig) {
		c.TimeZone, c.SystemTimeZone, c.LoadZone = "SYSTEM", time.UTC, time.LoadLocation
	})
	f.now = foldClock
	return f
}

// TestFoldedRanges reads ranges written with the clock, INTERVAL arithmetic, conversions,
// numbers and NOT, at 2026-11-30 10:00:00.654321 UTC in the session's time zone. The expected
// ranges are worked out by hand.
func TestFoldedRanges(t *testing.T) {
	f := foldFixture(t)
	cases := []struct {
		tz, cond string
		args     []driver.NamedValue
		want     string
	}{
		// The clock, in the session's time zone.
		{"", "order_time >= now() - interval 7 day", nil, "[2026-11-23 10:00:00, +inf)"},
		{"+08:00", "order_time >= now() - interval 7 day", nil, "[2026-11-23 18:00:00, +inf)"},
		{"-05:30", "order_time >= NOW() - INTERVAL 7 DAY", nil, "[2026-11-23 04:30:00, +inf)"},
		{"Asia/Shanghai", "order_time >= now()", nil, "[2026-11-30 18:00:00, +inf)"},
		{"SYSTEM", "order_time >= now()", nil, "[2026-11-30 10:00:00, +inf)"},
		{"", "order_time >= now(6) - interval 7 day", nil, "[2026-11-23 10:00:00.654321, +inf)"},
		{"", "order_time >= now(3)", nil, "[2026-11-30 10:00:00.654, +inf)"},
		{"", "order_time >= current_timestamp - interval 1 second", nil, "[2026-11-30 09:59:59, +inf)"},
		{"", "order_time >= current_timestamp() - interval 1 second", nil, "[2026-11-30 09:59:59, +inf)"},
		{"", "order_time >= current_timestamp(6) - interval 654321 microsecond", nil, "[2026-11-30 10:00:00, +inf)"},
		{"", "order_time >= localtimestamp and order_time < localtime(2) + interval 1 minute", nil, "[2026-11-30 10:00:00, 2026-11-30 10:01:00.65)"},
		{"", "order_time >= curdate() - interval 1 month", nil, "[2026-10-30 00:00:00, +inf)"},
		{"", "order_time >= current_date", nil, "[2026-11-30 00:00:00, +inf)"},
		{"-12:00", "order_time >= current_date()", nil, "[2026-11-29 00:00:00, +inf)"},
		{"+13:00", "order_time >= curdate()", nil, "[2026-11-30 00:00:00, +inf)"},
		{"+08:00", "order_time >= utc_timestamp() - interval 1 day", nil, "[2026-11-29 10:00:00, +inf)"},
		{"-05:00", "order_time >= utc_timestamp", nil, "[2026-11-30 10:00:00, +inf)"},
		{"-12:00", "order_time >= utc_date()", nil, "[2026-11-30 00:00:00, +inf)"},
		{"", "order_time between now() - interval 1 day and now()", nil, "[2026-11-29 10:00:00, 2026-11-30 10:00:00]"},
		{"", "order_time in (curdate(), curdate() - interval 1 day)", nil, "[2026-11-29 00:00:00, 2026-11-29 00:00:00] ∪ [2026-11-30 00:00:00, 2026-11-30 00:00:00]"},
		// INTERVAL arithmetic: every unit, every way of writing it, months ending on the last day.
		{"", "order_time >= '2026-03-31' - interval 1 month", nil, "[2026-02-28 00:00:00, +inf)"},
		{"", "order_time >= '2024-03-31' - interval 1 month", nil, "[2024-02-29 00:00:00, +inf)"},
		{"", "order_time >= '2024-02-29' + interval 1 year", nil, "[2025-02-28 00:00:00, +inf)"},
		{"", "order_time >= '2026-01-31 10:00:00' + interval 1 quarter", nil, "[2026-04-30 10:00:00, +inf)"},
		{"", "order_time >= date_sub(now(), interval 3 day)", nil, "[2026-11-27 10:00:00, +inf)"},
		{"", "order_time < date_add(now(), interval 2 hour)", nil, "(-inf, 2026-11-30 12:00:00)"},
		{"", "order_time >= date_add(curdate(), interval -1 week)", nil, "[2026-11-23 00:00:00, +inf)"},
		{"", "order_time >= adddate(curdate(), -3)", nil, "[2026-11-27 00:00:00, +inf)"},
		{"", "order_time >= subdate(now(), interval 1 week)", nil, "[2026-11-23 10:00:00, +inf)"},
		{"", "order_time >= subdate(curdate(), 31)", nil, "[2026-10-30 00:00:00, +inf)"},
		{"", "order_time >= timestampadd(minute, -90, now())", nil, "[2026-11-30 08:30:00, +inf)"},
		{"", "order_time >= interval -1 quarter + curdate()", nil, "[2026-08-30 00:00:00, +inf)"},
		{"", "order_time >= now() - interval '2' year", nil, "[2024-11-30 10:00:00, +inf)"},
		{"", "order_time >= now() - interval 86400 second", nil, "[2026-11-29 10:00:00, +inf)"},
		{"", "order_time >= now() - interval (1) day", nil, "[2026-11-29 10:00:00, +inf)"},
		{"", "order_time >= now() - interval ? day", args(int64(7)), "[2026-11-23 10:00:00, +inf)"},
		{"", "order_time >= now() - interval ? day", args("7"), "[2026-11-23 10:00:00, +inf)"},
		{"", "order_time >= date_add(now(), interval -? month)", args(int64(2)), "[2026-09-30 10:00:00, +inf)"},
		{"", "order_time >= now() - interval ? day", args(nil), "(empty)"},
		// Constant conversions.
		{"", "order_time >= cast('2026-09-01' as datetime)", nil, "[2026-09-01 00:00:00, +inf)"},
		{"", "order_time >= cast('2026-09-01 10:00:00.7' as datetime)", nil, "[2026-09-01 10:00:00, +inf)"},
		{"", "order_time < cast('2026-09-01 10:00:00.7' as datetime)", nil, "(-inf, 2026-09-01 10:00:01)"},
		{"", "order_time >= cast('2026-09-01 10:00:00.7' as datetime(1))", nil, "[2026-09-01 10:00:00.7, +inf)"},
		{"", "order_time >= cast('2026-09-01 10:20' as date)", nil, "[2026-09-01 00:00:00, +inf)"},
		{"", "order_time >= convert('2026/09/01', datetime)", nil, "[2026-09-01 00:00:00, +inf)"},
		{"", "order_time >= timestamp('2026-09-01')", nil, "[2026-09-01 00:00:00, +inf)"},
		{"", "order_time >= date('2026-09-01 10:20:30')", nil, "[2026-09-01 00:00:00, +inf)"},
		{"", "order_time >= cast(now() as date)", nil, "[2026-11-30 00:00:00, +inf)"},
		{"", "order_time >= cast(? as datetime)", args("2026-09-01 10:00:00"), "[2026-09-01 10:00:00, +inf)"},
		// Numbers and literal formats beside each other: no bound is ignored.
		{"", "order_time >= 20261001000000 and order_time < '2026-11-01'", nil, "[2026-10-01 00:00:00, 2026-11-01 00:00:00)"},
		{"", "order_time >= 20261001 and order_time < '2026/11/01'", nil, "[2026-10-01 00:00:00, 2026-11-01 00:00:00)"},
		{"", "order_time > '2026-10-01 10:00:00.1234567' and order_time < '20261101'", nil, "(2026-10-01 10:00:00.123456, 2026-11-01 00:00:00)"},
		{"", "order_time <= '2026-10-01 10:00:00.1234567'", nil, "(-inf, 2026-10-01 10:00:00.123457]"},
		{"", "order_time = ?", args(int64(20261001)), "[2026-10-01 00:00:00, 2026-10-01 00:00:00]"},
		{"", "order_time = ?", args("2026/10/01 12:00"), "[2026-10-01 12:00:00, 2026-10-01 12:00:00]"},
		{"", "order_time = ?", args([]byte("20261001120000")), "[2026-10-01 12:00:00, 2026-10-01 12:00:00]"},
		// NOT, read in three-valued logic.
		{"", "not (order_time < '2026-10-01' or status = 'paid') and order_time < '2026-11-01'", nil, "[2026-10-01 00:00:00, 2026-11-01 00:00:00)"},
		{"", "not (order_time < '2026-10-01' and status = 'paid') and order_time < '2026-11-01'", nil, "(-inf, 2026-11-01 00:00:00)"},
		{"", "not (not (order_time >= '2026-10-01')) and order_time < '2026-11-01'", nil, "[2026-10-01 00:00:00, 2026-11-01 00:00:00)"},
		{"", "not (order_time >= '2026-11-01') and order_time >= '2026-10-01'", nil, "[2026-10-01 00:00:00, 2026-11-01 00:00:00)"},
		{"", "not (order_time not between '2026-10-01' and '2026-10-31')", nil, "[2026-10-01 00:00:00, 2026-10-31 00:00:00]"},
		{"", "not (order_time not in ('2026-10-01', 20261002))", nil, "[2026-10-01 00:00:00, 2026-10-01 00:00:00] ∪ [2026-10-02 00:00:00, 2026-10-02 00:00:00]"},
		{"", "not (order_time in ('2026-10-01', null)) and order_time >= '2026-09-01'", nil, "(empty)"},
		{"", "not (order_time between null and '2026-10-01') and order_time < '2026-11-01'", nil, "(2026-10-01 00:00:00, 2026-11-01 00:00:00)"},
		{"", "not (order_time < now() - interval 30 day or user_id = 3)", nil, "[2026-10-31 10:00:00, +inf)"},
		// Values not read widen their side only.
		{"", "order_time >= '2026-10-01' and order_time < sysdate()", nil, "[2026-10-01 00:00:00, +inf)"},
		{"", "order_time >= '2026-02-30' and order_time < '2026-11-01'", nil, "(-inf, 2026-11-01 00:00:00)"},
		{"", "order_time >= '9999-12-31' + interval 1 day and order_time < '2026-11-01'", nil, "(-inf, 2026-11-01 00:00:00)"},
		{"", "order_time >= now() - interval 1.5 day and order_time < '2026-11-01'", nil, "(-inf, 2026-11-01 00:00:00)"},
		{"", "order_time >= now() - interval ? day and order_time < '2026-11-01'", args(1.5), "(-inf, 2026-11-01 00:00:00)"},
		{"Mars/Olympus", "order_time >= now() - interval 7 day", nil, "[2026-11-22 20:00:00, +inf)"},
	}
	for _, c := range cases {
		t.Run(c.tz+" "+c.cond, func(t *testing.T) {
			got, err := rangeIn(t, f, &SessionState{TimeZone: c.tz}, c.cond, c.args)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if got != c.want {
				t.Errorf("range of %q in time zone %q\n got %s\nwant %s", c.cond, c.tz, got, c.want)
			}
		})
	}
}

// TestUnknownTimeZoneWidens reads NOW() when the backends' default time zone is unknown: any
// wall clock within 14 hours of UTC.
func TestUnknownTimeZoneWidens(t *testing.T) {
	f := standard(t)
	f.now = foldClock
	for _, c := range []struct{ tz, cond, want string }{
		{"", "order_time >= now() - interval 7 day", "[2026-11-22 20:00:00, +inf)"},
		{"", "order_time < now() - interval 7 day", "(-inf, 2026-11-24 00:00:00)"},
		{"", "order_time >= curdate()", "[2026-11-29 00:00:00, +inf)"},
		{"SYSTEM", "order_time < curdate()", "(-inf, 2026-12-01 00:00:00)"},
		{"", "order_time >= utc_timestamp()", "[2026-11-30 10:00:00, +inf)"},
		{"+02:00", "order_time >= now()", "[2026-11-30 12:00:00, +inf)"},
	} {
		got, err := rangeIn(t, f, &SessionState{TimeZone: c.tz}, c.cond, nil)
		if err != nil || got != c.want {
			t.Errorf("%q in time zone %q: %s (%v), want %s", c.cond, c.tz, got, err, c.want)
		}
	}
}

// foldedExprs are constant time expressions with the session time zone they are read in,
// checked against MariaDB's own evaluation at the same instant.
var foldedExprs = []struct{ tz, expr string }{
	{"+00:00", "now()"}, {"+08:00", "now()"}, {"-05:30", "now(6)"}, {"+13:00", "now(3)"}, {"-12:59", "curdate()"},
	{"+00:00", "current_timestamp"}, {"+08:00", "current_date"}, {"+08:00", "localtimestamp(4)"}, {"+08:00", "utc_timestamp(6)"},
	{"-03:00", "utc_date()"}, {"+00:00", "now() - interval 7 day"}, {"+08:00", "curdate() - interval 1 month"},
	{"+00:00", "'2026-03-31' - interval 1 month"}, {"+00:00", "'2024-03-31' - interval 1 month"}, {"+00:00", "'2024-02-29' + interval 1 year"},
	{"+00:00", "'2024-02-29' - interval 4 year"}, {"+00:00", "'2026-01-31 10:00:00' + interval 1 quarter"}, {"+00:00", "'2026-12-31' + interval 2 month"},
	{"+00:00", "date_sub(now(), interval 3 day)"}, {"+00:00", "date_add(now(6), interval -1234567 microsecond)"},
	{"+00:00", "adddate(curdate(), -3)"}, {"+00:00", "subdate(now(), interval 1 week)"}, {"+00:00", "timestampadd(minute, -90, now())"},
	{"+00:00", "interval -1 quarter + curdate()"}, {"+00:00", "now() - interval 100000 hour"}, {"+00:00", "now() - interval 3000000 minute"},
	{"+00:00", "now() + interval 86399 second"}, {"+00:00", "'2026-03-01' - interval 1 day"}, {"+00:00", "'2028-02-28' + interval 1 day"},
	{"+00:00", "'2100-02-28' + interval 1 day"}, {"+00:00", "'2000-02-28' + interval 1 day"}, {"+00:00", "'2026-05-31' - interval 3 month"},
	{"+00:00", "cast('2026-09-01' as datetime)"}, {"+00:00", "cast('2026-09-01 10:20:30' as date)"}, {"+00:00", "convert('2026/09/01 10.20', datetime)"},
	{"+00:00", "timestamp('20260901')"}, {"+00:00", "date('2026-09-01 10:20:30')"}, {"+08:00", "cast(now() as date)"},
	{"+00:00", "'26-9-1 1:2:3' + interval 1 hour"}, {"+00:00", "20261001000000 - interval 1 second"}, {"+00:00", "20260901 + interval 1 month"},
	{"+00:00", "cast('2026-09-01 10:00:00.123456' as datetime(6)) - interval 1 year"},
}

// TestFoldingOnMariaDB folds each of foldedExprs and asks MariaDB for the same expression, with
// its clock at the same instant (SET TIMESTAMP) and the same session time zone.
func TestFoldingOnMariaDB(t *testing.T) {
	ctx := context.Background()
	conn := probeSession(t, "fold")
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("SET timestamp = %d.%06d", foldClock.Unix(), foldClock.Nanosecond()/1000)); err != nil {
		t.Fatal(err)
	}
	f := foldFixture(t)
	for _, c := range foldedExprs {
		got, err := rangeIn(t, f, &SessionState{TimeZone: c.tz}, "order_time = "+c.expr, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		if _, err := conn.ExecContext(ctx, "SET time_zone = '"+c.tz+"'"); err != nil {
			t.Fatal(err)
		}
		var v string
		if err := conn.QueryRowContext(ctx, "SELECT DATE_FORMAT(CAST("+c.expr+" AS DATETIME(6)), '%Y-%m-%d %H:%i:%s.%f')").Scan(&v); err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		d := readDatetimeString(v)
		want := rangeSet{{lo: bound{t: d.lo, set: true, incl: true}, hi: bound{t: d.lo, set: true, incl: true}}}.String()
		if got != want {
			t.Errorf("%s in time zone %s: obroute folds %s, MariaDB gives %s", c.expr, c.tz, got, v)
		}
	}
}

// TestClockSentToSubQueries: every clock function of a statement on a time-sharded table is sent
// to every sub-query as the statement's instant, to its precision, in the session's time zone
// (or converted by the server when obroute does not know the zone); a select item keeps the name
// it was written with; SYSDATE() is left to the server. The clock is 2025-03-15 10:20:30.654321
// UTC, 18:20:30.654321 in +08:00, Unix time 1742034030.
func TestClockSentToSubQueries(t *testing.T) {
	f := foldFixture(t)
	f.now = time.Date(2025, 3, 15, 10, 20, 30, 654321000, time.UTC)
	const q = "select id, now(), NOW(6), curdate(), utc_timestamp(3), curtime(), unix_timestamp(), sysdate() from orders where order_time >= now() - interval 3 month"
	cases := []struct{ tz, cold string }{
		{"+08:00", "/* cold_query */ select id, TIMESTAMP'2025-03-15 18:20:30' as `now()`, TIMESTAMP'2025-03-15 18:20:30.654321' as `NOW(6)`, DATE'2025-03-15' as `curdate()`, " +
			"TIMESTAMP'2025-03-15 10:20:30.654' as `utc_timestamp(3)`, TIME'18:20:30' as `curtime()`, nullif(1742034030, NULL) as `unix_timestamp()`, sysdate() from orders_202412 " +
			"where order_time >= TIMESTAMP'2025-03-15 18:20:30' - interval 3 month and orders_202412.order_time >= '2024-12-01 00:00:00' and orders_202412.order_time < '2025-01-01 00:00:00'"},
		{"Mars/Olympus", "/* cold_query */ select id, convert_tz(TIMESTAMP'2025-03-15 10:20:30', '+00:00', @@session.time_zone) as `now()`, " +
			"convert_tz(TIMESTAMP'2025-03-15 10:20:30.654321', '+00:00', @@session.time_zone) as `NOW(6)`, " +
			"cast(convert_tz(TIMESTAMP'2025-03-15 10:20:30', '+00:00', @@session.time_zone) as date) as `curdate()`, TIMESTAMP'2025-03-15 10:20:30.654' as `utc_timestamp(3)`, " +
			"cast(convert_tz(TIMESTAMP'2025-03-15 10:20:30', '+00:00', @@session.time_zone) as time(0)) as `curtime()`, nullif(1742034030, NULL) as `unix_timestamp()`, sysdate() from orders_202412 " +
			"where order_time >= convert_tz(TIMESTAMP'2025-03-15 10:20:30', '+00:00', @@session.time_zone) - interval 3 month and orders_202412.order_time >= '2024-12-01 00:00:00' and orders_202412.order_time < '2025-01-01 00:00:00'"},
	}
	for _, c := range cases {
		p, err := f.route(q, nil, Input{Session: &SessionState{TimeZone: c.tz}})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Targets) != 2 || p.Targets[0].SQL != c.cold {
			t.Errorf("time zone %s: targets %+v\nwant the cold one\n%s", c.tz, p.Targets, c.cold)
		}
		for _, tg := range p.Targets[1:] {
			// now(), NOW(6), curtime() and the condition's now() in each of 3 legs.
			if n := strings.Count(tg.SQL, "18:20:30"); c.tz == "+08:00" && n != 3*4 {
				t.Errorf("hot sub-query has the instant %d times, want 12: %s", n, tg.SQL)
			}
		}
	}
	p, err := f.route("insert into orders (id, order_time) values (1, now()), (2, utc_timestamp(6))", nil, Input{Session: &SessionState{TimeZone: "+08:00"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "insert into orders_202503(id, order_time) values (1, TIMESTAMP'2025-03-15 18:20:30'), (2, TIMESTAMP'2025-03-15 10:20:30.654321')"
	if len(p.Targets) != 1 || p.Targets[0].SQL != want {
		t.Errorf("insert: targets %+v, want %s", p.Targets, want)
	}
}

// TestExplainFoldedRange: EXPLAIN ROUTE says how a folded range was read and the instant sent to
// the sub-queries. At 2026-11-30 02:00:00 UTC in the session's time zone +08:00, NOW() is
// 2026-11-30 10:00:00 and NOW() - INTERVAL 7 DAY reads [2026-11-23 10:00:00, +inf).
func TestExplainFoldedRange(t *testing.T) {
	f := newFixture(t, ordersTable(), monthlyTables("2026-06-01", "2026-11-01", "2026-09-01"), "2026-11-30 02:00:00")
	p, err := f.route("SELECT id FROM orders WHERE order_time >= NOW() - INTERVAL 7 DAY AND order_time < '2027-01-01' AND status <> '2026-02-30'", nil, Input{Session: &SessionState{TimeZone: "+08:00"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"range [2026-11-23 10:00:00, 2027-01-01 00:00:00) on order_time: 1 hot table(s), level L1",
		"did not touch the history store",
		"folded in time zone +08:00: NOW() = 2026-11-30 10:00:00; NOW() - interval 7 DAY = 2026-11-23 10:00:00",
		"statement clock 2026-11-30 02:00:00 UTC, read once for the range and sent to every sub-query: NOW() as TIMESTAMP'2026-11-30 10:00:00', CURDATE() as DATE'2026-11-30' (time zone +08:00)",
	}
	if strings.Join(p.Prompts, "\n") != strings.Join(want, "\n") {
		t.Errorf("prompts\n%s\nwant\n%s", strings.Join(p.Prompts, "\n"), strings.Join(want, "\n"))
	}
	if len(p.Targets) != 1 || !strings.Contains(p.Targets[0].SQL, "where order_time >= TIMESTAMP'2026-11-30 10:00:00' - interval 7 DAY") {
		t.Errorf("targets %+v", p.Targets)
	}
	p, err = f.route("SELECT id FROM orders WHERE order_time >= '2026-02-30' AND order_time < '2026-11-01'", nil, Input{})
	if err != nil {
		t.Fatal(err)
	}
	if w := "range widened, never narrowed: '2026-02-30' is not a valid date and time"; !strings.Contains(strings.Join(p.Prompts, "\n"), w) {
		t.Errorf("prompts %q do not say %q", p.Prompts, w)
	}
}
