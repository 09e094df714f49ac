package metadata

import (
	"fmt"
	"time"

	"github.com/obroute/obroute/config"
)

// Largest accepted window sizes: anything larger is a configuration mistake.
const (
	maxWindowDays   = 36600 // about 100 years
	maxWindowMonths = 1200
)

// HotWindow is the recent time span whose rows live in hot tables. Exactly
// one field is set:
//
//   - Days: the last N calendar days, today included. Days=1 is today only;
//     Days=7 on Wednesday 2025-03-19 starts on Thursday 2025-03-13 00:00.
//   - Months: the current calendar month plus Months previous ones. Months=2
//     in March 2025 starts on 2025-01-01 00:00. Months counts previous months,
//     so the shortest calendar window is the current month plus one; use Days
//     for shorter windows.
//
// It is config.HotWindow (time_tables.TABLE.hot_window.days or .months) with
// its calendar: Validate and Boundary.
type HotWindow config.HotWindow

// Validate returns an error wrapping ErrInvalidHotWindow unless exactly one
// of Days and Months is positive (and not absurdly large).
func (w HotWindow) Validate() error {
	switch {
	case w.Days < 0 || w.Months < 0:
		return errorf("%w: days=%d months=%d: sizes cannot be negative", ErrInvalidHotWindow, w.Days, w.Months)
	case w.Days > 0 && w.Months > 0:
		return errorf("%w: days=%d and months=%d are both set; set exactly one", ErrInvalidHotWindow, w.Days, w.Months)
	case w.Days == 0 && w.Months == 0:
		return errorf("%w: neither days nor months is set; set exactly one (e.g. days=90 or months=2)", ErrInvalidHotWindow)
	case w.Days > maxWindowDays:
		return errorf("%w: days=%d is more than %d", ErrInvalidHotWindow, w.Days, maxWindowDays)
	case w.Months > maxWindowMonths:
		return errorf("%w: months=%d is more than %d", ErrInvalidHotWindow, w.Months, maxWindowMonths)
	}
	return nil
}

// Boundary returns the start of the hot window at time now: rows with a
// shard-key time at or after Boundary are in the window, earlier rows are not.
// It is midnight at the start of a day, computed on the calendar of now's
// location. Shard-key times are wall clock read as UTC, so pass now the same
// way (now.UTC(), or the wall clock of the backends' zone labelled UTC), never
// time.Now() in the machine's local zone:
//
//   - Days=N: the start of the day N-1 days before now's day, so Days=1 is
//     today 00:00 and Days=90 on 2025-03-31 is 2025-01-01 00:00.
//   - Months=M: the first day of the month M months before now's month, so
//     Months=2 on 2025-03-15 is 2025-01-01 00:00.
//
// On a day whose 00:00 does not exist (a daylight-saving change at
// midnight), the result is what time.Date makes of 00:00 that day.
// Boundary does not validate w; call Validate first.
func (w HotWindow) Boundary(now time.Time) time.Time {
	y, m, d := now.Date()
	if w.Months > 0 {
		return time.Date(y, m-time.Month(w.Months), 1, 0, 0, 0, 0, now.Location())
	}
	return time.Date(y, m, d-(w.Days-1), 0, 0, 0, 0, now.Location())
}

// String describes the window, e.g. "last 7 days" or "current month + 2 previous".
func (w HotWindow) String() string {
	if w.Months > 0 {
		return fmt.Sprintf("current month + %d previous", w.Months)
	}
	return fmt.Sprintf("last %d days", w.Days)
}
