package routing

import (
	"database/sql/driver"
	"errors"
	"testing"
	"time"
)

// rangeOf analyses "SELECT … FROM orders o WHERE cond" and evaluates its shard-key range at
// the fixture's clock, in the client session's time zone sess.TimeZone (nil: none set).
func rangeOf(t *testing.T, f *fixture, cond string, a []driver.NamedValue) (string, error) {
	t.Helper()
	return rangeIn(t, f, nil, cond, a)
}

func rangeIn(t *testing.T, f *fixture, sess *SessionState, cond string, a []driver.NamedValue) (string, error) {
	t.Helper()
	st := f.r.Analyze("select id from orders o join users u on u.id = o.user_id where " + cond)
	if st.RouteErr != nil {
		return "", st.RouteErr
	}
	if st.ParseErr != nil {
		t.Fatalf("parse: %v", st.ParseErr)
	}
	clock := f.r.time.clockFor(f.now, sess)
	ec := evalCtx{args: f.r.time.rangeArgs(st.readArgs(a)), key: "order_time", clock: &clock}
	if st.time.conj {
		iv := everything
		if err := st.time.rng.evalConj(&iv, &ec); err != nil {
			return "", err
		}
		if iv.empty() {
			return rangeSet{}.String(), nil
		}
		return rangeSet{iv}.String(), nil
	}
	s, _, err := st.time.rng.eval(&ec)
	return s.String(), err
}

func TestRangeExtraction(t *testing.T) {
	f := standard(t)
	at := time.Date(2025, 3, 1, 10, 30, 0, 0, time.UTC)
	shanghai := time.FixedZone("CST", 8*3600)
	cases := []struct {
		name, cond string
		args       []driver.NamedValue
		want       string
	}{
		{"ge date", "order_time >= '2025-03-01'", nil, "[2025-03-01 00:00:00, +inf)"},
		{"gt datetime", "order_time > '2025-03-01 10:00:00'", nil, "(2025-03-01 10:00:00, +inf)"},
		{"lt", "order_time < '2025-03-01'", nil, "(-inf, 2025-03-01 00:00:00)"},
		{"date upper bound means midnight", "order_time <= '2025-03-31'", nil, "(-inf, 2025-03-31 00:00:00]"},
		{"eq", "order_time = '2025-03-01 10:00:00'", nil, "[2025-03-01 10:00:00, 2025-03-01 10:00:00]"},
		{"half open month", "order_time >= '2025-03-01' and order_time < '2025-04-01'", nil, "[2025-03-01 00:00:00, 2025-04-01 00:00:00)"},
		{"tightest bounds win", "order_time > '2025-01-01' and order_time >= '2025-02-01' and order_time < '2025-05-01' and order_time <= '2025-03-01'", nil, "[2025-02-01 00:00:00, 2025-03-01 00:00:00]"},
		{"equal bounds exclusive wins", "order_time >= '2025-02-01' and order_time > '2025-02-01'", nil, "(2025-02-01 00:00:00, +inf)"},
		{"between dates", "order_time between '2025-01-01' and '2025-01-31'", nil, "[2025-01-01 00:00:00, 2025-01-31 00:00:00]"},
		{"not between", "order_time not between '2025-01-01' and '2025-01-31'", nil, "(-inf, 2025-01-01 00:00:00) ∪ (2025-01-31 00:00:00, +inf)"},
		{"timestamp literal", "order_time >= timestamp '2025-03-01 10:00:00'", nil, "[2025-03-01 10:00:00, +inf)"},
		{"date literal", "order_time < date '2025-03-02'", nil, "(-inf, 2025-03-02 00:00:00)"},
		{"fractional seconds", "order_time <= '2025-03-01 10:00:00.250'", nil, "(-inf, 2025-03-01 10:00:00.25]"},
		{"flipped operands", "'2025-03-01' <= order_time", nil, "[2025-03-01 00:00:00, +inf)"},
		{"qualified by alias", "o.order_time >= '2025-03-01'", nil, "[2025-03-01 00:00:00, +inf)"},
		{"other table's column ignored", "u.order_time >= '2025-03-01'", nil, "(-inf, +inf)"},
		{"in list", "order_time in ('2025-03-02', '2025-01-05 08:00:00')", nil, "[2025-01-05 08:00:00, 2025-01-05 08:00:00] ∪ [2025-03-02 00:00:00, 2025-03-02 00:00:00]"},
		{"not in", "order_time not in ('2025-03-02')", nil, "(-inf, 2025-03-02 00:00:00) ∪ (2025-03-02 00:00:00, +inf)"},
		{"or of ranges", "order_time < '2024-08-01' or order_time >= '2025-03-01'", nil, "(-inf, 2024-08-01 00:00:00) ∪ [2025-03-01 00:00:00, +inf)"},
		{"or merges touching ranges", "(order_time >= '2025-01-01' and order_time < '2025-02-01') or (order_time >= '2025-02-01' and order_time < '2025-03-01')", nil, "[2025-01-01 00:00:00, 2025-03-01 00:00:00)"},
		{"or with an unbounded branch is unbounded", "order_time >= '2025-03-01' or status = 1", nil, "(-inf, +inf)"},
		{"and with an unrelated condition", "status = 1 and order_time >= '2025-03-01' and u.name like 'a%'", nil, "[2025-03-01 00:00:00, +inf)"},
		{"not of a bound", "not (order_time < '2025-03-01')", nil, "[2025-03-01 00:00:00, +inf)"},
		{"not of an inexact and is unbounded", "not (order_time < '2025-03-01' and status = 1)", nil, "(-inf, +inf)"},
		{"not of an or", "not (order_time < '2025-01-01' or order_time > '2025-02-01')", nil, "[2025-01-01 00:00:00, 2025-02-01 00:00:00]"},
		{"not equal", "order_time <> '2025-03-01' and order_time > '2025-02-01'", nil, "(2025-02-01 00:00:00, 2025-03-01 00:00:00) ∪ (2025-03-01 00:00:00, +inf)"},
		{"contradiction is empty", "order_time < '2025-01-01' and order_time > '2025-02-01'", nil, "(empty)"},
		{"args as strings", "order_time >= ? and order_time < ?", args("2025-01-10", "2025-02-01 12:00:00"), "[2025-01-10 00:00:00, 2025-02-01 12:00:00)"},
		{"arg as time.Time", "order_time >= ?", args(at), "[2025-03-01 10:30:00, +inf)"},
		{"time.Time arg in another zone is read in UTC", "order_time >= ?", args(at.In(shanghai)), "[2025-03-01 10:30:00, +inf)"},
		{"arg as bytes", "order_time < ?", args([]byte("2025-03-01 00:00:01")), "(-inf, 2025-03-01 00:00:01)"},
		{"between args", "order_time between ? and ?", args("2025-01-01", "2025-01-02"), "[2025-01-01 00:00:00, 2025-01-02 00:00:00]"},
		{"in args", "order_time in (?, ?)", args("2025-01-01", "2024-12-01"), "[2024-12-01 00:00:00, 2024-12-01 00:00:00] ∪ [2025-01-01 00:00:00, 2025-01-01 00:00:00]"},
		{"null arg matches nothing", "order_time = ?", args(nil), "(empty)"},
		{"arg indexes skip other placeholders", "status = ? and order_time >= ?", args(7, "2025-02-01"), "[2025-02-01 00:00:00, +inf)"},
		{"on condition of an inner join counts", "u.id > 0", nil, "(-inf, +inf)"},
		{"comparison with a column is unbounded", "order_time >= u.created_at", nil, "(-inf, +inf)"},
		{"now() in an unknown session time zone widens by 14 hours", "order_time >= now() - interval 7 day", nil, "[2025-03-07 22:00:00, +inf)"},
		{"is null is unbounded", "order_time is null", nil, "(-inf, +inf)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := rangeOf(t, f, c.cond, c.args)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if got != c.want {
				t.Errorf("range of %q\n got %s\nwant %s", c.cond, got, c.want)
			}
		})
	}
}

