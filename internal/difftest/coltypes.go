package difftest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/obroute/obroute/metadata"
)

// The column-type space: one time-sharded logical table (a DATETIME shard key) with a column of
// every type family of MariaDB's manual — integers of every width signed and unsigned, DECIMAL
// up to 65 digits, FLOAT, DOUBLE, BIT, CHAR/VARCHAR/TEXT, BINARY/VARBINARY/BLOB, ENUM, SET,
// JSON, DATE, TIME, DATETIME and TIMESTAMP of several precisions, YEAR, a VIRTUAL and a STORED
// generated column — and VARCHAR columns in collations the server lists (SHOW COLLATION),
// chosen at run time. Values are drawn from fixed trap lists per type (the extremes of each
// width, zero, negatives, trailing spaces, case and accent variants, zero dates, fractional
// seconds), written independently of the code under test.

// TypeColumn is one column of the column-type space.
type TypeColumn struct {
	// Name is the column's name; Def its type as CREATE TABLE writes it.
	Name, Def string
	// Values are SQL literals the rows draw from; nil for a generated column.
	Values []string
	// Collation is the collation of a text column, "" for other columns: its GROUP BY, DISTINCT,
	// MIN and MAX may return any of several values equal under it.
	Collation string
}

// Generated reports whether the server computes the column.
func (c TypeColumn) Generated() bool { return c.Values == nil }

func ints(lo, hi string) []string {
	return []string{lo, hi, "0", "1", "-1", "42", "42", lo, hi}
}

func uints(hi string) []string { return []string{"0", hi, "1", "128", "42", hi} }

