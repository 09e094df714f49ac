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
	backendDown    atomic.Int64
	backendUp      atomic.Int64
	primaryChanged atomic.Int64
	killed         atomic.Int64
}

func newStats() *Stats { return &Stats{} }

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
		BackendsDown:           s.backendDown.Load(),
		BackendsUp:             s.backendUp.Load(),
		PrimaryChanges:         s.primaryChanged.Load(),
		QueriesKilled:          s.killed.Load(),
		ParseCache:             c.router.CacheStats(),
	}
	for i := range s.routes {
		if n := s.routes[i].Load(); n > 0 {
			out.Routes[routing.Class(i).String()] = n
		}
	}
	return out
}