func TestRangeJoinOn(t *testing.T) {
	f := standard(t)
	for _, q := range []string{
		"select o.id from orders o join users u on u.id = o.user_id and o.order_time >= '2025-02-01'",
		"select o.id from users u join orders o on u.id = o.user_id where o.order_time >= '2025-02-01'",
		"select o.id from orders o left join users u on u.id = o.user_id where o.order_time >= '2025-02-01'",
	} {
		p, err := f.route(q, nil, Input{})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if p.Class != ClassHotOnly || len(p.Targets) != 1 || len(p.Targets[0].Tables) != 2 {
			t.Errorf("%s: class %s targets %+v, want orders_202502 and orders_202503 on hot", q, p.Class, p.Targets)
		}
	}
}

// Values obroute does not read exactly widen the range on their side; with no other bound the
// statement is refused for having no time range, and the message names the value and the fix.
func TestRangeErrors(t *testing.T) {
	f := standard(t)
	cases := []struct {
		cond string
		args []driver.NamedValue
		want error
		fix  string
	}{
		{"date(order_time) = '2025-03-15'", nil, ErrShardKeyFunction, "compare the column itself"},
		{"o.order_time + interval 1 day > '2025-03-15'", nil, ErrShardKeyFunction, "compare the column itself"},
		{"status = 1 and year(order_time) = 2025", nil, ErrShardKeyFunction, "compare the column itself"},
		{"order_time >= 'yesterday'", nil, ErrNoTimeRange, "'yesterday' is not a valid date and time"},
		{"order_time >= '2025-02-30'", nil, ErrNoTimeRange, "write it as 'YYYY-MM-DD hh:mm:ss'"},
		{"order_time >= ?", args(int64(42)), ErrNoTimeRange, "argument 1 (42) is not a valid date and time; pass a time.Time"},
		{"order_time >= ?", args(1.5), ErrNoTimeRange, "argument 1 (a float64)"},
		{"order_time >= ?", args("next week"), ErrNoTimeRange, `argument 1 ("next week")`},
		{"order_time >= sysdate()", nil, ErrNoTimeRange, "compare with NOW()"},
		{"order_time >= now() - interval ? day", args("x"), ErrNoTimeRange, "pass an integer"},
		{"order_time >= ?", nil, ErrBadTimeValue, "one argument per ?"},
	}
	for _, c := range cases {
		t.Run(c.cond, func(t *testing.T) {
			_, err := f.route("select id from orders o where "+c.cond, c.args, Input{})
			if !errors.Is(err, c.want) || !contains(err.Error(), c.fix) {
				t.Errorf("error %v, want %v saying %q", err, c.want, c.fix)
			}
		})
	}
}

func contains(s, sub string) bool { return len(sub) == 0 || len(s) >= len(sub) && indexOf(s, sub) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
