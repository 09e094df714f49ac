package routing

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/obroute/obroute/internal/merge"
	"github.com/obroute/obroute/metadata"
)

// Routing by a TIMESTAMP shard key (see time_instant.go for the zone's irregular hours).

// timestampClock checks that the statement's values can be read in the session's time zone:
// the zone must be known, and a clock function is sent as a wall clock, which the server reads
// as the earlier instant in a repeated hour: a clock in the second pass of that hour is refused.
func timestampClock(ts *timeStatement, clock *stmtClock) error {
	if clock.zone == nil {
		name := clock.name
		if name == "" {
			name = "the backends' default"
		}
		return errorf("%w: %s is a TIMESTAMP, which the server reads in the session's time zone, and the session's time zone (%s) is unknown to obroute; SET time_zone to an offset ('+08:00'), UTC, or a zone name of Go's zone database (the server's time-zone tables loaded from the same tzdata)",
			ErrTimeZone, ts.table.ShardKey, name)
	}
	if !ts.clocked || fixedZone(clock.zone) {
		return nil
	}
	at := clock.at.Truncate(time.Microsecond)
	if first, _, n := wallInstants(wallIn(at, clock.zone), clock.zone); n == 2 && at.After(first) {
		from, to := repeatedHour(first, clock.zone)
		return errorf("%w: the statement's clock (%s UTC) is in the second pass of the hour from %s to %s that %s repeats, and a clock function is sent to the server as that wall clock, which it reads as the first pass; run the statement after %s, or SET time_zone to an offset",
			ErrTimeZone, formatTime(clock.at), formatTime(from), formatTime(to), clock.name, formatTime(to))
	}
	return nil
}

// repeatedHour returns the wall clocks [from, to) a repeated hour of loc spans, given the first
// instant of one of them.
func repeatedHour(first time.Time, loc *time.Location) (from, to time.Time) {
	at := first.In(loc)
	_, end := at.ZoneBounds() // the instant the clocks go back
	_, before := at.Zone()
	_, after := end.In(loc).Zone()
	from = wallIn(end, loc)
	return from, from.Add(time.Duration(before-after) * time.Second)
}

// stampRange maps the range, read as wall clocks of the session's zone, to instants; a range
// ending in a repeated hour is refused. set is nil for a conjunctive range (span alone).
func stampRange(ts *timeStatement, zone *time.Location, set rangeSet, span interval) (rangeSet, interval, error) {
	if !fixedZone(zone) {
		check := set
		if check == nil {
			check = rangeSet{span}
		}
		if end, ok := repeatedEnd(check, zone); ok {
			first, _, _ := wallInstants(end, zone)
			from, to := repeatedHour(first, zone)
			return nil, interval{}, errorf("%w: the range on %s ends at '%s', which is twice in time zone %s (the clocks go back: the hour from %s to %s repeats); MariaDB compares a TIMESTAMP with it as the earlier instant when it reads the column's index and as a wall clock otherwise, so one server has no one answer; end the range before '%s' or from '%s' on, or SET time_zone to an offset ('+01:00')",
				ErrTimeZone, ts.table.ShardKey, formatTime(end), zone, formatTime(from), formatTime(to), formatTime(from), formatTime(to))
		}
	}
	if set == nil {
		return nil, instantsOf(span, zone), nil
	}
	set = instantSet(set, zone)
	return set, set.span(), nil
}

// stampSplit is what stampTables checks of a route.
type stampSplit struct {
	span   interval         // the range, instants
	tables []metadata.Table // the tables read
	locs   []string         // their backends
	open   string           // the table open above, "" if none
}

