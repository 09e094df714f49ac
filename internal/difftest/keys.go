package difftest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/obroute/obroute/metadata"
)

// The shard-key space: one logical table per type a shard key can have (DATETIME(0) to
// DATETIME(6), DATE, TIMESTAMP(0) to TIMESTAMP(6)), each split the same way into physical tables
// whose boundaries meet the daylight-saving changes of Europe/Berlin and America/New_York in
// 2026, and queries whose ranges start and end near those boundaries and changes, read in the
// session's time zone.

// KeyType is one shard-key column type.
type KeyType struct {
	// SQL is the column type: DATETIME(3), DATE, TIMESTAMP(0).
	SQL string
	// Date and Stamp tell DATE and TIMESTAMP apart from DATETIME.
	Date, Stamp bool
	// Digits are the fractional-second digits of a DATETIME or TIMESTAMP.
	Digits int
}

// KeyTypes lists every type a shard key can have.
func KeyTypes() []KeyType {
	var out []KeyType
	for p := 0; p <= 6; p++ {
		out = append(out, KeyType{SQL: fmt.Sprintf("DATETIME(%d)", p), Digits: p})
	}
	out = append(out, KeyType{SQL: "DATE", Date: true})
	for p := 0; p <= 6; p++ {
		out = append(out, KeyType{SQL: fmt.Sprintf("TIMESTAMP(%d)", p), Stamp: true, Digits: p})
	}
	return out
}

// Logical returns the logical table of the type: k_datetime3, k_date, k_timestamp0.
func (k KeyType) Logical() string {
	name := strings.ToLower(strings.NewReplacer("(", "", ")", "").Replace(k.SQL))
	return "k_" + name
}

// unit is the step of the type's values.
func (k KeyType) unit() time.Duration {
	if k.Date {
		return 24 * time.Hour
	}
	d := time.Second
	for range k.Digits {
		d /= 10
	}
	return d
}

// KeyTableSQL creates one table of the key space; the first %s is the table name, the second
// the key's type. The key is indexed: MariaDB's optimiser reads it, as it would in production.
const KeyTableSQL = `CREATE TABLE %s (
  id BIGINT NOT NULL PRIMARY KEY,
  ts %s NULL,
  amount DECIMAL(10,2) NULL,
  note VARCHAR(16) NULL,
  KEY idx_ts (ts)
) DEFAULT CHARSET=utf8mb4`

// Daylight-saving changes of 2026 (UTC instants): Europe/Berlin goes forward at 01:00 on March
// 29 and back at 01:00 on October 25; America/New_York forward at 07:00 on March 8 and back at
// 06:00 on November 1.
var (
	BerlinForward   = time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC)
	BerlinBack      = time.Date(2026, 10, 25, 1, 0, 0, 0, time.UTC)
	NewYorkForward  = time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)
	NewYorkBack     = time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC)
	KeyClock        = time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC) // the statements' clock
	keySpansFrom    = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	keySpansTo      = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	keyHotBoundary  = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	keyDataGapStart = time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	keyDataGapEnd   = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
)

// keyBounds are the boundaries of the physical tables (UTC; for a DATETIME or DATE key, the
// same wall clocks): March to the Berlin spring change, then to April; no table from April to
// September; October to the 24th, the 24th, the 25th (whose start, 00:00 UTC, is 02:00 CEST, a
// wall clock Berlin repeats), to New York's autumn change (06:00 UTC, 01:00 EST, a wall clock
// New York repeats), November, and December, empty and open above.
var keyBounds = [][2]time.Time{
	{keySpansFrom, BerlinForward},
	{BerlinForward, keyDataGapStart},
	{keyDataGapEnd, time.Date(2026, 10, 24, 0, 0, 0, 0, time.UTC)},
	{time.Date(2026, 10, 24, 0, 0, 0, 0, time.UTC), time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC)},
	{time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC), time.Date(2026, 10, 26, 0, 0, 0, 0, time.UTC)},
	{time.Date(2026, 10, 26, 0, 0, 0, 0, time.UTC), NewYorkBack},
	{NewYorkBack, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
	{time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), keySpansTo},
}

// KeyNullOnly is the index in KeyTables of the table whose amount and note are all NULL, and
// KeyEmpty the one with no rows.
const (
	KeyNullOnly = 3
	KeyEmpty    = 7
)