// typeColumns are the fixed columns of the space (the collation columns come from the server).
var typeColumns = []TypeColumn{
	{Name: "i_tiny", Def: "TINYINT", Values: ints("-128", "127")},
	{Name: "u_tiny", Def: "TINYINT UNSIGNED", Values: uints("255")},
	{Name: "i_small", Def: "SMALLINT", Values: ints("-32768", "32767")},
	{Name: "u_small", Def: "SMALLINT UNSIGNED", Values: uints("65535")},
	{Name: "i_medium", Def: "MEDIUMINT", Values: ints("-8388608", "8388607")},
	{Name: "u_medium", Def: "MEDIUMINT UNSIGNED", Values: uints("16777215")},
	{Name: "i_int", Def: "INT", Values: ints("-2147483648", "2147483647")},
	{Name: "u_int", Def: "INT UNSIGNED", Values: uints("4294967295")},
	{Name: "i_big", Def: "BIGINT", Values: ints("-9223372036854775808", "9223372036854775807")},
	{Name: "u_big", Def: "BIGINT UNSIGNED", Values: uints("18446744073709551615")},
	{Name: "d_wide", Def: "DECIMAL(65,30)", Values: []string{"99999999999999999999999999999999999.999999999999999999999999999999",
		"-99999999999999999999999999999999999.999999999999999999999999999999", "0", "0.000000000000000000000000000001", "-1.5", "12345.678", "-0.000000000000000000000000000001"}},
	{Name: "d_small", Def: "DECIMAL(10,2)", Values: []string{"99999999.99", "-99999999.99", "0", "0.01", "-0.01", "1.50", "1.5", "-7.25"}},
	{Name: "f_float", Def: "FLOAT", Values: []string{"0", "-0", "1.5", "-3.25", "3.4e38", "-3.4e38", "1.17549e-38", "0.1", "16777217", "95569.1"}},
	{Name: "f_double", Def: "DOUBLE", Values: []string{"0", "1.5", "-3.25", "1e300", "-1e300", "2.2250738585072014e-308", "0.1", "0.2", "1e15", "-0.3"}},
	{Name: "b_bit1", Def: "BIT(1)", Values: []string{"b'0'", "b'1'", "b'1'"}},
	{Name: "b_bit12", Def: "BIT(12)", Values: []string{"b'0'", "b'111111111111'", "b'101'", "2048", "b'1'"}},
	{Name: "c_char", Def: "CHAR(10)", Values: []string{"'a'", "'A'", "'a '", "''", "'é'", "'E'", "'e'", "' a'"}, Collation: "default"},
	{Name: "c_text", Def: "TEXT", Values: []string{"'a'", "'A'", "'a '", "''", "'é'", "'É'", "'e'", "'Straße'", "'strasse'", "'z'"}, Collation: "default"},
	{Name: "x_binary", Def: "BINARY(4)", Values: []string{"'a'", "X'6100'", "X'00'", "'A'", "''", "X'FF'"}},
	{Name: "x_varbinary", Def: "VARBINARY(16)", Values: []string{"'a'", "'a '", "'A'", "''", "X'FF00'", "X'00'"}},
	{Name: "x_blob", Def: "BLOB", Values: []string{"'x'", "'X'", "X'FF'", "''", "'x '"}},
	{Name: "e_enum", Def: "ENUM('zeta','alpha','Mid','beta')", Values: []string{"'zeta'", "'alpha'", "'Mid'", "'beta'", "'ALPHA'"}, Collation: "default"},
	{Name: "e_set", Def: "SET('z','a','m')", Values: []string{"'a,z'", "'z'", "''", "'m,a'", "'a'", "'z,a,m'"}, Collation: "default"},
	{Name: "j_json", Def: "JSON", Values: []string{"'1'", "'1.0'", "'\"1\"'", "'{\"a\": 1}'", "'[1, 2]'", "'null'", "'true'", "'\"abc\"'", "'1e2'", "'-5'", "'{\"b\":2,\"a\":1}'"}},
	{Name: "t_date", Def: "DATE", Values: []string{"'0000-00-00'", "'1000-01-01'", "'9999-12-31'", "'2026-10-01'", "'2026-02-28'", "'2026-10-01'"}},
	{Name: "t_time0", Def: "TIME(0)", Values: []string{"'-838:59:59'", "'838:59:59'", "'00:00:00'", "'-00:00:01'", "'12:30:00'", "'24:00:00'"}},
	{Name: "t_time6", Def: "TIME(6)", Values: []string{"'-838:59:59.000000'", "'838:59:59.000000'", "'12:30:00.5'", "'00:00:00.000001'", "'-00:00:00.000001'", "'00:00:00'"}},
	{Name: "t_dt0", Def: "DATETIME(0)", Values: []string{"'0000-00-00 00:00:00'", "'1000-01-01 00:00:00'", "'9999-12-31 23:59:59'", "'2026-10-01 00:00:00'", "'2026-10-01'"}},
	{Name: "t_dt3", Def: "DATETIME(3)", Values: []string{"'0000-00-00 00:00:00'", "'2026-10-01 00:00:00.5'", "'2026-10-01 00:00:00.500'", "'9999-12-31 23:59:59.999'", "'1000-01-01 00:00:00.001'"}},
	{Name: "t_dt6", Def: "DATETIME(6)", Values: []string{"'0000-00-00 00:00:00'", "'2026-10-01 00:00:00.000001'", "'9999-12-31 23:59:59.999999'", "'2026-10-01 00:00:00.999999'", "'2026-10-01 00:00:00'"}},
	{Name: "t_ts0", Def: "TIMESTAMP(0) NULL DEFAULT NULL", Values: []string{"'1970-01-01 00:00:01'", "'2038-01-19 03:14:07'", "'0000-00-00 00:00:00'", "'2026-10-25 01:30:00'", "'2026-10-01 00:00:00'"}},
	{Name: "t_ts6", Def: "TIMESTAMP(6) NULL DEFAULT NULL", Values: []string{"'1970-01-01 00:00:01.000000'", "'2038-01-19 03:14:07.999999'", "'0000-00-00 00:00:00'", "'2026-10-25 01:30:00.5'", "'2026-10-01 00:00:00.000001'"}},
	{Name: "y_year", Def: "YEAR", Values: []string{"0", "1901", "2155", "2026", "2026", "70"}},
	{Name: "g_virtual", Def: "BIGINT AS (i_int DIV 3) VIRTUAL"},
	{Name: "g_stored", Def: "VARCHAR(40) AS (CONCAT(e_enum, ':', i_tiny)) STORED", Collation: "default"},
}

// Collation is one row of SHOW COLLATION: a collation and its character set.
type Collation struct{ Name, Charset string }

