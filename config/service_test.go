package config

import (
	"strings"
	"testing"
	"time"
)

func TestServiceUser(t *testing.T) {
	for _, tc := range []struct {
		name, dsn                 string
		wantUser, wantPw, wantSvc string
	}{
		{"with password", "obroute:backend.hot=app@SERVICE:orders:" + secret + "@tcp(127.0.0.1:1)/test;service.orders=10.0.0.1:2881", "app", secret, "orders"},
		{"without password", "obroute:backend.hot=app@SERVICE:orders@tcp(127.0.0.1:1)/test;service.orders=10.0.0.1:2881", "app", "", "orders"},
		{"password with colon", "obroute:backend.hot=app@service:orders:a:b@tcp(127.0.0.1:1)/test;service.orders=10.0.0.1:2881", "app", "a:b", "orders"},
		{"plain user", "obroute:backend.hot=app:" + secret + "@tcp(127.0.0.1:1)/test", "app", secret, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseDSN(tc.dsn)
			if err != nil {
				t.Fatal(err)
			}
			b := c.Backends[0]
			if b.MySQL.User != tc.wantUser || b.MySQL.Passwd != tc.wantPw || b.Service != tc.wantSvc {
				t.Fatalf("user %q password %q service %q; want %q %q %q", b.MySQL.User, b.MySQL.Passwd, b.Service, tc.wantUser, tc.wantPw, tc.wantSvc)
			}
		})
	}
}

func TestResilienceKeys(t *testing.T) {
	c, err := ParseDSN("obroute:backend.hot=app@SERVICE:orders@/test;backend.copy=root@tcp(10.0.0.9:3306)/test;role.copy=replica;replica_of.copy=hot;" +
		"service.orders=10.0.0.1:2881, 10.0.0.2:2881;service.orders.invalid=10.0.0.3:2881;service.orders.probe=SELECT 1;service.orders.interval=300ms;" +
		"timeout.connect=2s;timeout.read=10s;health.down_after=5;health.probe_interval=100ms")
	if err != nil {
		t.Fatal(err)
	}
	s := c.Service("orders")
	if s == nil || strings.Join(s.Valid(), ",") != "10.0.0.1:2881,10.0.0.2:2881" || len(s.Candidates) != 3 || !s.Candidates[2].Invalid ||
		s.Probe != "SELECT 1" || s.Interval != Duration(300*time.Millisecond) {
		t.Fatalf("service = %+v", s)
	}
	want := Timeouts{Connect: Duration(2 * time.Second), Read: Duration(10 * time.Second), Write: Duration(30 * time.Second)}
	if c.Timeouts != want {
		t.Fatalf("timeouts = %+v, want %+v", c.Timeouts, want)
	}
	if h := c.Health; h.DownAfter != 5 || h.ProbeInterval != Duration(100*time.Millisecond) || h.ProbeMax != Duration(time.Second) {
		t.Fatalf("health = %+v", h)
	}
	if c.Backend("copy").ReplicaOf != "hot" {
		t.Fatalf("replica_of not set")
	}
}

func TestResilienceErrors(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"obroute:backend.hot=app@SERVICE:orders:" + secret + "@/test", `service "orders" is not configured`},
		{"obroute:backend.hot=app@SERVICE:orders@/test;service.orders.invalid=10.0.0.1:1", "no valid candidate"},
		{"obroute:backend.hot=app@SERVICE:orders@/test;service.orders=nohost", `candidate "nohost" is not host:port`},
		{"obroute:backend.hot=root@/test;replica_of.hot=nowhere", `replica_of "nowhere" is not a configured backend`},
		{"obroute:backend.hot=root@/test;health.down_after=0", "not a whole number ≥ 1"},
		{"obroute:backend.hot=root@/test;timeout.read=soon", "invalid duration"},
	} {
		_, err := ParseDSN(tc.dsn)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.dsn, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("error shows the password: %v", err)
		}
	}
}
