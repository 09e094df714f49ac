package tiering

import (
	"strings"
	"testing"
	"time"
)

func TestPeriods(t *testing.T) {
	cases := []struct {
		name, next, at string // at: the period holding 2026-11-30 12:00 of the same kind
	}{
		{"orders_202611", "orders_202612", "orders_202611"},
		{"orders_202612", "orders_202701", "orders_202611"},
		{"orders_2026_11", "orders_2026_12", "orders_2026_11"},
		{"orders_20261130", "orders_20261201", "orders_20261130"},
		{"orders_2026_11_30", "orders_2026_12_01", "orders_2026_11_30"},
		{"orders_2026", "orders_2027", "orders_2026"},
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, c := range cases {
		p, err := parsePeriod("orders", c.name)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := p.next().name("orders"); got != c.next {
			t.Errorf("%s: next %s, want %s", c.name, got, c.next)
		}
		if got := p.at(now).name("orders"); got != c.at {
			t.Errorf("%s: the period of %s is %s, want %s", c.name, now, got, c.at)
		}
		if !p.end().Equal(p.next().start) {
			t.Errorf("%s: ends %s, the next starts %s", c.name, p.end(), p.next().start)
		}
	}
	for _, bad := range []string{"orders_202613", "orders_2026q4", "orders_26", "invoices_202611"} {
		if _, err := parsePeriod("orders", bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: %v, want an error naming it", bad, err)
		}
	}
}
