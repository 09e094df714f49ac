package bench

import (
	"fmt"
	"io"
	"strings"
)

// table writes the report's Markdown table: for every measure, each side's median with its
// range over the rounds, the ratio of the sides round by round (median, the 95 % confidence
// interval of the median, and the range of the rounds), the target, and whether the rounds show
// it met. "yes" needs the whole confidence interval to meet the target; "median" is a median
// that meets it with an interval that does not (the rounds do not support a claim either way);
// "no" is a median that misses it. Allocation counts are deterministic: their median is judged.
type table struct {
	w      io.Writer
	rounds int
}

func (t *table) header() {
	fmt.Fprintf(t.w, "| measure | go-sql-driver, median (min–max) | obroute, median (min–max) | obroute vs go-sql-driver: median [95 %% CI of the median] (min–max of %d rounds) | target | met |\n", t.rounds)
	fmt.Fprintln(t.w, "|---|---|---|---|---|---|")
}

// row writes one row of the table: the measure, go-sql-driver's figure, obroute's, their
// comparison, the target and whether it is met.
func (t *table) row(cells ...string) {
	fmt.Fprintf(t.w, "| %s |\n", strings.Join(cells, " | "))
}

func ns(s Sample) float64     { return s.Ns }
func cpu(s Sample) float64    { return s.CPUNs }
func allocs(s Sample) float64 { return s.Allocs }
func bytes(s Sample) float64  { return s.Bytes }

// perStatement writes the latency, client CPU and allocations of a serial measure. Allocations
// are judged against extraAllocs more than go-sql-driver; CPU against 1.03× when the budget is
// the passthrough's (one allocation).
func (t *table) perStatement(name string, extraAllocs float64, base, ob []Sample) {
	lat := spreadOf(ratios(ob, base, ns))
	t.row(name+": latency", micros(spreadOf(each(base, ns))), micros(spreadOf(each(ob, ns))), times(lat), "—", "—")
	c := spreadOf(ratios(ob, base, cpu))
	cpuTarget, cpuMet := "—", "—"
	if extraAllocs <= 1 {
		cpuTarget, cpuMet = "≤ 1.03×", atMost(c, 1.03)
	}
	t.row(name+": client CPU per statement", micros(spreadOf(each(base, cpu))), micros(spreadOf(each(ob, cpu))), times(c), cpuTarget, cpuMet)
	extra := make([]float64, len(ob))
	extraBytes := make([]float64, len(ob))
	for i := range ob {
		extra[i] = ob[i].Allocs - base[i].Allocs
		extraBytes[i] = ob[i].Bytes - base[i].Bytes
	}
	e, eb := spreadOf(extra), spreadOf(extraBytes)
	met := "yes"
	if e.Median > extraAllocs {
		met = "no"
	}
	t.row(name+": allocations per statement", allocText(base), allocText(ob),
		fmt.Sprintf("%+.1f allocs (%+.1f – %+.1f), %+.0f B", e.Median, e.Min, e.Max, eb.Median),
		fmt.Sprintf("≤ %+g allocs", extraAllocs), met)
}

// throughput writes the statements per second of a parallel measure, judged ≥ 0.97×.
func (t *table) throughput(name string, base, ob []Sample) {
	r := spreadOf(ratios(base, ob, ns)) // ns per statement: throughput is its inverse
	qps := func(s []Sample) string {
		sp := spreadOf(each(s, func(x Sample) float64 { return 1e9 / x.Ns }))
		return fmt.Sprintf("%.0f q/s (%.0f–%.0f)", sp.Median, sp.Min, sp.Max)
	}
	t.row(name+": throughput", qps(base), qps(ob), times(r), "≥ 0.97×", atLeast(r, 0.97))
	c := spreadOf(ratios(ob, base, cpu))
	t.row(name+": client CPU per statement", micros(spreadOf(each(base, cpu))), micros(spreadOf(each(ob, cpu))), times(c), "—", "—")
}

// split writes the latency of the split query against a baseline, judged against limit when
// target is not "—".
func (t *table) split(name string, base, ob []Sample, target string, limit float64) {
	r := spreadOf(ratios(ob, base, ns))
	met := "—"
	if limit > 0 {
		met = atMost(r, limit)
	}
	t.row(name+": latency", micros(spreadOf(each(base, ns))), micros(spreadOf(each(ob, ns))), times(r), target, met)
	c := spreadOf(ratios(ob, base, cpu))
	t.row(name+": client CPU per query", micros(spreadOf(each(base, cpu))), micros(spreadOf(each(ob, cpu))), times(c), "—", "—")
}

func micros(s Spread) string {
	return fmt.Sprintf("%.1f µs (%.1f–%.1f)", s.Median/1e3, s.Min/1e3, s.Max/1e3)
}

func times(s Spread) string {
	return fmt.Sprintf("%.3f× [%.3f–%.3f] (%.3f–%.3f)", s.Median, s.Lo, s.Hi, s.Min, s.Max)
}

func allocText(s []Sample) string {
	a, b := spreadOf(each(s, allocs)), spreadOf(each(s, bytes))
	return fmt.Sprintf("%.1f allocs, %.0f B", a.Median, b.Median)
}

func atMost(s Spread, target float64) string {
	switch {
	case s.Hi <= target:
		return "yes"
	case s.Median <= target:
		return "median"
	}
	return "no"
}

func atLeast(s Spread, target float64) string {
	switch {
	case s.Lo >= target:
		return "yes"
	case s.Median >= target:
		return "median"
	}
	return "no"
}
