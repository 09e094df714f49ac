package merge

import (
	"database/sql/driver"
	"fmt"
	"io"
)

// Two backends answered "SELECT region, SUM(amount), COUNT(amount) FROM
// orders_… GROUP BY region ORDER BY region" for their time ranges; the
// caller asked for "SELECT region, AVG(amount) … GROUP BY region ORDER BY
// region", so the COUNT column is hidden and AVG is rebuilt from the parts.
func ExampleNew() {
	cols := []string{"region", "avg_sum", "avg_count"}
	types := []string{"VARCHAR", "DECIMAL", "BIGINT"}
	hot := newFake(cols, types, r("east", "10.50", "2"), r("west", "3.00", "1"))
	cold := newFake(cols, types, r("EAST", "4.50", "1"), r("north", "1.00", "4"))

	rows, err := New(Spec{
		Visible:    2,
		OrderBy:    []OrderKey{{Column: 0}},
		GroupBy:    []int{0},
		Aggregates: []Aggregate{{Func: AggAvg, Column: 1, CountColumn: 2}},
		Limit:      NoLimit,
	}, []driver.Rows{hot, cold})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	for rows.Next(dest) != io.EOF {
		fmt.Printf("%s %s\n", dest[0], dest[1])
	}
	// Output:
	// east 5.000000
	// north 0.250000
	// west 3.000000
}
