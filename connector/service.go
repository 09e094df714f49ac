package connector

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
)

// serviceMonitor finds a service's primary among its valid candidates with the service's probe
// query, every interval and at once when asked (kick), and follows switchovers. It keeps one
// connection per candidate for its probes, opened again only after it failed. Nothing is probed
// when the connector is built: the first statement that needs the backend runs the first round
// within its own context (ensure), and the monitor watches in the background from then on.
type serviceMonitor struct {
	be         *backend
	name       string
	probe      string
	interval   time.Duration
	candidates []*mysqlTarget // valid ones only: INVALID candidates are never dialled
	kick       chan struct{}
	// conns are the probe connections, by candidate index; nil until opened or after a
	// failure. Only the monitor's rounds use them, one goroutine per candidate.
	conns []driver.Conn

	// turn admits one first round at a time; started is set once one has run to its end.
	turn    chan struct{}
	started atomic.Bool

	mu      sync.Mutex
	current *mysqlTarget  // nil until a writable candidate is found
	epoch   uint64        // incremented at every change of primary
	changed chan struct{} // closed and replaced at every change
}

func newServiceMonitor(be *backend, svc *config.Service) (*serviceMonitor, error) {
	m := &serviceMonitor{
		be: be, name: svc.Name, probe: svc.Probe, interval: time.Duration(svc.Interval),
		kick: make(chan struct{}, 1), changed: make(chan struct{}), turn: make(chan struct{}, 1),
	}
	for _, addr := range svc.Valid() {
		mc := be.mysql.Clone()
		mc.Addr = addr
		t, err := newMysqlTarget(mc)
		if err != nil {
			return nil, errorf("service %q candidate %s: %w", svc.Name, addr, err)
		}
		m.candidates = append(m.candidates, t)
	}
	m.conns = make([]driver.Conn, len(m.candidates))
	return m, nil
}

// ensure runs the first probe round, within ctx, unless one has run; the monitor then keeps
// watching in the background. A round cut short by ctx leaves the monitor unstarted, for the
// next statement to try again, and returns ctx's error.
func (m *serviceMonitor) ensure(ctx context.Context) error {
	if m.started.Load() {
		return nil
	}
	select {
	case m.turn <- struct{}{}:
	case <-ctx.Done():
		return m.unstarted(ctx.Err())
	}
	defer func() { <-m.turn }()
	if m.started.Load() { // a round ran while this caller waited
		return nil
	}
	if m.be.ctx.Err() != nil {
		return m.be.closedError()
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(m.be.ctx, cancel) // closing the backend ends the round
	defer stop()
	m.round(rctx)
	if err := ctx.Err(); err != nil {
		return m.unstarted(err)
	}
	if m.be.ctx.Err() != nil {
		return m.be.closedError()
	}
	m.started.Store(true)
	if !m.be.goBackground(m.run) {
		m.closeConns()
	}
	return nil
}

// unstarted is the error of a statement that ended before the first probe round did.
func (m *serviceMonitor) unstarted(err error) error {
	return errorf("obroute: backend %s: the statement ended before the first probe of service %s found its primary (the next statement tries again): %w", m.be.name, m.name, err)
}

// closeUnstarted closes the probe connections of a monitor that never started (a started one's
// run closes them). The backend is closed: a first round in flight ends soon.
func (m *serviceMonitor) closeUnstarted() {
	m.turn <- struct{}{}
	defer func() { <-m.turn }()
	if !m.started.Load() {
		m.closeConns()
	}
}

func (m *serviceMonitor) run() {
	t := time.NewTicker(m.interval)
	defer t.Stop()
	defer m.closeConns()
	for {
		select {
		case <-m.be.done:
			return
		case <-t.C:
		case <-m.kick:
		}
		m.round(m.be.ctx)
	}
}

// recheck asks for a probe round now (a statement was refused as read-only).
func (m *serviceMonitor) recheck() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// primary returns the current primary and its epoch.
func (m *serviceMonitor) primary() (*mysqlTarget, uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.current == nil {
		addrs := make([]string, len(m.candidates))
		for i, c := range m.candidates {
			addrs[i] = c.addr
		}
		return nil, 0, errorf("%w: %s: none of %s is writable (probe %q); retry after the switchover",
			ErrNoPrimary, m.name, strings.Join(addrs, ", "), m.probe)
	}
	return m.current, m.epoch, nil
}

// currentEpoch returns the epoch and a channel closed at the next change.
func (m *serviceMonitor) currentEpoch() (uint64, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.epoch, m.changed
}

// switchoverWait bounds how long a statement the old primary refused as read-only waits for
// the service's primary to move: five probe intervals, at least two seconds.
func (m *serviceMonitor) switchoverWait() time.Duration {
	return max(5*m.interval, 2*time.Second)
}

// awaitChange waits until the epoch is past epoch, at most wait; it reports whether it is.
func (m *serviceMonitor) awaitChange(ctx context.Context, epoch uint64, wait time.Duration) bool {
	m.recheck()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		now, changed := m.currentEpoch()
		if now != epoch {
			return true
		}
		select {
		case <-changed:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		case <-m.be.done:
			return false
		}
	}
}

