// Package bench measures obroute's overhead against plain go-sql-driver/mysql on the same
// MariaDB server and the same statements, in one process: the drivers alternate in rounds
// (Alternate), so that both see the machine as it is at each moment, and every figure is a median
// over the rounds with its range. Per statement it reads the latency, the process's CPU time
// (getrusage) and its heap allocations (the runtime's counters).
//
// The measures (Report): a point SELECT by primary key with a ? argument and with a literal
// text never repeated, on a plain DSN (one backend, no rule: statements pass through unparsed)
// and on a routed configuration (hot and cold backends, a time-sharded table); the same point
// SELECT from 64 goroutines; a query split across hot and cold against its slower sub-query
// alone. Command internal/bench/cmd/report runs them and prints the table:
//
//	go run ./internal/bench/cmd/report            # 21 rounds
//	go run ./internal/bench/cmd/report -short     # CI: 3 short rounds, checks that everything runs
//
// TestAllocationBudgets asserts the allocation budgets (allocations do not depend on timing);
// BenchmarkRoute and BenchmarkParseCache measure the router alone.
package bench
