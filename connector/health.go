package connector

import (
	"context"
	"database/sql/driver"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/internal/routing"
)

// probeTimeout bounds one probe of a down backend.
const probeTimeout = time.Second

// health is what a backend's failures say about it.
type health struct {
	down     atomic.Bool
	failures atomic.Int32

	mu      sync.Mutex
	since   time.Time
	lastErr string
}

func (h *health) isDown() bool { return h.down.Load() }

// downError says which backend is down, since when, and why.
func (b *backend) downError() error {
	b.health.mu.Lock()
	defer b.health.mu.Unlock()
	return errorf("%w: %s (%s) since %s after %d consecutive failures, last: %s; it is probed in the background",
		ErrBackendDown, b.name, b.addr, b.health.since.Format(time.RFC3339), b.cfg.Health.DownAfter, b.health.lastErr)
}

// isFailure tells a backend failure (it could not be reached, stopped answering, or dropped
// the connection in the middle of a statement) from an answer of the server (a MySQL error)
// and from an idle connection found dead on its first write (driver.ErrBadConn: the server
// closed it while idle, which says nothing of the server now).
func isFailure(err error) bool {
	var me *mysql.MySQLError
	switch {
	case err == nil, errors.As(err, &me), errors.Is(err, driver.ErrBadConn),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded): // the caller's deadline, not the backend's
		return false
	}
	return true
}

// failed counts a failure of the backend; enough in a row (health.down_after) mark it down and
// start the probe.
func (b *backend) failed(err error) {
	if !isFailure(err) {
		return
	}
	n := b.health.failures.Add(1)
	b.health.mu.Lock()
	b.health.lastErr = config.Scrub(errorText(err), b.events.secrets)
	b.health.mu.Unlock()
	// health.down_after 0: never marked down, every statement tries the backend.
	if b.cfg.Health.DownAfter == 0 || int(n) < b.cfg.Health.DownAfter || !b.health.down.CompareAndSwap(false, true) {
		return
	}
	b.health.mu.Lock()
	b.health.since = time.Now()
	last := b.health.lastErr
	b.health.mu.Unlock()
	b.stats.backendDown.Add(1)
	b.events.state(context.Background(), StateBackendDown, slog.LevelWarn, "backend down",
		slog.String("backend", b.name), slog.String("addr", b.addr), slog.Int("failures", int(n)), slog.String("error", last))
	if !b.goBackground(b.probe) {
		b.health.down.Store(false)
	}
}

// succeeded resets the failure count.
func (b *backend) succeeded() {
	if b.health.failures.Load() != 0 {
		b.health.failures.Store(0)
	}
}

// probe tries the backend with a growing wait (config.Health.ProbeInterval doubling up to
// ProbeMax) until it answers, then marks it up. It ends when the backend is closed.
func (b *backend) probe() {
	wait := time.Duration(b.cfg.Health.ProbeInterval)
	maxWait := time.Duration(b.cfg.Health.ProbeMax)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-b.done:
			return
		case <-timer.C:
		}
		err := b.ping()
		if err == nil {
			b.health.failures.Store(0)
			b.health.down.Store(false)
			b.health.mu.Lock()
			since := b.health.since
			b.health.mu.Unlock()
			b.stats.backendUp.Add(1)
			b.events.state(context.Background(), StateBackendUp, slog.LevelInfo, "backend up",
				slog.String("backend", b.name), slog.String("addr", b.addr), slog.Duration("down_for", time.Since(since)))
			return
		}
		b.health.mu.Lock()
		b.health.lastErr = config.Scrub(errorText(err), b.events.secrets)
		b.health.mu.Unlock()
		wait = min(2*wait, maxWait)
		timer.Reset(wait)
	}
}

