package connector

import (
	"context"
	"database/sql/driver"
	"errors"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
)

// backend is one configured backend: a go-sql-driver connector and what obroute knows of it.
type backend struct {
	name    string
	role    string
	addr    string
	mysql   *mysql.Config
	connect driver.Connector // dials the current target: the address, or the service's primary

	cfg       *config.Config
	replicaOf string
	logger    *logger
	events    *events
	stats     *counters
	// connectTimeout bounds open (dial, handshake, authentication).
	connectTimeout time.Duration
	// named is set when the connector has several backends: its dial errors name this one
	// (with one, as from a plain DSN, they are go-sql-driver's own).
	named bool
	// dryRun: the connector's server sessions are dry (WithDryRun), none is dialed.
	dryRun bool
	// direct is the go-sql-driver connector of a backend with a fixed address; nil for a
	// service backend, whose connectors are svc's.
	direct *mysqlTarget
	svc    *serviceMonitor
	health health
	// run tells the server sessions of one run of the backend's server from those of the next.
	run serverRun

	// ctx is cancelled by close (done is its Done channel); background goroutines (probe,
	// service monitor, kills) are counted in wg.
	ctx  context.Context
	stop context.CancelFunc
	done <-chan struct{}
	wg   sync.WaitGroup
	bgMu sync.Mutex // orders goBackground's wg.Add before close's wg.Wait
	shut bool
}

// newBackend builds backend b of connector c. Timeouts that b's DSN leaves at zero get the
// configured ones (config.Timeouts; zero there too leaves go-sql-driver's default, no bound), and
// every server session's socket is watched (connWatch).
func newBackend(b config.Backend, c *Connector) (*backend, error) {
	cfg := c.cfg
	mc := b.MySQL.Clone()
	if mc.Timeout == 0 {
		mc.Timeout = time.Duration(cfg.Timeouts.Connect)
	}
	if mc.ReadTimeout == 0 {
		mc.ReadTimeout = time.Duration(cfg.Timeouts.Read)
	}
	if mc.WriteTimeout == 0 {
		mc.WriteTimeout = time.Duration(cfg.Timeouts.Write)
	}
	installWatchDialer(mc)
	be := &backend{
		name: b.Name, role: b.Role, addr: b.Address(), mysql: mc,
		cfg: cfg, replicaOf: b.ReplicaOf, logger: c.logger, events: c.events, stats: c.stats,
		connectTimeout: mc.Timeout, named: len(cfg.Backends) > 1, dryRun: c.dryRun,
	}
	be.ctx, be.stop = context.WithCancel(context.Background())
	be.done = be.ctx.Done()
	be.connect = backendConnector{be}
	if b.Service != "" {
		svc, err := newServiceMonitor(be, cfg.Service(b.Service))
		if err != nil {
			return nil, errorf("obroute: backend %q: %w", b.Name, err)
		}
		be.svc = svc
		be.addr = "SERVICE:" + b.Service
		return be, nil
	}
	t, err := newMysqlTarget(mc)
	if err != nil {
		return nil, errorf("obroute: backend %q: %w", b.Name, err)
	}
	be.direct = t
	return be, nil
}

// close stops the backend's background goroutines and waits for them.
func (b *backend) close() {
	b.bgMu.Lock()
	b.shut = true
	b.stop()
	b.bgMu.Unlock()
	b.wg.Wait()
	if b.svc != nil {
		b.svc.closeUnstarted()
	}
}

// goBackground runs f in a goroutine that close waits for; it returns false (and runs
// nothing) once the backend is closed.
func (b *backend) goBackground(f func()) bool {
	b.bgMu.Lock()
	defer b.bgMu.Unlock()
	if b.shut {
		return false
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		f()
	}()
	return true
}

// target returns the go-sql-driver connector of where the backend is now, and the primary
// epoch it belongs to (always 0 without a service). A service's first probe round runs within
// ctx.
func (b *backend) target(ctx context.Context) (*mysqlTarget, uint64, error) {
	if b.svc != nil {
		if err := b.svc.ensure(ctx); err != nil {
			return nil, 0, err
		}
		return b.svc.primary()
	}
	return b.direct, 0, nil
}

// mysqlTarget is one address of a backend and its go-sql-driver connectors: conn for server
// sessions, kill for the side connections that send KILL QUERY.
type mysqlTarget struct {
	addr string
	conn driver.Connector
	kill driver.Connector
}

// newMysqlTarget builds the connectors of mc's address.
func newMysqlTarget(mc *mysql.Config) (*mysqlTarget, error) {
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, err
	}
	kill, err := mysql.NewConnector(killConfig(mc))
	if err != nil {
		return nil, err
	}
	return &mysqlTarget{addr: mc.Addr, conn: conn, kill: kill}, nil
}

// backendConnector is the backend as a driver.Connector (the metadata handle uses it).
type backendConnector struct{ b *backend }

// Connect implements driver.Connector.
func (bc backendConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, _, _, err := bc.b.dial(ctx)
	return conn, err
}

// Driver implements driver.Connector.
func (bc backendConnector) Driver() driver.Driver { return mysql.MySQLDriver{} }

// dial opens a go-sql-driver connection to the current target within the connect timeout.
func (b *backend) dial(ctx context.Context) (driver.Conn, *mysqlTarget, uint64, error) {
	t, epoch, err := b.target(ctx)
	if err != nil {
		return nil, nil, 0, err
	}
	c, err := t.dial(ctx, b.connectTimeout)
	var slow errConnectTimeout
	switch {
	case err == nil || ctx.Err() != nil:
	case errors.As(err, &slow) && b.named:
		err = errorf("obroute: backend %s: connecting to %s took longer than the connect timeout %s (timeouts.connect)", b.name, t.addr, slow.timeout)
	case errors.As(err, &slow):
		err = errorf("obroute: connecting to %s took longer than the connect timeout %s (timeouts.connect)", t.addr, slow.timeout)
	case b.named:
		// go-sql-driver's errors name the address at most; with several backends, say which.
		err = errorf("obroute: backend %s (%s): %w", b.name, t.addr, err)
	}
	return c, t, epoch, err
}

