// Command report reads the output of obroute's benchmarks (package bench) and prints each
// obroute figure beside its baseline, as a ratio, with its target:
//
//	go test -run '^$' -bench . -benchmem -count 5 ./bench/ | go run ./bench/cmd/report
//
// With -count N, the fastest of the N runs of each benchmark is used: on a shared machine the
// best run is the one least disturbed by other work.
//
// It exits with status 1 when a benchmark is missing or failed, not when a target is missed:
// speed depends on the machine, so targets are reported, not enforced.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// result is one benchmark line: its metrics by unit (ns/op, allocs/op, hit%…).
type result map[string]float64

var line = regexp.MustCompile(`^(Benchmark\S+?)(?:-(\d+))?\s+(\d+)\s+(.*)$`)

func parse(r io.Reader, echo io.Writer) (results map[string]result, cpu string, procs string, failed bool, err error) {
	results = map[string]result{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		text := sc.Text()
		fmt.Fprintln(echo, text)
		if strings.HasPrefix(text, "cpu: ") {
			cpu = strings.TrimPrefix(text, "cpu: ")
		}
		if strings.HasPrefix(text, "FAIL") || strings.HasPrefix(text, "--- FAIL") || strings.HasPrefix(text, "--- SKIP") {
			failed = true
		}
		m := line.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		procs = m[2]
		res := result{}
		f := strings.Fields(m[4])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err == nil {
				res[f[i+1]] = v
			}
		}
		if prev, ok := results[m[1]]; ok && prev["ns/op"] <= res["ns/op"] {
			continue // with -count N, the best run of each benchmark is kept
		}
		results[m[1]] = res
	}
	return results, cpu, procs, failed, sc.Err()
}

func main() {
	results, cpu, procs, failed, err := parse(os.Stdin, io.Discard)
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
	missing := report(os.Stdout, results, cpu, procs)
	if failed || len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "report: benchmarks failed or missing: %s\n", strings.Join(missing, ", "))
		os.Exit(1)
	}
}

// report writes the table and returns the names of missing benchmarks.
func report(w io.Writer, res map[string]result, cpu, procs string) (missing []string) {
	get := func(name, unit string) float64 {
		r, ok := res[name]
		if !ok {
			missing = append(missing, name)
			return 0
		}
		return r[unit]
	}
	us := func(ns float64) string { return fmt.Sprintf("%.1f µs", ns/1000) }
	verdict := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "NO"
	}
	fmt.Fprintf(w, "obroute overhead vs plain go-sql-driver/mysql (machine: %s, GOMAXPROCS %s)\n\n", cpu, procs)
	fmt.Fprintf(w, "| # | measure | obroute | baseline | result | target | met |\n|---|---|---|---|---|---|---|\n")

	rawP, obP := get("BenchmarkOverhead/point/raw", "ns/op"), get("BenchmarkOverhead/point/obroute", "ns/op")
	if rawP > 0 {
		r := obP / rawP
		fmt.Fprintf(w, "| 1 | point SELECT by PK, latency (separate runs) | %s | %s | %.3f | ≤ 1.05 | %s |\n", us(obP), us(rawP), r, verdict(r <= 1.05))
	}
	paired := res["BenchmarkOverhead/point/paired"]
	if paired == nil {
		missing = append(missing, "BenchmarkOverhead/point/paired")
	} else {
		r := paired["ratio"]
		fmt.Fprintf(w, "| 1p | point SELECT by PK, median latency, alternated statement by statement | %s | %s | %.3f | ≤ 1.05 | %s |\n",
			us(paired["obroute-ns/op"]), us(paired["raw-ns/op"]), r, verdict(r <= 1.05))
	}
	raw64, ob64 := get("BenchmarkOverhead/point64/raw", "ns/op"), get("BenchmarkOverhead/point64/obroute", "ns/op")
	if ob64 > 0 {
		r := raw64 / ob64 // throughput ratio: ops/s is 1/(ns/op)
		fmt.Fprintf(w, "| 2 | point SELECT, 64 goroutines, throughput | %.0f q/s | %.0f q/s | %.3f | ≥ 0.95 | %s |\n", 1e9/ob64, 1e9/raw64, r, verdict(r >= 0.95))
	}
	rt, allocs := get("BenchmarkRoute/point", "ns/op"), get("BenchmarkRoute/point", "allocs/op")
	fmt.Fprintf(w, "| 3 | routing decision, parse-cache hit (point) | %.0f ns, %.0f allocs | — | %.0f ns/op | < 2000 ns, ≤ 10 allocs | %s |\n", rt, allocs, rt, verdict(rt < 2000 && allocs <= 10))
	rt2, allocs2 := get("BenchmarkRoute/hot_only", "ns/op"), get("BenchmarkRoute/hot_only", "allocs/op")
	fmt.Fprintf(w, "| 3b | routing decision, parse-cache hit (time-sharded, hot only) | %.0f ns, %.0f allocs | — | %.0f ns/op | < 2000 ns, ≤ 10 allocs | %s |\n", rt2, allocs2, rt2, verdict(rt2 < 2000 && allocs2 <= 10))
	var parts float64
	var partNames []string
	for name, r := range res {
		if strings.HasPrefix(name, "BenchmarkOverhead/split/part") {
			parts = max(parts, r["ns/op"])
			partNames = append(partNames, strings.TrimPrefix(name, "BenchmarkOverhead/split/"))
		}
	}
	if len(partNames) < 2 {
		missing = append(missing, "BenchmarkOverhead/split/part*")
	}
	split := get("BenchmarkOverhead/split/obroute", "ns/op")
	if parts > 0 {
		r := split / parts
		fmt.Fprintf(w, "| 4 | split hot + cold query, latency vs slowest part alone | %s | %s | %.3f | ≤ 1.2 | %s |\n", us(split), us(parts), r, verdict(r <= 1.2))
	}
	hit := get("BenchmarkParseCache", "hit%")
	fmt.Fprintf(w, "| 5 | parse-cache hit rate, template workload | %.2f %% | — | %.2f %% | ≥ 99 %% | %s |\n", hit, hit, verdict(hit >= 99))
	return missing
}
