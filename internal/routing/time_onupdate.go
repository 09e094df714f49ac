package routing

import (
	"strings"
	"time"

	"github.com/obroute/obroute/metadata"
)

// A shard key declared ON UPDATE CURRENT_TIMESTAMP (a TIMESTAMP or DATETIME column; MariaDB
// before 10.10 gives it to the first TIMESTAMP NOT NULL column of a table unless
// explicit_defaults_for_timestamp) is set by the server to its own clock in every row an UPDATE
// changes without assigning it, and in the row an ON DUPLICATE KEY UPDATE updates. One server
// holding every row keeps the row, at its new time; obroute's physical table keeps it too, now
// outside its span, where a read of that time does not look. Such a write is routed only to the
// newest table, open above, when the clock is past its start by onUpdateMargin: the server's
// clock, which obroute does not read, then falls in its span too. Elsewhere it is refused.

// onUpdateMargin is how far the statement's clock must be past the open table's start for the
// server's clock, which may run behind obroute's, to be in its span as well.
const onUpdateMargin = time.Hour

// onUpdateExact refuses the write what on tables whose shard-key column obroute read as ON
// UPDATE CURRENT_TIMESTAMP, unless its one table is the open one (open; "" for an INSERT, whose
// rows may be older than the open table's start) and the clock is in it.
func (t *timeRouter) onUpdateExact(ts *timeStatement, what string, tables []metadata.Table, open string, typ ShardKeyType, clock *stmtClock) error {
	f := t.facts.p.Load()
	if f == nil {
		return nil
	}
	for i := range tables {
		tb := &tables[i]
		if k, ok := f.keys[strings.ToLower(tb.Name)]; !ok || !k.OnUpdate {
			continue
		}
		if len(tables) == 1 && tb.Name == open {
			now := clock.at.UTC()
			if typ != ShardKeyTimestamp && clock.zone != nil {
				now = wallUTC(clock.at.In(clock.zone))
			}
			if (typ == ShardKeyTimestamp || clock.zone != nil) && !now.Add(-onUpdateMargin).Before(tb.Min) {
				return nil
			}
		}
		hint := ""
		if open != "" {
			hint = " narrow the range to the newest table (" + open + "),"
		}
		return errorf("%w: %s of %s is ON UPDATE CURRENT_TIMESTAMP, so the %s would have the server set it to its clock in the rows it changes, which then stay in %s outside its span (one server would keep them at their new time, where obroute does not read them);%s assign the column in the statement's place with a DELETE and INSERT, or drop ON UPDATE from it (ALTER TABLE … MODIFY %s … DEFAULT CURRENT_TIMESTAMP on every physical table)",
			ErrNotMergeable, ts.table.ShardKey, tb.Name, what, tb.Name, hint, ts.table.ShardKey)
	}
	return nil
}
