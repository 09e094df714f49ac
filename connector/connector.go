// Package connector owns obroute's backends and server sessions. Its Connector is a
// database/sql/driver.Connector: each connection it hands to database/sql is a client session
// that opens one server session per backend lazily, routes every statement with package
// routing, keeps session state in sync across its server sessions, pins transactions, and
// merges the rows of split queries with package merge.
//
//	c, err := connector.New(cfg)
//	db := sql.OpenDB(c)
package connector

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/internal/rules"
	"github.com/obroute/obroute/metadata"
)

// Connector is obroute's driver.Connector: one routing configuration over N backends.
type Connector struct {
	cfg      *config.Config
	backends map[string]*backend
	router   *routing.Router
	meta     *shardMetadata // nil without time-sharded tables
	// shadowMeta is the shadow side's shard metadata, read from the shadow backend of the
	// metadata backend, which routes shadow traffic; nil without one.
	shadowMeta *shardMetadata
	defs       shadowDefs // handles reading the definitions of shadow tables (shadowdefs.go)
	logger     *logger
	events     *events // state changes: logged and reported to the observer
	// autocommit is the autocommit a server session of the default backend starts with: off
	// when its DSN sets autocommit=0 (go-sql-driver then sends SET autocommit=0 at connect).
	autocommit bool
	stats      *counters
	// passthrough is set when the connector has nothing to route (see passthrough.go).
	passthrough bool
	// dryRun is set by WithDryRun: server sessions send nothing (dryrun.go).
	dryRun bool
	// noReadBack is set by WithoutReadBack: nothing is read from the backends besides
	// statements, not even a shadow table's definition (shadowdefs.go).
	noReadBack bool

	closeOnce sync.Once
	closeErr  error
}

var (
	_ driver.Connector = (*Connector)(nil)
	_ io.Closer        = (*Connector)(nil)
)

// Option configures a Connector beyond its Config.
type Option func(*options)

type options struct {
	logger     *slog.Logger
	handle     func(context.Context, slog.Handler, slog.Level, string, uintptr, []slog.Attr) // handleRecord with a logger (log.go)
	observer   Observer
	clock      func() time.Time
	metaSource metadata.Source
	noReadBack bool
	dryRun     bool
}

// WithLogger sends route decisions (debug) and state changes (info, warn) to l.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger, o.handle = l, handleRecord }
}

// WithClock replaces time.Now for the hot window, so tests can move the boundary.
func WithClock(now func() time.Time) Option { return func(o *options) { o.clock = now } }

// WithMetadataSource reads the shard metadata from src instead of the configured backend's
// table (tests, the embedded demo, a metadata service of your own).
func WithMetadataSource(src metadata.Source) Option {
	return func(o *options) { o.metaSource = src }
}

// WithoutReadBack keeps the connector from reading back, with the first load of the shard
// metadata, the backends' servers, the time zone and sql_mode their server sessions start with,
// and the shard-key columns of the physical tables (information_schema.COLUMNS), nor later the
// definition of a shadow table whose algorithm reads column values (such a statement is
// refused, saying so): for a tool that must send the backends nothing, such as obroute explain
// with a metadata file. Routing
// then knows only what the configuration says (time_tables.TABLE.shard_key_type) and refuses
// what depends on the rest.
func WithoutReadBack() Option { return func(o *options) { o.noReadBack = true } }

// New validates cfg and builds a Connector. It does no network I/O: server sessions open when
// a statement needs them, and the shard metadata of time-sharded tables is loaded by the first
// statement that names one, within that statement's context. Its errors never show a configured
// password. Validation fills cfg's defaults in place; the Connector keeps cfg, so do not change
// it afterwards (Config returns it).
func New(cfg *config.Config, opts ...Option) (*Connector, error) {
	if cfg == nil {
		return nil, errors.New("obroute: nil config")
	}
	c, err := newConnector(cfg, opts...)
	if err != nil {
		return nil, config.ScrubError(err, cfg.Secrets())
	}
	return c, nil
}