// PickCollations chooses, from the server's collations, at least eight for the text columns,
// deterministic for a seed: a one-level NO PAD one, a uca1400 one, a _bin one, a latin1 one, an accent-
// or case-sensitive one (_cs, _as_), a one-level utf8mb3 one, the utf8mb4 default, and three other one-level
// collations of utf8mb4, utf8mb3 or latin1. A kind the server lacks is left out.
func PickCollations(seed uint64, all []Collation) []Collation {
	rng := rand.New(rand.NewPCG(seed, 0xc011))
	var usable []Collation
	for _, c := range all {
		if c.Charset == "utf8mb4" || c.Charset == "utf8mb3" || c.Charset == "latin1" {
			usable = append(usable, c)
		}
	}
	slices.SortFunc(usable, func(a, b Collation) int { return strings.Compare(a.Name, b.Name) })
	var out []Collation
	pick := func(ok func(Collation) bool) {
		var m []Collation
		for _, c := range usable {
			if ok(c) && !slices.Contains(out, c) {
				m = append(m, c)
			}
		}
		if len(m) > 0 {
			out = append(out, m[rng.IntN(len(m))])
		}
	}
	pick(func(c Collation) bool { return c.Name == "utf8mb4_general_ci" })
	pick(func(c Collation) bool {
		return c.Charset == "utf8mb4" && strings.Contains(c.Name, "nopad") && oneLevel(c)
	})
	pick(func(c Collation) bool {
		return c.Charset == "utf8mb4" && strings.Contains(c.Name, "uca1400") && strings.HasSuffix(c.Name, "_ai_ci")
	})
	pick(func(c Collation) bool {
		return c.Charset == "utf8mb4" && strings.HasSuffix(c.Name, "_bin") && !strings.Contains(c.Name, "nopad")
	})
	pick(func(c Collation) bool { return c.Charset == "latin1" && strings.HasSuffix(c.Name, "_ci") })
	pick(func(c Collation) bool { return strings.HasSuffix(c.Name, "_cs") || strings.Contains(c.Name, "_as_") })
	pick(func(c Collation) bool { return c.Charset == "utf8mb3" && oneLevel(c) })
	pick(func(c Collation) bool {
		return c.Charset == "utf8mb4" && strings.Contains(c.Name, "uca1400") && strings.HasSuffix(c.Name, "_as_cs")
	})
	for range 3 { // one-level collations, whose order and groups the merge computes
		pick(oneLevel)
	}
	return out
}

// oneLevel reports whether c compares on one level (not case- or accent-sensitive UCA, not
// _w2): obroute merges the order and groups of those, and refuses the others.
func oneLevel(c Collation) bool {
	return !strings.HasSuffix(c.Name, "_cs") && !strings.Contains(c.Name, "_as_") && !strings.Contains(c.Name, "_w2")
}

// TypeColumns returns the columns of the space: the fixed ones and a VARCHAR(24) in each of
// collations, its values the text traps its character set holds.
func TypeColumns(collations []Collation) []TypeColumn {
	out := append([]TypeColumn(nil), typeColumns...)
	for i, c := range collations {
		var vals []string
		for _, s := range TextTraps {
			if fits(s, c.Charset) {
				vals = append(vals, "'"+strings.ReplaceAll(s, "'", "''")+"'")
			}
		}
		out = append(out, TypeColumn{
			Name: fmt.Sprintf("s%d_%s", i, c.Name), Def: fmt.Sprintf("VARCHAR(24) CHARACTER SET %s COLLATE %s", c.Charset, c.Name),
			Values: vals, Collation: c.Name,
		})
	}
	return out
}

// fits reports whether s can be stored unchanged in charset.
func fits(s, charset string) bool {
	switch charset {
	case "latin1":
		return latin1(s)
	case "utf8mb3":
		for _, r := range s {
			if r > 0xFFFF {
				return false
			}
		}
	}
	return true
}

// TypesTableSQL returns the CREATE TABLE of one table of the space.
func TypesTableSQL(table string, cols []TypeColumn) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (\n  id BIGINT NOT NULL PRIMARY KEY,\n  ts DATETIME NOT NULL", table)
	for _, c := range cols {
		def := c.Def
		if !c.Generated() && !strings.Contains(def, "NULL") {
			def += " NULL"
		}
		fmt.Fprintf(&b, ",\n  %s %s", c.Name, def)
	}
	b.WriteString(",\n  KEY idx_ts (ts)\n) DEFAULT CHARSET=utf8mb4")
	return b.String()
}

// The tables of the space: a month each from June to December 2026. The clock stands at
// TypesClock and the hot window is the current month and one before, so June to September are
// cold and October to December hot; August's rows have NULL in every column but the key,
// September has none.
var (
	TypesClock    = time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC)
	typesFrom     = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	typesBoundary = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
)

