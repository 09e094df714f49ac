package difftest

import (
	"fmt"
	"strings"
	"time"
)

// RangeConfig describes the data and the clock of the time-range queries.
type RangeConfig struct {
	// Table is the logical table, e.g. "orders"; its shard key is order_time.
	Table string
	// From, To bound the data's times; ranges are drawn a little beyond them.
	From, To time.Time
	// Now is the statement clock, the instant NOW() stands for (UTC). The reference session
	// must evaluate the same NOW() (SET TIMESTAMP) for the results to be compared.
	Now time.Time
	// Zone is the client session's time zone, in which NOW() and CURDATE() are read; nil is UTC.
	// It only steers the drawn interval counts toward the data, never what is compared.
	Zone *time.Location
}

// RangeGenerator draws queries whose shard-key range is written the ways BI tools and people
// write it: relative to NOW() or CURDATE() (INTERVAL arithmetic, DATE_SUB, DATE_ADD,
// ADDDATE, SUBDATE, TIMESTAMPADD, CURRENT_TIMESTAMP, UTC_TIMESTAMP(), …), constant CASTs and
// TIMESTAMP(…), every literal format MySQL reads as a DATETIME (other delimiters, no delimiters,
// unpadded parts, two-digit years, 'T', fractions, numbers), bounds under NOT (De Morgan), and
// bound ? arguments of several types. Each query's range is bounded, so a correct router
// answers every one of them.
type RangeGenerator struct {
	draw
	cfg RangeConfig
	key string
	// forms are the forms of the bounds of the query being drawn: relative, constant, literal.
	forms map[string]bool
}

// NewRangeGenerator returns a generator of time-range queries for seed.
func NewRangeGenerator(seed uint64, cfg RangeConfig) *RangeGenerator {
	if cfg.Zone == nil {
		cfg.Zone = time.UTC
	}
	return &RangeGenerator{draw: newDraw(seed, 0x7a3e), cfg: cfg}
}

// Next returns the next query. Its Kind names the shape of its condition ("relative",
// "literal", "not", …), for reports.
func (g *RangeGenerator) Next() Query {
	table := g.cfg.Table
	g.key = "order_time"
	if g.rng.IntN(6) == 0 {
		table += " o"
		g.key = "o.order_time"
	}
	var q Query
	g.forms = map[string]bool{}
	shape, cond := g.cond(&q.Args)
	q.Kind = shape
	for _, f := range []string{"relative", "constant", "literal"} {
		if g.forms[f] {
			q.Kind += "+" + f
		}
	}
	from := " FROM " + table + " WHERE " + cond
	switch g.rng.IntN(5) {
	case 0, 1:
		q.SQL = "SELECT id, user_id, amount, status, order_time" + from + " ORDER BY id"
		q.Ordered = true
	case 2:
		q.SQL = "SELECT COUNT(*), SUM(amount), MIN(order_time), MAX(order_time)" + from
	case 3:
		// The clock in the select list: every sub-query must show the same instant, under the
		// column name and type one server gives it.
		q.SQL = "SELECT id, " + g.pick1("NOW()", "CURRENT_TIMESTAMP", "now(6)", "CURDATE()", "UTC_TIMESTAMP()", "CURRENT_DATE", "LOCALTIMESTAMP(3)") +
			", order_time >= NOW() - INTERVAL 30 DAY AS recent" + from + " ORDER BY id"
		q.Ordered = true
	default:
		q.SQL = "SELECT id" + from + " ORDER BY order_time DESC, id LIMIT 20"
		q.Ordered = true
	}
	return q
}

func (g *RangeGenerator) pick1(items ...string) string { return items[g.rng.IntN(len(items))] }

