package metadata

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"
	"time"
)

// Table is one physical table of a time-sharded logical table, as recorded in
// one row of the metadata table.
//
// Min and Max are the inclusive span of the shard-key values the table
// really holds (min_time and max_time). They are DATETIME values, which carry
// no time zone: obroute reads them as UTC wall-clock times whatever the DSN's
// parseTime and loc settings are, so the router must read time literals and
// arguments of queries as UTC as well. For a TIMESTAMP shard key they are UTC
// instants, and the router maps the session's wall clocks to them.
//
// Location names the backend that holds the table. When it is empty (the
// location column is NULL or absent), the table lives on the backend of role
// hot if Hot is set, and on the backend of role cold otherwise; the router
// resolves roles to backends.
type Table struct {
	// Name is the physical table name, e.g. "orders_202501".
	Name string
	// Min is the earliest shard-key value in the table (min_time).
	Min time.Time
	// Max is the latest shard-key value in the table (max_time).
	Max time.Time
	// Hot reports is_hot <> 0: the table is inside the hot window as last
	// computed by MarkHot.
	Hot bool
	// Location is the backend holding the table, or "" for the role rule.
	Location string
	// UpdatedAt is when the row last changed (updated_at); zero if unknown.
	UpdatedAt time.Time
}

// overlaps reports whether the table's span [Min, Max] intersects the
// interval from..to (see Snapshot.Overlapping for the zero-value rules).
func (t Table) overlaps(from, to time.Time, toInclusive bool) bool {
	if !from.IsZero() && t.Max.Before(from) {
		return false
	}
	if to.IsZero() {
		return true
	}
	if toInclusive {
		return !t.Min.After(to)
	}
	return t.Min.Before(to)
}

// lastVersion numbers snapshots in the order they are built.
var lastVersion atomic.Uint64

// Snapshot is an immutable, in-memory copy of the metadata table at one
// moment. It is safe for concurrent use; the router reads it on every
// statement, so its read methods do not allocate (except Tables and the rare
// Overlapping case documented there).
type Snapshot struct {
	version  uint64
	loadedAt time.Time
	tables   []Table          // sorted by Min, then Name
	byName   map[string]int   // index into tables
	logical  map[string]group // keyed by every prefix before an '_' and a digit
}

// group is the physical tables of one logical table.
type group struct {
	tables []Table     // sorted by Min, then Name; cap == len
	maxTo  []time.Time // maxTo[i] is the latest Max of tables[:i+1]
}

