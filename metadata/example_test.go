package metadata_test

import (
	"fmt"
	"time"

	"github.com/obroute/obroute/metadata"
)

func ExampleHotWindow_Boundary() {
	now := time.Date(2025, 3, 15, 13, 45, 0, 0, time.UTC)
	for _, w := range []metadata.HotWindow{{Months: 2}, {Days: 1}, {Days: 90}} {
		fmt.Printf("%s: %s\n", w, w.Boundary(now).Format(time.DateTime))
	}
	// Output:
	// current month + 2 previous: 2025-01-01 00:00:00
	// last 1 days: 2025-03-15 00:00:00
	// last 90 days: 2024-12-16 00:00:00
}

func ExampleSnapshot_Overlapping() {
	month := func(y int, m time.Month) (time.Time, time.Time) {
		start := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 1, 0).Add(-time.Second)
	}
	var tables []metadata.Table
	for _, m := range []time.Month{time.January, time.February, time.March} {
		lo, hi := month(2025, m)
		tables = append(tables, metadata.Table{Name: lo.Format("orders_200601"), Min: lo, Max: hi, Hot: true})
	}
	lo, hi := month(2024, time.December)
	tables = append(tables, metadata.Table{Name: "orders_202412", Min: lo, Max: hi, Location: "history"})

	s, err := metadata.NewSnapshot(tables, time.Now())
	if err != nil {
		panic(err)
	}
	// WHERE order_time >= '2024-12-20' AND order_time < '2025-02-01'
	from := time.Date(2024, 12, 20, 0, 0, 0, 0, time.UTC)
	to := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	for _, t := range s.Overlapping("orders", from, to, false) {
		fmt.Printf("%s hot=%v location=%q\n", t.Name, t.Hot, t.Location)
	}
	// Output:
	// orders_202412 hot=false location="history"
	// orders_202501 hot=true location=""
}
