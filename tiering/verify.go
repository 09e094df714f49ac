package tiering

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/metadata"
)

// FindingKind names what a Finding is about.
type FindingKind string

// The kinds of findings of Verify.
const (
	// FindingUnreadable: the shard metadata cannot be loaded; obroute keeps routing by the
	// last snapshot it loaded.
	FindingUnreadable FindingKind = "unreadable"
	// FindingLocation: a table's location is not a configured backend; statements on it fail.
	FindingLocation FindingKind = "location"
	// FindingMissing: a table is not on the backend its metadata places it on.
	FindingMissing FindingKind = "missing"
	// FindingUnreadableTable: a table exists but its shard-key span cannot be read.
	FindingUnreadableTable FindingKind = "unreadable_table"
	// FindingOutside: a table holds rows outside its declared span, which routing hides.
	FindingOutside FindingKind = "outside_span"
	// FindingOpenEnd: the newest table holds rows past its max_time: read today (its span is
	// open above), hidden once a later table is added.
	FindingOpenEnd FindingKind = "past_newest"
	// FindingOverlap: two tables' spans overlap.
	FindingOverlap FindingKind = "overlap"
	// FindingGap: no table covers a span between two tables; INSERTs there are refused.
	FindingGap FindingKind = "gap"
	// FindingNotCovered: no table covers the current time; INSERTs now are refused.
	FindingNotCovered FindingKind = "not_covered"
	// FindingNoTables: a configured time table has no physical table in the metadata.
	FindingNoTables FindingKind = "no_tables"
	// FindingDefinition: a physical table's definition (SHOW CREATE TABLE, its name and
	// AUTO_INCREMENT counter aside) differs from the newest physical table's, which the catalog
	// shows as the logical table's: a DDL run on the logical table did not reach it, or was run
	// on one physical table alone.
	FindingDefinition FindingKind = "definition"
)

// Finding is one thing Verify found. A fault means a row would be hidden or counted twice,
// or every statement on the table fails; the rest are warnings.
type Finding struct {
	Kind FindingKind
	// Fault is set when a row would be hidden or counted twice, or every statement on the
	// table fails.
	Fault bool
	// Logical is the configured time table; Table the physical table concerned and Other the
	// second one of an overlap or gap ("" otherwise).
	Logical, Table, Other string
	// Backend is where the table was looked for.
	Backend string
	// From and To bound the shard-key times concerned (To exclusive); zero when not about times.
	From, To time.Time
	// Rows counts the rows concerned, when they were counted.
	Rows int64
	// Message says what is wrong and what to do.
	Message string
}

// String writes the finding as one line: FAULT or WARN, then the message.
func (f Finding) String() string {
	if f.Fault {
		return "FAULT " + f.Message
	}
	return "WARN  " + f.Message
}

// Report is what Verify found.
type Report struct {
	// Tables counts the physical tables checked against their data.
	Tables int
	// Findings lists what is wrong, in metadata order.
	Findings []Finding
}

// Faults returns the number of findings that are faults.
func (r *Report) Faults() int {
	n := 0
	for _, f := range r.Findings {
		if f.Fault {
			n++
		}
	}
	return n
}

// OK reports whether no finding is a fault: no row would be hidden or counted twice.
func (r *Report) OK() bool { return r.Faults() == 0 }

// Verify compares the shard metadata with the data. For every physical table of every
// configured time table it reads the earliest and latest shard-key value on the backend the
// metadata places the table on, and reports: tables missing there, rows outside the declared
// span (which routing hides; the newest table's span is open above, so rows past its
// max_time are a warning until a later table exists), overlapping spans (a row in both would
// be counted twice), gaps between spans and the current time (now, the wall clock of the
// shard-key times) not covered (INSERTs there are refused), and locations that name no
// backend. Rows outside a span are counted. The error is for a failure to run the checks
// (a backend down), not for what they find.
func (s *Store) Verify(ctx context.Context, now time.Time) (*Report, error) {
	r := &Report{}
	snap, err := s.Snapshot(ctx)
	if err != nil {
		if errors.Is(err, metadata.ErrInvalidTable) || errors.Is(err, metadata.ErrDuplicateTable) || errors.Is(err, metadata.ErrSchema) {
			r.Findings = append(r.Findings, Finding{Kind: FindingUnreadable, Fault: true, Backend: s.meta.Name,
				Message: fmt.Sprintf("the shard metadata in %s on %s does not load (obroute keeps routing by the last rows it loaded): %v", s.metaTable, s.meta.Name, err)})
			return r, nil
		}
		return nil, err
	}
	for i := range s.tables {
		tt := &s.tables[i]
		tables := s.tablesOf(snap, tt)
		if len(tables) == 0 {
			r.Findings = append(r.Findings, Finding{Kind: FindingNoTables, Logical: tt.Table,
				Message: fmt.Sprintf("%s: the shard metadata lists no table %s_<digits>…; every statement on %s is refused", tt.Table, tt.Table, tt.Table)})
			continue
		}
		r.Findings = append(r.Findings, spanFindings(tt, tables, now)...)
		open := metadata.OpenAbove(tables)
		for j, t := range tables {
			fs, err := s.checkTable(ctx, tt, t, j == open)
			if err != nil {
				return nil, err
			}
			r.Tables++
			r.Findings = append(r.Findings, fs...)
		}
		fs, err := s.checkDefinitions(ctx, tt, tables)
		if err != nil {
			return nil, err
		}
		r.Findings = append(r.Findings, fs...)
	}
	return r, nil
}

