package handshake_test

import (
	"context"
	"database/sql"
	"net"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/internal/handshake"
	"github.com/obroute/obroute/sqltest"
)

// v10 is a HandshakeV10 packet's start: header, protocol 10, version "5.5.5-10.11", NUL,
// connection id 0x01020304, then the first bytes of the auth data.
var v10 = []byte{0x5b, 0, 0, 0, 10, '5', '.', '5', '.', '5', '-', '1', '0', '.', '1', '1', 0, 0x04, 0x03, 0x02, 0x01, 'a', 'b'}

func TestConnectionID(t *testing.T) {
	long := append([]byte{0x5b, 0, 0, 0, 10}, make([]byte, 600)...)
	for i := 5; i < len(long); i++ {
		long[i] = 'x' // a version string with no terminator
	}
	for _, tc := range []struct {
		name   string
		head   []byte
		id     uint32
		result handshake.Result
	}{
		{"nothing yet", nil, 0, handshake.More},
		{"header only", v10[:4], 0, handshake.More},
		{"inside the version", v10[:10], 0, handshake.More},
		{"version ended, id not complete", v10[:19], 0, handshake.More},
		{"id complete", v10[:21], 0x01020304, handshake.Found},
		{"more after the id", v10, 0x01020304, handshake.Found},
		{"error packet", []byte{0x17, 0, 0, 0, 0xff, 0x10, 0x04, 'T', 'o', 'o'}, 0, handshake.Unknown},
		{"protocol 9", []byte{0x10, 0, 0, 0, 9, '4', 0, 1, 0, 0, 0}, 0, handshake.Unknown},
		{"no version terminator", long, 0, handshake.Unknown},
		{"long version not yet ended", long[:300], 0, handshake.More},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, r := handshake.ConnectionID(tc.head)
			if id != tc.id || r != tc.result {
				t.Errorf("ConnectionID = %#x, %v; want %#x, %v", id, r, tc.id, tc.result)
			}
		})
	}
}

// TestConnectionIDOfMariaDB reads the handshake of a real server as go-sql-driver dials it and
// compares the id with the one the server gives for CONNECTION_ID().
func TestConnectionIDOfMariaDB(t *testing.T) {
	b := sqltest.Shared(t, "handshake")[0]
	cfg, err := mysql.ParseDSN(b.DSN)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		head []byte
	)
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &recordingConn{Conn: c, record: func(p []byte) {
			mu.Lock()
			head = append(head, p...)
			mu.Unlock()
		}}, nil
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	db.SetMaxOpenConns(1)
	var want uint32
	if err := db.QueryRow("SELECT CONNECTION_ID()").Scan(&want); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	id, r := handshake.ConnectionID(head)
	if r != handshake.Found || id != want {
		t.Errorf("ConnectionID of the server's handshake = %d, %v; want %d, Found", id, r, want)
	}
}

// recordingConn hands every byte it reads to record.
type recordingConn struct {
	net.Conn
	record func([]byte)
}

func (c *recordingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.record(p[:n])
	return n, err
}
