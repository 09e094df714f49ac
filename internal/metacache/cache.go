// Package metacache keeps the connector's current shard-metadata snapshot: loaded once when a
// statement first needs it, refreshed in the background and on demand, never blocking a reader,
// keeping the last good snapshot when a refresh fails.
package metacache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/obroute/obroute/metadata"
)

// ErrClosed is returned by Cache.Refresh after Cache.Close.
var ErrClosed = errors.New("metadata: cache is closed")

// Defaults of Options.
const (
	DefaultInterval    = 5 * time.Minute
	DefaultLoadTimeout = 30 * time.Second
	DefaultSlowLoad    = 2 * time.Second
)

// Options configures a Cache. The zero value is usable.
type Options struct {
	// Interval between background refreshes after Start; DefaultInterval if zero.
	Interval time.Duration
	// LoadTimeout bounds each load of the Source; DefaultLoadTimeout if zero.
	LoadTimeout time.Duration
	// SlowLoad is how long a load may take before a warning says it is still waiting (a
	// metadata server that stopped answering), long before LoadTimeout ends it;
	// DefaultSlowLoad if zero.
	SlowLoad time.Duration
	// Logger receives a warning for each failed refresh and a debug record
	// for each successful one; none are logged if nil. A *slog.Logger is one; the
	// connector's own (connector/log.go) links no slog handler unless the application
	// gave it one.
	Logger Logger
	// Clock stamps snapshots (LoadedAt) and Stats; time.Now if nil. It does
	// not drive the background ticker.
	Clock func() time.Time
	// OnRefresh, if set, is called after every load, successful or not,
	// before Refresh returns. Calls never overlap. It must not call Refresh.
	OnRefresh func(RefreshEvent)
}

// Logger is what a Cache logs to: the two methods of *slog.Logger it calls.
type Logger interface {
	Enabled(ctx context.Context, level slog.Level) bool
	LogAttrs(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr)
}

// RefreshEvent describes one load of the Source, for Options.OnRefresh.
type RefreshEvent struct {
	// Started is when the load began (by Options.Clock).
	Started time.Time
	// Duration is how long the load and validation took.
	Duration time.Duration
	// Err is the failure, or nil.
	Err error
	// Snapshot is the snapshot in use after the load: the new one on
	// success, the last good one on failure (nil if the first load failed).
	Snapshot *metadata.Snapshot
}

// Stats counts a Cache's refreshes.
type Stats struct {
	// Refreshes is the number of loads attempted, the first one included.
	Refreshes uint64
	// Failures is the number of loads that failed.
	Failures uint64
	// LastSuccess is when the last successful load began.
	LastSuccess time.Time
	// LastFailure is when the last failed load began; zero if none failed.
	LastFailure time.Time
	// Version is the version of the snapshot in use.
	Version uint64
	// Tables is the number of tables in the snapshot in use.
	Tables int
}

// Cache keeps the current Snapshot of a Source and refreshes it, on demand
// with Refresh and periodically after Start. Readers call Snapshot, which
// never blocks. A failed refresh keeps the last good snapshot, logs a
// warning and is reported by LastError and Stats. The connector owns one
// Cache per metadata table; Close it when done.
type Cache struct {
	src  metadata.Source
	opts Options
	snap atomic.Pointer[metadata.Snapshot]

	mu       sync.Mutex
	inflight *flight // the load in progress, shared by concurrent Refresh calls
	loads    uint64  // flights started, numbering them
	stats    Stats
	lastErr  error
	closed   bool
	stop     context.CancelFunc // set by Start
	stopped  chan struct{}      // closed when the background goroutine ends
}

// flight is one load, awaited by every Refresh call that arrived after it began.
type flight struct {
	done chan struct{}
	err  error
	seq  uint64 // the flight's number, from 1
}