// checkDefinitions compares the definition of each physical table of tt with the newest one's
// (the last of tables, in Min order): SHOW CREATE TABLE on its backend, without its name and its
// AUTO_INCREMENT counter. A table missing or on no backend is reported by checkTable.
func (s *Store) checkDefinitions(ctx context.Context, tt *config.TimeTable, tables []metadata.Table) ([]Finding, error) {
	defs := make([]string, len(tables))
	where := make([]string, len(tables))
	for i, t := range tables {
		b, err := s.locate(t)
		if err != nil {
			continue
		}
		def, err := showCreate(ctx, b, t.Name)
		switch {
		case isServerError(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("tiering: verify the definition: %w", err)
		}
		defs[i], where[i] = normalizedDefinition(def, t.Name), b.Name
	}
	newest := len(tables) - 1
	if defs[newest] == "" {
		return nil, nil
	}
	var out []Finding
	for i, t := range tables[:newest] {
		if defs[i] == "" || defs[i] == defs[newest] {
			continue
		}
		out = append(out, Finding{Kind: FindingDefinition, Fault: true, Logical: tt.Table, Table: t.Name, Other: tables[newest].Name, Backend: where[i],
			Message: fmt.Sprintf("%s on %s is defined otherwise than the newest table %s on %s, which is what %s shows (%s); a statement over both reads different columns or indexes: run the DDL again on %s (in its IF [NOT] EXISTS form)",
				t.Name, where[i], tables[newest].Name, where[newest], tt.Table, firstDifference(defs[i], defs[newest]), tt.Table)})
	}
	return out, nil
}

// normalizedDefinition is a SHOW CREATE TABLE text without the table's name and its
// AUTO_INCREMENT counter.
func normalizedDefinition(def, name string) string {
	def = strings.Replace(def, "CREATE TABLE "+quoteIdent(name), "CREATE TABLE", 1)
	return autoIncrement.ReplaceAllString(def, "")
}

// firstDifference quotes the first line where a and b differ.
func firstDifference(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(la), len(lb)) {
		x, y := "", ""
		if i < len(la) {
			x = strings.TrimSpace(la[i])
		}
		if i < len(lb) {
			y = strings.TrimSpace(lb[i])
		}
		if x != y {
			return fmt.Sprintf("%q where the newest has %q", x, y)
		}
	}
	return "they differ"
}

// end is the first time after a table's span: its max_time's whole second is the table's.
func end(t metadata.Table) time.Time { return t.Max.Truncate(time.Second).Add(time.Second) }

// spanFindings compares the spans of one logical table's tables (sorted by Min) with each
// other and with now.
func spanFindings(tt *config.TimeTable, tables []metadata.Table, now time.Time) []Finding {
	var out []Finding
	for i, a := range tables {
		for _, b := range tables[i+1:] {
			if b.Min.Before(end(a)) {
				to := end(a)
				if end(b).Before(to) {
					to = end(b)
				}
				out = append(out, Finding{Kind: FindingOverlap, Fault: true, Logical: tt.Table, Table: a.Name, Other: b.Name, From: b.Min, To: to,
					Message: fmt.Sprintf("%s and %s overlap from %s to %s: a row in both is counted twice, and an INSERT there goes to %s only; make their spans disjoint",
						a.Name, b.Name, formatTime(b.Min), formatTime(to), newestCovering(a, b).Name)})
			}
		}
	}
	last := tables[0]
	covered := false
	for i, t := range tables {
		if i > 0 && t.Min.After(end(last)) {
			out = append(out, Finding{Kind: FindingGap, Logical: tt.Table, Table: last.Name, Other: t.Name, From: end(last), To: t.Min,
				Message: fmt.Sprintf("%s: no table covers %s to %s (between %s and %s); INSERTs there are refused: widen a span",
					tt.Table, formatTime(end(last)), formatTime(t.Min), last.Name, t.Name)})
		}
		if end(t).After(end(last)) {
			last = t
		}
		covered = covered || !now.Before(t.Min) && now.Before(end(t))
	}
	if !covered {
		out = append(out, Finding{Kind: FindingNotCovered, Logical: tt.Table, From: now,
			Message: fmt.Sprintf("%s: no table covers the current time %s; INSERTs now are refused: run obroute metadata prepare", tt.Table, formatTime(now))})
	}
	return out
}

// newestCovering returns the table an INSERT into both spans goes to: the later one by Min.
func newestCovering(a, b metadata.Table) metadata.Table {
	if b.Min.After(a.Min) || b.Min.Equal(a.Min) && b.Name > a.Name {
		return b
	}
	return a
}

