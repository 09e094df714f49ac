package metadata

import (
	"errors"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestHotWindowBoundary(t *testing.T) {
	tests := []struct {
		window HotWindow
		now    string
		want   string
	}{
		// Days: start of now's day minus Days-1 days.
		{HotWindow{Days: 1}, "2025-03-15 13:45:00", "2025-03-15 00:00:00"},
		{HotWindow{Days: 1}, "2025-03-15 00:00:00", "2025-03-15 00:00:00"},
		{HotWindow{Days: 1}, "2025-03-15 23:59:59", "2025-03-15 00:00:00"},
		{HotWindow{Days: 2}, "2025-03-01 08:00:00", "2025-02-28 00:00:00"}, // month rollover
		{HotWindow{Days: 3}, "2025-01-02 08:00:00", "2024-12-31 00:00:00"}, // year rollover
		{HotWindow{Days: 2}, "2024-03-01 08:00:00", "2024-02-29 00:00:00"}, // leap day
		{HotWindow{Days: 2}, "2023-03-01 08:00:00", "2023-02-28 00:00:00"}, // no leap day
		{HotWindow{Days: 7}, "2025-03-19 10:00:00", "2025-03-13 00:00:00"},
		{HotWindow{Days: 30}, "2025-03-15 10:00:00", "2025-02-14 00:00:00"},
		{HotWindow{Days: 90}, "2025-03-31 10:00:00", "2025-01-01 00:00:00"},
		{HotWindow{Days: 90}, "2024-03-31 10:00:00", "2024-01-02 00:00:00"}, // leap year: one more day in February
		{HotWindow{Days: 90}, "2025-01-15 10:00:00", "2024-10-18 00:00:00"},
		{HotWindow{Days: 366}, "2025-02-28 10:00:00", "2024-02-29 00:00:00"}, // 2024-02-29 to 2025-02-28 is 366 days
		// Months: first day of the month Months before now's month.
		{HotWindow{Months: 2}, "2025-03-15 13:45:00", "2025-01-01 00:00:00"}, // two months before March: from 1 January
		{HotWindow{Months: 2}, "2025-03-01 00:00:00", "2025-01-01 00:00:00"},
		{HotWindow{Months: 2}, "2025-03-31 23:59:59", "2025-01-01 00:00:00"},
		{HotWindow{Months: 1}, "2025-03-31 12:00:00", "2025-02-01 00:00:00"}, // the 31st has no February twin
		{HotWindow{Months: 2}, "2025-02-10 12:00:00", "2024-12-01 00:00:00"}, // year rollover
		{HotWindow{Months: 1}, "2024-02-29 12:00:00", "2024-01-01 00:00:00"}, // leap day
		{HotWindow{Months: 1}, "2024-03-31 12:00:00", "2024-02-01 00:00:00"},
		{HotWindow{Months: 12}, "2025-03-15 12:00:00", "2024-03-01 00:00:00"},
		{HotWindow{Months: 14}, "2025-01-15 12:00:00", "2023-11-01 00:00:00"},
	}
	for _, tt := range tests {
		t.Run(tt.window.String()+" at "+tt.now, func(t *testing.T) {
			if err := tt.window.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			got := tt.window.Boundary(at(t, tt.now))
			if want := at(t, tt.want); !got.Equal(want) {
				t.Fatalf("Boundary = %s, want %s", got.Format(time.DateTime), tt.want)
			}
		})
	}
}

func TestHotWindowBoundaryUsesNowsLocation(t *testing.T) {
	shanghai := time.FixedZone("UTC+8", 8*3600)
	// 2025-03-31 20:00 UTC is already 2025-04-01 04:00 in UTC+8.
	now := time.Date(2025, 3, 31, 20, 0, 0, 0, time.UTC).In(shanghai)
	tests := []struct {
		window HotWindow
		want   time.Time
	}{
		{HotWindow{Days: 1}, time.Date(2025, 3, 31, 16, 0, 0, 0, time.UTC)},
		{HotWindow{Months: 1}, time.Date(2025, 2, 28, 16, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		got := tt.window.Boundary(now)
		if !got.Equal(tt.want) || got.Location() != shanghai {
			t.Errorf("%s: Boundary = %s, want %s in UTC+8", tt.window, got, tt.want)
		}
	}
}

func TestHotWindowValidate(t *testing.T) {
	tests := []struct {
		window HotWindow
		ok     bool
	}{
		{HotWindow{Days: 1}, true},
		{HotWindow{Months: 1}, true},
		{HotWindow{Days: 36600}, true},
		{HotWindow{}, false},
		{HotWindow{Days: 7, Months: 2}, false},
		{HotWindow{Days: -1}, false},
		{HotWindow{Months: -2}, false},
		{HotWindow{Days: 36601}, false},
		{HotWindow{Months: 1201}, false},
	}
	for _, tt := range tests {
		err := tt.window.Validate()
		if tt.ok && err != nil {
			t.Errorf("%+v: Validate = %v, want nil", tt.window, err)
		}
		if !tt.ok && !errors.Is(err, ErrInvalidHotWindow) {
			t.Errorf("%+v: Validate = %v, want ErrInvalidHotWindow", tt.window, err)
		}
	}
}

func TestHotWindowYAML(t *testing.T) {
	tests := []struct {
		in   string
		want HotWindow
	}{
		{"days: 90", HotWindow{Days: 90}},
		{"months: 2", HotWindow{Months: 2}},
	}
	for _, tt := range tests {
		var got HotWindow
		if err := yaml.Unmarshal([]byte(tt.in), &got); err != nil || got != tt.want {
			t.Errorf("yaml %q = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}