// New loads src once, synchronously, and returns a Cache holding the
// result; it fails if that load fails. Call Start for periodic refreshes.
func New(src metadata.Source, opts Options) (*Cache, error) {
	if src == nil {
		return nil, errors.New("metadata: cache: source is nil")
	}
	if opts.Interval < 0 || opts.LoadTimeout < 0 || opts.SlowLoad < 0 {
		return nil, fmt.Errorf("metadata: cache: interval %s, load timeout %s and slow load %s must not be negative", opts.Interval, opts.LoadTimeout, opts.SlowLoad)
	}
	if opts.SlowLoad == 0 {
		opts.SlowLoad = DefaultSlowLoad
	}
	if opts.Interval == 0 {
		opts.Interval = DefaultInterval
	}
	if opts.LoadTimeout == 0 {
		opts.LoadTimeout = DefaultLoadTimeout
	}
	if opts.Logger == nil {
		opts.Logger = noLogger{}
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	c := &Cache{src: src, opts: opts}
	if err := c.load(context.Background()); err != nil {
		return nil, err
	}
	return c, nil
}

// Snapshot returns the current snapshot. It never blocks and never returns nil.
func (c *Cache) Snapshot() *metadata.Snapshot { return c.snap.Load() }

// Refresh loads the source now and, on success, replaces the snapshot: what
// the source held when Refresh was called is in the snapshot when it returns
// nil. A call made while a load that started after it is in progress waits
// for that load and returns its result instead of starting another; a load
// in progress that started before the call (a background refresh, which may
// have read the source before a change the caller made) is waited for, and
// then one more load is started, shared by every call that waited for it.
// A call stops waiting when its own ctx ends. The load runs under the ctx of
// the call that started it. After Close, Refresh returns ErrClosed.
func (c *Cache) Refresh(ctx context.Context) error {
	c.mu.Lock()
	after := c.loads // a flight numbered above after began after this call
	for {
		if c.closed {
			c.mu.Unlock()
			return ErrClosed
		}
		f := c.inflight
		if f == nil {
			break
		}
		c.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if f.seq > after {
			return f.err
		}
		c.mu.Lock()
	}
	c.loads++
	f := &flight{done: make(chan struct{}), seq: c.loads}
	c.inflight = f
	c.mu.Unlock()

	f.err = c.load(ctx)

	c.mu.Lock()
	c.inflight = nil
	c.mu.Unlock()
	close(f.done)
	return f.err
}

// load runs one load and records its outcome. Only one runs at a time.
func (c *Cache) load(ctx context.Context) error {
	started := c.opts.Clock()
	ctx, cancel := context.WithTimeout(ctx, c.opts.LoadTimeout)
	slow := time.AfterFunc(c.opts.SlowLoad, func() {
		c.opts.Logger.LogAttrs(context.Background(), slog.LevelWarn, "shard metadata load has not answered yet; still waiting, statements keep the last snapshot",
			slog.Any("waited", c.opts.SlowLoad), slog.Any("load_timeout", c.opts.LoadTimeout))
	})
	tables, err := c.src.Load(ctx)
	slow.Stop()
	cancel()
	var snap *metadata.Snapshot
	if err == nil {
		snap, err = metadata.NewSnapshot(tables, started)
	}
	if err != nil {
		err = fmt.Errorf("metadata: refresh failed, keeping the last snapshot: %w", err)
	}
	duration := c.opts.Clock().Sub(started)

	c.mu.Lock()
	if err != nil && c.closed && errors.Is(err, context.Canceled) {
		c.mu.Unlock() // cancelled by Close: not a failure of the source
		return err
	}
	c.stats.Refreshes++
	c.lastErr = err
	if err != nil {
		c.stats.Failures++
		c.stats.LastFailure = started
	} else {
		c.stats.LastSuccess = started
		c.snap.Store(snap)
	}
	failures := c.stats.Failures
	c.mu.Unlock()

	current := c.snap.Load()
	if err != nil {
		attrs := []slog.Attr{slog.Any("err", err), slog.Any("failures", failures)}
		if current != nil {
			attrs = append(attrs, slog.Any("kept_version", current.Version()), slog.Any("kept_loaded_at", current.LoadedAt()))
		}
		c.opts.Logger.LogAttrs(context.Background(), slog.LevelWarn, "shard metadata refresh failed", attrs...)
	} else {
		c.opts.Logger.LogAttrs(context.Background(), slog.LevelDebug, "shard metadata refreshed", slog.Any("version", snap.Version()),
			slog.Any("tables", snap.Len()), slog.Any("duration", duration))
	}
	if c.opts.OnRefresh != nil {
		c.opts.OnRefresh(RefreshEvent{Started: started, Duration: duration, Err: err, Snapshot: current})
	}
	return err
}

// LastError returns the error of the most recent load, or nil if it succeeded.
func (c *Cache) LastError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

// Stats returns the refresh counters and the current snapshot's version.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	s := c.stats
	c.mu.Unlock()
	snap := c.snap.Load()
	s.Version, s.Tables = snap.Version(), snap.Len()
	return s
}

// Start begins refreshing every Interval in a background goroutine. Calling
// it again, or after Close, does nothing.
func (c *Cache) Start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.stop != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.stop, c.stopped = cancel, make(chan struct{})
	go c.run(ctx, c.stopped)
}

func (c *Cache) run(ctx context.Context, stopped chan<- struct{}) {
	defer close(stopped)
	ticker := time.NewTicker(c.opts.Interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			_ = c.Refresh(ctx) // the outcome is logged and kept in Stats
		}
	}
}

// Close stops the background refresh, cancelling a load it has in progress,
// and waits for its goroutine to end. The last snapshot stays readable.
// Close is idempotent and always returns nil.
func (c *Cache) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	stop, stopped := c.stop, c.stopped
	c.mu.Unlock()
	if stop != nil {
		stop()
		<-stopped
	}
	return nil
}

// noLogger is Options.Logger when none is given: it logs nothing.
type noLogger struct{}

func (noLogger) Enabled(context.Context, slog.Level) bool                   { return false }
func (noLogger) LogAttrs(context.Context, slog.Level, string, ...slog.Attr) {}
