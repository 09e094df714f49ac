package routing

import (
	"database/sql/driver"
	"strconv"
	"strings"
	"time"
)

// leg is what one sub-query fills into a template.
type leg struct {
	table    string       // physical table
	qual     string       // qualifier of the shard key in the clamp ("" = the physical table)
	key      string       // shard-key column
	keyType  ShardKeyType // its type, which the clamp is written in
	min, max time.Time    // the table's span
	open     bool         // the span is open above: the clamp has no upper bound
	// probe: the leg is asked for its column types only: the clamp selects what lies past the
	// table's span (see writeClamp).
	probe bool
	// none: the clamp is false (1 = 0), for the collations' signatures, one aggregate row.
	none  bool
	limit int64 // computed LIMIT row count
	rows  []template
	clock *stmtClock // the statement's instant, for its clock functions
	lits  []literal  // the statement's literals (Statement.lits)
	// skip[i] set: snippet i of the template is printed as NULL (a weight the merge does not
	// need: its column is not text).
	skip []bool
}

// clampLen is an upper bound of the clamp predicate's length beyond names.
const clampLen = 96

func (t *template) estimate(l *leg) int {
	n := t.size + 4*len(l.table) + 2*len(l.qual) + 2*len(l.key) + clampLen + t.clocks*clockLen
	for i := range l.lits {
		n += len(l.lits[i].text)
	}
	return n
}

// render appends the template filled for l.
func (t *template) render(b *strings.Builder, l *leg) {
	snip := 0
	for i := 0; i < len(t.pieces); i++ {
		switch pc := &t.pieces[i]; pc.kind {
		case pSnip:
			if snip < len(l.skip) && l.skip[snip] {
				writeString(b, "NULL")
				for t.pieces[i].kind != pSnipEnd {
					i++
				}
			}
			snip++
		case pSnipEnd:
		case pText:
			writeString(b, pc.text)
		case pTable:
			writeString(b, l.table)
		case pClamp:
			writeClamp(b, l)
		case pLimit:
			var buf [20]byte
			b.Write(strconv.AppendInt(buf[:0], l.limit, 10))
		case pRows:
			for j := range l.rows {
				if j > 0 {
					writeString(b, ", ")
				}
				l.rows[j].render(b, l)
			}
		case pClock:
			l.clock.write(b, pc.text)
		case pLit:
			writeString(b, l.lits[pc.lit].text)
		}
	}
}

// writeClamp writes the table's span as a predicate on the shard key, in the column's own type
// (time_keytype.go): key >= min_time and key < max_time + 1s. max_time is a DATETIME, whole
// seconds, so rows with a fraction of its last second (DATETIME(6) columns) belong to the table
// too. A span open above has no upper bound.
func writeClamp(b *strings.Builder, l *leg) {
	if l.none {
		writeString(b, "1 = 0")
		return
	}
	if l.probe {
		// The types probe runs on the first of several tables, so the statement's range goes
		// on past its span: key >= the end of its span reads none of its rows, but is no
		// condition the optimizer finds impossible. One that is (1 = 0) gives an empty grouped
		// result other column types than a result with rows: LONGTEXT for the TEXT of a
		// grouped JSON expression, VARCHAR for the ENUM of MIN(e).
		writeBound(b, l, true, l.max.Truncate(time.Second).Add(time.Second))
		return
	}
	writeBound(b, l, true, l.min)
	if !l.open {
		writeString(b, " and ")
		writeBound(b, l, false, l.max.Truncate(time.Second).Add(time.Second))
	}
}

// writeBound writes one end of the clamp: key >= at (lower) or key < at.
func writeBound(b *strings.Builder, l *leg, lower bool, at time.Time) {
	op := " < "
	if lower {
		op = " >= "
	}
	var buf [40]byte
	lit := buf[:0]
	switch l.keyType {
	case ShardKeyDate:
		// Days: from the first whole day on, up to the day holding the last instant.
		day := dateOf(at)
		if lower && !day.Equal(at) {
			day = day.AddDate(0, 0, 1)
		}
		if !lower {
			op, day = " <= ", dateOf(at.Add(-time.Nanosecond))
		}
		lit = append(appendDate(append(lit, "DATE'"...), day), '\'')
	case ShardKeyTimestamp:
		zone := l.clock.zone
		if ambiguousWall(at, zone) {
			// Its wall clock is two instants: compared as the instant itself.
			writeString(b, "unix_timestamp(")
			writeKey(b, l)
			writeString(b, ")")
			writeString(b, op)
			b.Write(appendUnix(lit, at))
			return
		}
		lit = append(appendTime(append(lit, '\''), wallIn(at, zone)), '\'')
	default:
		lit = append(appendTime(append(lit, '\''), at), '\'')
	}
	writeKey(b, l)
	writeString(b, op)
	b.Write(lit)
}

// writeKey writes the shard key, qualified.
func writeKey(b *strings.Builder, l *leg) {
	if l.qual != "" {
		writeString(b, l.qual)
	} else {
		writeString(b, l.table)
	}
	writeByte(b, '.')
	writeString(b, l.key)
}

// appendUnix writes t as seconds since the epoch, with its microseconds when it has them.
func appendUnix(b []byte, t time.Time) []byte {
	b = strconv.AppendInt(b, t.Unix(), 10)
	if us := t.Nanosecond() / 1000; us != 0 {
		b = append(b, '.')
		for div := 100000; div > 0; div /= 10 {
			b = append(b, byte('0'+us/div%10))
		}
	}
	return b
}

// appendIndexed appends the values of args at idx (nil for an index out of range), numbering
// their ordinals on from len(dst)+1.
//
// Not inlined: copied into each of its many call sites it would grow every
// binary that imports the driver (see driver/import_test.go).
//
//go:noinline
func appendIndexed(dst, args []driver.NamedValue, idx []int) []driver.NamedValue {
	for _, i := range idx {
		v := driver.NamedValue{Ordinal: len(dst) + 1}
		if i >= 0 && i < len(args) {
			v.Value = args[i].Value
		}
		dst = append(dst, v)
	}
	return dst
}

// appendArgs appends the arguments of one rendering of t, renumbering ordinals from len(dst)+1.
func (t *template) appendArgs(dst, args []driver.NamedValue, l *leg) []driver.NamedValue {
	add := func(idx []int) { dst = appendIndexed(dst, args, idx) }
	if l != nil && len(l.skip) > 0 {
		// The args of skipped snippets are not printed.
		from := 0
		for j, sn := range t.snips {
			if j < len(l.skip) && l.skip[j] {
				add(t.args[from:sn.from])
				from = sn.to
			}
		}
		add(t.args[from:])
		return dst
	}
	if l == nil || len(l.rows) == 0 {
		add(t.args)
		return dst
	}
	add(t.args[:t.rowsAt])
	for j := range l.rows {
		add(l.rows[j].args)
	}
	add(t.args[t.rowsAt:])
	return dst
}

// argCount is the number of arguments one rendering of t takes.
func (t *template) argCount(l *leg) int {
	n := len(t.args)
	if l != nil {
		for j := range l.rows {
			n += len(l.rows[j].args)
		}
	}
	return n
}