// checkTable compares one table's span and location with its data.
func (s *Store) checkTable(ctx context.Context, tt *config.TimeTable, t metadata.Table, open bool) ([]Finding, error) {
	f := Finding{Logical: tt.Table, Table: t.Name}
	b, err := s.locate(t)
	if err != nil {
		f.Kind, f.Fault, f.Message = FindingLocation, true, err.Error()+"; every statement on it is refused"
		return []Finding{f}, nil
	}
	f.Backend = b.Name
	key := quoteIdent(tt.ShardKey)
	var lo, hi sql.NullString
	err = b.DB.QueryRowContext(ctx, fmt.Sprintf("SELECT MIN(%s), MAX(%s) FROM %s", key, key, quoteIdent(t.Name))).Scan(&lo, &hi)
	switch {
	case tableMissing(err):
		f.Kind, f.Fault = FindingMissing, true
		f.Message = fmt.Sprintf("%s is not on %s, where the shard metadata places it: every statement on it fails", t.Name, b.Name)
		if other := s.holder(ctx, t.Name, b.Name); other != "" {
			f.Message += fmt.Sprintf("; it is on %s: set its location to '%s' (or finish its move with obroute migrate)", other, other)
		}
		return []Finding{f}, nil
	case isServerError(err):
		f.Kind, f.Fault = FindingUnreadableTable, true
		f.Message = fmt.Sprintf("%s on %s: cannot read its shard key %s: %v", t.Name, b.Name, tt.ShardKey, err)
		return []Finding{f}, nil
	case err != nil:
		return nil, fmt.Errorf("tiering: verify %s on %s: %w", t.Name, b.Name, err)
	}
	if !lo.Valid { // empty
		return nil, nil
	}
	first, err := parseTime(lo.String)
	if err == nil {
		f.To, err = parseTime(hi.String)
	}
	if err != nil {
		f.Kind, f.Fault, f.Message = FindingUnreadableTable, true, fmt.Sprintf("%s on %s: its shard key %s: %v", t.Name, b.Name, tt.ShardKey, err)
		return []Finding{f}, nil
	}
	last := f.To
	var out []Finding
	if first.Before(t.Min) {
		g := f
		g.Kind, g.Fault, g.From, g.To = FindingOutside, true, first, t.Min
		if g.Rows, err = countRows(ctx, b.DB, t.Name, key+" < ?", formatTime(t.Min)); err != nil {
			return nil, err
		}
		g.Message = fmt.Sprintf("%s on %s holds %d row(s) from %s, before its min_time %s: routing hides them; lower min_time or move the rows to the table of their time",
			t.Name, b.Name, g.Rows, formatTime(first), formatTime(t.Min))
		out = append(out, g)
	}
	if !last.Before(end(t)) {
		g := f
		g.Kind, g.Fault, g.From = FindingOutside, true, end(t)
		if g.Rows, err = countRows(ctx, b.DB, t.Name, key+" >= ?", formatTime(end(t))); err != nil {
			return nil, err
		}
		g.To = last.Add(time.Microsecond)
		g.Message = fmt.Sprintf("%s on %s holds %d row(s) up to %s, past its max_time %s: routing hides them; raise max_time or move the rows to the table of their time",
			t.Name, b.Name, g.Rows, formatTime(last), formatTime(t.Max))
		if open {
			g.Kind, g.Fault = FindingOpenEnd, false
			g.Message = fmt.Sprintf("%s on %s holds %d row(s) up to %s, past its max_time %s: read while it is the newest table, hidden once a later one exists; raise max_time (obroute metadata prepare raises it to the next table's start when there is no gap)",
				t.Name, b.Name, g.Rows, formatTime(last), formatTime(t.Max))
		}
		out = append(out, g)
	}
	return out, nil
}

// holder returns another backend that has the table, "" if none does.
func (s *Store) holder(ctx context.Context, table, except string) string {
	for _, b := range s.backends {
		if b.Name == except {
			continue
		}
		if ok, err := tableExists(ctx, b.DB, table); err == nil && ok {
			return b.Name
		}
	}
	return ""
}

// countRows counts the rows of table matching where.
func countRows(ctx context.Context, db *sql.DB, table, where string, args ...any) (int64, error) {
	var n int64
	err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+quoteIdent(table)+" WHERE "+where, args...).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("tiering: count rows of %s: %w", table, err)
	}
	return n, nil
}

// tableExists reports whether the current database of db has the table.
func tableExists(ctx context.Context, db *sql.DB, table string) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", table).Scan(&n)
	return n > 0, err
}

// isServerError reports an error the server answered with (not a lost connection).
func isServerError(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me)
}

// WriteReport writes the report as lines: one per finding, then a summary.
func WriteReport(w io.Writer, r *Report) error {
	for _, f := range r.Findings {
		if _, err := fmt.Fprintln(w, f.String()); err != nil {
			return err
		}
	}
	faults := r.Faults()
	verdict := "no row is hidden or counted twice"
	if faults > 0 {
		verdict = "rows are hidden, counted twice, or unreachable: fix the faults"
	}
	_, err := fmt.Fprintf(w, "verified %d table(s): %d fault(s), %d warning(s); %s\n", r.Tables, faults, len(r.Findings)-faults, verdict)
	return err
}
