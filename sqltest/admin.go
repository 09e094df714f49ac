package sqltest

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log"
	"net"
	"sync"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"
	"github.com/obroute/obroute/internal/handshake"
)

// adminConns records the connection IDs of the admin handle's connections.
// The ID is read from the server's handshake packet as it passes through the
// dialled connection, so no query is needed to learn it.
type adminConns struct {
	addr    string
	network string

	mu   sync.Mutex
	ids  map[uint32]*adminConn // open admin connections
	ever map[uint32]bool       // every admin connection since the server started
}

var adminNetworkSeq atomic.Int64

// newAdminConns registers a go-sql-driver network whose connections are
// recorded as admin connections.
func newAdminConns(addr string) *adminConns {
	a := &adminConns{
		addr:    addr,
		network: fmt.Sprintf("sqltest-admin-%d", adminNetworkSeq.Add(1)),
		ids:     make(map[uint32]*adminConn),
		ever:    make(map[uint32]bool),
	}
	mysql.RegisterDialContext(a.network, a.dial)
	return a
}

func (a *adminConns) dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &adminConn{Conn: c, owner: a}, nil
}

// reset forgets every admin connection: the server is gone, and a restarted
// server hands out connection IDs from 1 again.
func (a *adminConns) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ids = make(map[uint32]*adminConn)
	a.ever = make(map[uint32]bool)
}

// live reports whether id is an open admin connection.
func (a *adminConns) live(id uint32) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.ids[id]
	return ok
}

// was reports whether id was an admin connection since the server started.
func (a *adminConns) was(id uint32) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ever[id]
}

// openDB opens the admin handle with the DSN's settings over this network.
func (a *adminConns) openDB(cfg *mysql.Config) (*sql.DB, error) {
	c := cfg.Clone()
	c.Net = a.network
	c.Addr = a.addr
	// The admin handle meets dead connections whenever a test stops a
	// server; the driver's complaints about them are noise.
	c.Logger = mysql.Logger(log.New(io.Discard, "", 0))
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(conn), nil
}

// adminConn watches the first packet the server sends (the handshake) for
// the connection ID.
type adminConn struct {
	net.Conn
	owner *adminConns

	head   []byte // bytes of the handshake seen so far, until the ID is known
	id     uint32
	known  bool
	closed sync.Once
}

// Read implements net.Conn.
func (c *adminConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.known && n > 0 {
		c.head = append(c.head, p[:n]...)
		c.parseHandshake()
	}
	return n, err
}

// parseHandshake reads the connection ID out of the handshake once enough of
// it has arrived, and records it as an admin ID.
func (c *adminConn) parseHandshake() {
	id, r := handshake.ConnectionID(c.head)
	if r == handshake.More {
		return
	}
	c.known, c.head = true, nil
	if r == handshake.Unknown {
		return // not a handshake we understand: never an admin ID
	}
	c.id = id
	c.owner.mu.Lock()
	c.owner.ids[c.id] = c
	c.owner.ever[c.id] = true
	c.owner.mu.Unlock()
}

// Close implements net.Conn.
func (c *adminConn) Close() error {
	c.closed.Do(func() {
		c.owner.mu.Lock()
		if c.owner.ids[c.id] == c {
			delete(c.owner.ids, c.id)
		}
		c.owner.mu.Unlock()
	})
	return c.Conn.Close()
}
