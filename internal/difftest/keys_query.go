package difftest

import (
	"fmt"
	"strings"
	"time"
)

// KeyQueryConfig is what the queries of the shard-key space are drawn for: the session their
// ranges are written in.
type KeyQueryConfig struct {
	// Types are the key types to draw tables from (KeyTypes()).
	Types []KeyType
	// Zone is the session's time zone: a TIMESTAMP key's ranges are written as its wall clocks
	// around the anchors (table boundaries, daylight-saving changes).
	Zone *time.Location
	// Loc is go-sql-driver's loc: a time.Time argument is sent as its wall clock in Loc, so a
	// wall clock W is passed as W's fields in Loc.
	Loc *time.Location
	// Times are each type's key values (as GenerateKeyRows gives them), for = and IN.
	Times map[string][]time.Time
	// FirstID is the id after which the INSERTs number their rows.
	FirstID int64
}

// KeyGenerator draws queries and INSERTs over the shard-key space from a seed.
type KeyGenerator struct {
	draw
	cfg    KeyQueryConfig
	nextID int64
}

// NewKeyGenerator returns a generator for seed.
func NewKeyGenerator(seed uint64, cfg KeyQueryConfig) *KeyGenerator {
	return &KeyGenerator{draw: newDraw(seed, 0x6b79), cfg: cfg, nextID: cfg.FirstID}
}

// KeyQuery is one query of the shard-key space: its SQL names the logical table of Type, which
// is also the reference table's name.
type KeyQuery struct {
	Query
	Type KeyType
}

// Next draws one SELECT.
func (g *KeyGenerator) Next() KeyQuery {
	k := g.cfg.Types[g.rng.IntN(len(g.cfg.Types))]
	var args []any
	shape := g.rng.IntN(10)
	// MIN and MAX of the key alone take MariaDB's MIN/MAX optimisation, which compares the key
	// with its bounds cut to the column's type (a DATE's day, a DATETIME(p)'s p digits) and so
	// answers otherwise than the rows the WHERE selects (MariaDB 10.11): their bounds are
	// written in the column's type, where one server has one answer.
	cond := g.cond(k, &args, shape == 2)
	t := k.Logical()
	q := KeyQuery{Type: k}
	switch shape {
	case 0:
		q.Kind, q.Ordered = "rows", true
		q.SQL = fmt.Sprintf("SELECT id, ts, amount, note FROM %s WHERE %s ORDER BY id", t, cond)
	case 1:
		q.Kind = "aggregates"
		q.SQL = fmt.Sprintf("SELECT COUNT(*), COUNT(ts), SUM(amount), MIN(amount), MAX(note) FROM %s WHERE %s", t, cond)
	case 2:
		q.Kind = "min/max"
		q.SQL = fmt.Sprintf("SELECT MIN(ts), MAX(ts) FROM %s WHERE %s", t, cond)
	case 3:
		q.Kind, q.Ordered = "order by key", true
		d := g.dir()
		q.SQL = fmt.Sprintf("SELECT id, ts FROM %s WHERE %s ORDER BY ts%s, id%s%s", t, cond, d, d, g.literalLimit(2))
	case 4:
		q.Kind, q.Ordered = "group by day", true
		q.SQL = fmt.Sprintf("SELECT DATE(ts) AS d, COUNT(*), SUM(amount) FROM %s WHERE %s GROUP BY DATE(ts) ORDER BY d", t, cond)
	case 5:
		q.Kind, q.Ordered = "group by key", true
		q.SQL = fmt.Sprintf("SELECT ts, COUNT(*) FROM %s WHERE %s GROUP BY ts ORDER BY ts", t, cond)
	case 6:
		q.Kind = "distinct key"
		q.SQL = fmt.Sprintf("SELECT DISTINCT ts FROM %s WHERE %s", t, cond)
	case 7:
		q.Kind = "count distinct"
		q.SQL = fmt.Sprintf("SELECT COUNT(DISTINCT ts), COUNT(*) FROM %s WHERE %s", t, cond)
	case 8:
		q.Kind, q.Ordered = "key expressions", true
		q.SQL = fmt.Sprintf("SELECT id, UNIX_TIMESTAMP(ts), ts + INTERVAL 1 HOUR, CAST(ts AS CHAR), HOUR(ts) FROM %s WHERE %s ORDER BY id", t, cond)
	default:
		q.Kind, q.Ordered = "rows", true
		q.SQL = fmt.Sprintf("SELECT id, ts FROM %s WHERE %s ORDER BY id%s", t, cond, g.literalLimit(3))
	}
	q.Args = args
	return q
}

// KeyInsert is one INSERT of the shard-key space: a row of ID into the logical table of Type.
type KeyInsert struct {
	KeyQuery
	ID int64
}

