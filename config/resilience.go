package config

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults of the settings that are on without configuration. Timeouts have none: a zero
// timeout is go-sql-driver's default (no bound), and health marking is off until
// health.down_after is set.
const (
	// DefaultProbeInterval is the first wait of the probe of a down backend; it doubles up to
	// DefaultProbeMax.
	DefaultProbeInterval = 250 * time.Millisecond
	// DefaultProbeMax caps the probe's backoff, and so how long a backend that is back stays
	// marked down.
	DefaultProbeMax = time.Second
	// DefaultServiceInterval is how often the candidates of a service are probed for the primary.
	DefaultServiceInterval = time.Second
	// DefaultServiceProbe finds the primary among MySQL/MariaDB candidates: it returns 1 on the
	// writable one.
	DefaultServiceProbe = "SELECT @@global.read_only = 0"
)

// Timeouts are the per-backend bounds on waiting for a backend. A backend whose DSN sets
// timeout, readTimeout or writeTimeout keeps its own value; zero leaves go-sql-driver's default,
// which is no bound.
type Timeouts struct {
	// Connect bounds opening a server session: TCP connect, handshake and authentication
	// together (go-sql-driver's timeout bounds the TCP connect only).
	Connect Duration `yaml:"connect"`
	// Read bounds each read (go-sql-driver readTimeout). A statement silent for longer fails;
	// that is the statement's failure, never the backend's.
	Read Duration `yaml:"read"`
	// Write bounds each write (go-sql-driver writeTimeout).
	Write Duration `yaml:"write"`
}

// Health says when a backend is marked down and how it is probed back up.
type Health struct {
	// DownAfter is the number of consecutive failures (dials or handshakes that fail, connections
	// broken in the middle of a statement) that mark a backend down; zero means never: every
	// statement tries the backend, as go-sql-driver does. A backend with a replica (replica_of)
	// needs it.
	DownAfter int `yaml:"down_after"`
	// ProbeInterval is the first wait between probes of a down backend; zero means
	// DefaultProbeInterval. The wait doubles after each failed probe up to ProbeMax.
	ProbeInterval Duration `yaml:"probe_interval"`
	// ProbeMax caps the wait between probes; zero means DefaultProbeMax.
	ProbeMax Duration `yaml:"probe_max"`
}

// Service is a service name (OceanBase's SERVICE_NAME): a primary and its standbys sharing
// one name. A backend that connects as user@SERVICE:NAME, or sets Service, talks to whichever
// candidate is the current primary.
type Service struct {
	// Name is the service name.
	Name string `yaml:"name"`
	// Candidates are the addresses (host:port) of the tenants or servers that may hold the
	// service.
	Candidates []string `yaml:"candidates"`
	// Invalid are addresses fenced off: never used, even when also listed in Candidates (OCP
	// marks the old primary INVALID after a failover).
	Invalid []string `yaml:"invalid"`
	// Probe is run on every valid candidate; the one whose first column is true (1, ON, TRUE)
	// is the primary. Empty means DefaultServiceProbe; on OceanBase query its service views.
	Probe string `yaml:"probe"`
	// Interval is how often the candidates are probed; zero means DefaultServiceInterval. A
	// switchover is followed within about one interval.
	Interval Duration `yaml:"interval"`
}

