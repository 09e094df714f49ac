package tiering

import (
	"fmt"
	"strings"
	"time"
)

// period is one period of a logical table's physical tables, named by the suffix after
// "<logical>_": YYYY (a year), YYYYMM or YYYY_MM (a month), YYYYMMDD or YYYY_MM_DD (a day).
type period struct {
	layout string // Go layout of the suffix
	start  time.Time
}

// periodLayouts are the suffixes prepare understands, longest first.
var periodLayouts = []string{"2006_01_02", "20060102", "2006_01", "200601", "2006"}

// parsePeriod reads the period of a physical table from its name.
func parsePeriod(logical, name string) (period, error) {
	suffix := name[min(len(name), len(logical)+1):]
	if !strings.EqualFold(name[:min(len(name), len(logical))], logical) || len(name) <= len(logical) || name[len(logical)] != '_' {
		return period{}, fmt.Errorf("%s is not a table of %s", name, logical)
	}
	for _, l := range periodLayouts {
		if len(suffix) != len(l) {
			continue
		}
		if t, err := time.ParseInLocation(l, suffix, time.UTC); err == nil {
			return period{layout: l, start: t}, nil
		}
	}
	return period{}, fmt.Errorf("cannot tell the period of %s from its name: name the tables %s_YYYYMM, %s_YYYY_MM, %s_YYYYMMDD, %s_YYYY_MM_DD or %s_YYYY, or create the next table and its metadata row by hand",
		name, logical, logical, logical, logical, logical)
}

// at returns the period of the same kind that holds t.
func (p period) at(t time.Time) period {
	y, m, d := t.Date()
	switch p.layout {
	case "2006":
		return period{p.layout, time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)}
	case "2006_01", "200601":
		return period{p.layout, time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)}
	}
	return period{p.layout, time.Date(y, m, d, 0, 0, 0, 0, time.UTC)}
}

// next returns the following period.
func (p period) next() period {
	switch p.layout {
	case "2006":
		return period{p.layout, p.start.AddDate(1, 0, 0)}
	case "2006_01", "200601":
		return period{p.layout, p.start.AddDate(0, 1, 0)}
	}
	return period{p.layout, p.start.AddDate(0, 0, 1)}
}

// end is the first instant after the period.
func (p period) end() time.Time { return p.next().start }

// name is the physical table of the period.
func (p period) name(logical string) string { return logical + "_" + p.start.Format(p.layout) }
