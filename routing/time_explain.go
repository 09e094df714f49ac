package routing

import (
	"strings"
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