// NextInsert draws an INSERT of one row whose key is written near an anchor of the hot tables
// (October and November 2026), with a fraction that may be finer than the column keeps.
func (g *KeyGenerator) NextInsert() KeyInsert {
	k := g.cfg.Types[g.rng.IntN(len(g.cfg.Types))]
	var args []any
	var w time.Time
	for {
		a := keyAnchors()[g.rng.IntN(len(keyAnchors()))]
		if a.Before(keyHotBoundary) || !a.Before(keyBounds[KeyEmpty][0]) {
			continue
		}
		w = g.offset(g.wall(k, a), k)
		if !w.Before(keyHotBoundary.AddDate(0, 0, 1)) && w.Before(keyBounds[KeyEmpty][0].AddDate(0, 0, -1)) {
			break
		}
	}
	g.nextID++
	q := KeyInsert{KeyQuery: KeyQuery{Type: k}, ID: g.nextID}
	q.Kind = "insert"
	q.SQL = fmt.Sprintf("INSERT INTO %s (id, ts, amount) VALUES (%d, %s, 1.50)", k.Logical(), q.ID, g.value(w, k, &args, false, false))
	q.Args = args
	return q
}

// wall returns the wall clock the instant a reads as for key type k: a TIMESTAMP's in the
// session's zone, a DATETIME's or DATE's is the value itself.
func (g *KeyGenerator) wall(k KeyType, a time.Time) time.Time {
	if k.Stamp {
		w := a.In(g.cfg.Zone)
		return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), time.UTC)
	}
	return a
}

// offset moves w a little: not at all, by the type's step, a microsecond, a second, minutes,
// an hour or two (into or across a repeated or skipped hour), or up to a day and a half.
func (g *KeyGenerator) offset(w time.Time, k KeyType) time.Time {
	sign := time.Duration(1)
	if g.rng.IntN(2) == 0 {
		sign = -1
	}
	switch g.rng.IntN(9) {
	case 0, 1:
		return w
	case 2:
		return w.Add(sign * k.unit())
	case 3:
		return w.Add(sign * time.Microsecond)
	case 4:
		return w.Add(sign * time.Second)
	case 5:
		return w.Add(sign * time.Duration(1+g.rng.IntN(59)) * time.Minute)
	case 6:
		return w.Add(sign * time.Duration(1+g.rng.IntN(2)) * time.Hour)
	case 7:
		return w.Add(sign * time.Duration(g.rng.IntN(7)) * 30 * time.Minute)
	}
	return w.Add(sign * time.Duration(g.rng.Int64N(int64(36*time.Hour))))
}

// point draws a wall clock for a range bound: around an anchor, or a key value of the data;
// with exact, a value of the type.
func (g *KeyGenerator) point(k KeyType, exact bool) time.Time {
	var w time.Time
	if ts := g.cfg.Times[k.SQL]; len(ts) > 0 && g.rng.IntN(4) == 0 {
		w = g.wall(k, ts[g.rng.IntN(len(ts))])
	} else {
		a := keyAnchors()
		w = g.offset(g.wall(k, a[g.rng.IntN(len(a))]), k)
	}
	if exact {
		w = w.Truncate(k.unit())
		if k.Stamp { // a wall clock the zone skips is no TIMESTAMP: the one after the jump
			w = g.wall(k, time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), g.cfg.Zone))
		}
	}
	return w
}

