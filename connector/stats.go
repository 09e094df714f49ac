package connector

import (
	"sync/atomic"

	"github.com/obroute/obroute/internal/routing"
)

// counters are the connector's counters, safe to read at any time.
type counters struct {
	clientSessions atomic.Int64
	serverOpened   atomic.Int64
	serverReplaced atomic.Int64
	serverLost     atomic.Int64
	routes         routeCounts
	rejected       atomic.Int64
	refusals       []atomic.Int64 // by routing.RefusalIndex
	backendDown    atomic.Int64
	backendUp      atomic.Int64
	primaryChanged atomic.Int64
	killed         atomic.Int64
}

// routeCounts counts routed statements by class, in shards: every statement adds to one, so the
// count must not make the goroutines of a busy pool contend for one cache line. A client session
// adds to the shard it drew when it was created (database/sql runs one statement of a client
// session at a time; client sessions are spread round robin over the shards); a read adds the
// shards up.
type routeCounts struct {
	next   atomic.Uint32
	shards [routeShards]struct {
		n [routing.NumClasses]atomic.Int64
		_ [64]byte // keeps the next shard off this one's cache line
	}
}

const routeShards = 16

// shard returns the shard of a new client session.
func (r *routeCounts) shard() uint8 { return uint8(r.next.Add(1) % routeShards) }

func (r *routeCounts) add(shard uint8, c routing.Class) { r.shards[shard].n[c].Add(1) }

func (r *routeCounts) load(c routing.Class) int64 {
	var n int64
	for i := range r.shards {
		n += r.shards[i].n[c].Load()
	}
	return n
}

func newStats() *counters { return &counters{refusals: make([]atomic.Int64, len(refusalNames))} }

// StatsSnapshot is a point-in-time copy of the connector's counters.
type StatsSnapshot struct {
	// ClientSessions counts client sessions handed to database/sql.
	ClientSessions int64
	// ServerSessionsOpened, Replaced and Lost count server sessions opened, replaced after an
	// idle loss, and lost inside a transaction.
	ServerSessionsOpened, ServerSessionsReplaced, ServerSessionsLost int64
	// Routes counts routed statements by route class (Plan.Class: default, forced, cached,
	// hot_only, split, cold_only, shadow).
	Routes map[string]int64
	// Rejected counts statements the router refused.
	Rejected int64
	// Rejections counts the refused statements by reason (RouteEvent.Refusal: level_violation,
	// no_time_range, shard_key_function, hint_malformed, cross_backend…); reasons never seen
	// are absent.
	Rejections map[string]int64
	// Backends is the health of every backend, in configuration order.
	Backends []BackendHealth
	// BackendsDown and BackendsUp count backends marked down and back up; PrimaryChanges counts
	// service primaries found moved; QueriesKilled counts KILL QUERY sent for abandoned
	// statements.
	BackendsDown, BackendsUp, PrimaryChanges, QueriesKilled int64
	// ParseCache is the statement-analysis cache's counters.
	ParseCache CacheStats
}

// CacheStats are the counters of the statement-analysis cache (config's parse_cache_size).
type CacheStats struct {
	// Hits count the statements whose analysis was found: under their text, or under their
	// normalized text for a statement that differs from an earlier one in literal values only.
	Hits, Misses, Evictions uint64
	// Uncached counts analyses too large to keep (a statement of more than about 512 KiB).
	Uncached uint64
	// Entries is the number of analyses kept.
	Entries int
	// Bytes estimates the memory the kept analyses hold.
	Bytes int64
}

// HitRate is Hits / (Hits + Misses), 0 before any lookup.
func (s CacheStats) HitRate() float64 { return routing.CacheStats(s).HitRate() }

// Stats returns a snapshot of the connector's counters.
func (c *Connector) Stats() StatsSnapshot {
	s := c.stats
	out := StatsSnapshot{
		ClientSessions:         s.clientSessions.Load(),
		ServerSessionsOpened:   s.serverOpened.Load(),
		ServerSessionsReplaced: s.serverReplaced.Load(),
		ServerSessionsLost:     s.serverLost.Load(),
		Routes:                 map[string]int64{},
		Rejected:               s.rejected.Load(),
		Rejections:             map[string]int64{},
		BackendsDown:           s.backendDown.Load(),
		BackendsUp:             s.backendUp.Load(),
		PrimaryChanges:         s.primaryChanged.Load(),
		QueriesKilled:          s.killed.Load(),
		ParseCache:             CacheStats(c.router.CacheStats()),
	}
	for i := range s.refusals {
		if n := s.refusals[i].Load(); n > 0 {
			out.Rejections[refusalNames[i]] = n
		}
	}
	for _, b := range c.cfg.Backends {
		be := c.backends[b.Name]
		if be == nil {
			continue
		}
		out.Backends = append(out.Backends, BackendHealth{Name: be.name, Role: be.role, Addr: be.addr,
			Down: be.health.isDown(), Failures: int(be.health.failures.Load())})
	}
	for i := 0; i < routing.NumClasses; i++ {
		if n := s.routes.load(routing.Class(i)); n > 0 {
			out.Routes[routing.Class(i).String()] = n
		}
	}
	return out
}

// BackendHealth is what the connector knows of one backend's health.
type BackendHealth struct {
	// Name and Role are the backend's configured name and role.
	Name, Role string
	// Addr is its address (host:port, or SERVICE:name), never credentials.
	Addr string
	// Down is set while the backend is marked down and probed in the background.
	Down bool
	// Failures is the number of consecutive failures counted towards marking it down.
	Failures int
}
