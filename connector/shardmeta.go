package connector

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/obroute/obroute/internal/metacache"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/metadata"
)

// shardMetadata is the connector's shard metadata. Nothing is read when the connector is built:
// the first statement that names a time-sharded table loads it, within that statement's
// context; after that first load it is refreshed in the background and readers never wait.
type shardMetadata struct {
	src     metadata.Source
	opts    metacache.Options
	backend string // the backend it is read from
	where   string // backend.table, for errors
	db      *sql.DB
	// tables are the time-sharded logical tables, lower case: the statements that need it.
	tables map[string]bool
	// facts, when set, are read after the first successful load, within the same statement's
	// context (the backends' default time zone, servers and shard-key columns; left unknown if
	// that fails), and after every later load that lists tables not read yet.
	facts *storeFacts

	cache atomic.Pointer[metacache.Cache]
	// turn admits one first load at a time; a caller waiting for it stops when its context ends.
	turn   chan struct{}
	mu     sync.Mutex
	closed bool
}

// newShardMetadata prepares the metadata of c read from backend (the metadata backend, or its
// shadow backend for shadow traffic); it does no I/O.
func (c *Connector) newShardMetadata(o *options, backend string) *shardMetadata {
	m := &shardMetadata{
		src:     o.metaSource,
		backend: backend,
		where:   backend + "." + c.cfg.Metadata.Table,
		tables:  map[string]bool{},
		turn:    make(chan struct{}, 1),
	}
	if m.src == nil {
		m.db = sql.OpenDB(c.backends[backend].connect) // opens nothing yet
		m.src = metadata.NewSQLSource(m.db, c.cfg.Metadata.Table)
	}
	for _, t := range c.cfg.TimeTables {
		m.tables[strings.ToLower(t.Table)] = true
	}
	m.opts = metacache.Options{
		Interval: time.Duration(c.cfg.Metadata.Refresh),
		Logger:   c.logger,
		OnRefresh: func(ev metacache.RefreshEvent) {
			if ev.Err != nil && c.events.obs != nil { // the cache logs the failure itself
				c.events.obs.OnStateChange(StateEvent{Kind: StateMetadataRefreshFailed, Time: time.Now(), Level: slog.LevelWarn,
					Message: "shard metadata refresh failed", Attrs: []slog.Attr{slog.String("error", ev.Err.Error())}})
			}
			if ev.Err == nil && ev.Snapshot != nil && m.facts != nil && m.cache.Load() != nil { // the first load reads them itself
				m.facts.refreshed(ev.Snapshot)
			}
		},
		Clock: o.clock,
	}
	return m
}

// snapshot returns the current snapshot, nil before the first load (the router then refuses).
func (m *shardMetadata) snapshot() *metadata.Snapshot {
	if cache := m.cache.Load(); cache != nil {
		return cache.Snapshot()
	}
	return nil
}

// needs reports whether routing st reads the shard metadata: it names a time-sharded table, is
// a catalog statement, or names (in any clause, DDL included) a table L_<digit>… of a
// time-sharded table L, which without a backend hint is refused when the metadata lists it: a
// physical table, hidden in the logical view.
func (m *shardMetadata) needs(st *routing.Statement) bool {
	if st.ReadsCatalog() {
		return true // the logical view of the time-sharded tables
	}
	for _, t := range st.DDLTables() {
		if m.physicalForm(t) {
			return true
		}
	}
	for _, t := range st.Tables {
		if m.tables[t] || m.physicalForm(t) {
			return true
		}
	}
	return false
}

// physicalForm reports whether t (lower case) is written as a physical table of a time-sharded
// table L would be: L_<digit>…
func (m *shardMetadata) physicalForm(t string) bool {
	for l := range m.tables {
		if len(t) > len(l)+1 && strings.HasPrefix(t, l+"_") && t[len(l)+1] >= '0' && t[len(l)+1] <= '9' {
			return true
		}
	}
	return false
}

// ensure loads the metadata if it never was, within ctx.
func (m *shardMetadata) ensure(ctx context.Context) error {
	if m.cache.Load() != nil {
		return nil
	}
	select {
	case m.turn <- struct{}{}:
	case <-ctx.Done():
		return errorf("%w: waiting for the first load from %s: %w", ErrMetadataUnavailable, m.where, ctx.Err())
	}
	defer func() { <-m.turn }()
	if m.cache.Load() != nil { // loaded while this caller waited
		return nil
	}
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return errorf("%w: the connector is closed", ErrMetadataUnavailable)
	}
	src := &boundSource{Source: m.src, first: ctx}
	cache, err := metacache.New(src, m.opts)
	src.first = nil // background refreshes and RefreshMetadata run under their own contexts
	if err != nil {
		if cause := errors.Unwrap(err); cause != nil {
			err = cause // the cache speaks of a refresh keeping the last snapshot: there is none
		}
		return errorf("%w: loading it from %s for the first time failed (this statement names a time-sharded table and cannot be routed without it; the next one tries again): %w",
			ErrMetadataUnavailable, m.where, err)
	}
	if m.facts != nil {
		m.facts.first(ctx, cache.Snapshot())
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		cache.Close()
		return errorf("%w: the connector is closed", ErrMetadataUnavailable)
	}
	m.cache.Store(cache)
	cache.Start()
	return nil
}

// refresh reloads the metadata now; the first load if there was none.
func (m *shardMetadata) refresh(ctx context.Context) error {
	if cache := m.cache.Load(); cache != nil {
		return cache.Refresh(ctx)
	}
	return m.ensure(ctx)
}

// close stops the background refresh and closes the metadata handle.
func (m *shardMetadata) close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	var err error
	if cache := m.cache.Load(); cache != nil {
		err = cache.Close()
	}
	if m.facts != nil {
		err = errors.Join(err, m.facts.close())
	}
	if m.db != nil {
		if cerr := m.db.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// boundSource is a Source whose first load runs within the context of the statement that
// needs it as well as the cache's own (metacache.New loads under a background context with
// its load timeout).
type boundSource struct {
	metadata.Source
	first context.Context // nil after the first load
}

// Load implements metadata.Source.
func (s *boundSource) Load(ctx context.Context) ([]metadata.Table, error) {
	if s.first == nil {
		return s.Source.Load(ctx)
	}
	both, cancel := context.WithCancel(s.first)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	return s.Source.Load(both)
}
