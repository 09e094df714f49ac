package metacache

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/obroute/obroute/metadata"
	"go.uber.org/goleak"
)

// switchSource serves whatever tables or error it was last given, and
// counts its loads.
type switchSource struct {
	mu     sync.Mutex
	tables []metadata.Table
	err    error
	loads  atomic.Int64
}

func (s *switchSource) set(tables []metadata.Table, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tables, s.err = tables, err
}

func (s *switchSource) Load(context.Context) ([]metadata.Table, error) {
	s.loads.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tables), s.err
}

// blockingSource blocks each load until release is closed or ctx ends.
type blockingSource struct {
	started chan struct{} // receives one value per load
	release chan struct{}
	loads   atomic.Int64
	tables  []metadata.Table
}

func (s *blockingSource) Load(ctx context.Context) ([]metadata.Table, error) {
	s.loads.Add(1)
	s.started <- struct{}{}
	select {
	case <-s.release:
		return s.tables, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// gatedSource answers each load with the tables it held when the load began, once the test
// closes the channel the load sent on started.
type gatedSource struct {
	mu      sync.Mutex
	tables  []metadata.Table
	started chan chan struct{}
	loads   atomic.Int64
}

func newGatedSource(tables []metadata.Table) *gatedSource {
	return &gatedSource{tables: tables, started: make(chan chan struct{}, 16)}
}

func (s *gatedSource) set(tables []metadata.Table) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tables = tables
}

func (s *gatedSource) Load(ctx context.Context) ([]metadata.Table, error) {
	s.loads.Add(1)
	s.mu.Lock()
	tables := slices.Clone(s.tables)
	s.mu.Unlock()
	gate := make(chan struct{})
	s.started <- gate
	select {
	case <-gate:
		return tables, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

var errSourceDown = errors.New("metadata server unreachable")

// logBuffer returns a logger writing text records at debug level and up.
func logBuffer() (*slog.Logger, *syncBuffer) {
	var b syncBuffer
	return slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})), &b
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestNewCacheFailsWhenFirstLoadFails(t *testing.T) {
	src := &switchSource{err: errSourceDown}
	c, err := New(src, Options{Logger: slog.New(slog.DiscardHandler)})
	if !errors.Is(err, errSourceDown) || c != nil {
		t.Fatalf("NewCache = %v, %v; want nil and an error wrapping %v", c, err, errSourceDown)
	}
	src.set([]metadata.Table{tbl(t, "t_1", "2025-02-01", "2025-01-01", false)}, nil)
	if _, err := New(src, Options{Logger: slog.New(slog.DiscardHandler)}); !errors.Is(err, metadata.ErrInvalidTable) {
		t.Fatalf("New with min after max = %v, want metadata.ErrInvalidTable", err)
	}
	if _, err := New(src, Options{Interval: -time.Second}); err == nil {
		t.Fatal("NewCache accepted a negative interval")
	}
}

func TestCacheFailedRefreshKeepsLastSnapshot(t *testing.T) {
	clock := at(t, "2025-03-15 04:00:00")
	now := func() time.Time { return clock }
	logger, logs := logBuffer()
	var events []RefreshEvent
	src := &switchSource{tables: ordersTables(t)}
	c, err := New(src, Options{Logger: logger, Clock: now, OnRefresh: func(e RefreshEvent) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first := c.Snapshot()
	if first == nil || first.Len() != 7 || !first.LoadedAt().Equal(clock) {
		t.Fatalf("first snapshot = %v", first)
	}

	clock = clock.Add(5 * time.Minute)
	src.set(nil, errSourceDown)
	if err := c.Refresh(context.Background()); !errors.Is(err, errSourceDown) {
		t.Fatalf("Refresh = %v, want %v", err, errSourceDown)
	}
	if c.Snapshot() != first {
		t.Fatal("a failed refresh replaced the snapshot")
	}
	if !errors.Is(c.LastError(), errSourceDown) {
		t.Fatalf("LastError = %v, want %v", c.LastError(), errSourceDown)
	}
	// Invalid rows are a failure too.
	src.set([]metadata.Table{tbl(t, "t_1", "2025-01-01", "2025-01-02", false), tbl(t, "t_1", "2025-01-01", "2025-01-02", false)}, nil)
	if err := c.Refresh(context.Background()); !errors.Is(err, metadata.ErrDuplicateTable) {
		t.Fatalf("Refresh with duplicate rows = %v, want metadata.ErrDuplicateTable", err)
	}
	if c.Snapshot() != first {
		t.Fatal("a refresh with invalid rows replaced the snapshot")
	}
	st := c.Stats()
	want := Stats{Refreshes: 3, Failures: 2, LastSuccess: at(t, "2025-03-15 04:00:00"), LastFailure: clock, Version: first.Version(), Tables: 7}
	if st != want {
		t.Fatalf("Stats = %+v, want %+v", st, want)
	}
	if got := logs.String(); strings.Count(got, "level=WARN") != 2 || !strings.Contains(got, "metadata server unreachable") {
		t.Fatalf("want two warnings naming the cause, log is:\n%s", got)
	}

	// Recovery: the next good load replaces the snapshot and clears LastError.
	clock = clock.Add(5 * time.Minute)
	src.set(ordersTables(t)[:2], nil)
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := c.Snapshot(); s.Len() != 2 || s.Version() <= first.Version() || !s.LoadedAt().Equal(clock) {
		t.Fatalf("snapshot after recovery = %v", s)
	}
	if c.LastError() != nil {
		t.Fatalf("LastError after recovery = %v", c.LastError())
	}
	if len(events) != 4 || events[1].Err == nil || events[1].Snapshot != first || events[3].Err != nil || events[3].Snapshot != c.Snapshot() {
		t.Fatalf("OnRefresh events = %+v", events)
	}
}

// TestCacheRefreshFollowsMigration moves orders_202412 from the hot store to
// the history store and checks that the snapshot shows it after Refresh.
func TestCacheRefreshFollowsMigration(t *testing.T) {
	before := []metadata.Table{
		{Name: "orders_202412", Min: at(t, "2024-12-01"), Max: at(t, "2024-12-31 23:59:59"), Hot: true},
		{Name: "orders_202501", Min: at(t, "2025-01-01"), Max: at(t, "2025-01-31 23:59:59"), Hot: true},
	}
	src := &switchSource{tables: before}
	c, err := New(src, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	after := []metadata.Table{
		{Name: "orders_202412", Min: at(t, "2024-12-01"), Max: at(t, "2024-12-31 23:59:59"), Hot: false, Location: "history"},
		{Name: "orders_202501", Min: at(t, "2025-01-01"), Max: at(t, "2025-01-31 23:59:59"), Hot: true},
	}
	src.set(after, nil)
	if got, _ := c.Snapshot().Lookup("orders_202412"); !got.Hot || got.Location != "" {
		t.Fatalf("before Refresh the snapshot already shows the migration: %+v", got)
	}
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := c.Snapshot().Overlapping("orders", at(t, "2024-12-15"), at(t, "2025-01-15"), false)
	if len(got) != 2 || got[0].Name != "orders_202412" || got[0].Hot || got[0].Location != "history" || !got[1].Hot {
		t.Fatalf("after Refresh Overlapping = %+v", got)
	}
}

func TestCacheConcurrentRefreshSharesOneLoad(t *testing.T) {
	src := newGatedSource(ordersTables(t))
	go func() { close(<-src.started) }() // the first load, in New
	c, err := New(src, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	const callers = 8
	errs := make(chan error, callers)
	go func() { errs <- c.Refresh(context.Background()) }()
	leader := <-src.started // the leader's load is running
	for range callers - 1 {
		go func() { errs <- c.Refresh(context.Background()) }()
	}
	// A caller whose context ends stops waiting without cancelling the load.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Refresh(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Refresh with a cancelled context while a load runs = %v", err)
	}
	time.Sleep(100 * time.Millisecond) // let the followers reach the wait
	close(leader)
	// The followers arrived during the leader's load, which may have read the source before
	// they called: they share one load after it.
	var followers chan struct{}
	select {
	case followers = <-src.started:
	case <-time.After(10 * time.Second):
		t.Fatal("no load began after the leader's: the followers returned the leader's result")
	}
	time.Sleep(100 * time.Millisecond) // let every follower join it
	close(followers)
	for range callers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := src.loads.Load(); n != 3 {
		t.Fatalf("%d loads for 1 initial load, a leader and %d followers, want 3", n, callers-1)
	}
	if n := c.Stats().Refreshes; n != uint64(src.loads.Load()) {
		t.Fatalf("Stats.Refreshes = %d, source saw %d loads", n, src.loads.Load())
	}
}

// TestCacheRefreshAfterAChangeSeesIt: a Refresh called while a load that began before it is in
// progress (a background refresh that read the source before the caller changed it: obroute
// metadata prepare, then RefreshMetadata) returns only once a load that began after the call has
// replaced the snapshot. tiering's TestPrepareAcrossThePeriodBoundary failed now and then under
// load: its INSERTs after RefreshMetadata still saw the snapshot from before prepare.
func TestCacheRefreshAfterAChangeSeesIt(t *testing.T) {
	old := ordersTables(t)
	src := newGatedSource(old)
	go func() { close(<-src.started) }()
	c, err := New(src, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	background := make(chan error, 1)
	go func() { background <- c.Refresh(context.Background()) }()
	first := <-src.started // the background load runs: it read old

	changed := old[:1] // what the caller wrote to the source meanwhile
	src.set(changed)
	refreshed := make(chan error, 1)
	go func() { refreshed <- c.Refresh(context.Background()) }()
	time.Sleep(50 * time.Millisecond) // let it reach the wait
	close(first)
	if err := <-background; err != nil {
		t.Fatal(err)
	}
	select {
	case own := <-src.started: // the caller's own load, which reads changed
		close(own)
	case err := <-refreshed:
		t.Fatalf("Refresh returned (%v) with the load that began before it, whose snapshot holds %d tables; want a load of its own", err, c.Snapshot().Len())
	}
	if err := <-refreshed; err != nil {
		t.Fatal(err)
	}
	if got := c.Snapshot().Len(); got != len(changed) {
		t.Fatalf("after Refresh the snapshot holds %d tables, want the %d the source held when it was called", got, len(changed))
	}
}

// TestCacheReadersDuringRefreshes runs readers against a cache whose
// refreshes alternate between two generations of tables and failures. A
// reader must always see a whole generation. Run with -race.
func TestCacheReadersDuringRefreshes(t *testing.T) {
	genA := ordersTables(t)
	genB := []metadata.Table{
		tbl(t, "orders_202502", "2025-02-01", "2025-02-28 23:59:59", true),
		tbl(t, "orders_202503", "2025-03-01", "2025-03-31 23:59:59", true),
	}
	src := &switchSource{tables: genA}
	c, err := New(src, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads atomic.Int64
	var ready sync.WaitGroup // every reader has read once
	ready.Add(8)
	problems := make(chan string, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var once sync.Once
			markReady := func() { once.Do(ready.Done) }
			defer markReady() // also when a reader stops early
			var lastVersion uint64
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := c.Snapshot()
				if s == nil {
					problems <- "nil snapshot"
					return
				}
				if s.Version() < lastVersion {
					problems <- "version went backwards"
					return
				}
				lastVersion = s.Version()
				orders := names(s.Logical("orders"))
				switch s.Len() {
				case 7:
					if !slices.Equal(orders, []string{"orders_202412", "orders_202501", "orders_202502", "orders_202503"}) {
						problems <- "partial generation A: " + strings.Join(orders, ",")
						return
					}
				case 2:
					if !slices.Equal(orders, []string{"orders_202502", "orders_202503"}) {
						problems <- "partial generation B: " + strings.Join(orders, ",")
						return
					}
				default:
					problems <- "snapshot of unexpected size"
					return
				}
				reads.Add(1)
				markReady()
			}
		}()
	}
	ready.Wait()
	for i := range 300 {
		switch i % 3 {
		case 0:
			src.set(genB, nil)
		case 1:
			src.set(nil, errSourceDown)
		case 2:
			src.set(genA, nil)
		}
		if err := c.Refresh(context.Background()); (err != nil) != (i%3 == 1) {
			t.Fatalf("refresh %d: %v", i, err)
		}
	}
	close(stop)
	wg.Wait()
	close(problems)
	for p := range problems {
		t.Error(p)
	}
	if reads.Load() == 0 {
		t.Fatal("readers read nothing")
	}
	if st := c.Stats(); st.Refreshes != 301 || st.Failures != 100 {
		t.Fatalf("Stats = %+v, want 301 refreshes and 100 failures", st)
	}
}

func TestCacheStartRefreshesUntilClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	src := &switchSource{tables: ordersTables(t)}
	c, err := New(src, Options{Interval: time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	c.Start() // a second Start does nothing
	deadline := time.Now().Add(5 * time.Second)
	for c.Stats().Refreshes < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("no background refresh within 5s: %+v", c.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	n := src.loads.Load()
	time.Sleep(20 * time.Millisecond)
	if src.loads.Load() != n {
		t.Fatal("loads continued after Close")
	}
	if err := c.Refresh(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Refresh after Close = %v, want ErrClosed", err)
	}
	if c.Snapshot() == nil {
		t.Fatal("no snapshot after Close")
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
}

func TestCacheCloseCancelsBackgroundLoad(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	src := &blockingSource{started: make(chan struct{}, 1), release: make(chan struct{}), tables: ordersTables(t)}
	close(src.release)
	logger, logs := logBuffer()
	c, err := New(src, Options{Interval: time.Millisecond, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	<-src.started
	src.release = make(chan struct{}) // background loads now block until cancelled
	c.Start()
	<-src.started
	done := make(chan struct{})
	go func() { c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not cancel the background load")
	}
	if st := c.Stats(); st.Failures != 0 || c.LastError() != nil || strings.Contains(logs.String(), "WARN") {
		t.Fatalf("a load cancelled by Close was reported as a failure: %+v, %v, log:\n%s", st, c.LastError(), logs.String())
	}
}
