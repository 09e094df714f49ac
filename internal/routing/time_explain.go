package routing

import (
	"strings"
	"time"

	"github.com/obroute/obroute/config"
)

// unreadRange returns why a value compared with the shard key was not read (the range widened
// on its side), "" when every value was read. It folds the condition again, collecting notes,
// unless the route already collects them.
func unreadRange(n *rangeNode, ec *evalCtx) string {
	notes := ec.notes
	if notes == nil {
		c := *ec
		c.notes = &foldNotes{}
		if _, _, err := n.eval(&c); err != nil {
			return ""
		}
		notes = c.notes
	}
	return strings.Join(notes.widened, "; ")
}

// unreadNote returns why the value x was not read.
func unreadNote(x *texpr, ec *evalCtx) string {
	c := *ec
	c.notes = &foldNotes{}
	if _, err := x.eval(&c); err != nil || len(c.notes.widened) == 0 {
		return "not a date and time"
	}
	return strings.Join(c.notes.widened, "; ")
}

// zoneLabel names the statement clock's time zone for EXPLAIN ROUTE.
func (k *stmtClock) zoneLabel() string {
	switch {
	case k.zone == nil && k.name == "":
		return "unknown"
	case k.zone == nil:
		return k.name + " (unknown to obroute)"
	case strings.EqualFold(k.name, "system"):
		return "SYSTEM (" + k.zone.String() + ")"
	}
	return k.name
}

// explainFolding adds to EXPLAIN ROUTE how the range was folded: the constant time expressions
// and their values in the session's time zone, the values not read (the range widened), and the
// instant every sub-query is sent for the statement's clock functions.
func explainFolding(p *Plan, ts *timeStatement, ec *evalCtx) {
	k := ec.clock
	if len(ec.notes.folded) > 0 {
		p.Prompts = append(p.Prompts, "folded in time zone "+k.zoneLabel()+": "+strings.Join(ec.notes.folded, "; "))
	}
	for _, w := range ec.notes.widened {
		p.Prompts = append(p.Prompts, "range widened, never narrowed: "+w)
	}
	if !ts.clocked {
		return
	}
	var b []byte
	b = append(b, "statement clock "...)
	b = appendTime(b, k.at)
	b = append(b, " UTC, read once for the range and sent to every sub-query: NOW() as "...)
	b = k.appendLiteral(b, clockNow, 0)
	b = append(b, ", CURDATE() as "...)
	b = k.appendLiteral(b, clockDate, 0)
	b = append(b, " (time zone "...)
	b = append(b, k.zoneLabel()...)
	b = append(b, ')')
	p.Prompts = append(p.Prompts, string(b))
}

// routeSummary is what the time route's prompt reports: the range read, the hot window's
// boundary, the backend of each table read, and how the range was found and ended.
type routeSummary struct {
	span      interval
	boundary  time.Time
	locs      []string
	empty     bool // no table holds the range
	defaulted bool // the configured default range was applied
	fullScan  bool // no range, and allow_full_scan reads every table
	hotOnly   bool // the history store was not read
	instants  bool // the range is of UTC instants (a TIMESTAMP key), read from the session's zone
}

// explain writes the route's prompt with one allocation for the text.
func (t *timeRouter) explain(p *Plan, ts *timeStatement, r routeSummary) {
	span, boundary, locs, empty, defaulted, hotOnly := r.span, r.boundary, r.locs, r.empty, r.defaulted, r.hotOnly
	b := make([]byte, 0, 256)
	if defaulted {
		b = append(b, "no range on "...)
		b = append(b, ts.table.ShardKey...)
		b = append(b, ": applied the configured default range ("...)
		b = append(b, ts.table.DefaultRange.String()...)
		b = append(b, " back from now); "...)
	}
	if r.fullScan {
		b = append(b, "no range on "...)
		b = append(b, ts.table.ShardKey...)
		b = append(b, ": full scan of every physical table, hot and cold (allow_full_scan), counted as reaching the history store; "...)
		hotOnly = false
	}
	b = append(b, "range "...)
	b = appendInterval(b, span)
	if r.instants {
		b = append(b, " UTC"...)
	}
	b = append(b, " on "...)
	b = append(b, ts.table.ShardKey...)
	b = append(b, ": "...)
	cold := countCold(t, locs)
	switch {
	case empty:
		b = append(b, "no table holds it, the statement returns no rows"...)
	case cold > 0 && cold < len(locs):
		b = append(b, "crosses the hot window boundary "...)
		b = appendTime(b, boundary)
		b = append(b, ": split into "...)
		b = appendInt(b, int64(len(locs)-cold))
		b = append(b, " hot and "...)
		b = appendInt(b, int64(cold))
		b = append(b, " cold sub-queries"...)
	default:
		b = appendInt(b, int64(len(locs)))
		if cold > 0 {
			b = append(b, " cold"...)
		} else {
			b = append(b, " hot"...)
		}
		b = append(b, " table(s), level "...)
		b = append(b, p.Level.String()...)
	}
	if ts.derived {
		b = append(b, "; read inside a derived table, WITH or UNION, which each sub-query runs whole on its table"...)
	}
	if hotOnly {
		p.Prompts = append(p.Prompts, string(b), "did not touch the history store")
	} else {
		p.Prompts = append(p.Prompts, string(b))
	}
}

// countCold counts the locations that are the history store's.
func countCold(t *timeRouter, locs []string) int {
	n := 0
	for _, b := range locs {
		if t.router.roles[b] == config.RoleCold {
			n++
		}
	}
	return n
}