// TypesNullOnly and TypesEmpty are the indexes in TypesTables of the NULL-only and the empty table.
const (
	TypesNullOnly = 2
	TypesEmpty    = 3
)

// TypesTables returns the physical tables of the logical table.
func TypesTables(logical string) []metadata.Table {
	return MonthlyTables(logical, typesFrom, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), typesBoundary)
}

// TypeRow is one row of the space: its id, key and a literal per column (generated ones left out).
type TypeRow struct {
	ID     int64
	At     time.Time
	Values []string
}

// GenerateTypeRows returns n rows over cols, deterministic for a seed: keys anywhere in the
// tables but September, some at a month's first or last second; about one value in eight
// NULL, every value NULL in August.
func GenerateTypeRows(seed uint64, cols []TypeColumn, n int) []TypeRow {
	rng := rand.New(rand.NewPCG(seed, 0x7e9e))
	tables := TypesTables("t")
	var out []TypeRow
	for i := range n {
		var tb metadata.Table
		for {
			tb = tables[rng.IntN(len(tables))]
			if tb.Name != tables[TypesEmpty].Name {
				break
			}
		}
		at := tb.Min.Add(time.Duration(rng.Int64N(int64(tb.Max.Sub(tb.Min)/time.Second))) * time.Second)
		switch rng.IntN(8) {
		case 0:
			at = tb.Min
		case 1:
			at = tb.Max
		}
		r := TypeRow{ID: int64(i + 1), At: at}
		for _, c := range cols {
			if c.Generated() {
				continue
			}
			v := "NULL"
			if tb.Name != tables[TypesNullOnly].Name && rng.IntN(8) != 0 {
				v = c.Values[rng.IntN(len(c.Values))]
			}
			r.Values = append(r.Values, v)
		}
		out = append(out, r)
	}
	return out
}

// SplitTypeRows returns the rows of each table of tables.
func SplitTypeRows(rows []TypeRow, tables []metadata.Table) [][]TypeRow {
	out := make([][]TypeRow, len(tables))
	for _, r := range rows {
		for i, t := range tables {
			if !r.At.Before(t.Min) && !r.At.After(t.Max) {
				out[i] = append(out[i], r)
				break
			}
		}
	}
	return out
}

// InsertTypeRowsSQL returns INSERT statements loading rows into table, batch rows each.
func InsertTypeRowsSQL(table string, cols []TypeColumn, rows []TypeRow, batch int) []string {
	names := []string{"id", "ts"}
	for _, c := range cols {
		if !c.Generated() {
			names = append(names, c.Name)
		}
	}
	var out []string
	for len(rows) > 0 {
		n := min(batch, len(rows))
		var b strings.Builder
		fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", table, strings.Join(names, ", "))
		for i, r := range rows[:n] {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "(%d, '%s', %s)", r.ID, r.At.Format(time.DateTime), strings.Join(r.Values, ", "))
		}
		out = append(out, b.String())
		rows = rows[n:]
	}
	return out
}

// TypeSettings are the session settings the queries run in: the servers' defaults, a time zone
// of +09:00 (TIMESTAMP values read in it), an empty sql_mode and two div_precision_increments.
// Each is the value of time_zone, sql_mode ("DEFAULT": the server's) and
// div_precision_increment.
var TypeSettings = []struct {
	Name                  string
	TimeZone, SQLMode     string
	DivPrecisionIncrement int
}{
	{"defaults", "'+00:00'", "DEFAULT", 4},
	{"time_zone +09:00", "'+09:00'", "DEFAULT", 4},
	{"sql_mode ''", "'+00:00'", "''", 4},
	{"div_precision_increment 0", "'+00:00'", "DEFAULT", 0},
	{"div_precision_increment 12", "'+00:00'", "DEFAULT", 12},
}

// TypeQuery is one query of the column-type space.
type TypeQuery struct {
	Query
	// Column is the column the query is about.
	Column TypeColumn
	// Fold[i] is set when result column i is one of several values equal under Column's
	// collation that the server may return any of.
	Fold []bool
	// Setting is the index in TypeSettings of the session setting to run the query in.
	Setting int
	// Float is set for SUM and AVG of a FLOAT or DOUBLE column: one server adds the rows in the
	// order of its plan, another plan (or obroute's partial sums) in another, so the result is
	// one server's within the rounding of that many additions (see FloatTolerance).
	Float bool
}

