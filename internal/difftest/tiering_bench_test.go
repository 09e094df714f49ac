package difftest_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/obroute/obroute/tiering"
)

// BenchmarkReadsDuringCopy measures the impact of a move's copy: the reads of the move test's
// workload through obroute (January and its edges), idle and while a move copies January
// (300 000 rows) from hot to cold at the default rate limit; reads/s is the figure to
// compare. Each copying round aborts its move before the switch, so the next starts afresh.
//
//	go test -run '^$' -bench ReadsDuringCopy -benchtime 5s ./internal/difftest/
func BenchmarkReadsDuringCopy(b *testing.B) {
	c := newTierCluster(b, 300_000)
	qs, _ := c.readQueries(b)
	s, err := tiering.Open(c.config(time.Second))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for _, copying := range []bool{false, true} {
		name := "idle"
		if copying {
			name = "copying"
		}
		b.Run(name, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			moved := make(chan error, 1)
			if copying {
				var copied atomic.Bool
				started := make(chan struct{})
				go func() {
					_, err := s.Move(ctx, movedTable, tiering.MoveOptions{Now: tierNow, Observer: func(e tiering.MoveEvent) {
						if e.Step == tiering.StepCopy && !copied.Swap(true) {
							close(started)
						}
						if e.Step == tiering.StepCheck {
							cancel() // keep the table on hot: abort below
						}
					}})
					moved <- err
				}()
				<-started
			}
			var next atomic.Int64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					q := qs[int(next.Add(1))%len(qs)]
					if _, err := query(context.Background(), c.dbs[0], q.SQL, q.Args...); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reads/s")
			cancel()
			if copying {
				if err := <-moved; err != nil && !errors.Is(err, context.Canceled) {
					b.Fatal(err)
				}
				if err := s.AbortMove(context.Background(), movedTable); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