// cond draws a condition on the key; with exact, every value in it is one of the type.
func (g *KeyGenerator) cond(k KeyType, args *[]any, exact bool) string {
	point := func() time.Time { return g.point(k, exact) }
	lo, hi := point(), point()
	if hi.Before(lo) {
		lo, hi = hi, lo
	}
	if g.rng.IntN(8) == 0 { // a wide range, across the tables and the gap
		lo = lo.AddDate(0, -g.rng.IntN(8), 0)
	}
	v := func(t time.Time) string { return g.value(t, k, args, true, exact) }
	c := g.rng.IntN(14)
	if exact && (c == 10 || c == 8 && k.Date) {
		c = 12 // no zero or invalid dates, no NOW() - INTERVAL n HOUR for a DATE
	}
	if c == 3 || c == 4 {
		// = and IN read the index by the value stored as the column's type (at its precision,
		// rounded with TIME_ROUND_FRACTIONAL, cut otherwise; a skipped wall clock as the instant
		// after the jump) and compare it whole in a scan: their values are the type's.
		exact = true
		lo, hi = g.point(k, true), g.point(k, true)
		v = func(t time.Time) string { return g.value(t, k, args, true, true) }
	}
	switch c {
	case 0:
		return fmt.Sprintf("ts BETWEEN %s AND %s", v(lo), v(hi))
	case 1:
		return fmt.Sprintf("ts > %s AND ts <= %s", v(lo), v(hi))
	case 2:
		return fmt.Sprintf("ts >= %s", v(lo))
	case 3:
		return fmt.Sprintf("ts = %s", v(lo))
	case 4:
		return fmt.Sprintf("ts IN (%s, %s, %s)", v(lo), v(hi), v(g.point(k, true)))
	case 5:
		mid := point()
		return fmt.Sprintf("(ts >= %s AND ts < %s) OR (ts > %s AND ts <= %s)", v(lo), v(hi), v(mid), v(mid.Add(time.Duration(g.rng.IntN(48))*time.Hour).Truncate(k.unit())))
	case 6:
		return fmt.Sprintf("ts >= %s AND ts < %s AND ts <> %s", v(lo), v(hi), v(point()))
	case 7:
		return fmt.Sprintf("ts >= %s AND NOT (ts >= %s)", v(lo), v(hi))
	case 8:
		n, m := 1+g.rng.IntN(72), g.rng.IntN(48)
		return fmt.Sprintf("ts >= NOW() - INTERVAL %d HOUR AND ts < NOW() + INTERVAL %d HOUR", n*24*g.rng.IntN(3)+n, m)
	case 9:
		return fmt.Sprintf("ts >= CURDATE() - INTERVAL %d DAY AND ts < %s", 1+g.rng.IntN(60), v(KeyClock.AddDate(0, 0, 20)))
	case 10:
		// A bound the server reads with a warning: a zero or an invalid date.
		return fmt.Sprintf("ts > %s AND ts < %s", g.pick1("'0000-00-00'", "'2026-02-30'", "'2026-10-00'", "'2026-13-01 00:00:00'"), v(hi))
	case 11:
		// Nothing holds April to September: an empty range, typed by one table.
		return fmt.Sprintf("ts >= '2026-%02d-01' AND ts < '2026-%02d-15'", 4+g.rng.IntN(5), 5+g.rng.IntN(4))
	}
	return fmt.Sprintf("ts >= %s AND ts < %s", v(lo), v(hi))
}

func (g *KeyGenerator) pick1(items ...string) string { return items[g.rng.IntN(len(items))] }

// value writes the wall clock w as a literal or a ? argument in a format MySQL reads: with as
// many fractional digits as the type keeps, fewer, more (up to 7), a date alone at midnight, a
// number, a typed literal, a string argument or a time.Time argument (in Loc).
// With exact the value is one of the type: no more digits than it keeps, a day for a DATE.
func (g *KeyGenerator) value(w time.Time, k KeyType, args *[]any, rangeBound, exact bool) string {
	digits := k.Digits
	switch g.rng.IntN(4) {
	case 0:
		digits = 6
	case 1:
		digits = g.rng.IntN(7)
	}
	if exact {
		digits = min(digits, k.Digits)
	}
	text := w.Format("2006-01-02 15:04:05")
	if digits > 0 || w.Nanosecond() != 0 {
		d := max(digits, fracDigits(w))
		text += w.Format(".000000")[:1+d]
		if g.rng.IntN(12) == 0 && d == 6 && !exact && rangeBound {
			text += fmt.Sprint(g.rng.IntN(10)) // a seventh digit: MariaDB truncates it
		}
	}
	midnight := w.Equal(time.Date(w.Year(), w.Month(), w.Day(), 0, 0, 0, 0, time.UTC))
	if exact && k.Date {
		switch g.rng.IntN(4) {
		case 0:
			return "DATE '" + w.Format(time.DateOnly) + "'"
		case 1:
			*args = append(*args, w.Format(time.DateOnly))
			return "?"
		case 2:
			return w.Format("20060102")
		}
		return "'" + w.Format(time.DateOnly) + "'"
	}
	switch g.rng.IntN(9) {
	case 0:
		if midnight {
			return "'" + w.Format(time.DateOnly) + "'"
		}
	case 1:
		if w.Nanosecond() == 0 {
			return w.Format("20060102150405")
		}
	case 2:
		return "TIMESTAMP '" + text + "'"
	case 3:
		if midnight && rangeBound {
			return "DATE '" + w.Format(time.DateOnly) + "'"
		}
	case 4:
		*args = append(*args, text)
		return "?"
	case 5:
		loc := g.cfg.Loc
		if loc == nil {
			loc = time.UTC
		}
		*args = append(*args, time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc))
		return "?"
	case 6:
		return "'" + strings.ReplaceAll(text, "-", "/") + "'"
	}
	return "'" + text + "'"
}

// fracDigits is the number of fractional digits w needs.
func fracDigits(w time.Time) int {
	us := w.Nanosecond() / 1000
	if us == 0 {
		return 0
	}
	d := 6
	for us%10 == 0 {
		us /= 10
		d--
	}
	return d
}
