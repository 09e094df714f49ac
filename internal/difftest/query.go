package difftest

import (
	"fmt"
	"strings"
	"time"
)

// Query is one generated query over the logical table.
type Query struct {
	// SQL uses the logical table name; run it through obroute, and on the reference table with
	// the name replaced (see ForTable).
	SQL string
	// Args are the values of SQL's ? placeholders: time.Time or 'YYYY-MM-DD[ hh:mm:ss]' strings
	// for times, int64 for LIMIT and OFFSET.
	Args []any
	// Ordered is set when the query's ORDER BY fixes the order of every row (ties broken by a
	// unique key); results are then compared in order, else as multisets.
	Ordered bool
	// FoldCase is set when a string in the result is one of several values equal under the
	// column's _ci collation and which one the server returns is not determined (MIN(status),
	// GROUP BY status): compare such results with strings folded to lower case.
	FoldCase bool
	// Kind names the query's shape, for reports: "rows", "aggregate", "group", "distinct".
	Kind string
}

// ForTable returns the query's SQL with the logical table name replaced by table, for the
// reference database.
func (q Query) ForTable(logical, table string) string {
	return strings.ReplaceAll(q.SQL, " FROM "+logical+" ", " FROM "+table+" ")
}

// QueryConfig describes the data the queries run over.
type QueryConfig struct {
	// Table is the logical table, e.g. "orders"; its shard key is order_time.
	Table string
	// From, To bound the data's times; ranges are drawn a little beyond them.
	From, To time.Time
	// Boundary is the hot window boundary: many ranges start, end or cross near it.
	Boundary time.Time
	// Times are order times that exist in the data, used for = and IN; may be empty.
	Times []time.Time
	// Mix limits the shapes: "rows" only (plain row queries) or "" for every shape
	// (ORDER BY, LIMIT, aggregates, GROUP BY, HAVING, DISTINCT too).
	Mix string
}

// Generator draws queries from a seed. It is deterministic: the same seed and config give the
// same queries, so a failure is replayed from the printed seed.
type Generator struct {
	queryDraw
	// key is the shard key as the current query names it: order_time or o.order_time.
	key string
}

// NewGenerator returns a generator for seed.
func NewGenerator(seed uint64, cfg QueryConfig) *Generator {
	return &Generator{queryDraw: newQueryDraw(seed, 0x9e37, cfg)}
}

