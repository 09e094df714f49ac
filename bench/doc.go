// Package bench measures obroute's overhead against plain go-sql-driver/mysql on the same
// MariaDB server and the same queries. It holds benchmarks only (no code of its own):
//
//   - BenchmarkOverhead/point/{raw,obroute}: point SELECT by primary key on one backend;
//   - BenchmarkOverhead/point64/{raw,obroute}: the same from 64 concurrent goroutines;
//   - BenchmarkOverhead/split/{part1,part2,...,obroute}: a query split into hot and cold
//     sub-queries, each sub-query alone on its backend and the whole through obroute;
//   - BenchmarkRoute/{point,hot_only}: the routing decision alone on a parse-cache hit;
//   - BenchmarkParseCache: the parse-cache hit rate over a realistic template workload.
//
// The servers come from package sqltest (sqltest.Shared: a throwaway database on the server
// of OBROUTE_TEST_DSN, default root@tcp(127.0.0.1:3306)/). Print the figures as a table of
// ratios with targets:
//
//	go test -run '^$' -bench . -benchmem -count 5 ./bench/ | go run ./bench/cmd/report
//
// CI runs the same with -benchtime 20x (a few iterations: it checks that everything works,
// not speed).
package bench
