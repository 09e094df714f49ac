package difftest

import (
	"fmt"
	"strings"
	"time"
)

// ReportGenerator draws the report queries BI tools and people write over a range that crosses
// the hot window boundary: expressions over aggregates (SUM(a)/COUNT(*), ROUND(AVG(a), 1),
// MAX(a) - MIN(a), COUNT(*) * 2), a GROUP BY key not in the select list, SELECT * with ORDER
// BY, GROUP BY, aggregates or DISTINCT, COUNT/SUM/AVG(DISTINCT x), WITH ROLLUP, and derived
// tables, common table expressions and UNION over the one time-sharded table. Its Kind names the
// shape, for counting refusals by shape.
type ReportGenerator struct {
	queryDraw
	// distinctStars counts the SELECT DISTINCT * drawn, whose form cycles without drawing (so
	// that the other queries of a seed stay those drawn before it had several).
	distinctStars int
}

// NewReportGenerator returns a generator of report queries for seed over cfg.Table (shard key
// order_time, the columns of CreateTableSQL).
func NewReportGenerator(seed uint64, cfg QueryConfig) *ReportGenerator {
	return &ReportGenerator{queryDraw: newQueryDraw(seed, 0x4e70, cfg)}
}

// ReportShapes are the kinds of ReportGenerator's queries ("star" draws "star_order" too: SELECT *
// with ORDER BY, and "star_distinct": SELECT DISTINCT * or t.*; "distinct_aggregate" draws "distinct_several": DISTINCT aggregates of two lists
// of arguments; "derived" draws a derived table or WITH whose query is row-wise, and
// "derived_grouped" (a derived table that groups under an outer query that aggregates),
// "derived_flat" (a derived table or WITH that groups under an outer query that selects,
// filters, orders and limits its columns), "union" (a UNION of two SELECTs on the table),
// "same_table_subquery" (a scalar subquery on the table in the WHERE of a query on it) and
// "subquery_one_table" (the same, or IN a subquery, every range in one month)).
var ReportShapes = []string{"expression", "hidden_group", "star", "distinct_aggregate", "rollup", "derived"}

// aggregate expressions of the select list, each a plain aggregate or an expression over some.
var reportExprs = []string{
	"SUM(amount)/COUNT(*)", "ROUND(AVG(amount), 1)", "MAX(amount) - MIN(amount)", "COUNT(*) * 2", "SUM(amount) + 0",
	"SUM(user_id)/COUNT(user_id)", "AVG(amount) * 2", "ROUND(SUM(amount)/COUNT(*), 2)", "-SUM(amount)",
	"MAX(user_id) - MIN(user_id)", "COUNT(*) - COUNT(amount)", "(SUM(amount) + 1) / 3", "AVG(user_id) / 2",
	"ROUND(AVG(amount))", "SUM(amount) * 1.5", "COUNT(*) / 7", "ROUND(AVG(user_id), 3)", "SUM(amount) / SUM(user_id)",
	"AVG(amount) - AVG(user_id)", "ROUND(MAX(amount) / 3, 1)",
}