// Next returns the next query.
func (g *Generator) Next() Query {
	var q Query
	table := g.cfg.Table
	g.key = "order_time"
	if g.rng.IntN(6) == 0 { // a table alias, and the shard key qualified by it
		table += " o"
		g.key = "o.order_time"
	}
	where, args := g.where()
	q.Args = args
	kind := "rows"
	if g.cfg.Mix == "" {
		kind = []string{"rows", "rows", "aggregate", "group", "distinct"}[g.rng.IntN(5)]
	}
	q.Kind = kind
	from := " FROM " + table + " WHERE " + where
	switch kind {
	case "rows":
		// Sometimes a subset of the columns, so that sort keys are hidden columns.
		cols := "id, user_id, amount, status, order_time"
		if g.rng.IntN(4) == 0 {
			cols = []string{"id, amount", "user_id, status", "order_time, id", "amount, order_time, status"}[g.rng.IntN(4)]
		}
		q.SQL = "SELECT " + cols + from
		if g.rng.IntN(4) > 0 {
			keys := g.orderKeys([]string{"order_time", "amount", "user_id", "status"}, 1+g.rng.IntN(3))
			q.SQL += " ORDER BY " + strings.Join(append(keys, "id"+g.dir()), ", ")
			q.Ordered = true
			q.SQL += g.limit(&q.Args)
		}
	case "aggregate":
		aggs := g.pick([]string{"COUNT(*)", "COUNT(amount)", "COUNT(user_id)", "COUNT(status)", "SUM(amount)", "SUM(user_id)",
			"MIN(amount)", "MAX(amount)", "MIN(order_time)", "MAX(order_time)", "MIN(user_id)", "MAX(user_id)",
			"AVG(amount)", "AVG(user_id)", "MIN(status)", "MAX(status)", "BIT_OR(user_id)", "BIT_AND(amount)",
			"BIT_XOR(user_id)"}, 1+g.rng.IntN(7))
		q.SQL = "SELECT " + strings.Join(aggs, ", ") + from
		q.FoldCase = strings.Contains(q.SQL, "(status)")
	case "group":
		aggs := g.pick([]string{"COUNT(*)", "SUM(amount)", "MIN(order_time)", "MAX(order_time)", "MIN(amount)", "MAX(amount)",
			"AVG(amount)", "COUNT(status)", "COUNT(amount)", "SUM(user_id)", "AVG(user_id)", "BIT_OR(user_id)", "BIT_XOR(amount)"}, 1+g.rng.IntN(3))
		// The group columns; status groups fold case under the _ci collation.
		group := []string{"user_id", "user_id", "status", "user_id, status"}[g.rng.IntN(4)]
		ng := strings.Count(group, ",") + 1
		q.FoldCase = strings.Contains(group, "status")
		q.SQL = "SELECT " + group + ", " + strings.Join(aggs, ", ") + from + " GROUP BY " + group
		if g.rng.IntN(2) == 0 {
			q.SQL += []string{" HAVING COUNT(*) > 2", " HAVING SUM(amount) >= 100", " HAVING MAX(amount) < 400 OR COUNT(*) = 1",
				" HAVING MIN(order_time) > '2024-11-01' OR COUNT(*) < 3", " HAVING AVG(amount) > 200", " HAVING COUNT(amount) >= 2 AND MIN(amount) IS NOT NULL",
				" HAVING COUNT(*) BETWEEN 2 AND 4", " HAVING SUM(amount) NOT BETWEEN 100 AND 300.5", " HAVING COUNT(*) IN (1, 3, NULL)"}[g.rng.IntN(9)]
		}
		if g.rng.IntN(3) > 0 {
			// An aggregate or not, then every group column: a total order.
			var keys []string
			if g.rng.IntN(3) > 0 {
				keys = append(keys, fmt.Sprintf("%d%s", ng+1+g.rng.IntN(len(aggs)), g.dir()))
			}
			for i := range ng {
				keys = append(keys, fmt.Sprintf("%d%s", i+1, g.dir()))
			}
			q.SQL += " ORDER BY " + strings.Join(keys, ", ")
			q.Ordered = true
			q.SQL += g.limit(&q.Args)
		}
	case "distinct":
		cols := []string{"user_id", "user_id", "amount", "user_id, amount", "status"}[g.rng.IntN(5)]
		q.FoldCase = cols == "status"
		q.SQL = "SELECT DISTINCT " + cols + from
		if g.rng.IntN(2) == 0 {
			var keys []string
			for _, c := range strings.Split(cols, ", ") {
				keys = append(keys, c+g.dir())
			}
			q.SQL += " ORDER BY " + strings.Join(keys, ", ")
			q.Ordered = true
			q.SQL += g.limit(&q.Args)
		}
	}
	return q
}

func (g *Generator) orderKeys(cols []string, n int) []string {
	g.rng.Shuffle(len(cols), func(i, j int) { cols[i], cols[j] = cols[j], cols[i] })
	out := make([]string, n)
	for i := range n {
		out[i] = cols[i] + g.dir()
	}
	return out
}

func (g *Generator) limit(args *[]any) string {
	n, o := int64(1+g.rng.IntN(20)), int64(g.rng.IntN(30))
	switch g.rng.IntN(5) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf(" LIMIT %d", n)
	case 2:
		return fmt.Sprintf(" LIMIT %d, %d", o, n)
	case 3:
		// LIMIT and OFFSET as ? arguments (binary protocol), after the WHERE arguments.
		*args = append(*args, n, o)
		return " LIMIT ? OFFSET ?"
	}
	return fmt.Sprintf(" LIMIT %d OFFSET %d", n, o)
}