// NewSnapshot validates tables and builds a snapshot of them. Every table
// needs a unique name that is a plain identifier (letters, digits, '_' and
// '$', at most 64 characters) and non-zero Min <= Max; otherwise the error
// wraps ErrInvalidTable or ErrDuplicateTable and names the table. loadedAt is
// reported by LoadedAt. The slice is copied.
func NewSnapshot(tables []Table, loadedAt time.Time) (*Snapshot, error) {
	s := &Snapshot{
		loadedAt: loadedAt,
		tables:   slices.Clone(tables),
		byName:   make(map[string]int, len(tables)),
		logical:  make(map[string]group),
	}
	for _, t := range s.tables {
		if err := validateTable(t); err != nil {
			return nil, err
		}
	}
	// sort.Slice, not slices.SortFunc: a generic sort of this large struct
	// would be compiled for its shape alone and adds ~16 KB to every binary.
	sort.Slice(s.tables, func(i, j int) bool { return compareTables(s.tables[i], s.tables[j]) < 0 })
	for i, t := range s.tables {
		if _, dup := s.byName[t.Name]; dup {
			return nil, errorf("%w: %q appears twice; table_name must be unique", ErrDuplicateTable, t.Name)
		}
		s.byName[t.Name] = i
	}
	// Every '_' followed by a digit ends a logical name the router may ask
	// for: orders_202501 belongs to "orders", orders_items_202501 only to
	// "orders_items", orders_2025_01 to "orders" (and to "orders_2025").
	for _, t := range s.tables { // in sorted order, so each group is sorted too
		for i := 1; i+1 < len(t.Name); i++ {
			if t.Name[i] != '_' || !isDigit(t.Name[i+1]) {
				continue
			}
			g := s.logical[t.Name[:i]]
			last := t.Max
			if n := len(g.maxTo); n > 0 && g.maxTo[n-1].After(last) {
				last = g.maxTo[n-1]
			}
			g.tables = append(g.tables, t)
			g.maxTo = append(g.maxTo, last)
			s.logical[t.Name[:i]] = g
		}
	}
	for p, g := range s.logical {
		g.tables = slices.Clip(g.tables)
		s.logical[p] = g
	}
	s.version = lastVersion.Add(1)
	return s, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func validateTable(t Table) error {
	if t.Name == "" {
		return errorf("%w: a row has an empty table_name", ErrInvalidTable)
	}
	// The router writes the name into SQL unquoted: it must be a plain
	// identifier, so no metadata row can change the statement.
	if err := checkIdentifier(t.Name); err != nil {
		return errorf("%w: the row with table_name %q: %s", ErrInvalidTable, t.Name, err)
	}
	switch {
	case t.Min.IsZero():
		return errorf("%w: %q has no min_time", ErrInvalidTable, t.Name)
	case t.Max.IsZero():
		return errorf("%w: %q has no max_time", ErrInvalidTable, t.Name)
	case t.Min.After(t.Max):
		return errorf("%w: %q has min_time %s after max_time %s; swap or correct them",
			ErrInvalidTable, t.Name, t.Min.Format(time.DateTime), t.Max.Format(time.DateTime))
	}
	return nil
}

func compareTables(a, b Table) int {
	if c := a.Min.Compare(b.Min); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

// Tables returns a copy of all tables, sorted by Min, then Name.
func (s *Snapshot) Tables() []Table { return slices.Clone(s.tables) }

// Len returns the number of tables in the snapshot.
func (s *Snapshot) Len() int { return len(s.tables) }

// Lookup returns the table with exactly this physical name.
func (s *Snapshot) Lookup(name string) (Table, bool) {
	i, ok := s.byName[name]
	if !ok {
		return Table{}, false
	}
	return s.tables[i], true
}

// Logical returns the physical tables of one logical table: those named
// prefix+"_" followed by a suffix that starts with a digit (prefix "orders" →
// orders_202501, orders_2025_02, …, but not orders_items_202501), sorted by
// Min, then Name. Names are compared exactly, case included. It
// returns nil when no table matches.
//
// The result is shared by all callers and must not be modified; it does not
// allocate.
func (s *Snapshot) Logical(prefix string) []Table { return s.logical[prefix].tables }

// Overlapping returns the physical tables of the logical table prefix (as
// Logical) whose span [Min, Max] intersects the interval from..to, sorted by
// Min. The interval includes from; it includes to only when toInclusive is
// set, so a half-open query range order_time >= a AND order_time < b is
// Overlapping(p, a, b, false). A zero from means no lower bound and a zero to
// means no upper bound. An empty interval returns nil.
//
// The result must not be modified. It shares the snapshot's memory and does
// not allocate, unless a table inside the result range ends before from while
// a table before it in Min order does not (overlapping spans), in which case
// a filtered copy is returned.
func (s *Snapshot) Overlapping(prefix string, from, to time.Time, toInclusive bool) []Table {
	if !from.IsZero() && !to.IsZero() && (to.Before(from) || (!toInclusive && to.Equal(from))) {
		return nil
	}
	g := s.logical[prefix]
	ts := g.tables
	hi := len(ts)
	if !to.IsZero() {
		hi = sort.Search(len(ts), func(i int) bool {
			if toInclusive {
				return ts[i].Min.After(to)
			}
			return !ts[i].Min.Before(to)
		})
	}
	lo := 0
	if !from.IsZero() {
		// The first table whose running maximum reaches from is itself the
		// first table ending at or after from.
		lo = sort.Search(hi, func(i int) bool { return !g.maxTo[i].Before(from) })
	}
	if lo >= hi {
		return nil
	}
	for i := lo + 1; i < hi; i++ {
		if ts[i].Max.Before(from) {
			return filterOverlapping(ts[lo:hi], from, to, toInclusive)
		}
	}
	return ts[lo:hi:hi]
}

func filterOverlapping(ts []Table, from, to time.Time, toInclusive bool) []Table {
	out := make([]Table, 0, len(ts))
	for _, t := range ts {
		if t.overlaps(from, to, toInclusive) {
			out = append(out, t)
		}
	}
	return out
}

// LoadedAt returns the time given to NewSnapshot: for the connector's
// snapshots, when the metadata was read.
func (s *Snapshot) LoadedAt() time.Time { return s.loadedAt }

// Version numbers the snapshot: versions are unique within the process and
// increase in the order snapshots are built, so a newer snapshot of the
// connector always has a larger version than the one it replaces.
func (s *Snapshot) Version() uint64 { return s.version }

// String describes the snapshot for logs.
func (s *Snapshot) String() string {
	return fmt.Sprintf("metadata snapshot v%d: %d tables, loaded %s", s.version, len(s.tables), s.loadedAt.Format(time.RFC3339))
}
