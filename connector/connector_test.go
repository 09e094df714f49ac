package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/metadata"
)

// Time routing reads time.Time arguments in the backends' go-sql-driver loc: backends that
// disagree are refused at New, before any statement could be routed in the wrong zone.
func TestTimeRoutingNeedsOneDataTimeZone(t *testing.T) {
	cfg := &config.Config{
		Backends: []config.Backend{
			{Name: "hot", Role: "hot", DSN: "root@tcp(127.0.0.1:1)/d?loc=UTC"},
			{Name: "cold", Role: "cold", DSN: "root@tcp(127.0.0.1:2)/d?loc=Asia%2FShanghai"},
		},
		TimeTables: []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 2}}},
	}
	_, err := connector.New(cfg, connector.WithMetadataSource(metadata.StaticSource{}))
	if err == nil || !strings.Contains(err.Error(), "different time zones") || !strings.Contains(err.Error(), "loc") {
		t.Fatalf("New with backends in UTC and Asia/Shanghai: err = %v, want a refusal saying to set the same loc", err)
	}
}

// The client session tracks one autocommit for all its server sessions: backends whose DSNs
// disagree are refused at New.
func TestBackendsMustAgreeOnAutocommit(t *testing.T) {
	cfg := &config.Config{Backends: []config.Backend{
		{Name: "hot", Role: "hot", DSN: "root@tcp(127.0.0.1:1)/d"},
		{Name: "cold", Role: "cold", DSN: "root@tcp(127.0.0.1:2)/d?autocommit=0"},
	}}
	if _, err := connector.New(cfg); err == nil || !strings.Contains(err.Error(), "autocommit") {
		t.Fatalf("New with autocommit on for hot and off for cold: err = %v, want a refusal naming autocommit", err)
	}
}

// A backend that accepts connections and never answers is marked down even when every caller
// gives up before the connect timeout: the dials go on without them and count.
func TestSilentBackendMarkedDownDespiteImpatientCallers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // never answers the handshake
			mu.Unlock()
		}
	}()
	defer func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	db, err := sql.Open("obroute", "obroute:backends.hot.dsn=root@tcp("+ln.Addr().String()+")/d;timeouts.connect=1s;health.down_after=3")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := 0; i < 3; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		start := time.Now()
		_, err := db.ExecContext(ctx, "SELECT 1")
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
			t.Fatalf("call %d: %v after %s, want the caller's deadline, promptly", i, err, time.Since(start))
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := db.ExecContext(ctx, "SELECT 1")
		cancel()
		if errors.Is(err, connector.ErrBackendDown) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the silent backend was never marked down; last error: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A client session has one time zone: backends whose DSNs start their server sessions in
// different ones (time_zone parameter) are refused at New, with or without time routing, and
// the message names both and the fix.
func TestBackendsMustAgreeOnTimeZone(t *testing.T) {
	for _, tc := range []struct{ hot, cold string }{
		{"?time_zone=%27%2B00%3A00%27", "?time_zone=%27%2B09%3A00%27"},
		{"", "?time_zone=%27%2B09%3A00%27"},
		{"?time_zone=%27Europe%2FBerlin%27", ""},
	} {
		for _, timed := range []bool{false, true} {
			cfg := &config.Config{Backends: []config.Backend{
				{Name: "hot", Role: "hot", DSN: "root@tcp(127.0.0.1:1)/d" + tc.hot},
				{Name: "cold", Role: "cold", DSN: "root@tcp(127.0.0.1:2)/d" + tc.cold},
			}}
			if timed {
				cfg.TimeTables = []config.TimeTable{{Table: "orders", ShardKey: "order_time", HotWindow: config.HotWindow{Months: 2}}}
			}
			_, err := connector.New(cfg, connector.WithMetadataSource(metadata.StaticSource{}))
			if err == nil || !strings.Contains(err.Error(), "different time zones") || !strings.Contains(err.Error(), "same time_zone parameter") ||
				!strings.Contains(err.Error(), "hot (time_zone=") || !strings.Contains(err.Error(), "cold (time_zone=") {
				t.Errorf("hot %q, cold %q, time tables %v: err = %v, want a refusal naming both backends' time_zone and the fix", tc.hot, tc.cold, timed, err)
			}
		}
	}
	// The same zone on every backend, or none, is accepted.
	for _, p := range []string{"", "?time_zone=%27%2B09%3A00%27"} {
		cfg := &config.Config{Backends: []config.Backend{
			{Name: "hot", Role: "hot", DSN: "root@tcp(127.0.0.1:1)/d" + p},
			{Name: "cold", Role: "cold", DSN: "root@tcp(127.0.0.1:2)/d" + p},
		}}
		c, err := connector.New(cfg)
		if err != nil {
			t.Errorf("time_zone %q on both: %v", p, err)
			continue
		}
		c.Close()
	}
}
