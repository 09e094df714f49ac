package difftest

import (
	"strings"
	"time"
)

// TextQuery is one generated query over the texts table.
type TextQuery struct {
	// SQL names the logical table; Args are its ? arguments (the time range, always).
	SQL  string
	Args []any
	// Ordered: the ORDER BY fixes the order of every row; else compare as multisets.
	Ordered bool
	// Fold[i] names the collation under which column i holds one of several equal values the
	// server may return any of (a GROUP BY key, DISTINCT, MIN, MAX); "" for none. A column
	// with the table's default collation folds under "default".
	Fold []string
	// DivPrecision is the session's div_precision_increment to run the query with.
	DivPrecision int
	// Kind names the query's shape, for reports.
	Kind string
}

// explicit collations a statement may COLLATE a utf8mb4 or a latin1 column to.
var (
	utf8Collations   = []string{"utf8mb4_bin", "utf8mb4_general_ci", "utf8mb4_unicode_ci", "utf8mb4_uca1400_ai_ci", "utf8mb4_unicode_520_ci", "utf8mb4_german2_ci", "utf8mb4_danish_ci", "utf8mb4_nopad_bin", "utf8mb4_swedish_ci"}
	latin1Collations = []string{"latin1_bin", "latin1_german2_ci", "latin1_danish_ci", "latin1_general_cs", "latin1_general_ci"}
)

// ExplicitCollations lists the collations the generated queries COLLATE columns to.
func ExplicitCollations() []string {
	return append(append([]string(nil), utf8Collations...), latin1Collations...)
}

// TextGenerator draws queries over the texts table from a seed, deterministically.
type TextGenerator struct {
	queryDraw
}

// NewTextGenerator returns a generator for seed; cfg.Table is the logical table, whose shard
// key is t_time.
func NewTextGenerator(seed uint64, cfg QueryConfig) *TextGenerator {
	return &TextGenerator{queryDraw: newQueryDraw(seed, 0x5e1f, cfg)}
}

// textExpr is a text expression of the query and the collation its values fold under.
type textExpr struct{ sql, fold string }

// text draws a string column, sometimes COLLATEd to another collation of its character set;
// ordered: the expression is an ORDER BY key, never COLLATEd to latin1_bin, whose ORDER BY of
// an expression MariaDB does not sort by its own comparison (obroute refuses it).
func (g *TextGenerator) text(ordered bool) textExpr {
	c := StringColumns[g.rng.IntN(len(StringColumns))]
	fold := c.Collation
	if fold == "" {
		fold = "default"
	}
	e := textExpr{c.Name, fold}
	if g.rng.IntN(3) == 0 {
		pool := utf8Collations
		if c.Name == "s_lat" {
			pool = latin1Collations
		}
		coll := pool[g.rng.IntN(len(pool))]
		if ordered && coll == "latin1_bin" {
			coll = "latin1_general_cs"
		}
		e = textExpr{c.Name + " COLLATE " + coll, coll}
	}
	return e
}

