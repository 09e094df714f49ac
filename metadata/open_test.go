package metadata

import (
	"testing"
	"time"
)

func TestOpenAbove(t *testing.T) {
	d := func(s string) time.Time {
		v, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	jan := Table{Name: "t_202501", Min: d("2025-01-01"), Max: d("2025-01-31")}
	feb := Table{Name: "t_202502", Min: d("2025-02-01"), Max: d("2025-02-28")}
	q1 := Table{Name: "t_2025q1", Min: d("2025-01-01"), Max: d("2025-03-31")}
	sameEnd := Table{Name: "t_2025b", Min: d("2025-01-15"), Max: d("2025-02-28")}
	cases := []struct {
		name   string
		tables []Table
		want   int
	}{
		{"none", nil, -1},
		{"one table", []Table{jan}, 0},
		{"the latest of disjoint tables", []Table{jan, feb}, 1},
		{"an older table ends later", []Table{jan, q1, feb}, -1},
		{"two tables end together", []Table{jan, sameEnd, feb}, -1},
	}
	for _, c := range cases {
		if got := OpenAbove(c.tables); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
