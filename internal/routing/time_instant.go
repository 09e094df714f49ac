package routing

import (
	"time"
)

// A TIMESTAMP shard key stores instants; the server reads every value compared with it, and
// every value stored in it, as a wall clock of the session's time zone. Routing reads the range
// in that wall clock and maps it to the instants shard_metadata speaks of (UTC), and writes
// each table's clamp back in the session's wall clock. In a zone with daylight saving time the
// map has two irregular places a year:
//
//   - the skipped spring hour: its wall clocks are no instant. The server compares as wall
//     clocks, so a bound there is the first instant after the jump; a value stored there is an
//     error (strict sql_mode) or moved by the server, which routing refuses.
//   - the repeated autumn hour: its wall clocks are two instants each. MariaDB stores such a
//     value as the earlier one, and compares the column with it by the earlier instant when it
//     reads the column's index, and by the wall clock when it does not: a range ending there
//     has no one answer, and routing refuses it.
//
// Times here are time.Time values labelled UTC: a wall clock (its fields), or an instant.

// wallInstants returns the instants whose wall clock in loc is w: n = 1, or 2 in a repeated
// hour (first < last), or 0 in a skipped hour, first being then the instant the clocks jump at.
func wallInstants(w time.Time, loc *time.Location) (first, last time.Time, n int) {
	if loc == time.UTC {
		return w, w, 1
	}
	at := w.In(loc)
	if start, end := at.ZoneBounds(); start.IsZero() && end.IsZero() { // a fixed offset
		_, off := at.Zone()
		i := w.Add(-time.Duration(off) * time.Second).UTC()
		return i, i, 1
	}
	// The zone's periods within a day and a half of w (no offset exceeds 14 hours).
	const reach = 36 * time.Hour
	var periods [8]zonePeriod
	ps := periods[:0]
	for tm, stop := w.Add(-reach).In(loc), w.Add(reach); len(ps) < len(periods); {
		start, end := tm.ZoneBounds()
		_, off := tm.Zone()
		ps = append(ps, zonePeriod{start: start, end: end, off: time.Duration(off) * time.Second})
		if end.IsZero() || !end.Before(stop) {
			break
		}
		tm = end.In(loc)
	}
	for i, p := range ps {
		c := w.Add(-p.off)
		if (p.start.IsZero() || !c.Before(p.start)) && (p.end.IsZero() || c.Before(p.end)) {
			if n == 0 {
				first = c
			}
			last, n = c, n+1
			continue
		}
		if n == 0 && i > 0 && ps[i-1].off < p.off && !p.start.IsZero() {
			// w between the last wall clock before the jump and the first after it.
			if jump := p.start; !w.Before(jump.Add(ps[i-1].off)) && w.Before(jump.Add(p.off)) {
				first, last = jump, jump
			}
		}
	}
	if n == 0 && first.IsZero() { // not reached: every wall clock is an instant or in a jump
		return w, w, 1
	}
	return first.UTC(), last.UTC(), n
}

// zonePeriod is one stretch of a zone's constant offset: [start, end), zero for unbounded.
type zonePeriod struct {
	start, end time.Time
	off        time.Duration
}

// fixedZone reports whether loc has one offset at all times.
func fixedZone(loc *time.Location) bool {
	if loc == time.UTC {
		return true
	}
	start, end := time.Unix(0, 0).In(loc).ZoneBounds()
	return start.IsZero() && end.IsZero()
}

// utcZone reports whether loc's wall clock is UTC's at all times.
func utcZone(loc *time.Location) bool {
	if loc == nil || !fixedZone(loc) {
		return false
	}
	_, off := time.Unix(0, 0).In(loc).Zone()
	return off == 0
}

// wallIn returns the wall clock of the instant i in loc, labelled UTC.
func wallIn(i time.Time, loc *time.Location) time.Time {
	if loc == time.UTC {
		return i.UTC()
	}
	return wallUTC(i.In(loc))
}

// ambiguousWall reports whether the instant i's wall clock in loc is also another instant's:
// i is in the two hours of instants a repeated hour of wall clock stands for.
func ambiguousWall(i time.Time, loc *time.Location) bool {
	if fixedZone(loc) {
		return false
	}
	_, _, n := wallInstants(wallIn(i, loc), loc)
	return n == 2
}

// instantsOf maps an interval of wall clocks in loc to the smallest interval of instants
// holding every instant whose wall clock is in it. It is the exact set in a fixed zone and
// wherever no bound lies in a repeated hour.
func instantsOf(iv interval, loc *time.Location) interval {
	if iv.empty() {
		return iv
	}
	out := iv
	if iv.lo.set {
		first, _, n := wallInstants(iv.lo.t, loc)
		out.lo = bound{t: first, set: true, incl: iv.lo.incl || n == 0}
	}
	if iv.hi.set {
		_, last, n := wallInstants(iv.hi.t, loc)
		out.hi = bound{t: last, set: true, incl: iv.hi.incl && n > 0}
	}
	return out
}

// instantSet maps each interval of s as instantsOf does.
func instantSet(s rangeSet, loc *time.Location) rangeSet {
	out := make(rangeSet, len(s))
	for i, iv := range s {
		out[i] = instantsOf(iv, loc)
	}
	return normalize(out)
}

// repeatedEnd returns the first upper bound of an interval of s (wall clocks in loc) that
// lies in a repeated hour of loc, where MariaDB's answer depends on its plan; a point left out
// (key <> v, NOT IN) is no end: the range goes on after it. ok is false when there is none.
func repeatedEnd(s rangeSet, loc *time.Location) (time.Time, bool) {
	if fixedZone(loc) {
		return time.Time{}, false
	}
	for i, iv := range s {
		if !iv.hi.set {
			continue
		}
		if i+1 < len(s) && !iv.hi.incl && s[i+1].lo.set && !s[i+1].lo.incl && s[i+1].lo.t.Equal(iv.hi.t) {
			continue
		}
		if _, _, n := wallInstants(iv.hi.t, loc); n == 2 {
			return iv.hi.t, true
		}
	}
	return time.Time{}, false
}

// meetsRepeatedHour reports whether the instants of iv (bounded by [from, to)) include some of
// the two hours a repeated hour of loc stands for, where two instants read as one wall clock.
func meetsRepeatedHour(iv interval, from, to time.Time, loc *time.Location) bool {
	if fixedZone(loc) || iv.empty() {
		return false
	}
	if iv.lo.set && iv.lo.t.After(from) {
		from = iv.lo.t
	}
	if iv.hi.set && iv.hi.t.Before(to) {
		to = iv.hi.t.Add(time.Nanosecond)
	}
	for tm := from.In(loc); tm.Before(to); {
		_, end := tm.ZoneBounds()
		if end.IsZero() {
			return false
		}
		_, before := tm.Zone()
		_, after := end.In(loc).Zone()
		if after < before { // the clocks go back at end: the repeated wall clocks span [end-d, end+d)
			d := time.Duration(before-after) * time.Second
			if end.Add(-d).Before(to) && end.Add(d).After(from) {
				return true
			}
		}
		tm = end.In(loc)
	}
	return false
}
