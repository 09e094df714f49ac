// Package config reads obroute's configuration: a one-string DSN, a YAML file, or a Go Config
// value. All three produce the same Config, with one name per setting, and Validate checks it once
// for all of them.
//
// A plain go-sql-driver/mysql DSN is a valid obroute DSN: one backend named "hot", role hot, and
// nothing else (go-sql-driver's own timeouts, no health marking).
// An obroute DSN starts with "obroute:" and lists key=value items separated by ";" (a ";" inside
// a value is written ";;"):
//
//	obroute:backends.hot.dsn=root:pw@tcp(10.0.0.1:3306)/app?parseTime=true;backends.cold.dsn=root:pw@tcp(10.0.0.2:3306)/app;routes.audit_log=cold
//
// A key is the path of the YAML field it sets; an element of a list is named by its name (its
// table for time_tables, its production backend for shadow.mappings), a map entry by its key, and
// a list of strings is written comma-separated:
//
//	backends.NAME.dsn=DSN                     a backend and its go-sql-driver DSN (at least one)
//	backends.NAME.role=ROLE                   hot, cold, shadow or a group; defaults to NAME when NAME is one of the three
//	backends.NAME.replica_of=OTHER            NAME serves OTHER's reads outside transactions while OTHER is down
//	backends.NAME.service=SVC                 NAME follows service SVC's primary (or a DSN user app@SERVICE:SVC)
//	default=NAME                              the default backend; defaults to the first backend of role hot
//	routes.TABLE=NAME                         table TABLE lives on backend NAME
//	enable_cached_server=BOOL                 a statement whose route cannot be computed goes to the last backend used
//	shadow.mappings.PRODUCTION.shadow=SHADOW  shadow mapping; a rule of mappings only gets the shadow hint as its algorithm
//	shadow.default_algorithm=NAME, shadow.algorithms.NAME.kind=…, shadow.tables.TABLE.algorithms=A,B …
//	time_tables.TABLE.shard_key=COL           TABLE is time-sharded on column COL (DATETIME, DATE or TIMESTAMP)
//	time_tables.TABLE.shard_key_type=TYPE     datetime, date or timestamp: declared, checked against the backends
//	time_tables.TABLE.hot_window.days=N       hot window: the last N days (or hot_window.months=N: current month + N before)
//	time_tables.TABLE.default_range=DUR, .allow_full_scan=BOOL, .require_cold_query=BOOL, .allow_cold_writes=BOOL, .budgets.l1=DUR …
//	metadata.backend=NAME, metadata.table=T, metadata.refresh=DUR
//	parse_cache_size=N                        statement-analysis cache entries (default 4096)
//	timeouts.connect=DUR, timeouts.read=DUR, timeouts.write=DUR
//	health.down_after=N, health.probe_interval=DUR, health.probe_max=DUR
//	services.SVC.candidates=ADDR,ADDR, services.SVC.invalid=ADDR, services.SVC.probe=SQL, services.SVC.interval=DUR
//	config=PATH                               a YAML file read first; the DSN's other keys add to it
//
// README.md has the whole table with every default. Errors name the offending key or backend and
// never contain a password.
package config

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Config is obroute's whole configuration.
type Config struct {
	// Backends are the MySQL-protocol backends, in order. At least one.
	Backends []Backend `yaml:"backends"`
	// Default is the backend of statements no rule routes elsewhere; empty means the first
	// backend of role hot, else the first backend.
	Default string `yaml:"default"`
	// Routes maps a table to the backend that holds it.
	Routes map[string]string `yaml:"routes"`
	// EnableCachedServer is ODP's enable_cached_server: a statement whose route cannot be
	// computed goes to the last backend used instead of the default.
	EnableCachedServer bool `yaml:"enable_cached_server"`
	// Shadow is the shadow rule; nil means no shadow routing.
	Shadow *Shadow `yaml:"shadow"`
	// TimeTables are the time-sharded logical tables.
	TimeTables []TimeTable `yaml:"time_tables"`
	// Metadata says where the shard metadata lives; used when TimeTables is not empty.
	Metadata Metadata `yaml:"metadata"`
	// ParseCacheSize bounds the statement-analysis cache (entries); 0 means
	// DefaultParseCacheSize.
	ParseCacheSize int `yaml:"parse_cache_size"`
	// Timeouts bound the waits on a backend whose DSN sets none of its own; zero means
	// go-sql-driver's default (no bound).
	Timeouts Timeouts `yaml:"timeouts"`
	// Health says when a backend is marked down and how it is probed back; by default no
	// backend is ever marked down (every statement tries its backend, as go-sql-driver does).
	Health Health `yaml:"health"`
	// Services are service names whose backends follow the current primary.
	Services []Service `yaml:"services"`
}

