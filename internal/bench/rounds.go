package bench

import (
	"context"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Side is one driver's part of a measure: Run runs n statements.
type Side struct {
	Name string
	Run  func(ctx context.Context, n int) error
}

// Sample is one side's figures in one round, per statement: wall time, the process's CPU time
// (user + system, getrusage), and heap allocations (the runtime's counters: every goroutine of
// the process, the benchmark's own included).
type Sample struct {
	Ns, CPUNs, Allocs, Bytes float64
}

// Alternate runs rounds rounds of sides. A round runs n statements of every side, in chunks
// of a tenth: the sides take turns chunk by chunk, in an order that rotates from chunk to chunk
// and round to round, so that both see the machine as it is at each moment (other work on a
// shared machine comes and goes within a round). Before the first round each side runs n/10
// statements (at least 10) to open its connections and fill its caches. It returns the samples
// by side, then round.
func Alternate(ctx context.Context, rounds, n int, sides ...Side) ([][]Sample, error) {
	chunk := max(n/10, 1)
	for _, s := range sides {
		if err := s.Run(ctx, max(chunk, 10)); err != nil {
			return nil, err
		}
	}
	out := make([][]Sample, len(sides))
	for r := 0; r < rounds; r++ {
		sums := make([]Sample, len(sides))
		runtime.GC() // a collection owed to the previous round is not charged to this one
		for c, done := 0, 0; done < n; c, done = c+1, done+chunk {
			m := min(chunk, n-done)
			for k := range sides {
				i := (r + c + k) % len(sides)
				if err := measure(ctx, sides[i], m, &sums[i]); err != nil {
					return nil, err
				}
			}
		}
		for i := range sides {
			f := float64(n)
			out[i] = append(out[i], Sample{Ns: sums[i].Ns / f, CPUNs: sums[i].CPUNs / f, Allocs: sums[i].Allocs / f, Bytes: sums[i].Bytes / f})
		}
	}
	return out, nil
}

// measure runs n statements of s and adds their totals to sum.
func measure(ctx context.Context, s Side, n int, sum *Sample) error {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cpuTime()
	t0 := time.Now()
	err := s.Run(ctx, n)
	wall := time.Since(t0)
	cpu1 := cpuTime()
	runtime.ReadMemStats(&m1)
	sum.Ns += float64(wall.Nanoseconds())
	sum.CPUNs += float64((cpu1 - cpu0).Nanoseconds())
	sum.Allocs += float64(m1.Mallocs - m0.Mallocs)
	sum.Bytes += float64(m1.TotalAlloc - m0.TotalAlloc)
	return err
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Parallel runs n statements from workers goroutines: stmt(i) for i in [0, n), each i once.
func Parallel(workers int, stmt func(ctx context.Context, i int) error) func(ctx context.Context, n int) error {
	return func(ctx context.Context, n int) error {
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make([]error, workers)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= n || errs[w] != nil {
						return
					}
					errs[w] = stmt(ctx, i)
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// Serial runs n statements one after the other: stmt(i) for i in [0, n).
func Serial(stmt func(ctx context.Context, i int) error) func(ctx context.Context, n int) error {
	return func(ctx context.Context, n int) error {
		for i := 0; i < n; i++ {
			if err := stmt(ctx, i); err != nil {
				return err
			}
		}
		return nil
	}
}

// Spread is the median of a figure over rounds, the 95 % confidence interval of that median
// (Lo–Hi), and the range of the rounds (Min–Max).
type Spread struct {
	Median, Lo, Hi, Min, Max float64
}

// spreadOf summarizes xs (which it sorts). The confidence interval is distribution-free: the
// k-th smallest and k-th largest round, with k the largest for which a binomial(n, ½) count
// falls below k with probability at most 2.5 % (for 21 rounds the 6th and the 16th; with fewer
// than 6 rounds no such k exists and the interval is the range).
func spreadOf(xs []float64) Spread {
	n := len(xs)
	if n == 0 {
		return Spread{}
	}
	slices.Sort(xs)
	m := xs[n/2]
	if n%2 == 0 {
		m = (xs[n/2-1] + xs[n/2]) / 2
	}
	k := medianCIRank(n)
	return Spread{Median: m, Lo: xs[k-1], Hi: xs[n-k], Min: xs[0], Max: xs[n-1]}
}

// medianCIRank is the rank k (1-based, at least 1) such that the k-th smallest and the k-th
// largest of n samples bound their median with at least 95 % confidence.
func medianCIRank(n int) int {
	k, below := 1, 0.0 // below: P(binomial(n, ½) < k)
	p := math.Pow(0.5, float64(n))
	for j := 0; j < n; j++ {
		if below+p > 0.025 {
			break
		}
		below += p
		k = j + 1
		p *= float64(n-j) / float64(j+1) // P(X = j+1) from P(X = j)
	}
	return max(k, 1)
}

// ratios returns a[i]/b[i] of a figure of two sides' samples, round by round.
func ratios(a, b []Sample, figure func(Sample) float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = figure(a[i]) / figure(b[i])
	}
	return out
}

// each returns a figure of samples, round by round.
func each(samples []Sample, figure func(Sample) float64) []float64 {
	out := make([]float64, len(samples))
	for i, s := range samples {
		out[i] = figure(s)
	}
	return out
}