// errConnectTimeout is t.dial's error when the connect timeout ran out: the backend's failure,
// not the caller's deadline (it does not wrap context.DeadlineExceeded).
type errConnectTimeout struct{ timeout time.Duration }

func (e errConnectTimeout) Error() string {
	return "connecting took longer than the connect timeout " + e.timeout.String() + " (timeouts.connect)"
}

// dial opens a go-sql-driver connection to t within timeout (none when zero). Running out of
// that time is the backend's failure, reported as such, not as the caller's deadline.
func (t *mysqlTarget) dial(ctx context.Context, timeout time.Duration) (driver.Conn, error) {
	if timeout <= 0 {
		return t.conn.Connect(ctx)
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := t.conn.Connect(dctx)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		err = errConnectTimeout{timeout}
	}
	return c, err
}

// open opens a server session to the backend. A backend marked down fails at once with
// ErrBackendDown; connect failures count towards marking it down.
func (b *backend) open(ctx context.Context) (*serverSession, error) {
	if b.dryRun {
		return newServerSession(b, dryConn{}), nil
	}
	if b.health.isDown() {
		return nil, b.downError()
	}
	if b.svc != nil { // the first probe round runs within ctx, not detached as the dial below
		if err := b.svc.ensure(ctx); err != nil {
			return nil, err
		}
	}
	w := &connWatch{}
	conn, via, epoch, err := b.dialDetached(ctx, w)
	if err != nil {
		return nil, err
	}
	s := newServerSession(b, conn)
	s.epoch = epoch
	s.via = via
	s.watch = w
	s.id = w.connID()
	if s.id == 0 {
		if err := s.readConnectionID(ctx); err != nil {
			s.close()
			return nil, err
		}
	}
	s.newRun = b.run.note(s)
	return s, nil
}

// serverRun is what a backend has seen of its server through its server sessions: the highest
// connection id, the address, and how many times the server changed. A server numbers its
// connections from 1 when it starts, so a server session whose id is below the highest seen was
// opened on a server that restarted since; one on another address (a service's new primary) is
// on another server. (A restarted server that has already handed out more ids than the old one
// had when obroute last opened a session there is not noticed.)
type serverRun struct {
	mu    sync.Mutex
	maxID uint32
	via   *mysqlTarget
	runs  uint64 // the changes seen
}

// note records the server session s, just opened, and returns the number of the server's change
// when s is the first seen of another run of it than the sessions before, else 0.
func (r *serverRun) note(s *serverSession) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	first := r.maxID == 0 && r.via == nil
	changed := !first && (s.id < r.maxID || s.via != r.via)
	if changed {
		r.runs++
		r.maxID = s.id // the new run's sequence
	} else {
		r.maxID = max(r.maxID, s.id)
	}
	r.via = s.via
	if changed {
		return r.runs
	}
	return 0
}

// dialed is the outcome of one dial.
type dialed struct {
	conn  driver.Conn
	via   *mysqlTarget
	epoch uint64
	err   error
}

// dialDetached dials the backend within the connect timeout but independently of ctx: a caller
// that gives up early gets ctx's error at once, while the dial goes on in the background and its
// outcome still counts for the backend's health (a backend that accepts connections and never
// answers is marked down even when every caller is impatient). Closing the backend cancels it.
func (b *backend) dialDetached(ctx context.Context, w *connWatch) (driver.Conn, *mysqlTarget, uint64, error) {
	if b.connectTimeout <= 0 { // no bound of our own: the caller's context is the only one
		conn, via, epoch, err := b.dial(context.WithValue(ctx, connWatchKey{}, w))
		if ctx.Err() == nil {
			b.record(err)
		}
		return conn, via, epoch, err
	}
	done := make(chan dialed, 1)
	dial := func() {
		// The caller's values (a custom dialer may read them) without its cancellation;
		// closing the backend cancels.
		dctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), connWatchKey{}, w))
		stop := context.AfterFunc(b.ctx, cancel)
		var d dialed
		d.conn, d.via, d.epoch, d.err = b.dial(dctx)
		stop()
		cancel()
		done <- d
	}
	if !b.goBackground(dial) {
		return nil, nil, 0, b.closedError()
	}
	select {
	case d := <-done:
		b.record(d.err)
		return d.conn, d.via, d.epoch, d.err
	case <-ctx.Done():
		b.goBackground(func() { // the dial ends within the connect timeout, or at close
			d := <-done
			b.record(d.err)
			if d.conn != nil {
				d.conn.Close()
			}
		})
		return nil, nil, 0, ctx.Err()
	}
}

// closedError is the error of a backend whose connector was closed.
func (b *backend) closedError() error {
	return errorf("obroute: backend %s: the connector is closed", b.name)
}

// record counts the outcome of a dial towards the backend's health.
func (b *backend) record(err error) {
	switch {
	case err == nil:
		b.succeeded()
	case b.ctx.Err() == nil && !errors.Is(err, ErrNoPrimary):
		b.failed(err)
	}
}

// closeBackends stops every backend's background work (probes, service monitors, kills in
// flight) and waits for it.
func (c *Connector) closeBackends() {
	for _, b := range c.backends {
		b.close()
	}
}