// Backend is one named MySQL-protocol endpoint.
type Backend struct {
	// Name identifies the backend in routes, hints, logs and EXPLAIN ROUTE.
	Name string `yaml:"name"`
	// Role is hot, cold, shadow or a group name of your own.
	Role string `yaml:"role"`
	// DSN is the backend's go-sql-driver/mysql DSN. Ignored when MySQL is set.
	DSN string `yaml:"dsn"`
	// MySQL is the parsed go-sql-driver configuration; Validate fills it from DSN. Set it
	// directly to configure a backend in Go (TLS configs, dialers and the rest stay
	// go-sql-driver's).
	MySQL *mysql.Config `yaml:"-"`
	// ReplicaOf names the backend this one is a read copy of: while that backend is down,
	// its reads outside transactions go here.
	ReplicaOf string `yaml:"replica_of"`
	// Service is the service name the backend follows (see Service); a DSN user
	// app@SERVICE:NAME sets it. The DSN's address is then ignored.
	Service string `yaml:"service"`
}

// DefaultParseCacheSize is the number of statement analyses cached when ParseCacheSize is 0.
const DefaultParseCacheSize = 4096

// The standard backend roles; any other role is a group of the user's own.
const (
	RoleHot    = "hot"
	RoleCold   = "cold"
	RoleShadow = "shadow"
)

// Metadata locates the shard metadata table.
type Metadata struct {
	// Backend holds the table; empty means the default backend.
	Backend string `yaml:"backend"`
	// Table is the table's name; empty means shard_metadata.
	Table string `yaml:"table"`
	// Refresh is the refresh interval; zero means 5 minutes.
	Refresh Duration `yaml:"refresh"`
}