// Next returns the next query.
func (g *ReportGenerator) Next() Query {
	var q Query
	from := " FROM " + g.cfg.Table + " WHERE " + g.where(&q.Args)
	q.Kind = ReportShapes[g.rng.IntN(len(ReportShapes))]
	group := []string{"user_id", "status"}[g.rng.IntN(2)]
	q.FoldCase = group == "status"
	switch q.Kind {
	case "expression":
		exprs := g.pick(reportExprs, 1+g.rng.IntN(3))
		if g.rng.IntN(3) == 0 {
			q.SQL = "SELECT " + strings.Join(exprs, ", ") + from
			q.FoldCase = false
			break
		}
		q.SQL = "SELECT " + group + ", " + strings.Join(exprs, ", ") + from + " GROUP BY " + group
		if g.rng.IntN(3) == 0 {
			// A selected expression, or one the sub-queries must add hidden.
			having := []string{exprs[0], reportExprs[g.rng.IntN(len(reportExprs))]}[g.rng.IntN(2)]
			q.SQL += " HAVING " + having + []string{" > 0", " IS NOT NULL", " < 1000"}[g.rng.IntN(3)]
		}
		if g.rng.IntN(2) == 0 {
			key := fmt.Sprintf("%d", 2+g.rng.IntN(len(exprs)))
			if g.rng.IntN(3) == 0 {
				key = reportExprs[g.rng.IntN(len(reportExprs))]
			}
			q.SQL += " ORDER BY " + key + g.dir() + ", 1" + g.dir() + g.limit()
			q.Ordered = true
		}
	case "hidden_group":
		aggs := g.pick([]string{"COUNT(*)", "SUM(amount)", "MAX(amount)", "MIN(order_time)", "AVG(amount)"}, 1+g.rng.IntN(2))
		if g.rng.IntN(2) == 0 {
			group = []string{"DATE(order_time)", "user_id % 3", "MONTH(order_time)", "LOWER(status)", "user_id, status"}[g.rng.IntN(5)]
		}
		q.SQL = "SELECT " + strings.Join(aggs, ", ") + from + " GROUP BY " + group
		q.FoldCase = false
	case "star":
		switch g.rng.IntN(4) {
		case 0:
			q.Kind = "star_order"
			q.SQL = "SELECT *" + strings.Replace(from, " FROM "+g.cfg.Table, " FROM "+g.cfg.Table+" o", 1) + " ORDER BY o.order_time" + g.dir() + ", id" + g.dir() + g.limit()
			q.Ordered = true
			q.FoldCase = false
		case 1:
			q.Kind = "star_distinct"
			switch g.distinctStars % 3 {
			case 0:
				q.SQL = "SELECT DISTINCT *" + from
			case 1:
				q.SQL = "SELECT DISTINCT o.*" + strings.Replace(from, " FROM "+g.cfg.Table, " FROM "+g.cfg.Table+" o", 1)
			default:
				// Ordered by the shard key alone, whose ties come in any order: compared as a set.
				q.SQL = "SELECT DISTINCT *" + from + " ORDER BY order_time DESC"
			}
			g.distinctStars++
			q.FoldCase = false
		case 2:
			q.SQL = "SELECT *, COUNT(*)" + from + " GROUP BY id"
			q.FoldCase = false
		default:
			q.Kind = "star_order"
			q.SQL = "SELECT *" + from + " ORDER BY " + []string{"amount", "status", "user_id"}[g.rng.IntN(3)] + g.dir() + ", id LIMIT 10"
			q.Ordered = true
			q.FoldCase = false
		}
	case "distinct_aggregate":
		agg := []string{"COUNT(DISTINCT user_id)", "SUM(DISTINCT user_id)", "AVG(DISTINCT amount)", "COUNT(DISTINCT status)",
			"SUM(DISTINCT amount)", "COUNT(DISTINCT user_id, status)", "AVG(DISTINCT user_id), COUNT(DISTINCT user_id) * 2",
			"COUNT(DISTINCT LOWER(status)), MAX(amount)", "SUM(DISTINCT amount) / COUNT(DISTINCT amount)"}[g.rng.IntN(9)]
		if strings.Contains(agg, ", status)") && g.rng.IntN(2) == 0 {
			// Two lists of DISTINCT arguments: obroute merges one per statement.
			agg += ", COUNT(DISTINCT status)"
			q.Kind = "distinct_several"
		}
		if g.rng.IntN(2) == 0 {
			q.SQL = "SELECT " + agg + ", COUNT(*)" + from
			if g.rng.IntN(4) == 0 {
				q.SQL += " AND id < 0" // no row: the aggregates over no rows
			}
			q.FoldCase = false
		} else {
			q.SQL = "SELECT " + group + ", " + agg + from + " GROUP BY " + group
		}
	case "rollup":
		if g.rng.IntN(3) == 0 {
			group, q.FoldCase = "status, user_id", true
		}
		aggs := g.pick([]string{"COUNT(*)", "SUM(amount)", "AVG(amount)", "MIN(order_time)", "MAX(status)", "COUNT(DISTINCT user_id)", "SUM(amount)/COUNT(*)"}, 1+g.rng.IntN(3))
		q.SQL = "SELECT " + group + ", " + strings.Join(aggs, ", ") + from + " GROUP BY " + group + " WITH ROLLUP"
		q.Ordered = true
		q.FoldCase = true
	case "derived":
		inner := " FROM " + g.cfg.Table + strings.TrimPrefix(from, " FROM "+g.cfg.Table)
		switch g.rng.IntN(4) {
		case 0:
			if g.rng.IntN(2) == 0 {
				g.flatDerived(&q, inner)
				break
			}
			q.Kind = "derived_grouped"
			q.SQL = "SELECT COUNT(*), SUM(n) FROM (SELECT user_id, COUNT(*) AS n" + inner + " GROUP BY user_id) AS t"
			q.FoldCase = false
		case 1:
			g.rowWiseDerived(&q, inner)
		case 2:
			g.union(&q, inner)
		default:
			q.Kind = "same_table_subquery"
			if g.rng.IntN(2) == 0 {
				// Both ranges in one month: one physical table holds every row either reads.
				q.Kind, q.Args = "subquery_one_table", nil
				b := g.cfg.Boundary
				month := time.Date(b.Year(), b.Month()-time.Month(g.rng.IntN(3)), 1, 0, 0, 0, 0, b.Location())
				inner = " FROM " + g.cfg.Table + " WHERE " + g.inMonth(month, &q.Args)
				other := " FROM " + g.cfg.Table + " WHERE " + g.inMonth(month, &q.Args)
				q.SQL = []string{
					"SELECT id, amount" + inner + " AND amount > (SELECT AVG(amount)" + other + ") ORDER BY id",
					"SELECT user_id, COUNT(*) FROM " + g.cfg.Table + " o WHERE o." + strings.TrimPrefix(inner, " FROM "+g.cfg.Table+" WHERE ") + " AND o.user_id IN (SELECT user_id" + other + " AND amount > 100) GROUP BY user_id",
				}[g.rng.IntN(2)]
				q.Ordered = strings.Contains(q.SQL, "ORDER BY")
				q.FoldCase = false
				break
			}
			q.SQL = "SELECT id, amount" + inner + " AND amount > (SELECT AVG(amount)" + inner + ")"
			q.Args = append(q.Args, q.Args...)
			q.FoldCase = false
		}
	}
	return q
}

