package routing

import (
	"slices"
	"sort"
	"strings"
	"time"
)

// bound is one end of an interval of shard-key values; an unset bound is infinite.
type bound struct {
	t    time.Time
	set  bool
	incl bool
}

// interval is a set of shard-key values between two bounds.
type interval struct{ lo, hi bound }

// everything is the interval of all non-NULL shard-key values.
var everything = interval{}

func (iv interval) empty() bool {
	if !iv.lo.set || !iv.hi.set {
		return false
	}
	c := iv.lo.t.Compare(iv.hi.t)
	return c > 0 || c == 0 && !(iv.lo.incl && iv.hi.incl)
}

func (iv interval) unbounded() bool { return !iv.lo.set && !iv.hi.set }

// raiseLo narrows the lower bound to b when b is tighter.
func (iv *interval) raiseLo(b bound) {
	if !iv.lo.set {
		iv.lo = b
		return
	}
	c := b.t.Compare(iv.lo.t)
	if c > 0 || c == 0 && !b.incl {
		iv.lo = b
	}
}

// lowerHi narrows the upper bound to b when b is tighter.
func (iv *interval) lowerHi(b bound) {
	if !iv.hi.set {
		iv.hi = b
		return
	}
	c := b.t.Compare(iv.hi.t)
	if c < 0 || c == 0 && !b.incl {
		iv.hi = b
	}
}

func (iv interval) intersect(o interval) interval {
	if o.lo.set {
		iv.raiseLo(o.lo)
	}
	if o.hi.set {
		iv.lowerHi(o.hi)
	}
	return iv
}

// String writes the interval in mathematical notation with DATETIME values.
func (iv interval) String() string { return string(appendInterval(nil, iv)) }

func appendInterval(b []byte, iv interval) []byte {
	if iv.lo.set && iv.lo.incl {
		b = append(b, '[')
	} else {
		b = append(b, '(')
	}
	if iv.lo.set {
		b = appendTime(b, iv.lo.t)
	} else {
		b = append(b, "-inf"...)
	}
	b = append(b, ", "...)
	if iv.hi.set {
		b = appendTime(b, iv.hi.t)
	} else {
		b = append(b, "+inf"...)
	}
	if iv.hi.set && iv.hi.incl {
		return append(b, ']')
	}
	return append(b, ')')
}

// rangeSet is a sorted list of disjoint, non-empty intervals.
type rangeSet []interval

// String implements fmt.Stringer: the intervals joined by ∪, or "(empty)".
func (s rangeSet) String() string {
	if len(s) == 0 {
		return "(empty)"
	}
	parts := make([]string, len(s))
	for i, iv := range s {
		parts[i] = iv.String()
	}
	return strings.Join(parts, " ∪ ")
}

// lowBefore orders lower bounds: an infinite bound first, then by time, inclusive before exclusive.
func lowBefore(a, b bound) int {
	switch {
	case !a.set && !b.set:
		return 0
	case !a.set:
		return -1
	case !b.set:
		return 1
	}
	if c := a.t.Compare(b.t); c != 0 {
		return c
	}
	switch {
	case a.incl == b.incl:
		return 0
	case a.incl:
		return -1
	}
	return 1
}

// touches reports whether interval b, starting at or after a's start, overlaps or adjoins a.
func touches(a, b interval) bool {
	if !a.hi.set || !b.lo.set {
		return true
	}
	c := b.lo.t.Compare(a.hi.t)
	return c < 0 || c == 0 && (a.hi.incl || b.lo.incl)
}

// normalize sorts, drops empty intervals and merges overlapping ones.
func normalize(s rangeSet) rangeSet {
	s = slices.DeleteFunc(s, interval.empty)
	// sort.Slice, not slices.SortFunc: no generic sort compiled for interval's shape.
	sort.Slice(s, func(i, j int) bool { return lowBefore(s[i].lo, s[j].lo) < 0 })
	out := s[:0]
	for _, iv := range s {
		if n := len(out); n > 0 && touches(out[n-1], iv) {
			last := &out[n-1]
			if last.hi.set && (!iv.hi.set || iv.hi.t.After(last.hi.t) || iv.hi.t.Equal(last.hi.t) && iv.hi.incl) {
				last.hi = iv.hi
			}
			continue
		}
		out = append(out, iv)
	}
	return out
}

//go:noinline
func union(a, b rangeSet) rangeSet {
	return normalize(append(slices.Clip(a), b...))
}

func intersect(a, b rangeSet) rangeSet {
	var out rangeSet
	for _, x := range a {
		for _, y := range b {
			if iv := x.intersect(y); !iv.empty() {
				out = append(out, iv)
			}
		}
	}
	return normalize(out)
}

// span is the smallest interval holding the whole set.
func (s rangeSet) span() interval {
	if len(s) == 0 {
		return interval{lo: bound{set: true}, hi: bound{set: true}} // empty
	}
	return interval{lo: s[0].lo, hi: s[len(s)-1].hi}
}