// Next returns the next query.
func (g *TextGenerator) Next() TextQuery {
	q := TextQuery{DivPrecision: []int{4, 4, 0, 2, 9, 12, 30}[g.rng.IntN(7)]}
	where := g.where(&q.Args)
	from := " FROM " + g.cfg.Table + " WHERE " + where
	switch q.Kind = []string{"order", "group", "group", "distinct", "minmax", "avg", "types"}[g.rng.IntN(7)]; q.Kind {
	case "order":
		k := g.text(true)
		q.SQL = "SELECT id, " + k.sql + " AS k" + from + " ORDER BY " + k.sql + g.dir() + ", id" + g.dir() + g.limit()
		q.Fold, q.Ordered = []string{"", ""}, true
	case "group":
		k := g.text(true)
		items := []string{k.sql + " AS k", "COUNT(*)"}
		q.Fold = []string{k.fold, ""}
		// A quotient's hidden digits are fixed with ROUND: a grouped SUM or AVG of the quotient
		// itself depends on the server's plan, and obroute refuses it.
		for _, a := range g.pick([]string{"SUM(amount)", "AVG(amount)", "AVG(qty)", "SUM(ROUND(amount/3, 4))", "AVG(ROUND(amount/3, 6))", "AVG(ROUND(amount/7, 2))", "SUM(amount*qty)", "COUNT(s_uni)", "MIN", "MAX", "MIN", "SUM(amount)/COUNT(*)", "COUNT(DISTINCT s_lat)"}, 1+g.rng.IntN(3)) {
			if a == "MIN" || a == "MAX" {
				t := g.text(false)
				a = a + "(" + t.sql + ")"
				q.Fold = append(q.Fold, t.fold)
			} else {
				q.Fold = append(q.Fold, "")
			}
			items = append(items, a)
		}
		q.SQL = "SELECT " + strings.Join(items, ", ") + from + " GROUP BY " + k.sql
		if g.rng.IntN(2) == 0 {
			q.SQL += " HAVING " + []string{"COUNT(*) > 1", "MIN(s_uni) > 'm'", "k <> 'apple'", "MAX(s_bin) IS NOT NULL AND COUNT(*) >= 2",
				"SUM(amount) > 100", "AVG(amount) < 50", "MIN(s_lat) < 'Ö' OR COUNT(*) = 1", "k = 'APPLE'"}[g.rng.IntN(8)]
		}
		if g.rng.IntN(3) > 0 {
			q.SQL += " ORDER BY " + []string{"k" + g.dir(), "2" + g.dir() + ", k" + g.dir()}[g.rng.IntN(2)] + g.limit()
			q.Ordered = true
		}
	case "distinct":
		a := g.text(true)
		q.Fold = []string{a.fold}
		cols := a.sql + " AS a"
		if g.rng.IntN(3) == 0 {
			b := g.text(false)
			cols += ", " + b.sql + " AS b"
			q.Fold = append(q.Fold, b.fold)
		}
		q.SQL = "SELECT DISTINCT " + cols + from
		if len(q.Fold) == 1 && g.rng.IntN(2) == 0 {
			q.SQL += " ORDER BY a" + g.dir() + g.limit()
			q.Ordered = true
		}
	case "minmax":
		var items []string
		for range 1 + g.rng.IntN(4) {
			t := g.text(false)
			items = append(items, []string{"MIN", "MAX"}[g.rng.IntN(2)]+"("+t.sql+")")
			q.Fold = append(q.Fold, t.fold)
		}
		q.SQL = "SELECT " + strings.Join(items, ", ") + from
	case "avg":
		items := g.pick([]string{"COUNT(*)", "SUM(amount/3)", "AVG(amount/3)", "AVG(amount)", "AVG(qty)", "SUM(amount*qty)", "AVG(amount*1.5)",
			"SUM(amount/7)", "AVG(-amount)", "SUM(qty/4)", "AVG(qty/4)",
			"SUM(amount)/COUNT(*)", "ROUND(AVG(amount), 3)", "MAX(amount) - MIN(qty)", "AVG(qty) / 3", "SUM(amount)/COUNT(*) * 2"}, 2+g.rng.IntN(4))
		q.Fold = make([]string, len(items))
		q.SQL = "SELECT " + strings.Join(items, ", ") + from
	case "types":
		// Column types a UNION ALL of tables changes: ENUM, TEXT, a negated DECIMAL, NULL.
		q.SQL = "SELECT id, -amount AS x, e, note, NULL AS z, s_def" + from + " ORDER BY id" + g.limit()
		q.Fold, q.Ordered = make([]string, 6), true
		if g.rng.IntN(2) == 0 {
			q.SQL = "SELECT e, COUNT(*), MAX(note), SUM(-amount)" + from + " GROUP BY e"
			q.Fold, q.Ordered = []string{"", "", "default", ""}, false
		}
	}
	return q
}

// limit draws a literal LIMIT (with OFFSET or without) one time in two.
func (g *TextGenerator) limit() string { return g.literalLimit(4) }

// where draws a time range across the hot window boundary: wide (several tables on each side,
// each backend's sub-query a UNION ALL) or narrow (one table on each side), its bounds as ?
// arguments (time.Time or text).
func (g *TextGenerator) where(args *[]any) string {
	c := g.cfg
	day := 24 * time.Hour
	var lo, hi time.Time
	if g.rng.IntN(2) == 0 {
		lo = c.From.Add(-time.Duration(g.rng.IntN(10)) * day)
		hi = c.To.Add(time.Duration(g.rng.IntN(10)) * day)
	} else {
		lo = c.Boundary.Add(-time.Duration(1+g.rng.IntN(25)) * day)
		hi = c.Boundary.Add(time.Duration(1+g.rng.IntN(25)) * day)
	}
	for _, t := range []time.Time{lo, hi} {
		if g.rng.IntN(2) == 0 {
			*args = append(*args, t)
		} else {
			*args = append(*args, t.Format(time.DateTime))
		}
	}
	cond := "t_time >= ? AND t_time < ?"
	if g.rng.IntN(5) == 0 {
		cond += " AND qty > 0"
	}
	return cond
}