// round probes every candidate concurrently and moves the primary to the writable one. With
// none writable (in the middle of a switchover) the primary stays where it is: the old primary
// refuses writes by itself. With several, the current one is kept, else the first.
func (m *serviceMonitor) round(ctx context.Context) {
	writable := make([]bool, len(m.candidates))
	var wg sync.WaitGroup
	for i := range m.candidates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			writable[i] = m.isWritable(ctx, i)
		}()
	}
	wg.Wait()
	m.mu.Lock()
	var next *mysqlTarget
	for i, c := range m.candidates {
		if writable[i] {
			if c == m.current {
				next = c
				break
			}
			if next == nil {
				next = c
			}
		}
	}
	if next == nil || next == m.current {
		m.mu.Unlock()
		return
	}
	prev := m.current
	m.current = next
	m.epoch++
	close(m.changed)
	m.changed = make(chan struct{})
	m.mu.Unlock()
	from := ""
	if prev != nil {
		from = prev.addr
	}
	m.be.stats.primaryChanged.Add(1)
	m.be.events.state(ctx, StatePrimaryChanged, slog.LevelInfo, "primary changed", slog.String("backend", m.be.name),
		slog.String("service", m.name), slog.String("from", from), slog.String("to", next.addr))
}

// isWritable runs the probe query on candidate i over its probe connection; the first column
// of the first row says. The connection is opened when there is none, and opened again at once
// when the one kept from an earlier round turns out broken (the server restarted, or closed it
// while idle), so that a lost connection is never mistaken for a candidate that is not writable.
func (m *serviceMonitor) isWritable(ctx context.Context, i int) bool {
	ctx, cancel := context.WithTimeout(ctx, min(probeTimeout, max(m.interval, 200*time.Millisecond)))
	defer cancel()
	c := m.candidates[i]
	for {
		kept := m.conns[i] != nil
		if !kept {
			conn, err := c.dial(ctx, 0)
			if err != nil {
				return false
			}
			m.conns[i] = conn
		}
		writable, err := m.ask(ctx, m.conns[i])
		if err == nil || reachedServer(err) {
			return writable
		}
		m.be.logger.LogAttrs(ctx, slog.LevelDebug, "service probe failed", slog.String("service", m.name),
			slog.String("addr", c.addr), slog.String("error", errorText(err)))
		m.conns[i].Close()
		m.conns[i] = nil
		if !kept || ctx.Err() != nil {
			return false
		}
	}
}

// ask runs the probe query on conn and reads its answer.
func (m *serviceMonitor) ask(ctx context.Context, conn driver.Conn) (bool, error) {
	rows, err := conn.(driver.QueryerContext).QueryContext(ctx, m.probe, nil)
	if err != nil {
		return false, err
	}
	dest := make([]driver.Value, len(rows.Columns()))
	if len(dest) > 0 {
		err = rows.Next(dest)
	}
	if err == io.EOF { // no row: not writable
		dest, err = nil, nil
	}
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if len(dest) == 0 || err != nil {
		return false, err
	}
	return truthy(dest[0]), nil
}

// closeConns closes the probe connections.
func (m *serviceMonitor) closeConns() {
	for i, conn := range m.conns {
		if conn != nil {
			conn.Close()
			m.conns[i] = nil
		}
	}
}

func truthy(v driver.Value) bool {
	switch x := v.(type) {
	case int64:
		return x != 0
	case bool:
		return x
	case float64:
		return x != 0
	case []byte:
		return truthyText(string(x))
	case string:
		return truthyText(x)
	}
	return false
}

func truthyText(s string) bool {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "", "0", "OFF", "FALSE", "NO", "N":
		return false
	}
	return true
}

// isStale reports whether s was opened on a primary the service has since left.
func (b *backend) isStale(s *serverSession) bool {
	if b.svc == nil {
		return false
	}
	epoch, _ := b.svc.currentEpoch()
	return s.epoch != epoch
}

// isReadOnlyRefusal reports the server's refusal of a write because it is read-only (MySQL
// 1290 ER_OPTION_PREVENTS_STATEMENT, 1836 ER_READ_ONLY_MODE): the statement did nothing.
func isReadOnlyRefusal(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1290 || me.Number == 1836)
}