// Duration is a time.Duration written as "5m", "30s" in YAML and DSNs.
type Duration time.Duration

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("invalid duration %q: write it like 30s, 5m or 1h", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// Error is a configuration error: what is wrong (Problem), where (Where: a DSN key, a backend,
// a YAML field) and how to fix it, all in Error().
type Error struct {
	Where   string
	Problem string
}

// Error implements error: where in the configuration, and the problem.
func (e *Error) Error() string { return "obroute config: " + e.Where + ": " + e.Problem }

// Not inlined: copied into each of its many call sites it would grow every
// binary that imports the driver (see driver/import_test.go).
//
//go:noinline
func errorf(where, format string, args ...any) error {
	return &Error{Where: where, Problem: fmt.Sprintf(format, args...)}
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`)

// Validate checks c and completes it: it parses every backend DSN into Backend.MySQL and fills
// Default and Metadata defaults. It checks names, references between settings and values that
// need no other package; the calendar of a hot window and the shadow rule's algorithms are
// checked where they are applied, by connector.New (which opens no connection: call it to check
// a configuration before deployment).
func (c *Config) Validate() error {
	return ScrubError(c.validate(), c.Secrets())
}

func (c *Config) validate() error {
	if len(c.Backends) == 0 {
		return errorf("backends", "no backend configured; add one, e.g. backends.hot.dsn=user@tcp(host:3306)/db")
	}
	seen := map[string]bool{}
	for i := range c.Backends {
		b := &c.Backends[i]
		where := "backends." + b.Name
		if b.Name == "" {
			return errorf(fmt.Sprintf("backends[%d]", i), "backend without a name; give every backend a name")
		}
		if !namePattern.MatchString(b.Name) {
			return errorf(where, "invalid name; use letters, digits, '_', '-' and '.', at most 64")
		}
		if seen[b.Name] {
			return errorf(where, "duplicate backend name; every backend needs its own name")
		}
		seen[b.Name] = true
		if b.Role == "" {
			switch b.Name {
			case RoleHot, RoleCold, RoleShadow:
				b.Role = b.Name
			default:
				return errorf(where, "no role; set backends.%s.role=hot|cold|shadow|<group>", b.Name)
			}
		}
		if !namePattern.MatchString(b.Role) {
			return errorf(where, "invalid role %q; use letters, digits, '_', '-' and '.'", b.Role)
		}
		if b.MySQL == nil {
			if b.DSN == "" {
				return errorf(where, "no DSN; give its go-sql-driver DSN, e.g. backends.%s.dsn=user:password@tcp(host:3306)/db", b.Name)
			}
			mc, err := mysql.ParseDSN(b.DSN)
			if err != nil {
				return errorf(where+".dsn", "invalid go-sql-driver DSN: %s", Scrub(err.Error(), DSNSecrets(b.DSN)))
			}
			b.MySQL = mc
		}
	}
	if err := c.validateResilience(seen); err != nil {
		return err
	}
	if c.Default == "" {
		c.Default = c.Backends[0].Name
		for _, b := range c.Backends {
			if b.Role == RoleHot {
				c.Default = b.Name
				break
			}
		}
	}
	if !seen[c.Default] {
		return errorf("default", "backend %q is not configured; name one of %s", c.Default, c.backendNames())
	}
	routes := make(map[string]string, len(c.Routes))
	for table, b := range c.Routes {
		if table == "" {
			return errorf("routes", "route without a table name")
		}
		if !seen[b] {
			return errorf("routes."+table, "backend %q is not configured; name one of %s", b, c.backendNames())
		}
		key := strings.ToLower(table) // table names are matched case-insensitively
		if other, dup := routes[key]; dup && other != b {
			return errorf("routes."+table, "routed twice with different case (to %s and %s); keep one", other, b)
		}
		routes[key] = b
	}
	if c.Routes != nil {
		c.Routes = routes
	}
	if err := c.validateRules(seen); err != nil {
		return err
	}
	if c.Metadata.Backend == "" {
		c.Metadata.Backend = c.Default
	}
	if !seen[c.Metadata.Backend] {
		return errorf("metadata.backend", "backend %q is not configured; name one of %s", c.Metadata.Backend, c.backendNames())
	}
	if c.Metadata.Table == "" {
		c.Metadata.Table = "shard_metadata"
	}
	if c.Metadata.Refresh < 0 {
		return errorf("metadata.refresh", "negative interval")
	}
	if c.Metadata.Refresh == 0 {
		c.Metadata.Refresh = Duration(5 * time.Minute)
	}
	if c.ParseCacheSize < 0 {
		return errorf("parse_cache_size", "negative size")
	}
	return nil
}

func (c *Config) backendNames() string {
	names := make([]string, len(c.Backends))
	for i, b := range c.Backends {
		names[i] = b.Name
	}
	return strings.Join(names, ", ")
}

// Backend returns the named backend, nil when it is not configured.
func (c *Config) Backend(name string) *Backend {
	for i := range c.Backends {
		if c.Backends[i].Name == name {
			return &c.Backends[i]
		}
	}
	return nil
}

// Address returns where the backend is, for logs and EXPLAIN ROUTE: network address, never
// credentials.
func (b *Backend) Address() string {
	if b.MySQL == nil {
		return ""
	}
	return b.MySQL.Addr
}