// ping opens a connection to the backend's current target and pings it, within probeTimeout
// or until the backend is closed.
func (b *backend) ping() error {
	ctx, cancel := context.WithTimeout(b.ctx, probeTimeout)
	defer cancel()
	conn, _, _, err := b.dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if p, ok := conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// readBackend returns where a read for backend goes: backend itself, or, while it is down, a
// healthy backend configured as its replica (replica_of) — only for a single-target SELECT
// outside a transaction.
func (cs *clientSession) readBackend(plan *routing.Plan, backend string) string {
	be := cs.c.backends[backend]
	// Only a plain read may move: not one that opens a transaction (autocommit=0), names a
	// temporary table or reads the previous statement's session.
	if be == nil || !be.health.isDown() || cs.tx.active || !cs.autocommit || len(plan.Targets) != 1 ||
		plan.Statement.Kind != routing.KindSelect || plan.Type == routing.UseTempTableSession || plan.Type == routing.UseLastSession {
		return backend
	}
	for _, b := range cs.c.cfg.Backends {
		if b.ReplicaOf == backend {
			if r := cs.c.backends[b.Name]; r != nil && !r.health.isDown() {
				cs.c.logger.LogAttrs(context.Background(), slog.LevelDebug, "read sent to replica",
					slog.String("backend", backend), slog.String("replica", r.name))
				return r.name
			}
		}
	}
	return backend
}

// reuse decides whether cs may keep using its server session s to be: it returns s when
// usable, an error when the transaction on it is lost, and (nil, nil) after dropping an idle
// s that is dead, on a moved primary, or on a backend marked down.
func (cs *clientSession) reuse(ctx context.Context, be *backend, s *serverSession) (*serverSession, error) {
	inTx := s.inTx || (cs.tx.active && cs.tx.backend == be.name)
	stale := be.isStale(s)
	switch {
	case inTx && stale:
		return nil, cs.loseTx(ctx, s, ErrPrimaryChanged)
	case inTx:
		return s, nil // its statement tells whether it is still there
	case be.health.isDown() && cs.holdsTempTables(be.name):
		// Marked down (maybe by other clients): keep the session and its temporary tables.
		return nil, be.downError()
	case be.health.isDown():
		s.broken = true
		cs.dropBroken(s)
		return nil, nil
	case !stale && s.verified:
		// database/sql's ResetSession checked it when the client session left the pool.
		s.verified = false
		return s, nil
	case !stale && s.alive(ctx):
		return s, nil
	}
	reason := "connection lost while idle"
	if stale {
		reason = "service primary moved"
	}
	s.broken = true
	cs.dropBroken(s)
	if err := cs.loseTempTables(be.name); err != nil {
		return nil, err
	}
	cs.replaced(ctx, be, reason)
	return nil, nil
}

// replaced counts, logs and reports a server session replaced after it was lost while idle.
func (cs *clientSession) replaced(ctx context.Context, be *backend, reason string) {
	cs.c.stats.serverReplaced.Add(1)
	cs.c.events.state(ctx, StateServerSessionReplaced, slog.LevelInfo, "server session replaced", slog.String("backend", be.name), slog.String("reason", reason))
}

// loseTx ends the transaction of the client session, whose server session s (nil when it is
// already gone) was lost, with ErrTxBackendLost wrapping cause (ErrCommitUnknown when a statement
// that commits implicitly may have run). A cause of driver.ErrBadConn is not wrapped: database/sql
// would take the whole client session for dead. A cause that is the caller's context ending is
// returned as it is, as go-sql-driver returns it.
func (cs *clientSession) loseTx(ctx context.Context, s *serverSession, cause error) error {
	var backend, addr string
	if s != nil {
		s.broken = true
		cs.dropBroken(s)
		backend, addr = s.backend.name, s.addr()
	} else if b := cs.c.backends[cs.tx.backend]; b != nil {
		backend, addr = b.name, b.addr
	}
	// The application still has its transaction open: every statement of it fails until it ends
	// it (ROLLBACK, COMMIT or a new BEGIN), so nothing runs outside the transaction it thinks in.
	explicit, unknown := cs.tx.explicit, cs.tx.unknown
	cs.closeTx()
	cs.tx = txState{active: true, explicit: explicit, lost: true, unknown: unknown}
	if errors.Is(cause, driver.ErrBadConn) {
		cause = errConnectionLost
	}
	cs.c.stats.serverLost.Add(1)
	cs.c.events.state(ctx, StateServerSessionLost, slog.LevelWarn, "server session lost in transaction", slog.String("backend", backend), slog.String("error", cause.Error()))
	if isContextError(cause) {
		return cause
	}
	sentinel := ErrTxBackendLost
	if unknown {
		sentinel = ErrCommitUnknown
	}
	return errorf("%w: %w (backend %s was at %s)", sentinel, cause, backend, addr)
}

// holdsTempTables reports whether the client session has temporary tables on backend.
func (cs *clientSession) holdsTempTables(backend string) bool {
	for _, temp := range cs.tempTables {
		for _, b := range temp {
			if b == backend {
				return true
			}
		}
	}
	return false
}

// loseTempTables forgets the temporary tables that lived on backend's lost server session and
// returns ErrTempTablesLost naming them, nil when there were none. A lost temporary table must
// not be silently replaced by a permanent table of the same name on a new server session.
func (cs *clientSession) loseTempTables(backend string) error {
	var lost []string
	for _, temp := range cs.tempTables {
		for t, b := range temp {
			if b == backend {
				lost = append(lost, t)
				delete(temp, t)
			}
		}
	}
	if len(lost) == 0 {
		return nil
	}
	slices.Sort(lost)
	return errorf("%w: backend %s lost the server session holding %s; create them again", ErrTempTablesLost, backend, strings.Join(lost, ", "))
}

// awaitPrimaryChange: when err is a read-only refusal on a service backend, it asks for a new
// probe round and waits (at most the service's switchover wait, or until ctx ends) for the
// primary to move; it reports whether it moved, so the statement can be sent again.
func (cs *clientSession) awaitPrimaryChange(ctx context.Context, s *serverSession, err error) bool {
	m := s.backend.svc
	if m == nil || !isReadOnlyRefusal(err) {
		return false
	}
	return m.awaitChange(ctx, s.epoch, m.switchoverWait())
}