// cond draws a bounded condition on the shard key and names its shape: bounds, not, or, in,
// widened.
func (g *RangeGenerator) cond(args *[]any) (string, string) {
	k := g.key
	a, b := g.point(), g.point()
	if b.Before(a) {
		a, b = b, a
	}
	lo := func() string { return g.bound(a, args) }
	hi := func() string { return g.bound(b, args) }
	switch n := g.rng.IntN(16); n {
	case 0, 1, 2:
		return "bounds", fmt.Sprintf("%s %s %s AND %s %s %s", k, g.pick1(">=", ">"), lo(), k, g.pick1("<", "<="), hi())
	case 3:
		return "bounds", fmt.Sprintf("%s BETWEEN %s AND %s", k, lo(), hi())
	case 4:
		// One side only: the other is open, which still bounds the range.
		if g.rng.IntN(2) == 0 {
			return "bounds", fmt.Sprintf("%s %s %s", k, g.pick1(">=", ">"), lo())
		}
		return "bounds", fmt.Sprintf("%s %s %s", k, g.pick1("<", "<="), hi())
	case 5:
		return "not", fmt.Sprintf("NOT (%s < %s OR status = 'paid') AND %s < %s", k, lo(), k, hi())
	case 6:
		return "not", fmt.Sprintf("NOT (%s >= %s) AND %s >= %s", k, hi(), k, lo())
	case 7:
		return "not", fmt.Sprintf("NOT (%s < %s) AND NOT (%s > %s)", k, lo(), k, hi())
	case 8:
		return "not", fmt.Sprintf("NOT (%s NOT BETWEEN %s AND %s)", k, lo(), hi())
	case 9:
		return "not", fmt.Sprintf("NOT (%s < %s OR %s >= %s) AND user_id > 3", k, lo(), k, hi())
	case 10:
		return "not", fmt.Sprintf("NOT (NOT (%s >= %s)) AND %s < %s", k, lo(), k, hi())
	case 11:
		return "not", fmt.Sprintf("%s >= %s AND %s < %s AND NOT (status = 'paid' AND %s < %s)", k, lo(), k, hi(), k, g.bound(a.Add(b.Sub(a)/2), args))
	case 12:
		c, d := g.point(), g.point()
		if d.Before(c) {
			c, d = d, c
		}
		return "or", fmt.Sprintf("(%s >= %s AND %s < %s) OR (%s > %s AND %s <= %s)", k, lo(), k, hi(), k, g.bound(c, args), k, g.bound(d, args))
	case 13:
		vals := make([]string, 1+g.rng.IntN(3))
		for i := range vals {
			vals[i] = g.literal(g.point(), args)
		}
		return "in", fmt.Sprintf("%s IN (%s)", k, strings.Join(vals, ", "))
	case 14:
		return "in", fmt.Sprintf("NOT (%s NOT IN (%s, %s))", k, g.literal(a, args), g.literal(b, args))
	default:
		// A bound obroute cannot read exactly beside one it reads: an invalid date MariaDB still
		// compares, trailing characters, STR_TO_DATE, SYSDATE() (every row of the data is before
		// the machine's clock). The range widens on that side; the rows stay the same.
		switch g.rng.IntN(4) {
		case 0:
			return "widened", fmt.Sprintf("%s >= '%04d-02-30' AND %s < %s", k, a.Year(), k, hi())
		case 1:
			return "widened", fmt.Sprintf("%s > %s AND %s <= '%04d-%02d-%02d 10:00:00abc'", k, lo(), k, b.Year(), b.Month(), b.Day())
		case 2:
			return "widened", fmt.Sprintf("%s >= STR_TO_DATE('%02d/%02d/%04d', '%%d/%%m/%%Y') AND %s < %s", k, a.Day(), a.Month(), a.Year(), k, hi())
		}
		return "widened", fmt.Sprintf("%s >= %s AND %s < SYSDATE()", k, lo(), k)
	}
}

