package connector

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/internal/handshake"
)

// connWatchKey carries a *connWatch to the dialer through the context of Connect.
type connWatchKey struct{}

// connWatch is what obroute learns from watching one server session's socket: the connection id
// the server announces in its handshake (for KILL QUERY), and whether a read or write ran out of
// its deadline. go-sql-driver reports a read timeout as ErrInvalidConn, like a connection the
// server dropped; the watch tells the two apart, because a statement that outlives its own read
// timeout says nothing about the backend, while a dropped connection does.
type connWatch struct {
	mu   sync.Mutex
	id   uint32
	conn net.Conn
	// timedOut is set when a read or write of the connection hit its deadline.
	timedOut atomic.Bool
	// interrupted is set when interrupt closed the connection.
	interrupted atomic.Bool
}

func (w *connWatch) setID(id uint32) { w.mu.Lock(); w.id = id; w.mu.Unlock() }

func (w *connWatch) connID() uint32 { w.mu.Lock(); defer w.mu.Unlock(); return w.id }

func (w *connWatch) setConn(c net.Conn) { w.mu.Lock(); w.conn = c; w.mu.Unlock() }

// canInterrupt reports whether interrupt can stop the connection's statement: its socket is known.
func (w *connWatch) canInterrupt() bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.conn != nil
}

// interrupt stops whatever the connection is doing, from any goroutine: its socket is closed, so
// a read or write go-sql-driver is blocked in fails at once and go-sql-driver discards the
// connection (as it does when a statement's context ends). The server session is lost; the
// caller sends KILL QUERY for the statement the server may still be running.
func (w *connWatch) interrupt() {
	w.mu.Lock()
	c := w.conn
	w.mu.Unlock()
	w.interrupted.Store(true)
	c.Close()
}

// wasInterrupted reports whether interrupt closed the connection.
func (w *connWatch) wasInterrupted() bool { return w != nil && w.interrupted.Load() }

// deadlineHit reports whether the connection's last failure was a read or write deadline: the
// statement's own read or write timeout.
func (w *connWatch) deadlineHit() bool { return w != nil && w.timedOut.Load() }

// installWatchDialer makes mc's connections report to their connWatch. A backend on a custom
// network registered with mysql.RegisterDialContext keeps its dialer unwatched; its server
// sessions ask SELECT CONNECTION_ID() instead, and a read timeout there counts as a failure of
// the backend.
func installWatchDialer(mc *mysql.Config) {
	inner := mc.DialFunc
	if inner == nil {
		switch mc.Net {
		case "tcp", "tcp4", "tcp6", "unix", "":
		default:
			return
		}
		inner = func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}
	}
	if mc.Logger != nil {
		mc.Logger = quietOnLocalClose{mc.Logger}
	}
	mc.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := inner(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		w, ok := ctx.Value(connWatchKey{}).(*connWatch)
		if !ok {
			return c, nil
		}
		wc := &watchedConn{Conn: c, watch: w}
		w.setConn(c)
		if _, ok := c.(syscall.Conn); ok {
			// go-sql-driver's liveness check of an idle connection needs the raw socket.
			return &watchedSysConn{wc}, nil
		}
		return wc, nil
	}
}

// watchedSysConn is a watchedConn over a socket, which go-sql-driver's idle liveness check
// (CheckConnLiveness) reads directly.
type watchedSysConn struct{ *watchedConn }

// SyscallConn implements syscall.Conn.
func (c *watchedSysConn) SyscallConn() (syscall.RawConn, error) {
	return c.Conn.(syscall.Conn).SyscallConn()
}

// watchedConn reads the connection id out of the first packet from the server (the handshake)
// and notes deadlines that expire; otherwise it only forwards.
type watchedConn struct {
	net.Conn
	watch *connWatch
	head  []byte
	done  bool
}

// Read implements net.Conn.
func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.done && n > 0 {
		c.head = append(c.head, p[:n]...)
		c.parse()
	}
	c.note(err)
	return n, err
}

// Write implements net.Conn.
func (c *watchedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.note(err)
	return n, err
}

func (c *watchedConn) note(err error) {
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		c.watch.timedOut.Store(true)
	}
}

// parse reads the connection id out of the handshake once enough of it has arrived.
func (c *watchedConn) parse() {
	id, r := handshake.ConnectionID(c.head)
	switch r {
	case handshake.Found:
		c.watch.setID(id)
		c.done, c.head = true, nil
	case handshake.Unknown:
		c.done, c.head = true, nil
	}
}

// quietOnLocalClose is go-sql-driver's logger of a watched backend without the errors of a
// socket this process closed (net.ErrClosed): go-sql-driver logs a failed read or write, and
// connWatch.interrupt fails them on purpose. A connection the server or the network dropped
// fails with another error and is still logged.
type quietOnLocalClose struct{ mysql.Logger }

// Print implements mysql.Logger.
func (l quietOnLocalClose) Print(v ...any) {
	for _, a := range v {
		if err, ok := a.(error); ok && errors.Is(err, net.ErrClosed) {
			return
		}
	}
	l.Logger.Print(v...)
}
