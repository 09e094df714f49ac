package config

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Resilience defaults, used when the configuration leaves a value at zero.
const (
	// DefaultConnectTimeout bounds opening a server session: TCP connect, handshake and
	// authentication together.
	DefaultConnectTimeout = 5 * time.Second
	// DefaultReadTimeout bounds each read from a backend (go-sql-driver's readTimeout). A
	// statement that runs longer than this without sending a row fails; raise it (per backend
	// with readTimeout= in its DSN, or timeout.read=) for long reports.
	DefaultReadTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds each write to a backend (go-sql-driver's writeTimeout).
	DefaultWriteTimeout = 30 * time.Second
	// DefaultDownAfter is how many consecutive failures mark a backend down.
	DefaultDownAfter = 3
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
// timeout, readTimeout or writeTimeout keeps its own value.
type Timeouts struct {
	// Connect bounds opening a server session; zero means DefaultConnectTimeout.
	Connect Duration `yaml:"connect"`
	// Read bounds each read (go-sql-driver readTimeout); zero means DefaultReadTimeout.
	Read Duration `yaml:"read"`
	// Write bounds each write (go-sql-driver writeTimeout); zero means DefaultWriteTimeout.
	Write Duration `yaml:"write"`
}

// Health says when a backend is marked down and how it is probed back up.
type Health struct {
	// DownAfter is the number of consecutive failures (connect errors, connections lost in
	// the middle of a statement, timeouts) that mark a backend down; zero means
	// DefaultDownAfter.
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
	// Candidates are the tenants or servers that may hold the service.
	Candidates []Candidate `yaml:"candidates"`
	// Probe is run on every valid candidate; the one whose first column is true (1, ON, TRUE)
	// is the primary. Empty means DefaultServiceProbe; on OceanBase query its service views.
	Probe string `yaml:"probe"`
	// Interval is how often the candidates are probed; zero means DefaultServiceInterval. A
	// switchover is followed within about one interval.
	Interval Duration `yaml:"interval"`
}

// Candidate is one possible holder of a service.
type Candidate struct {
	// Addr is host:port.
	Addr string `yaml:"addr"`
	// Invalid fences the candidate off: it is never used (OCP marks the old primary INVALID
	// after a failover).
	Invalid bool `yaml:"invalid"`
}

// Valid returns the addresses of the candidates not marked invalid, in order. An address marked
// invalid in any of its entries is fenced off, whatever its other entries say.
func (s *Service) Valid() []string {
	fenced := map[string]bool{}
	for _, c := range s.Candidates {
		fenced[c.Addr] = fenced[c.Addr] || c.Invalid
	}
	var out []string
	for _, c := range s.Candidates {
		if !fenced[c.Addr] && !slices.Contains(out, c.Addr) {
			out = append(out, c.Addr)
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

func (c *Config) service(name string) *Service {
	if s := c.Service(name); s != nil {
		return s
	}
	c.Services = append(c.Services, Service{Name: name})
	return &c.Services[len(c.Services)-1]
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
		return false, errorf(fmt.Sprintf("backend %q", b.Name), "DSN user %s has no service name; write user@SERVICE:NAME", user)
	}
	if b.Service != "" && b.Service != name {
		return false, errorf(fmt.Sprintf("backend %q", b.Name), "DSN user names service %q but service is set to %q; give one", name, b.Service)
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
		{"timeouts.connect", &c.Timeouts.Connect, DefaultConnectTimeout},
		{"timeouts.read", &c.Timeouts.Read, DefaultReadTimeout},
		{"timeouts.write", &c.Timeouts.Write, DefaultWriteTimeout},
		{"health.probe_interval", &c.Health.ProbeInterval, DefaultProbeInterval},
		{"health.probe_max", &c.Health.ProbeMax, DefaultProbeMax},
	} {
		if *d.v < 0 {
			return errorf(d.where, "negative duration")
		}
		if *d.v == 0 {
			*d.v = Duration(d.def)
		}
	}
	if c.Health.DownAfter < 0 {
		return errorf("health.down_after", "negative count; give a whole number ≥ 1")
	}
	if c.Health.DownAfter == 0 {
		c.Health.DownAfter = DefaultDownAfter
	}
	if c.Health.ProbeMax < c.Health.ProbeInterval {
		c.Health.ProbeMax = c.Health.ProbeInterval
	}
	services := map[string]bool{}
	for i := range c.Services {
		s := &c.Services[i]
		where := fmt.Sprintf("service %q", s.Name)
		if !namePattern.MatchString(s.Name) {
			return errorf(where, "invalid service name; use letters, digits, '_', '-' and '.'")
		}
		if services[s.Name] {
			return errorf(where, "configured twice; give each service once")
		}
		services[s.Name] = true
		for _, cand := range s.Candidates {
			if _, port, err := net.SplitHostPort(cand.Addr); err != nil || port == "" {
				return errorf(where, "candidate %q is not host:port", cand.Addr)
			} else if _, err := strconv.Atoi(port); err != nil {
				return errorf(where, "candidate %q has a non-numeric port", cand.Addr)
			}
		}
		if len(s.Valid()) == 0 {
			return errorf(where, "no valid candidate; list at least one host:port not marked invalid, e.g. service.%s=10.0.0.1:2881,10.0.0.2:2881", s.Name)
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
		where := fmt.Sprintf("backend %q", b.Name)
		if _, err := b.splitServiceUser(); err != nil {
			return err
		}
		if b.Service != "" && !services[b.Service] {
			return errorf(where, "service %q is not configured; list its candidates, e.g. service.%s=host1:port,host2:port", b.Service, b.Service)
		}
		if b.ReplicaOf != "" {
			if !seen[b.ReplicaOf] {
				return errorf(where, "replica_of %q is not a configured backend; name one of %s", b.ReplicaOf, c.backendNames())
			}
			if b.ReplicaOf == b.Name {
				return errorf(where, "replica_of names the backend itself; name the backend it copies")
			}
		}
	}
	return nil
}

// setResilience handles the DSN keys of timeouts, health, replicas and services; it reports
// whether key was one of them.
func (c *Config) setResilience(key, value string) (bool, error) {
	head, rest, _ := strings.Cut(key, ".")
	dur := func(d *Duration) error {
		if err := d.UnmarshalText([]byte(value)); err != nil {
			return errorf(key, "%v", err)
		}
		return nil
	}
	switch {
	case key == "timeout.connect":
		return true, dur(&c.Timeouts.Connect)
	case key == "timeout.read":
		return true, dur(&c.Timeouts.Read)
	case key == "timeout.write":
		return true, dur(&c.Timeouts.Write)
	case key == "health.down_after":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 {
			return true, errorf(key, "%q is not a whole number ≥ 1", value)
		}
		c.Health.DownAfter = n
		return true, nil
	case key == "health.probe_interval":
		return true, dur(&c.Health.ProbeInterval)
	case key == "health.probe_max":
		return true, dur(&c.Health.ProbeMax)
	case head == "replica_of" && rest != "":
		c.backend(rest).ReplicaOf = value
		return true, nil
	case head == "service" && rest != "":
		name, opt := rest, ""
		if i := strings.LastIndexByte(rest, '.'); i > 0 {
			switch rest[i+1:] {
			case "invalid", "probe", "interval":
				name, opt = rest[:i], rest[i+1:]
			}
		}
		s := c.service(name)
		switch opt {
		case "":
			for _, a := range splitList(value) {
				s.Candidates = append(s.Candidates, Candidate{Addr: a})
			}
		case "invalid":
			for _, a := range splitList(value) {
				s.Candidates = append(s.Candidates, Candidate{Addr: a, Invalid: true})
			}
		case "probe":
			s.Probe = value
		case "interval":
			return true, dur(&s.Interval)
		}
		return true, nil
	}
	return false, nil
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