// point draws a time: near the boundary, on a month edge, an existing order time, or anywhere.
func (g *Generator) point() time.Time {
	c := g.cfg
	switch g.rng.IntN(6) {
	case 3: // a whole day: DATE literals and date-only strings
		d := c.From.AddDate(0, 0, g.rng.IntN(int(c.To.Sub(c.From).Hours()/24)+1))
		return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
	case 0:
		return c.Boundary.Add(time.Duration(g.rng.IntN(7*24)-3*24) * time.Hour)
	case 1:
		m := c.From.AddDate(0, g.rng.IntN(monthsBetween(c.From, c.To)+1), 0)
		t := time.Date(m.Year(), m.Month(), 1, 0, 0, 0, 0, time.UTC)
		return t.Add(time.Duration(g.rng.IntN(3)-1) * time.Second) // just before, at, just after
	case 2:
		if len(c.Times) > 0 {
			return c.Times[g.rng.IntN(len(c.Times))]
		}
	}
	span := c.To.Sub(c.From) + 20*24*time.Hour
	return c.From.Add(-10*24*time.Hour + time.Duration(g.rng.Int64N(int64(span/time.Second)))*time.Second)
}

// value renders t as a literal or a ? argument (time.Time or string, date-only sometimes).
func (g *Generator) value(t time.Time, args *[]any) string {
	dateOnly := t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && g.rng.IntN(2) == 0
	text := t.Format(time.DateTime)
	if dateOnly {
		text = t.Format(time.DateOnly)
	}
	switch g.rng.IntN(4) {
	case 0:
		*args = append(*args, t)
		return "?"
	case 1:
		*args = append(*args, text)
		return "?"
	case 2:
		if dateOnly {
			return "DATE '" + text + "'"
		}
		return "TIMESTAMP '" + t.Format(time.DateTime) + "'"
	}
	return "'" + text + "'"
}

// where draws the time condition, sometimes with an extra non-time condition.
func (g *Generator) where() (string, []any) {
	var args []any
	cond := g.timeCond(&args, 0)
	switch g.rng.IntN(6) {
	case 0:
		cond = "(" + cond + ") AND user_id > 10"
	case 1:
		cond = "status <> 'new' AND (" + cond + ")"
	}
	return cond, args
}

func (g *Generator) timeCond(args *[]any, depth int) string {
	a, b := g.point(), g.point()
	if b.Before(a) {
		a, b = b, a
	}
	k := g.key
	n := g.rng.IntN(10)
	if depth > 0 && (n == 7 || n == 8) {
		// A one-sided branch of an OR could leave the whole range open on both sides, which
		// obroute refuses (ErrNoTimeRange) by design: keep OR branches bounded.
		n = 0
	}
	switch {
	case n < 3:
		lo := []string{">=", ">"}[g.rng.IntN(2)]
		hi := []string{"<", "<="}[g.rng.IntN(2)]
		return fmt.Sprintf("%s %s %s AND %s %s %s", k, lo, g.value(a, args), k, hi, g.value(b, args))
	case n == 3:
		return fmt.Sprintf("%s BETWEEN %s AND %s", k, g.value(a, args), g.value(b, args))
	case n == 4:
		return fmt.Sprintf("%s = %s", k, g.value(g.point(), args))
	case n == 5:
		vals := make([]string, 1+g.rng.IntN(4))
		for i := range vals {
			vals[i] = g.value(g.point(), args)
		}
		return fmt.Sprintf("%s IN (%s)", k, strings.Join(vals, ", "))
	case n == 6 && depth == 0:
		return "(" + g.timeCond(args, 1) + ") OR (" + g.timeCond(args, 1) + ")"
	case n == 7:
		return fmt.Sprintf("%s >= %s", k, g.value(a, args))
	case n == 8:
		return fmt.Sprintf("%s < %s", k, g.value(b, args))
	default:
		return fmt.Sprintf("%s >= %s AND NOT (%s > %s)", k, g.value(a, args), k, g.value(b, args))
	}
}