// point draws a time near the data, or near now.
func (g *RangeGenerator) point() time.Time {
	c := g.cfg
	if g.rng.IntN(3) == 0 {
		return c.Now.In(c.Zone).Add(-time.Duration(g.rng.Int64N(int64(100*24*time.Hour/time.Second))) * time.Second)
	}
	span := c.To.Sub(c.From) + 20*24*time.Hour
	return c.From.Add(-10*24*time.Hour + time.Duration(g.rng.Int64N(int64(span/time.Second)))*time.Second)
}

// bound renders a time as one of the forms a range is written in.
func (g *RangeGenerator) bound(t time.Time, args *[]any) string {
	switch g.rng.IntN(7) {
	case 0, 1:
		return g.relative(t, args)
	case 2, 3:
		return g.constant(t, args)
	case 4:
		return g.monthEnd(t)
	}
	return g.literal(t, args)
}

// monthEnd writes a time near t as calendar arithmetic from the last day of a month, where
// adding months ends on the last day of a shorter month: '2024-10-31' - INTERVAL 1 MONTH is
// 2024-09-30.
func (g *RangeGenerator) monthEnd(t time.Time) string {
	g.forms["relative"] = true
	n := 1 + g.rng.IntN(3)
	end := time.Date(t.Year(), t.Month()+time.Month(n)+1, 0, 0, 0, 0, 0, time.UTC) // last day, n months on
	unit, count := "MONTH", n
	if n == 3 && g.rng.IntN(2) == 0 {
		unit, count = "QUARTER", 1
	}
	return fmt.Sprintf("'%s' - INTERVAL %d %s", end.Format(time.DateOnly), count, unit)
}

// units of INTERVAL, with their length for choosing a count near a target time.
var rangeUnits = []struct {
	name string
	d    time.Duration
}{
	{"DAY", 24 * time.Hour}, {"DAY", 24 * time.Hour}, {"HOUR", time.Hour}, {"MINUTE", time.Minute},
	{"SECOND", time.Second}, {"WEEK", 7 * 24 * time.Hour}, {"MONTH", 30 * 24 * time.Hour},
	{"MONTH", 30 * 24 * time.Hour}, {"QUARTER", 91 * 24 * time.Hour}, {"YEAR", 365 * 24 * time.Hour},
	{"MICROSECOND", time.Microsecond},
}

// relative writes a time near t as the clock plus or minus an interval.
func (g *RangeGenerator) relative(t time.Time, args *[]any) string {
	g.forms["relative"] = true
	now := g.cfg.Now
	base := g.pick1("NOW()", "NOW()", "CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP()", "NOW(6)", "LOCALTIMESTAMP", "LOCALTIME(3)",
		"CURDATE()", "CURDATE()", "CURRENT_DATE", "CURRENT_DATE()", "UTC_TIMESTAMP()", "UTC_TIMESTAMP", "UTC_DATE()", "CURRENT_TIMESTAMP(6)")
	u := rangeUnits[g.rng.IntN(len(rangeUnits))]
	back := now.Sub(t)
	n := int64(back / u.d)
	if u.name == "MICROSECOND" {
		n = int64(g.rng.IntN(3_000_000))
	}
	if n > 1_000_000_000 {
		n = 1_000_000_000
	}
	if n == 0 && g.rng.IntN(3) == 0 {
		return base
	}
	// count is n, minus is -n, as literals or as the same ? argument.
	count, minus := fmt.Sprint(n), fmt.Sprint(-n)
	if g.rng.IntN(5) == 0 {
		*args = append(*args, n)
		count, minus = "?", "-?"
	}
	switch g.rng.IntN(8) {
	case 0:
		return fmt.Sprintf("DATE_SUB(%s, INTERVAL %s %s)", base, count, u.name)
	case 1:
		return fmt.Sprintf("DATE_ADD(%s, INTERVAL %s %s)", base, minus, u.name)
	case 2:
		if u.name == "DAY" && count != "?" {
			return fmt.Sprintf("SUBDATE(%s, %s)", base, count)
		}
		return fmt.Sprintf("SUBDATE(%s, INTERVAL %s %s)", base, count, u.name)
	case 3:
		return fmt.Sprintf("ADDDATE(%s, INTERVAL %s %s)", base, minus, u.name)
	case 4:
		return fmt.Sprintf("TIMESTAMPADD(%s, %s, %s)", u.name, minus, base)
	case 5:
		return fmt.Sprintf("INTERVAL %s %s + %s", minus, u.name, base)
	}
	return fmt.Sprintf("%s - INTERVAL %s %s", base, count, u.name)
}

