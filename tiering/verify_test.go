package tiering_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/obroute/obroute/tiering"
)

// standardMonths: November and December on cold, January to March on hot, rows at both edges
// of each table.
func standardMonths() []month {
	return []month{
		{"2024-11", "cold", []string{"2024-11-01 00:00:00", "2024-11-30 23:59:59.999999"}},
		{"2024-12", "cold", []string{"2024-12-01 00:00:00", "2024-12-15 12:00:00"}},
		{"2025-01", "hot", []string{"2025-01-01 00:00:00", "2025-01-31 23:59:59"}},
		{"2025-02", "hot", []string{"2025-02-10 08:00:00"}},
		{"2025-03", "hot", []string{"2025-03-01 00:00:00", "2025-03-14 09:30:00"}},
	}
}

// TestVerify: a correct store passes; each injected fault is found, named and makes the report
// fail; warnings (a gap, rows past the newest table's max_time) do not.
func TestVerify(t *testing.T) {
	now := "2025-03-15 12:00:00"
	cases := []struct {
		name   string
		inject func(t *testing.T, st *store)
		kinds  []tiering.FindingKind // the findings expected, in order
		ok     bool
		says   string
	}{
		{name: "correct store", ok: true},
		{name: "a row past max_time", kinds: []tiering.FindingKind{tiering.FindingOutside},
			inject: func(t *testing.T, st *store) {
				st.hot.Exec(t, "INSERT INTO orders_202501 (id, order_time) VALUES (100, '2025-02-01 06:00:00')")
			},
			says: "orders_202501 on hot holds 1 row(s) up to 2025-02-01 06:00:00, past its max_time 2025-01-31 23:59:59: routing hides them"},
		{name: "a row before min_time", kinds: []tiering.FindingKind{tiering.FindingOutside},
			inject: func(t *testing.T, st *store) {
				st.cold.Exec(t, "INSERT INTO orders_202412 (id, order_time) VALUES (100, '2024-11-30 23:00:00')")
			},
			says: "orders_202412 on cold holds 1 row(s) from 2024-11-30 23:00:00, before its min_time 2024-12-01 00:00:00"},
		{name: "an overlapping span", kinds: []tiering.FindingKind{tiering.FindingOverlap},
			inject: func(t *testing.T, st *store) {
				st.hot.Exec(t, "UPDATE shard_metadata SET max_time = '2025-02-03 00:00:00' WHERE table_name = 'orders_202501'")
			},
			says: "orders_202501 and orders_202502 overlap from 2025-02-01 00:00:00 to 2025-02-03 00:00:01: a row in both is counted twice"},
		{name: "a table missing on its backend", kinds: []tiering.FindingKind{tiering.FindingMissing},
			inject: func(t *testing.T, st *store) {
				st.hot.Exec(t, "UPDATE shard_metadata SET location = 'cold', is_hot = 0 WHERE table_name = 'orders_202501'")
			},
			says: "orders_202501 is not on cold, where the shard metadata places it: every statement on it fails; it is on hot: set its location to 'hot'"},
		{name: "a location naming no backend", kinds: []tiering.FindingKind{tiering.FindingLocation},
			inject: func(t *testing.T, st *store) {
				st.hot.Exec(t, "UPDATE shard_metadata SET location = 'archive' WHERE table_name = 'orders_202411'")
			},
			says: `orders_202411 has location "archive", which is not a configured backend`},
		{name: "a gap is a warning", kinds: []tiering.FindingKind{tiering.FindingGap}, ok: true,
			inject: func(t *testing.T, st *store) {
				st.hot.Exec(t, "UPDATE shard_metadata SET max_time = '2025-02-27 23:59:59' WHERE table_name = 'orders_202502'")
			},
			says: "orders: no table covers 2025-02-28 00:00:00 to 2025-03-01 00:00:00 (between orders_202502 and orders_202503); INSERTs there are refused"},
		{name: "rows past the newest table's max_time are a warning", kinds: []tiering.FindingKind{tiering.FindingOpenEnd}, ok: true,
			inject: func(t *testing.T, st *store) {
				st.hot.Exec(t, "INSERT INTO orders_202503 (id, order_time) VALUES (100, '2025-04-01 00:00:00')")
			},
			says: "read while it is the newest table, hidden once a later one exists"},
		{name: "a table defined otherwise than the newest", kinds: []tiering.FindingKind{tiering.FindingDefinition},
			inject: func(t *testing.T, st *store) {
				// An ALTER that reached the newest tables and not orders_202412 (a partial DDL fan-out).
				for _, m := range []string{"orders_202501", "orders_202502", "orders_202503"} {
					st.hot.Exec(t, "ALTER TABLE "+m+" ADD COLUMN extra VARCHAR(20) NULL")
				}
				st.cold.Exec(t, "ALTER TABLE orders_202411 ADD COLUMN extra VARCHAR(20) NULL")
			},
			says: "orders_202412 on cold is defined otherwise than the newest table orders_202503 on hot, which is what orders shows"},
		{name: "the current time not covered", kinds: []tiering.FindingKind{tiering.FindingNotCovered}, ok: true,
			inject: func(t *testing.T, st *store) {
				st.hot.Exec(t, "UPDATE shard_metadata SET max_time = '2025-03-14 23:59:59' WHERE table_name = 'orders_202503'")
			},
			says: "no table covers the current time 2025-03-15 12:00:00; INSERTs now are refused: run obroute metadata prepare"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st := newStore(t, standardMonths()...)
			if c.inject != nil {
				c.inject(t, st)
			}
			r, err := st.s.Verify(context.Background(), at(t, now))
			if err != nil {
				t.Fatal(err)
			}
			var kinds []tiering.FindingKind
			var text strings.Builder
			for _, f := range r.Findings {
				kinds = append(kinds, f.Kind)
			}
			if err := tiering.WriteReport(&text, r); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(kinds, c.kinds) || r.OK() != c.ok || r.Tables != 5 || !strings.Contains(text.String(), c.says) {
				t.Errorf("findings %v, OK %v, %d tables; want %v, OK %v, 5 tables, saying %q:\n%s", kinds, r.OK(), r.Tables, c.kinds, c.ok, c.says, text.String())
			}
			t.Logf("report:\n%s", text.String())
		})
	}
}
