package routing

import (
	"time"

	"github.com/obroute/obroute/metadata"
)

// openEnded returns the index in all (sorted by Min) of the table whose span is open above, or
// -1: the newest table, the one with the latest min_time, when it also has the latest
// max_time. No other table holds times after its max_time, so a row there cannot be counted
// twice; such rows (written before the next period's table exists, or by another writer) are
// read rather than hidden. An INSERT still needs a table whose span covers its time.
func openEnded(all []metadata.Table) int {
	n := len(all) - 1
	if n < 0 {
		return -1
	}
	for i := range n {
		if !all[i].Max.Before(all[n].Max) {
			return -1
		}
	}
	return n
}

// reachesPast reports whether the range holds a value after the whole second of max.
func reachesPast(span interval, max time.Time) bool {
	if span.empty() {
		return false
	}
	end := max.Truncate(time.Second).Add(time.Second)
	return !span.hi.set || span.hi.t.After(end) || span.hi.t.Equal(end) && span.hi.incl
}