func newConnector(cfg *config.Config, opts ...Option) (*Connector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	log := &logger{}
	if o.logger != nil {
		log.h, log.handle = scrubHandler{inner: o.logger.Handler(), secrets: cfg.Secrets()}, o.handle
	}
	c := &Connector{cfg: cfg, backends: map[string]*backend{}, logger: log, events: &events{logger: log, obs: o.observer, secrets: cfg.Secrets()}, stats: newStats()}
	c.passthrough = passesThrough(cfg, &o)
	c.dryRun, c.noReadBack = o.dryRun, o.noReadBack
	var err error
	if c.autocommit, err = startAutocommit(cfg); err != nil {
		return nil, err
	}
	if err := sameSessionZone(cfg); err != nil {
		return nil, err
	}
	shadowRule, err := rules.Shadow(cfg)
	if err != nil {
		return nil, err
	}
	timeTables, err := rules.TimeTables(cfg)
	if err != nil {
		return nil, err
	}
	rc := routing.Config{Settings: cfg, Shadow: shadowRule}
	for _, b := range cfg.Backends {
		be, err := newBackend(b, c)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.backends[b.Name] = be
	}
	if len(cfg.TimeTables) > 0 {
		loc, err := dataLocation(cfg)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.meta = c.newShardMetadata(&o, cfg.Metadata.Backend)
		rc.Time = &routing.TimeConfig{Tables: timeTables, Snapshot: c.meta.snapshot, Clock: o.clock, Location: loc, LoadZone: time.LoadLocation}
		if s, ok := c.shadowBackendOf(cfg.Metadata.Backend); ok {
			c.shadowMeta = c.newShardMetadata(&o, s)
			rc.Time.ShadowSnapshot = c.shadowMeta.snapshot
		}
	}
	router, err := routing.New(rc)
	if err != nil {
		c.Close()
		return nil, err
	}
	c.router = router
	if c.meta != nil && !o.noReadBack {
		open := func(b string) *sql.DB {
			return sql.OpenDB(c.backends[b].connect) // opens nothing yet
		}
		metaDB := c.meta.db
		if metaDB == nil { // a metadata source of the application's: the backends are read all the same
			metaDB = open(cfg.Metadata.Backend)
		}
		c.meta.facts = newStoreFacts(router, cfg, metaDB, open)
		c.meta.facts.ownMeta = c.meta.db == nil
	}
	if c.shadowMeta != nil && !o.noReadBack {
		// Read on the shadow backends, kept under the production backends they stand for.
		open := func(b string) *sql.DB {
			if s, ok := c.shadowBackendOf(b); ok {
				return sql.OpenDB(c.backends[s].connect)
			}
			return nil // a backend without a shadow: never read for shadow traffic
		}
		metaDB := c.shadowMeta.db
		if metaDB == nil {
			metaDB = open(cfg.Metadata.Backend)
		}
		c.shadowMeta.facts = newStoreFacts(router.TimeFacts(true), cfg, metaDB, open)
		c.shadowMeta.facts.ownMeta = c.shadowMeta.db == nil
	}
	return c, nil
}

// startAutocommit is the autocommit every server session starts with: off when the backend DSNs
// set autocommit=0 (go-sql-driver then sends SET autocommit=0 at connect). The client session
// tracks one autocommit for all its server sessions, so the backends must agree.
func startAutocommit(cfg *config.Config) (bool, error) {
	on, first := true, ""
	for i, b := range cfg.Backends {
		v := true
		if p, ok := b.MySQL.Params["autocommit"]; ok {
			v = isOn(strings.ToLower(strings.Trim(p, "'")))
		}
		if i == 0 {
			on, first = v, b.Name
		} else if v != on {
			return false, errorf("obroute: backends %s and %s start with different autocommit (the autocommit DSN parameter); give every backend the same", first, b.Name)
		}
	}
	return on, nil
}

// dataLocation is the time zone go-sql-driver gives time.Time arguments on every backend (its
// loc parameter, UTC by default). Time routing reads arguments in it, so the backends must agree:
// one split statement sends the same time.Time to several of them.
func dataLocation(cfg *config.Config) (*time.Location, error) {
	var loc *time.Location
	first := ""
	for _, b := range cfg.Backends {
		l := b.MySQL.Loc
		if l == nil {
			l = time.UTC
		}
		if loc == nil {
			loc, first = l, b.Name
			continue
		}
		if l.String() != loc.String() {
			return nil, errorf("obroute: backends %s (loc=%s) and %s (loc=%s) read time arguments in different time zones; time routing needs one: set the same loc in every backend DSN",
				first, loc, b.Name, l)
		}
	}
	return loc, nil
}