// stampTables checks what the tables a statement reads decide: the backends must start their
// server sessions in one time zone (unless the session set its own), and a merge that orders or
// groups shard-key values must not meet a repeated hour, whose two passes the merge, comparing
// the wall clocks the server sends, would read as one.
func (t *timeRouter) stampTables(ts *timeStatement, sess *SessionState, clock *stmtClock, r stampSplit) error {
	if sess == nil || sess.TimeZone == "" {
		if f := t.facts.p.Load(); f != nil {
			meta := t.router.cfg.Settings.Metadata.Backend
			if meta == "" {
				meta = t.router.cfg.Settings.Default
			}
			want := f.servers[meta].zone
			for _, b := range r.locs {
				if z := f.servers[b].zone; z != "" && want != "" && z != want {
					return errorf("%w: backend %s starts its server sessions in time zone %s and backend %s in %s (the global time_zone or the DSN's time_zone parameter), and %s is a TIMESTAMP, which each server reads in its session's zone; give every backend DSN the same time_zone parameter, or SET time_zone in the session",
						ErrTimeZone, b, z, meta, want, ts.table.ShardKey)
				}
			}
		}
	}
	tables := r.tables
	if len(tables) < 2 || ts.kind != KindSelect || fixedZone(clock.zone) || !ts.keyOrder && !ts.keyGroup {
		return nil
	}
	zone := clock.zone
	refuse := func(what string) error {
		return errorf("%w: the statement %s %s across %d tables in time zone %s, whose wall clocks repeat an hour when the clocks go back; the merge compares the wall clocks the server sends, which are equal for two instants there; SET time_zone to an offset for this statement ('+01:00'), or narrow the range to one table",
			ErrNotMergeable, what, ts.table.ShardKey, len(tables), zone)
	}
	if ts.keyOrder {
		for i := range tables {
			if i > 0 && ambiguousWall(tables[i].Min, zone) || i+1 < len(tables) && ambiguousWall(tableEnd(&tables[i]), zone) {
				return refuse("orders or takes MIN/MAX of")
			}
		}
	}
	if ts.keyGroup {
		last := &tables[len(tables)-1]
		to := tableEnd(last)
		if last.Name == r.open && !r.span.hi.set {
			to = later(to, clock.at).AddDate(1, 0, 0) // rows past the open table's max_time
		}
		if meetsRepeatedHour(r.span, tables[0].Min, to, zone) {
			return refuse("groups or removes duplicates of")
		}
	}
	return nil
}

// tableEnd is the end of a table's span: max_time + 1s.
func tableEnd(tb *metadata.Table) time.Time { return tb.Max.Truncate(time.Second).Add(time.Second) }

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// keyCompared reports whether the merge of sel compares values of the shard key key (a column
// of its FROM): orders them (ORDER BY it, MIN or MAX of it) or groups them (GROUP BY it,
// DISTINCT rows that hold it, SUM or AVG of its DISTINCT values, COUNT(DISTINCT it, …)).
// COUNT(DISTINCT key) alone is summed from the tables: their values never repeat.
func keyCompared(sel *sqlparser.Select, key string) (orders, groups bool) {
	if key == "" {
		return false, false
	}
	bare := func(e sqlparser.Expr) bool {
		c, ok := unparen(e).(*sqlparser.ColName)
		return ok && c.Name.Lowered() == key
	}
	var aliases []string
	star := false
	for _, se := range sel.SelectExprs {
		switch x := se.(type) {
		case *sqlparser.StarExpr:
			star = true
		case *sqlparser.AliasedExpr:
			if bare(x.Expr) {
				aliases = append(aliases, strings.ToLower(x.As.String()))
				groups = groups || sel.QueryOpts.Distinct
			}
		}
	}
	groups = groups || star && sel.QueryOpts.Distinct
	// refers reports whether an ORDER BY or GROUP BY item is the key: the column, its alias or
	// its position in the select list.
	refers := func(e sqlparser.Expr) bool {
		if bare(e) {
			return true
		}
		switch x := unparen(e).(type) {
		case *sqlparser.ColName:
			return x.Qualifier.IsEmpty() && slices.Contains(aliases, x.Name.Lowered())
		case *sqlparser.SQLVal:
			if x.Type != sqlparser.IntVal {
				return false
			}
			n, err := strconv.Atoi(string(x.Val))
			if err != nil || n < 1 || n > len(sel.SelectExprs) {
				return false
			}
			ae, ok := sel.SelectExprs[n-1].(*sqlparser.AliasedExpr)
			return ok && bare(ae.Expr)
		}
		return false
	}
	for _, o := range sel.OrderBy {
		orders = orders || refers(o.Expr)
	}
	for _, g := range sel.GroupBy {
		groups = groups || refers(g)
	}
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		switch x := n.(type) {
		case *sqlparser.Subquery:
			return false, nil
		case *sqlparser.FuncExpr:
			if x == nil || !x.IsAggregate() {
				return true, nil
			}
			name := x.Name.Lowered()
			for i, a := range x.Exprs {
				ae, ok := a.(*sqlparser.AliasedExpr)
				if !ok || !bare(ae.Expr) {
					continue
				}
				switch {
				case name == "min" || name == "max":
					orders = true
				case x.Distinct && (name != "count" || len(x.Exprs) > 1 || i > 0):
					groups = true
				}
			}
		}
		return true, nil
	}, sel)
	return orders, groups
}

