package main

import (
	"testing"
	"time"
)

// The hot window is counted on the calendar of the shard-key times (UTC), not on the zone of
// the machine or of -now: 2025-03-01 02:00 in UTC+8 is still February in UTC.
func TestMarkHotCountsTheDataCalendar(t *testing.T) {
	dsn, _ := backends(t)
	code, out, errOut := cli(t, "metadata", "mark-hot", "-dsn", dsn["hot"], "-hot-months", "2", "-now", "2025-03-01T02:00:00+08:00")
	want := "hot window current month + 2 previous from 2024-12-01 00:00:00: 2 table(s) became hot, 1 became cold; now 4 hot, 1 cold\n"
	if code != 0 || out != want || errOut != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0, %q", code, out, errOut, want)
	}
}

func TestWallClock(t *testing.T) {
	shanghai := time.FixedZone("UTC+8", 8*3600)
	at := time.Date(2025, 2, 28, 18, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		t    time.Time
		loc  *time.Location
		want time.Time
	}{
		{"local zone to UTC", at.In(shanghai), nil, at},
		{"UTC", at, time.UTC, at},
		{"to the DSN's loc", at, shanghai, time.Date(2025, 3, 1, 2, 0, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		if got := wallClock(c.t, c.loc); !got.Equal(c.want) || got.Location() != time.UTC {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