// sameSessionZone checks that every backend DSN starts its server sessions in the same
// time_zone (its time_zone parameter, or none). A client session has one time zone (NOW(),
// TIMESTAMP values), and time routing plans a split statement in it for every backend: a cold
// backend whose DSN named another zone would read the literals of the same statement, and
// store its TIMESTAMP rows, hours apart from the hot one, and obroute reads a history store's
// own zone only with its first refresh.
func sameSessionZone(cfg *config.Config) error {
	first, zone := "", ""
	for i, b := range cfg.Backends {
		z := b.MySQL.Params["time_zone"]
		if i == 0 {
			first, zone = b.Name, z
			continue
		}
		if z != zone {
			return errorf("obroute: backends %s (time_zone=%s) and %s (time_zone=%s) start their server sessions in different time zones; a client session has one: set the same time_zone parameter in every backend DSN, or none",
				first, zoneParam(zone), b.Name, zoneParam(z))
		}
	}
	return nil
}

// zoneParam shows a DSN's time_zone parameter, "none" when it has none.
func zoneParam(z string) string {
	if z == "" {
		return "none"
	}
	return z
}

// Connect implements driver.Connector: it returns a client session. No server session is
// opened until a statement is routed to its backend.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.stats.clientSessions.Add(1)
	return newClientSession(c), nil
}

// openOne builds a connector for one client session and returns that session; closing the
// session closes the connector. It is what a bare driver.Driver.Open needs (database/sql itself
// uses a Connector and opens many client sessions over it).
func openOne(cfg *config.Config, opts ...Option) (driver.Conn, error) {
	c, err := New(cfg, opts...)
	if err != nil {
		return nil, err
	}
	cs := newClientSession(c)
	cs.ownsConnector = true
	c.stats.clientSessions.Add(1)
	return cs, nil
}

// Close implements io.Closer: it stops the metadata refresh. Client sessions are closed by
// database/sql (db.Close closes them before it closes the connector).
func (c *Connector) Close() error {
	c.closeOnce.Do(func() {
		defer c.closeBackends()
		if c.meta != nil {
			c.closeErr = c.meta.close()
		}
		if c.shadowMeta != nil {
			c.closeErr = errors.Join(c.closeErr, c.shadowMeta.close())
		}
		c.closeErr = errors.Join(c.closeErr, c.defs.close())
	})
	return c.closeErr
}

// Config returns the validated configuration. Do not modify it.
func (c *Connector) Config() *config.Config { return c.cfg }

// RefreshMetadata reloads the shard metadata now (a migration is followed at once), or loads it
// for the first time. It is a no-op without time-sharded tables.
func (c *Connector) RefreshMetadata(ctx context.Context) error {
	if c.meta == nil {
		return nil
	}
	err := c.meta.refresh(ctx)
	if c.shadowMeta != nil && c.shadowMeta.cache.Load() != nil {
		err = errors.Join(err, c.shadowMeta.refresh(ctx))
	}
	return err
}

// loadMetadata loads the shard metadata of shadow traffic's side (shadow) or production's,
// within ctx, if st needs it and it never was loaded. Shadow traffic without a shadow side
// loads nothing: the router refuses it.
func (c *Connector) loadMetadata(ctx context.Context, st *routing.Statement, shadow bool) error {
	m := c.meta
	if shadow {
		m = c.shadowMeta
	}
	if m == nil || !m.needs(st) {
		return nil
	}
	return m.ensure(ctx)
}

// shadowBackendOf returns the shadow backend of backend: its mapping's, or backend itself when
// it is the shadow side of one.
func (c *Connector) shadowBackendOf(backend string) (string, bool) {
	if c.cfg.Shadow == nil {
		return "", false
	}
	for _, m := range c.cfg.Shadow.Mappings {
		if m.Production == backend {
			return m.Shadow, true
		}
		if m.Shadow == backend {
			return backend, true
		}
	}
	return "", false
}
