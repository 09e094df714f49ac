package merge

import (
	"database/sql/driver"
	"fmt"
	"io"
)

// Two backends answered, for their time ranges, the sub-query the caller's
// "SELECT region, AVG(amount) FROM orders … GROUP BY region ORDER BY region"
// became: the statement's own columns, then hidden ones: the weight of region
// under its collation, and the partial SUM and COUNT of amount with the
// session's div_precision_increment, from which AVG is rebuilt.
func ExampleNew() {
	cols := []string{"region", "AVG(amount)", "w", "s", "c", "i"}
	types := []string{"VARCHAR", "DECIMAL(16,6)", "VARBINARY", "DECIMAL", "BIGINT", "BIGINT"}
	row := func(region, avg, sum, count string) []driver.Value {
		return r(region, avg, string(ciWeight(region)), sum, count, "4")
	}
	hot := newFake(cols, types, row("east", "5.250000", "10.50", "2"), row("west", "3.000000", "3.00", "1"))
	cold := newFake(cols, types, row("EAST", "4.500000", "4.50", "1"), row("north", "0.250000", "1.00", "4"))

	rows, err := New(Spec{
		Visible:    2,
		OrderBy:    []OrderKey{{Column: 0}},
		GroupBy:    []int{0},
		Aggregates: []Aggregate{{Func: AggAvg, Column: 1, Sum: 3, Count: 4, Increment: 5, Arg: ArgColumn}},
		Weights:    []int{2},
		Collations: [][]byte{ciSignature},
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