// KeyTables returns the physical tables of a logical table of the key space: the hot window
// (the current month and one before, at KeyClock) starts on 2026-10-01, so March's tables are
// cold and the others hot.
func KeyTables(logical string) []metadata.Table {
	out := make([]metadata.Table, len(keyBounds))
	for i, b := range keyBounds {
		name := fmt.Sprintf("%s_%s", logical, b[0].Format("20060102"))
		if b[0].Hour() != 0 {
			name += b[0].Format("15")
		}
		out[i] = metadata.Table{Name: name, Min: b[0], Max: b[1].Add(-time.Second), Hot: !b[0].Before(keyHotBoundary)}
	}
	return out
}

// KeyRow is one row of the key space; a nil At is a NULL key.
type KeyRow struct {
	ID     int64
	At     *time.Time // the key: a UTC instant of a TIMESTAMP, a wall clock of a DATETIME, a day
	Amount *string
	Note   *string
}

// keyAnchors are the instants the data and the ranges gather around: every table boundary
// and every daylight-saving change.
func keyAnchors() []time.Time {
	var out []time.Time
	for _, b := range keyBounds {
		out = append(out, b[0], b[1])
	}
	return append(out, BerlinForward, BerlinBack, NewYorkForward, NewYorkBack, KeyClock)
}

// GenerateKeyRows returns n rows of type k, deterministic for a seed: most within a day and a
// half of an anchor (some exactly at it, or one step of the type from it), the others anywhere
// in the tables' spans, every value a value of the type (fractions of its digits); about one in
// forty keys is NULL.
func GenerateKeyRows(seed uint64, k KeyType, n int) []KeyRow {
	rng := rand.New(rand.NewPCG(seed, 0x4b45))
	anchors := keyAnchors()
	out := make([]KeyRow, 0, n)
	for i := range n {
		r := KeyRow{ID: int64(i + 1)}
		var at time.Time
		a := anchors[rng.IntN(len(anchors))]
		switch x := rng.IntN(10); {
		case x == 0:
			at = a
		case x == 1:
			at = a.Add(-k.unit())
		case x < 7:
			at = a.Add(time.Duration(rng.Int64N(int64(72*time.Hour))) - 36*time.Hour)
		default:
			b := keyBounds[rng.IntN(len(keyBounds)-1)] // the last table stays empty
			at = b[0].Add(time.Duration(rng.Int64N(int64(b[1].Sub(b[0])))))
		}
		at = at.Truncate(k.unit())
		if k.Date {
			at = time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
		}
		if t := keyTable(at); t < 0 || t == KeyEmpty {
			continue // a time no table holds (or the empty one): left out
		}
		if rng.IntN(40) != 0 {
			r.At = &at
		}
		if rng.IntN(6) != 0 {
			v := fmt.Sprintf("%d.%02d", rng.IntN(2000)-500, rng.IntN(100))
			r.Amount = &v
		}
		if rng.IntN(5) != 0 {
			v := []string{"a", "b", "c "}[rng.IntN(3)] // none equal to another in the collation
			r.Note = &v
		}
		if r.At != nil && keyTable(*r.At) == KeyNullOnly {
			r.Amount, r.Note = nil, nil
		}
		out = append(out, r)
	}
	return out
}

// keyTable returns the index of the table holding the key value at (a DATE's day as its
// midnight), -1 for none.
func keyTable(at time.Time) int {
	for i, b := range keyBounds {
		if !at.Before(b[0]) && at.Before(b[1]) {
			return i
		}
	}
	return -1
}

// SplitKeyRows returns the rows of each table of tables (KeyTables' order); the rows with a
// NULL key go with the first table (where no range reads them).
func SplitKeyRows(rows []KeyRow, tables []metadata.Table) [][]KeyRow {
	out := make([][]KeyRow, len(tables))
	for _, r := range rows {
		i := 0
		if r.At != nil {
			i = keyTable(*r.At)
		}
		out[i] = append(out[i], r)
	}
	return out
}

// InsertKeyRowsSQL returns INSERT statements for rows, batch rows each, values as literals (a
// session in UTC stores a TIMESTAMP's instants as given).
func InsertKeyRowsSQL(table string, rows []KeyRow, batch int) []string {
	var out []string
	for len(rows) > 0 {
		n := min(batch, len(rows))
		var b strings.Builder
		fmt.Fprintf(&b, "INSERT INTO %s (id, ts, amount, note) VALUES ", table)
		for i, r := range rows[:n] {
			if i > 0 {
				b.WriteString(", ")
			}
			at := "NULL"
			if r.At != nil {
				at = "'" + r.At.Format("2006-01-02 15:04:05.999999") + "'"
			}
			fmt.Fprintf(&b, "(%d, %s, %s, %s)", r.ID, at, textOrNull(r.Amount, false), textOrNull(r.Note, true))
		}
		out = append(out, b.String())
		rows = rows[n:]
	}
	return out
}
