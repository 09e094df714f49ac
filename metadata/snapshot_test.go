package metadata

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// at parses "2006-01-02" or "2006-01-02 15:04:05" as UTC.
func at(t testing.TB, s string) time.Time {
	t.Helper()
	layout := time.DateTime
	if len(s) == len(time.DateOnly) {
		layout = time.DateOnly
	}
	v, err := time.ParseInLocation(layout, s, time.UTC)
	if err != nil {
		t.Fatalf("bad test time %q: %v", s, err)
	}
	return v
}

// tbl is a table spanning lo..hi.
func tbl(t testing.TB, name, lo, hi string, hot bool) Table {
	return Table{Name: name, Min: at(t, lo), Max: at(t, hi), Hot: hot}
}

func names(ts []Table) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// ordersTables is a logical table "orders" by month, a logical table
// "order_items" whose prefix "order" is also a prefix, and a stray table.
func ordersTables(t testing.TB) []Table {
	return []Table{
		tbl(t, "orders_202503", "2025-03-01", "2025-03-31 23:59:59", true),
		tbl(t, "orders_202501", "2025-01-01", "2025-01-31 23:59:59", true),
		tbl(t, "orders_202412", "2024-12-01", "2024-12-31 23:59:59", false),
		tbl(t, "orders_202502", "2025-02-01", "2025-02-28 23:59:59", true),
		tbl(t, "order_items_202501", "2025-01-01", "2025-01-31 23:59:59", true),
		tbl(t, "orders2_202501", "2025-01-01", "2025-01-31 23:59:59", true),
		tbl(t, "ordersx", "2020-01-01", "2020-01-01", false),
	}
}

func TestNewSnapshotRejectsBadTables(t *testing.T) {
	good := tbl(t, "orders_202501", "2025-01-01", "2025-01-31", true)
	tests := []struct {
		name   string
		tables []Table
		want   error
	}{
		{"empty name", []Table{{Min: good.Min, Max: good.Max}}, ErrInvalidTable},
		{"zero min", []Table{{Name: "t_1", Max: good.Max}}, ErrInvalidTable},
		{"zero max", []Table{{Name: "t_1", Min: good.Min}}, ErrInvalidTable},
		{"min after max", []Table{tbl(t, "t_1", "2025-02-01", "2025-01-31", false)}, ErrInvalidTable},
		{"duplicate name", []Table{good, tbl(t, "orders_202501", "2025-02-01", "2025-02-02", false)}, ErrDuplicateTable},
		{"name with a quote", []Table{tbl(t, "orders_202501 where 1; drop table users; --", "2025-01-01", "2025-01-31", false)}, ErrInvalidTable},
		{"name with a backquote", []Table{tbl(t, "orders_202501`", "2025-01-01", "2025-01-31", false)}, ErrInvalidTable},
		{"name too long", []Table{tbl(t, "orders_"+strings.Repeat("9", 58), "2025-01-01", "2025-01-31", false)}, ErrInvalidTable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSnapshot(tt.tables, time.Time{})
			if !errors.Is(err, tt.want) {
				t.Fatalf("NewSnapshot error = %v, want %v", err, tt.want)
			}
			if s != nil {
				t.Fatalf("NewSnapshot returned a snapshot with error %v", err)
			}
			if name := tt.tables[len(tt.tables)-1].Name; name != "" && !strings.Contains(err.Error(), name) {
				t.Fatalf("the error %q does not name the row %q", err, name)
			}
		})
	}
}

func TestNewSnapshotAcceptsSingleInstantAndEmpty(t *testing.T) {
	for _, tables := range [][]Table{nil, {tbl(t, "t_1", "2025-01-01 10:00:00", "2025-01-01 10:00:00", false)}} {
		s, err := NewSnapshot(tables, time.Time{})
		if err != nil {
			t.Fatalf("NewSnapshot(%v): %v", tables, err)
		}
		if s.Len() != len(tables) {
			t.Fatalf("Len = %d, want %d", s.Len(), len(tables))
		}
	}
}

func TestSnapshotTablesSortedByMinThenName(t *testing.T) {
	loaded := at(t, "2025-03-15 04:00:00")
	s, err := NewSnapshot(ordersTables(t), loaded)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ordersx", "orders_202412", "order_items_202501", "orders2_202501", "orders_202501", "orders_202502", "orders_202503"}
	if got := names(s.Tables()); !slices.Equal(got, want) {
		t.Fatalf("Tables = %v, want %v", got, want)
	}
	if !s.LoadedAt().Equal(loaded) {
		t.Fatalf("LoadedAt = %v, want %v", s.LoadedAt(), loaded)
	}
}