// where draws a range across the hot window boundary, as literals or ? arguments.
func (g *ReportGenerator) where(args *[]any) string {
	c := g.cfg
	day := 24 * time.Hour
	lo := c.Boundary.Add(-time.Duration(1+g.rng.IntN(120)) * day)
	hi := c.Boundary.Add(time.Duration(1+g.rng.IntN(80)) * day)
	if g.rng.IntN(2) == 0 {
		*args = append(*args, lo.Format(time.DateTime), hi.Format(time.DateTime))
		return "order_time >= ? AND order_time < ?"
	}
	return "order_time >= '" + lo.Format(time.DateTime) + "' AND order_time < '" + hi.Format(time.DateTime) + "'"
}

// limit draws a literal LIMIT (with OFFSET or without) two times in three.
func (g *ReportGenerator) limit() string { return g.literalLimit(3) }

// rowWiseDerived draws a derived table or common table expression whose query reads columns and
// conditions of the sharded table (inner is its FROM and WHERE), under an outer query that
// groups, aggregates, filters, orders or limits.
func (g *ReportGenerator) rowWiseDerived(q *Query, inner string) {
	switch g.rng.IntN(6) {
	case 0:
		q.SQL = "WITH t AS (SELECT status, amount" + inner + ") SELECT status, SUM(amount) FROM t GROUP BY status"
		q.FoldCase = true
	case 1:
		q.SQL = "SELECT user_id, COUNT(*), SUM(amount) FROM (SELECT user_id, amount" + inner + ") AS t GROUP BY user_id"
		q.FoldCase = false
	case 2:
		q.SQL = "SELECT * FROM (SELECT id, amount, status FROM " + g.cfg.Table + " o" + strings.TrimPrefix(inner, " FROM "+g.cfg.Table) +
			") AS t WHERE amount > 50 ORDER BY amount" + g.dir() + ", id" + g.dir() + g.limit()
		q.Ordered, q.FoldCase = true, false
	case 3:
		q.SQL = "SELECT COUNT(*), AVG(amt), MAX(amt) - MIN(amt) FROM (SELECT amount * 2 AS amt" + inner + ") t"
		q.FoldCase = false
	case 4:
		q.SQL = "WITH recent AS (SELECT id, user_id, order_time" + inner + ") SELECT user_id, MIN(order_time), COUNT(DISTINCT id) FROM recent GROUP BY user_id ORDER BY user_id" + g.dir() + " LIMIT 5"
		q.Ordered, q.FoldCase = true, false
	default:
		q.SQL = "SELECT DISTINCT status FROM (SELECT *" + inner + ") AS t"
		q.FoldCase = true
	}
}

