package routing

import "time"

// reachesPast reports whether the range holds a value after the whole second of max.
func reachesPast(span interval, max time.Time) bool {
	if span.empty() {
		return false
	}
	end := max.Truncate(time.Second).Add(time.Second)
	return !span.hi.set || span.hi.t.After(end) || span.hi.t.Equal(end) && span.hi.incl
}
