package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/sqltest"
)

// killOutcomes is an Observer that passes on the outcome of every KILL QUERY.
type killOutcomes chan connector.StateEvent

func (k killOutcomes) OnRoute(context.Context, connector.RouteEvent) {}

func (k killOutcomes) OnStateChange(ev connector.StateEvent) {
	if ev.Kind == connector.StateQueryKilled || ev.Kind == connector.StateKillFailed {
		k <- ev
	}
}

// slowProxy forwards TCP connections to target; once slow is set, a new connection's bytes start
// flowing only after delay (the server seems slow to answer it).
type slowProxy struct {
	ln    net.Listener
	slow  atomic.Bool
	delay time.Duration
}

func newSlowProxy(t *testing.T, target string, delay time.Duration) *slowProxy {
	t.Helper()
	p := &slowProxy{delay: delay}
	p.ln = newTCPProxy(t, target, func(c, up net.Conn) {
		if p.slow.Load() {
			time.Sleep(p.delay)
		}
		go io.Copy(up, c)
		io.Copy(c, up)
	})
	return p
}

// newTCPProxy listens on a free port and forwards each connection it accepts to target through
// relay, which moves the bytes between the client's connection and the server's; every
// connection is closed when the test ends, and the relays waited for.
func newTCPProxy(t *testing.T, target string, relay func(client, server net.Conn)) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, up)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				relay(c, up)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln
}

// A statement that outlives its read timeout is killed on the server even when the server takes
// longer than that read timeout to answer the KILL's own connection: the read timeout bounds the
// application's statements, not obroute's KILL QUERY.
func TestKillOutlastsTheReadTimeout(t *testing.T) {
	b := sqltest.Shared(t, "kill")[0]
	mc, err := mysql.ParseDSN(b.DSN)
	if err != nil {
		t.Fatal(err)
	}
	// The KILL's connection is answered after 1 s: longer than the 300 ms read timeout, well
	// within the 2 s a KILL may take.
	proxy := newSlowProxy(t, mc.Addr, time.Second)
	mc.Addr = proxy.ln.Addr().String()
	cfg, err := config.ParseDSN("obroute:backends.hot.dsn=" + mc.FormatDSN() + ";timeouts.read=300ms")
	if err != nil {
		t.Fatal(err)
	}
	outcomes := make(killOutcomes, 4)
	c, err := connector.New(cfg, connector.WithObserver(outcomes))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "DO 1"); err != nil { // opens the server session
		t.Fatal(err)
	}
	proxy.slow.Store(true)
	const sleep = "SLEEP(30.7)" // a text of its own in the processlist
	if _, err := conn.ExecContext(context.Background(), "DO "+sleep); !errors.Is(err, mysql.ErrInvalidConn) {
		t.Fatalf("DO %s past its read timeout: %v, want go-sql-driver's %v", sleep, err, mysql.ErrInvalidConn)
	}
	select {
	case ev := <-outcomes:
		if ev.Kind != connector.StateQueryKilled {
			t.Fatalf("KILL QUERY: %s %v, want %s", ev.Kind, ev.Attrs, connector.StateQueryKilled)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no KILL QUERY outcome reported")
	}
}