// Valid returns the candidates not marked invalid, in order, without repeats.
func (s *Service) Valid() []string {
	var out []string
	for _, a := range s.Candidates {
		if !slices.Contains(s.Invalid, a) && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// Service returns the named service, nil when it is not configured.
func (c *Config) Service(name string) *Service {
	for i := range c.Services {
		if c.Services[i].Name == name {
			return &c.Services[i]
		}
	}
	return nil
}

// serviceUserSuffix marks a go-sql-driver user of the form app@SERVICE:NAME.
const serviceUserSuffix = "@SERVICE"

// splitServiceUser reads the service name out of a parsed backend DSN. go-sql-driver reads
// "app@SERVICE:orders:pw@tcp(…)" as user "app@SERVICE" and password "orders:pw"; this puts
// the pieces back: user app, service orders, password pw.
func (b *Backend) splitServiceUser() (bool, error) {
	user := b.MySQL.User
	if len(user) < len(serviceUserSuffix) || !strings.EqualFold(user[len(user)-len(serviceUserSuffix):], serviceUserSuffix) {
		return false, nil
	}
	name, pw, _ := strings.Cut(b.MySQL.Passwd, ":")
	if name == "" {
		return false, errorf("backends."+b.Name+".dsn", "DSN user %s has no service name; write user@SERVICE:NAME", user)
	}
	if b.Service != "" && b.Service != name {
		return false, errorf("backends."+b.Name+".service", "DSN user names service %q but service is set to %q; give one", name, b.Service)
	}
	b.MySQL = b.MySQL.Clone()
	b.MySQL.User = user[:len(user)-len(serviceUserSuffix)]
	b.MySQL.Passwd = pw
	b.Service = name
	return true, nil
}

// validateResilience checks and completes timeouts, health, replicas and services; Validate
// calls it after the backends are parsed.
func (c *Config) validateResilience(seen map[string]bool) error {
	for _, d := range []struct {
		where string
		v     *Duration
		def   time.Duration
	}{
		{"timeouts.connect", &c.Timeouts.Connect, 0},
		{"timeouts.read", &c.Timeouts.Read, 0},
		{"timeouts.write", &c.Timeouts.Write, 0},
		{"health.probe_interval", &c.Health.ProbeInterval, DefaultProbeInterval},
		{"health.probe_max", &c.Health.ProbeMax, DefaultProbeMax},
	} {
		if *d.v < 0 {
			return errorf(d.where, "negative duration; use 0 for the default")
		}
		if *d.v == 0 {
			*d.v = Duration(d.def)
		}
	}
	if c.Health.DownAfter < 0 {
		return errorf("health.down_after", "negative count; give a whole number ≥ 1, or 0 to never mark a backend down")
	}
	if c.Health.ProbeMax < c.Health.ProbeInterval {
		c.Health.ProbeMax = c.Health.ProbeInterval
	}
	services := map[string]bool{}
	for i := range c.Services {
		s := &c.Services[i]
		where := "services." + s.Name
		if !namePattern.MatchString(s.Name) {
			return errorf(where, "invalid service name; use letters, digits, '_', '-' and '.'")
		}
		if services[s.Name] {
			return errorf(where, "configured twice; give each service once")
		}
		services[s.Name] = true
		for _, addr := range slices.Concat(s.Candidates, s.Invalid) {
			if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
				return errorf(where, "candidate %q is not host:port", addr)
			} else if _, err := strconv.Atoi(port); err != nil {
				return errorf(where, "candidate %q has a non-numeric port", addr)
			}
		}
		if len(s.Valid()) == 0 {
			return errorf(where, "no valid candidate; list at least one host:port not marked invalid, e.g. services.%s.candidates=10.0.0.1:2881,10.0.0.2:2881", s.Name)
		}
		if s.Probe == "" {
			s.Probe = DefaultServiceProbe
		}
		if s.Interval < 0 {
			return errorf(where, "negative interval")
		}
		if s.Interval == 0 {
			s.Interval = Duration(DefaultServiceInterval)
		}
	}
	for i := range c.Backends {
		b := &c.Backends[i]
		where := "backends." + b.Name
		if _, err := b.splitServiceUser(); err != nil {
			return err
		}
		if b.Service != "" && !services[b.Service] {
			return errorf(where, "service %q is not configured; list its candidates, e.g. services.%s.candidates=host1:port,host2:port", b.Service, b.Service)
		}
		if b.ReplicaOf != "" {
			if !seen[b.ReplicaOf] {
				return errorf(where, "replica_of %q is not a configured backend; name one of %s", b.ReplicaOf, c.backendNames())
			}
			if b.ReplicaOf == b.Name {
				return errorf(where, "replica_of names the backend itself; name the backend it copies")
			}
			if c.Health.DownAfter == 0 {
				return errorf(where+".replica_of", "a replica serves reads while its backend is marked down, and health.down_after is not set, so no backend is ever marked down; set it, e.g. health.down_after=3")
			}
		}
	}
	return nil
}