// shownTimes gives a message's times as the application writes them: a TIMESTAMP key's
// instants (the metadata's UTC) as wall clocks of the session's time zone, naming it; other
// keys' times as they are (zone nil).
type shownTimes struct {
	zone *time.Location
	name string // the session's time_zone as set, "" for the zone's own name
}

func (s shownTimes) zoneName() string {
	if s.name != "" {
		return s.name
	}
	return s.zone.String()
}

// bare is tm as a wall clock, with no quotes or zone.
func (s shownTimes) bare(tm time.Time) string {
	if s.zone == nil {
		return formatTime(tm)
	}
	return formatTime(wallUTC(tm.In(s.zone))) + " (time zone " + s.zoneName() + ")"
}

// time is tm quoted as a literal to write: '2026-10-01 09:00:00' (time zone +09:00).
func (s shownTimes) time(tm time.Time) string {
	if s.zone == nil {
		return "'" + formatTime(tm) + "'"
	}
	return "'" + formatTime(wallUTC(tm.In(s.zone))) + "' (time zone " + s.zoneName() + ")"
}

// interval is iv with its bounds as wall clocks.
func (s shownTimes) interval(iv interval) string {
	if s.zone == nil {
		return iv.String()
	}
	for _, b := range []*bound{&iv.lo, &iv.hi} {
		if b.set {
			b.t = wallUTC(b.t.In(s.zone))
		}
	}
	return iv.String() + " (time zone " + s.zoneName() + ")"
}

// CheckRepeatedHours refuses the merge of a split SELECT (types: the result's database type
// names, as one server reports them) that compares a TIMESTAMP column other than the shard key
// (ORDER BY, GROUP BY, DISTINCT, MIN, MAX) in a session whose time zone repeats an hour
// (Plan.RepeatedHours): the server sends that hour's two instants as one wall clock, so the
// merge would order them as equal and group or deduplicate them as one, where one server keeps
// them apart.
func (p *Plan) CheckRepeatedHours(types func(col int) string) error {
	if p.RepeatedHours == "" || p.Merge == nil {
		return nil
	}
	s := p.Merge
	var cols []int
	for _, o := range s.OrderBy {
		cols = append(cols, o.Column)
	}
	cols = append(cols, s.GroupBy...)
	for _, a := range s.Aggregates {
		if a.Func == merge.AggMin || a.Func == merge.AggMax {
			cols = append(cols, a.Column)
		}
	}
	if s.Distinct {
		from, to := s.Leading, s.Leading+s.Visible
		if s.Visible == 0 {
			to = from + 64 // every visible column: types answers "" past the last
		}
		for c := from; c < to; c++ {
			cols = append(cols, c)
		}
	}
	for _, c := range cols {
		if slices.Contains(p.KeyColumns, c) || !strings.EqualFold(types(c), "TIMESTAMP") {
			continue
		}
		return errorf("%w: the statement orders, groups, removes duplicates of or takes MIN/MAX of a TIMESTAMP column (result column %d) across tables in time zone %s, whose wall clocks may repeat an hour when the clocks go back; the server sends the hour's two instants as one wall clock, which the merge would read as one; SET time_zone to an offset for this statement ('+01:00'), compare UNIX_TIMESTAMP(column) instead, or narrow the range to one table",
			ErrNotMergeable, c+1, p.RepeatedHours)
	}
	return nil
}