func TestSnapshotIsImmutable(t *testing.T) {
	in := ordersTables(t)
	s, err := NewSnapshot(in, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	in[0].Name = "changed_by_caller"
	got := s.Tables()
	got[0].Name = "changed_by_reader"
	if _, ok := s.Lookup("orders_202503"); !ok {
		t.Fatal("changing the input slice changed the snapshot")
	}
	if s.Tables()[0].Name != "ordersx" {
		t.Fatalf("changing the result of Tables changed the snapshot: first is %q", s.Tables()[0].Name)
	}
}

func TestSnapshotLookup(t *testing.T) {
	s, err := NewSnapshot(ordersTables(t), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := s.Lookup("orders_202412")
	if !ok || got.Hot || !got.Min.Equal(at(t, "2024-12-01")) {
		t.Fatalf("Lookup(orders_202412) = %+v, %v", got, ok)
	}
	if _, ok := s.Lookup("ORDERS_202412"); ok {
		t.Fatal("Lookup is case-sensitive, but found ORDERS_202412")
	}
}

func TestSnapshotLogical(t *testing.T) {
	s, err := NewSnapshot(ordersTables(t), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		prefix string
		want   []string
	}{
		{"orders", []string{"orders_202412", "orders_202501", "orders_202502", "orders_202503"}},
		{"order_items", []string{"order_items_202501"}},
		{"order", nil}, // order_items_202501's suffix does not start with a digit
		{"orders2", []string{"orders2_202501"}},
		{"ordersx", nil},
		{"orders_202501", nil},
		{"Orders", nil},
		{"", nil},
		{"missing", nil},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			if got := names(s.Logical(tt.prefix)); !slices.Equal(got, tt.want) {
				t.Fatalf("Logical(%q) = %v, want %v", tt.prefix, got, tt.want)
			}
		})
	}
}

// A physical table of logical table L is named L_ followed by a digit: orders_items_202501 is
// a table of orders_items, not of orders, whose statements must never read or write it.
func TestSnapshotLogicalSuffixStartsWithDigit(t *testing.T) {
	s, err := NewSnapshot([]Table{
		tbl(t, "orders_202501", "2025-01-01", "2025-01-31 23:59:59", true),
		tbl(t, "orders_2025_02", "2025-02-01", "2025-02-28 23:59:59", true),
		tbl(t, "orders_items_202501", "2025-01-01", "2025-01-31 23:59:59", true),
		tbl(t, "orders_items_2025_02", "2025-02-01", "2025-02-28 23:59:59", true),
		tbl(t, "orders_archive", "2020-01-01", "2020-12-31", false),
		tbl(t, "orders_", "2020-01-01", "2020-12-31", false),
	}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		prefix string
		want   []string
	}{
		{"orders", []string{"orders_202501", "orders_2025_02"}},
		{"orders_items", []string{"orders_items_202501", "orders_items_2025_02"}},
		{"orders_2025", []string{"orders_2025_02"}}, // a name the rule allows, for a logical orders_2025
		{"orders_archive", nil},
	}
	for _, tt := range tests {
		if got := names(s.Logical(tt.prefix)); !slices.Equal(got, tt.want) {
			t.Errorf("Logical(%q) = %v, want %v", tt.prefix, got, tt.want)
		}
		from, to := at(t, "2025-01-15"), at(t, "2025-02-15")
		if got := names(s.Overlapping(tt.prefix, from, to, false)); !slices.Equal(got, tt.want) {
			t.Errorf("Overlapping(%q) = %v, want %v", tt.prefix, got, tt.want)
		}
	}
}

func TestSnapshotOverlapping(t *testing.T) {
	tables := append(ordersTables(t),
		// "hist" has spans that overlap and a gap: a migration in progress.
		tbl(t, "hist_1", "2024-01-01", "2024-12-31 23:59:59", false),
		tbl(t, "hist_2", "2024-06-01", "2024-06-30 23:59:59", false),
		tbl(t, "hist_3", "2025-02-01", "2025-03-31", true),
	)
	s, err := NewSnapshot(tables, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var none time.Time
	tests := []struct {
		name        string
		prefix      string
		from, to    string // "" is the zero time: unbounded
		toInclusive bool
		want        []string
	}{
		{"inside one month", "orders", "2025-03-01", "2025-03-15", true, []string{"orders_202503"}},
		{"crosses the year", "orders", "2024-12-15", "2025-01-15", false, []string{"orders_202412", "orders_202501"}},
		{"exclusive end at next month's first instant", "orders", "2025-01-01", "2025-02-01", false, []string{"orders_202501"}},
		{"inclusive end at next month's first instant", "orders", "2025-01-01", "2025-02-01", true, []string{"orders_202501", "orders_202502"}},
		{"from at a table's last second", "orders", "2025-01-31 23:59:59", "2025-02-01", false, []string{"orders_202501"}},
		{"from just after a table's last second", "orders", "2025-02-01", "2025-02-02", false, []string{"orders_202502"}},
		{"no lower bound", "orders", "", "2025-01-10", true, []string{"orders_202412", "orders_202501"}},
		{"no upper bound", "orders", "2025-02-10", "", false, []string{"orders_202502", "orders_202503"}},
		{"no bounds", "orders", "", "", false, []string{"orders_202412", "orders_202501", "orders_202502", "orders_202503"}},
		{"before every table", "orders", "2020-01-01", "2020-02-01", false, nil},
		{"after every table", "orders", "2026-01-01", "", false, nil},
		{"empty half-open interval", "orders", "2025-01-10", "2025-01-10", false, nil},
		{"single instant", "orders", "2025-01-10", "2025-01-10", true, []string{"orders_202501"}},
		{"inverted interval", "orders", "2025-03-10", "2025-01-10", true, nil},
		{"unknown logical table", "payments", "", "", false, nil},
		{"overlapping spans, gap filtered", "hist", "2024-07-01", "2025-03-01", false, []string{"hist_1", "hist_3"}},
		{"overlapping spans, both", "hist", "2024-06-15", "2024-06-16", false, []string{"hist_1", "hist_2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, to := none, none
			if tt.from != "" {
				from = at(t, tt.from)
			}
			if tt.to != "" {
				to = at(t, tt.to)
			}
			got := names(s.Overlapping(tt.prefix, from, to, tt.toInclusive))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Overlapping(%q, %q, %q, %v) = %v, want %v", tt.prefix, tt.from, tt.to, tt.toInclusive, got, tt.want)
			}
		})
	}
}