// union draws a UNION or UNION ALL of two SELECTs on the sharded table over ranges across the
// boundary (inner is the first one's FROM and WHERE), bare or ordered and limited.
func (g *ReportGenerator) union(q *Query, inner string) {
	q.Kind = "union"
	var second []any
	other := " FROM " + g.cfg.Table + " WHERE " + g.where(&second) + " AND amount > 20"
	q.Args = append(q.Args, second...)
	switch g.rng.IntN(4) {
	case 0:
		q.SQL = "SELECT id" + inner + " UNION SELECT id" + other
		q.FoldCase = false
	case 1:
		q.SQL = "SELECT status" + inner + " UNION SELECT status" + other
		q.FoldCase = true
	case 2:
		q.SQL = "SELECT id, amount AS a" + inner + " UNION ALL SELECT id, amount" + other + " ORDER BY a" + g.dir() + ", id" + g.dir() + g.limit()
		q.Ordered, q.FoldCase = true, false
	default:
		q.SQL = "SELECT user_id, order_time" + inner + " UNION ALL SELECT user_id, order_time" + other
		q.FoldCase = false
	}
}

// inMonth draws a range of a few days inside the month that starts at m (a condition on
// order_time, as literals or ? arguments appended to args).
func (g *ReportGenerator) inMonth(m time.Time, args *[]any) string {
	lo := m.AddDate(0, 0, 1+g.rng.IntN(10))
	hi := lo.AddDate(0, 0, 1+g.rng.IntN(10))
	if g.rng.IntN(2) == 0 {
		*args = append(*args, lo.Format(time.DateTime), hi.Format(time.DateTime))
		return "order_time >= ? AND order_time < ?"
	}
	return "order_time >= '" + lo.Format(time.DateTime) + "' AND order_time < '" + hi.Format(time.DateTime) + "'"
}

// flatDerived draws a derived table or common table expression that groups or aggregates the
// sharded table (inner is its FROM and WHERE) under an outer query that selects, filters, orders
// and limits its columns.
func (g *ReportGenerator) flatDerived(q *Query, inner string) {
	q.Kind = "derived_flat"
	g.choose(q, []drawn{
		{"SELECT user_id, n FROM (SELECT user_id, COUNT(*) AS n" + inner + " GROUP BY user_id) AS t WHERE n > 1 ORDER BY n" + g.dir() + ", user_id" + g.dir() + g.limit(), true, false},
		{"WITH t AS (SELECT status, SUM(amount) AS s, COUNT(*) AS c" + inner + " GROUP BY status) SELECT * FROM t", false, true},
		{"SELECT s, c FROM (SELECT status, SUM(amount) AS s, AVG(amount) AS c" + inner + " GROUP BY status) t WHERE s > 100", false, false},
		{"SELECT total, c FROM (SELECT SUM(amount) AS total, COUNT(*) AS c, MAX(order_time) AS latest" + inner + ") t", false, false},
	})
}

// drawn is a query a generator may draw: its text, whether its ORDER BY fixes the order of every
// row, and whether its strings compare folded to lower case.
type drawn struct {
	sql           string
	ordered, fold bool
}

// choose sets q to one of options.
func (g *ReportGenerator) choose(q *Query, options []drawn) {
	d := options[g.rng.IntN(len(options))]
	q.SQL, q.Ordered, q.FoldCase = d.sql, d.ordered, d.fold
}