// constant writes t as a constant conversion: CAST, CONVERT, TIMESTAMP(), DATE().
func (g *RangeGenerator) constant(t time.Time, args *[]any) string {
	g.forms["constant"] = true
	s := t.Format(time.DateTime)
	switch g.rng.IntN(7) {
	case 0:
		return "CAST('" + s + "' AS DATETIME)"
	case 1:
		return "CAST('" + t.Format(time.DateOnly) + "' AS DATE)"
	case 2:
		return "CAST('" + s + ".654321' AS DATETIME(6))"
	case 3:
		return "CONVERT('" + s + "', DATETIME)"
	case 4:
		return "TIMESTAMP('" + s + "')"
	case 5:
		return "DATE('" + s + "')"
	}
	*args = append(*args, s)
	return "CAST(? AS DATETIME)"
}

// literal writes t in one of the formats MySQL and MariaDB read as a DATETIME, as a literal or
// a ? argument.
func (g *RangeGenerator) literal(t time.Time, args *[]any) string {
	g.forms["literal"] = true
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	str := func(v string) string {
		if g.rng.IntN(4) == 0 {
			*args = append(*args, v)
			return "?"
		}
		return "'" + v + "'"
	}
	num := func(v int64) string {
		if g.rng.IntN(4) == 0 {
			*args = append(*args, v)
			return "?"
		}
		return fmt.Sprint(v)
	}
	switch g.rng.IntN(16) {
	case 0:
		return str(fmt.Sprintf("%04d/%02d/%02d %02d:%02d:%02d", y, mo, d, h, mi, s))
	case 1:
		return str(fmt.Sprintf("%04d%02d%02d", y, mo, d))
	case 2:
		return str(fmt.Sprintf("%04d%02d%02d%02d%02d%02d", y, mo, d, h, mi, s))
	case 3:
		return str(fmt.Sprintf("%d-%d-%d", y, mo, d))
	case 4:
		return str(fmt.Sprintf("%d-%d-%d %d:%d:%d", y, mo, d, h, mi, s))
	case 5:
		return str(fmt.Sprintf("%02d-%02d-%02d %02d:%02d:%02d", y%100, mo, d, h, mi, s))
	case 6:
		return str(fmt.Sprintf("%02d%02d%02d", y%100, mo, d))
	case 7:
		return str(fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d", y, mo, d, h, mi, s))
	case 8:
		return str(fmt.Sprintf("%04d.%02d.%02d %02d.%02d.%02d.5", y, mo, d, h, mi, s))
	case 9:
		return str(fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d.%06d", y, mo, d, h, mi, s, g.rng.IntN(1_000_000)))
	case 10:
		return num(int64(y)*10000 + int64(mo)*100 + int64(d))
	case 11:
		return num(((int64(y)*100+int64(mo))*100+int64(d))*1_000_000 + int64(h)*10000 + int64(mi)*100 + int64(s))
	case 12:
		return fmt.Sprintf("%04d%02d%02d%02d%02d%02d.%03d", y, mo, d, h, mi, s, g.rng.IntN(1000))
	case 13:
		return num(int64(y%100)*10000 + int64(mo)*100 + int64(d))
	case 14:
		return str(fmt.Sprintf("%04d%02d%02dT%02d%02d%02d", y, mo, d, h, mi, s))
	}
	return str(fmt.Sprintf("  %04d-%02d-%02d %02d:%02d:%02d  ", y, mo, d, h, mi, s))
}