// TestSnapshotOverlappingAgreesWithScan checks the binary searches against
// the definition, on random spans that overlap and leave gaps.
func TestSnapshotOverlappingAgreesWithScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := at(t, "2025-01-01")
	hour := func() time.Time { return base.Add(time.Duration(rng.IntN(200)) * time.Hour) }
	for round := range 200 {
		var tables []Table
		for i := range 1 + rng.IntN(12) {
			a, b := hour(), hour()
			if b.Before(a) {
				a, b = b, a
			}
			tables = append(tables, Table{Name: "t_" + strconv.Itoa(i), Min: a, Max: b})
		}
		s, err := NewSnapshot(tables, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		for range 50 {
			from, to, incl := hour(), hour(), rng.IntN(2) == 0
			switch rng.IntN(6) {
			case 0:
				from = time.Time{}
			case 1:
				to = time.Time{}
			}
			var want []string
			for _, tb := range s.Logical("t") { // sorted by Min, as Overlapping
				lowerOK := from.IsZero() || !tb.Max.Before(from)
				upperOK := to.IsZero() || tb.Min.Before(to) || (incl && tb.Min.Equal(to))
				emptyInterval := !from.IsZero() && !to.IsZero() && (to.Before(from) || (!incl && to.Equal(from)))
				if lowerOK && upperOK && !emptyInterval {
					want = append(want, tb.Name)
				}
			}
			got := names(s.Overlapping("t", from, to, incl))
			if !slices.Equal(got, want) {
				t.Fatalf("round %d: Overlapping(%v, %v, %v) = %v, want %v\ntables: %+v", round, from, to, incl, got, want, s.Tables())
			}
		}
	}
}

func TestSnapshotReadsDoNotAllocate(t *testing.T) {
	s, err := NewSnapshot(ordersTables(t), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	from, to := at(t, "2025-01-15"), at(t, "2025-03-01")
	var n int
	allocs := testing.AllocsPerRun(100, func() {
		n += len(s.Logical("orders"))
		n += len(s.Overlapping("orders", from, to, false))
		_, _ = s.Lookup("orders_202501")
	})
	if allocs != 0 {
		t.Fatalf("Logical+Overlapping+Lookup allocate %v times per call, want 0", allocs)
	}
	if n == 0 {
		t.Fatal("reads found nothing")
	}
}

func TestSnapshotVersionsIncrease(t *testing.T) {
	a, err := NewSnapshot(nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewSnapshot(nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Version() <= a.Version() {
		t.Fatalf("versions %d then %d, want increasing", a.Version(), b.Version())
	}
}

func BenchmarkSnapshotOverlapping(b *testing.B) {
	var tables []Table
	start := at(b, "2015-01-01")
	for m := range 132 { // eleven years of monthly shards, 2015-01 to 2025-12
		lo := start.AddDate(0, m, 0)
		tables = append(tables, Table{Name: lo.Format("orders_200601"), Min: lo, Max: lo.AddDate(0, 1, 0).Add(-time.Second)})
	}
	s, err := NewSnapshot(tables, time.Time{})
	if err != nil {
		b.Fatal(err)
	}
	from, to := at(b, "2024-11-15"), at(b, "2025-02-15")
	b.ReportAllocs()
	for b.Loop() {
		if len(s.Overlapping("orders", from, to, false)) != 4 {
			b.Fatal("wrong tables")
		}
	}
}
