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
		{"with password", "obroute:backends.hot.dsn=app@SERVICE:orders:" + secret + "@tcp(127.0.0.1:1)/test;services.orders.candidates=10.0.0.1:2881", "app", secret, "orders"},
		{"without password", "obroute:backends.hot.dsn=app@SERVICE:orders@tcp(127.0.0.1:1)/test;services.orders.candidates=10.0.0.1:2881", "app", "", "orders"},
		{"password with colon", "obroute:backends.hot.dsn=app@service:orders:a:b@tcp(127.0.0.1:1)/test;services.orders.candidates=10.0.0.1:2881", "app", "a:b", "orders"},
		{"plain user", "obroute:backends.hot.dsn=app:" + secret + "@tcp(127.0.0.1:1)/test", "app", secret, ""},
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
	c, err := ParseDSN("obroute:backends.hot.dsn=app@SERVICE:orders@/test;backends.copy.dsn=root@tcp(10.0.0.9:3306)/test;backends.copy.role=replica;backends.copy.replica_of=hot;" +
		"services.orders.candidates=10.0.0.1:2881, 10.0.0.2:2881,10.0.0.3:2881;services.orders.invalid=10.0.0.3:2881;services.orders.probe=SELECT 1;services.orders.interval=300ms;" +
		"timeouts.connect=2s;timeouts.read=10s;health.down_after=5;health.probe_interval=100ms")
	if err != nil {
		t.Fatal(err)
	}
	s := c.Service("orders")
	if s == nil || strings.Join(s.Valid(), ",") != "10.0.0.1:2881,10.0.0.2:2881" || len(s.Candidates) != 3 || len(s.Invalid) != 1 ||
		s.Probe != "SELECT 1" || s.Interval != Duration(300*time.Millisecond) {
		t.Fatalf("service = %+v", s)
	}
	want := Timeouts{Connect: Duration(2 * time.Second), Read: Duration(10 * time.Second)} // write: go-sql-driver's default
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
		{"obroute:backends.hot.dsn=app@SERVICE:orders:" + secret + "@/test", `service "orders" is not configured`},
		{"obroute:backends.hot.dsn=app@SERVICE:orders@/test;services.orders.invalid=10.0.0.1:1", "no valid candidate"},
		{"obroute:backends.hot.dsn=app@SERVICE:orders@/test;services.orders.candidates=nohost", `candidate "nohost" is not host:port`},
		{"obroute:backends.hot.dsn=root@/test;backends.hot.replica_of=nowhere", `replica_of "nowhere" is not a configured backend`},
		{"obroute:backends.hot.dsn=root@/test;backends.copy.dsn=root@/test;backends.copy.role=hot;backends.copy.replica_of=hot", "set it, e.g. health.down_after=3"},
		{"obroute:backends.hot.dsn=root@/test;health.down_after=-1", "negative count"},
		{"obroute:backends.hot.dsn=root@/test;timeouts.read=soon", "invalid duration"},
		{"obroute:backends.hot.dsn=root@/test;timeouts.read=-1s", "negative duration"},
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
