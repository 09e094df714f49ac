package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/tiering"
)

// TestProgress: on a terminal a counted step is one bar redrawn in place (rows done/total,
// rate, ETA) ended by a newline; off a terminal the same step is time-stamped log lines, at
// most one per logEvery besides the last.
func TestProgress(t *testing.T) {
	events := []tiering.MoveEvent{
		{Step: tiering.StepGuard, Text: "make orders_202501 on hot read-only"},
		{Step: tiering.StepGuard, Finished: true},
		{Step: tiering.StepCopy, Text: "copy orders_202501 from hot to cold", Done: 0, Total: 1000, Unit: "rows"},
		{Step: tiering.StepCopy, Done: 250, Total: 1000, Unit: "rows"},
		{Step: tiering.StepCopy, Done: 500, Total: 1000, Unit: "rows"},
		{Step: tiering.StepCopy, Done: 1000, Total: 1000, Unit: "rows", Finished: true},
	}
	run := func(tty bool) string {
		var out bytes.Buffer
		p := newProgress(&out, tty)
		clock := time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)
		p.now = func() time.Time { return clock }
		for _, e := range events {
			p.event(e)
			clock = clock.Add(time.Second)
		}
		p.end()
		return out.String()
	}
	tty := run(true)
	want := "guard  make orders_202501 on hot read-only\nguard  done in 1s\ncopy   copy orders_202501 from hot to cold\n" +
		"\r  [                              ] 0/1000 rows (0%), 0 rows/s, ETA -" +
		"\r  [=======                       ] 250/1000 rows (25%), 250 rows/s, ETA 3s" +
		"\r  [===============               ] 500/1000 rows (50%), 250 rows/s, ETA 2s" +
		"\r  [==============================] 1000/1000 rows (100%), 333 rows/s, done in 3s\n"
	if tty != want {
		t.Errorf("on a terminal:\n%q\nwant\n%q", tty, want)
	}
	logs := run(false)
	want = "2025-03-15T12:00:00.000Z guard  make orders_202501 on hot read-only\n2025-03-15T12:00:01.000Z guard  done in 1s\n" +
		"2025-03-15T12:00:02.000Z copy   copy orders_202501 from hot to cold\n2025-03-15T12:00:02.000Z copy   0/1000 rows (0%), 0 rows/s, ETA -\n" +
		"2025-03-15T12:00:05.000Z copy   1000/1000 rows (100%), 333 rows/s, done in 3s\n"
	if logs != want {
		t.Errorf("off a terminal:\n%s\nwant\n%s", logs, want)
	}
	if strings.Contains(logs, "\r") {
		t.Error("carriage returns in log lines")
	}
}