// FloatTolerance is how far apart two sums of n values of at most maxAbs in magnitude, added
// in different orders, may be: n roundings of at most maxAbs each, and a relative 1e-12.
func FloatTolerance(n int, maxAbs, want float64) float64 {
	return float64(n)*maxAbs*0x1p-52 + 1e-12*math.Abs(want)
}

// MaxAbs returns the largest magnitude of the column's values that parse as numbers.
func (c TypeColumn) MaxAbs() float64 {
	m := 0.0
	for _, v := range c.Values {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			m = max(m, math.Abs(f))
		}
	}
	return m
}

// TypeShapes are the shapes of the queries drawn for each column.
var TypeShapes = []string{"rows", "distinct", "group", "group order", "group limit", "order limit", "aggregates", "sum avg"}

// TypeQueries returns the queries over logical for each column: with full, every shape of
// TypeShapes four times (four ranges); otherwise perColumn shapes drawn at random. One query in four
// runs in a session setting other than the defaults. Every range spans cold and hot tables.
func TypeQueries(seed uint64, logical string, cols []TypeColumn, full bool, perColumn int) []TypeQuery {
	d := newDraw(seed, 0x7193)
	var out []TypeQuery
	for _, c := range cols {
		shapes := TypeShapes
		if full {
			shapes = slices.Concat(TypeShapes, TypeShapes, TypeShapes, TypeShapes)
		} else {
			shapes = d.pick(TypeShapes, perColumn)
		}
		for _, s := range shapes {
			q := d.typeQuery(logical, c, s)
			if d.rng.IntN(4) == 0 {
				q.Setting = 1 + d.rng.IntN(len(TypeSettings)-1)
			}
			out = append(out, q)
		}
	}
	return out
}

// typeRange draws a range across cold and hot tables, as literals or ? arguments.
func (d *draw) typeRange(args *[]any) string {
	lo := []string{"2026-06-01", "2026-06-01 00:00:00", "2026-07-15 12:00:00", "2026-08-31 23:59:59", "2026-05-01"}[d.rng.IntN(5)]
	hi := []string{"2026-10-01 00:00:01", "2026-11-01", "2026-12-01", "2027-01-01", "2026-11-30 23:59:59"}[d.rng.IntN(5)]
	if d.rng.IntN(3) == 0 {
		*args = append(*args, lo, hi)
		return "ts >= ? AND ts < ?"
	}
	return fmt.Sprintf("ts >= '%s' AND ts < '%s'", lo, hi)
}

func (d *draw) typeQuery(logical string, c TypeColumn, shape string) TypeQuery {
	q := TypeQuery{Column: c}
	q.Kind = shape
	where := " FROM " + logical + " WHERE " + d.typeRange(&q.Args)
	n := c.Name
	text := c.Collation != ""
	limit := fmt.Sprintf(" LIMIT %d", 1+d.rng.IntN(8))
	switch shape {
	case "rows":
		q.SQL, q.Ordered = "SELECT id, "+n+where+" ORDER BY id", true
		q.Fold = []bool{false, false}
	case "distinct":
		q.SQL = "SELECT DISTINCT " + n + where
		q.Fold = []bool{text}
	case "group":
		q.SQL = "SELECT " + n + ", COUNT(*)" + where + " GROUP BY " + n
		q.Fold = []bool{text, false}
	case "group order":
		q.SQL, q.Ordered = "SELECT "+n+", COUNT(*)"+where+" GROUP BY "+n+" ORDER BY "+n+d.dir()+limit, true
		q.Fold = []bool{text, false}
	case "group limit":
		// MariaDB returns groups ordered by the GROUP BY keys: a LIMIT keeps the first ones.
		q.SQL, q.Ordered = "SELECT "+n+", COUNT(*)"+where+" GROUP BY "+n+limit, true
		q.Fold = []bool{text, false}
	case "order limit":
		q.SQL, q.Ordered = "SELECT id, "+n+where+" ORDER BY "+n+d.dir()+", id"+limit, true
		q.Fold = []bool{false, false}
	case "aggregates":
		q.SQL = "SELECT MIN(" + n + "), MAX(" + n + "), COUNT(DISTINCT " + n + "), COUNT(" + n + "), COUNT(*)" + where
		q.Fold = []bool{text, text, false, false, false}
	case "sum avg":
		q.SQL = "SELECT SUM(" + n + "), AVG(" + n + ")" + where
		q.Fold = []bool{false, false}
		q.Float = c.Def == "FLOAT" || c.Def == "DOUBLE"
	}
	return q
}
