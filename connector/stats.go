package connector

import (
	"sync/atomic"

	"github.com/obroute/obroute/routing"
)

// Stats are the connector's counters, safe to read at any time.
type Stats struct {
	clientSessions atomic.Int64
	serverOpened   atomic.Int64
	serverReplaced atomic.Int64
	serverLost     atomic.Int64
	routes         [routing.NumClasses]atomic.Int64
	rejected       atomic.Int64
	refusals       []atomic.Int64 // by routing.RefusalIndex
	backendDown    atomic.Int64
	backendUp      atomic.Int64
	primaryChanged atomic.Int64
	killed         atomic.Int64
}

func newStats() *Stats { return &Stats{refusals: make([]atomic.Int64, len(refusalNames))} }

// StatsSnapshot is a point-in-time copy of the connector's counters.
type StatsSnapshot struct {
	// ClientSessions counts client sessions handed to database/sql.
	ClientSessions int64
	// ServerSessionsOpened, Replaced and Lost count server sessions opened, replaced after an
	// idle loss, and lost inside a transaction.
	ServerSessionsOpened, ServerSessionsReplaced, ServerSessionsLost int64
	// Routes counts routed statements by route class (routing.Class names).
	Routes map[string]int64
	// Rejected counts statements the router refused.
	Rejected int64
	// Rejections counts the refused statements by reason (routing.RefusalReason names:
	// level_violation, no_time_range, shard_key_function, hint_malformed, cross_backend…);
	// reasons never seen are absent.
	Rejections map[string]int64
	// Backends is the health of every backend, in configuration order.
	Backends []BackendHealth
	// BackendsDown and BackendsUp count backends marked down and back up; PrimaryChanges counts
	// service primaries found moved; QueriesKilled counts KILL QUERY sent for abandoned
	// statements.
	BackendsDown, BackendsUp, PrimaryChanges, QueriesKilled int64
	// ParseCache is the statement-analysis cache's counters.
	ParseCache routing.CacheStats
}

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
		ParseCache:             c.router.CacheStats(),
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
	for i := range s.routes {
		if n := s.routes[i].Load(); n > 0 {
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
