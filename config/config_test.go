package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const secret = "S3cr3tPw"

func TestParseDSNPlainMySQL(t *testing.T) {
	c, err := ParseDSN("app:" + secret + "@tcp(10.0.0.1:3306)/shop?parseTime=true")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Backends) != 1 || c.Backends[0].Name != "hot" || c.Backends[0].Role != "hot" {
		t.Fatalf("backends = %+v, want one backend hot/hot", c.Backends)
	}
	b := c.Backends[0]
	if b.MySQL.Addr != "10.0.0.1:3306" || b.MySQL.DBName != "shop" || !b.MySQL.ParseTime || b.MySQL.Passwd != secret {
		t.Fatalf("parsed mysql config = %+v", b.MySQL)
	}
	if c.Default != "hot" || c.Metadata.Table != "shard_metadata" || c.Metadata.Refresh != Duration(5*time.Minute) {
		t.Fatalf("defaults: default=%q metadata=%+v", c.Default, c.Metadata)
	}
	// go-sql-driver's defaults: no bound of obroute's own, no health marking.
	if c.Timeouts != (Timeouts{}) || c.Health.DownAfter != 0 {
		t.Fatalf("a plain DSN got bounds of its own: timeouts %+v, health %+v", c.Timeouts, c.Health)
	}
}

func TestParseDSNObroute(t *testing.T) {
	dsn := "obroute:backends.hot.dsn=root:a;;b@tcp(127.0.0.1:3306)/test; backends.archive.dsn=root@tcp(127.0.0.1:3307)/hist;backends.archive.role=cold;" +
		"routes.Audit_Log=archive;enable_cached_server=true;shadow.mappings.hot.shadow=shadow_hot;backends.shadow_hot.dsn=root@tcp(127.0.0.1:3308)/test;backends.shadow_hot.role=shadow;" +
		"time_tables.orders.shard_key=order_time;time_tables.orders.hot_window.months=2;metadata.refresh=30s;parse_cache_size=100"
	c, err := ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{c.Backends[0].Name, c.Backends[1].Name, c.Backends[2].Name}; strings.Join(got, ",") != "hot,archive,shadow_hot" {
		t.Fatalf("backend order = %v", got)
	}
	if c.Backends[0].MySQL.Passwd != "a;b" {
		t.Fatalf("';;' escape: password = %q, want a;b", c.Backends[0].MySQL.Passwd)
	}
	if c.Backends[1].Role != "cold" || c.Routes["audit_log"] != "archive" || !c.EnableCachedServer {
		t.Fatalf("role/route/cached: %+v %v %v", c.Backends[1], c.Routes, c.EnableCachedServer)
	}
	if c.Shadow == nil || len(c.Shadow.Mappings) != 1 || c.Shadow.Mappings[0].Production != "hot" || c.Shadow.Mappings[0].Shadow != "shadow_hot" || c.Shadow.DefaultAlgorithm == "" {
		t.Fatalf("shadow = %+v", c.Shadow)
	}
	if len(c.TimeTables) != 1 || c.TimeTables[0].Table != "orders" || c.TimeTables[0].ShardKey != "order_time" || c.TimeTables[0].HotWindow.Months != 2 {
		t.Fatalf("time tables = %+v", c.TimeTables)
	}
	if c.Metadata.Refresh != Duration(30*time.Second) || c.ParseCacheSize != 100 || c.Metadata.Backend != "hot" {
		t.Fatalf("metadata = %+v cache=%d", c.Metadata, c.ParseCacheSize)
	}
}

func TestYAMLAndDSNAgree(t *testing.T) {
	yaml := `
backends:
  - name: hot
    dsn: root:` + secret + `@tcp(127.0.0.1:3306)/test
  - name: cold
    dsn: root@tcp(127.0.0.1:3307)/test
routes:
  audit_log: cold
enable_cached_server: true
`
	path := filepath.Join(t.TempDir(), "obroute.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile, err := ParseDSN("obroute:config=" + path)
	if err != nil {
		t.Fatal(err)
	}
	fromDSN, err := ParseDSN("obroute:backends.hot.dsn=root:" + secret + "@tcp(127.0.0.1:3306)/test;backends.cold.dsn=root@tcp(127.0.0.1:3307)/test;routes.audit_log=cold;enable_cached_server=true")
	if err != nil {
		t.Fatal(err)
	}
	fromGo := &Config{
		Backends:           []Backend{{Name: "hot", DSN: "root:" + secret + "@tcp(127.0.0.1:3306)/test"}, {Name: "cold", DSN: "root@tcp(127.0.0.1:3307)/test"}},
		Routes:             map[string]string{"audit_log": "cold"},
		EnableCachedServer: true,
	}
	if err := fromGo.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*Config{"yaml": fromFile, "dsn": fromDSN} {
		if c.Default != fromGo.Default || c.Routes["audit_log"] != "cold" || c.EnableCachedServer != fromGo.EnableCachedServer || len(c.Backends) != 2 ||
			c.Backends[1].Role != "cold" || c.Backends[0].MySQL.FormatDSN() != fromGo.Backends[0].MySQL.FormatDSN() {
			t.Errorf("%s config differs from the Go config: %+v", name, c)
		}
	}
	// The DSN's keys add to the file's.
	c, err := ParseDSN("obroute:config=" + path + ";routes.events=hot")
	if err != nil {
		t.Fatal(err)
	}
	if c.Routes["events"] != "hot" || c.Routes["audit_log"] != "cold" {
		t.Fatalf("routes = %v", c.Routes)
	}
}

func TestBadConfig(t *testing.T) {
	dir := t.TempDir()
	badYAML := filepath.Join(dir, "bad.yaml")
	os.WriteFile(badYAML, []byte("backends:\n  - name: hot\n    dsn: root:"+secret+"@tcp(x:1)/d\n    colour: blue\n"), 0o600)
	cases := []struct {
		name, dsn string
		want      []string // substrings of the error
	}{
		{"empty obroute DSN", "obroute:", []string{"backends", "no backend"}},
		{"item without =", "obroute:backends.hot.dsn=root@tcp(h:1)/d;garbage", []string{"DSN item 2", "key=value"}},
		{"unknown key", "obroute:backends.hot.dsn=root@tcp(h:1)/d;colour=blue", []string{"colour", "unknown DSN key"}},
		{"unknown backend field", "obroute:backends.hot.dsn=root@tcp(h:1)/d;backends.hot.colour=blue", []string{"backends.hot.colour", "unknown DSN key"}},
		{"old key", "obroute:backend.hot=root@tcp(h:1)/d", []string{"backend.hot", "unknown DSN key", "backends.NAME.dsn"}},
		{"key field set", "obroute:backends.hot.dsn=root@tcp(h:1)/d;backends.hot.name=cold", []string{"backends.hot.name", "given by the key"}},
		{"group instead of a field", "obroute:backends.hot.dsn=root@tcp(h:1)/d;timeouts=5s", []string{"timeouts", "group of settings"}},
		{"backend DSN without a key", "obroute:root:" + secret + "@tcp(h:1)/d?parseTime=true", []string{"DSN item 1", "backends.NAME.dsn="}},
		{"duplicate backend", "obroute:backends.hot.dsn=root@tcp(h:1)/d;backends.hot.dsn=root@tcp(h:2)/d", []string{"backends.hot.dsn", "given twice"}},
		{"missing role", "obroute:backends.main.dsn=root@tcp(h:1)/d", []string{"backends.main", "backends.main.role="}},
		{"missing DSN", "obroute:backends.cold.role=cold;backends.hot.dsn=root@tcp(h:1)/d", []string{"backends.cold", "no DSN"}},
		{"unparsable backend DSN", "obroute:backends.hot.dsn=root:" + secret + "@tcp(h:1)", []string{"backends.hot.dsn", "invalid go-sql-driver DSN"}},
		{"unparsable plain DSN", "root:" + secret + "@tcp(h:1)", []string{"backends.hot.dsn", "invalid go-sql-driver DSN"}},
		{"bad backend param", "obroute:backends.hot.dsn=root:" + secret + "@tcp(h:1)/d?parseTime=maybe", []string{"backends.hot.dsn"}},
		{"unknown default", "obroute:backends.hot.dsn=root@tcp(h:1)/d;default=cold", []string{"default", `"cold"`, "hot"}},
		{"route to unknown backend", "obroute:backends.hot.dsn=root@tcp(h:1)/d;routes.audit=cold", []string{"routes.audit", `"cold"`}},
		{"bad cached server bool", "obroute:backends.hot.dsn=root@tcp(h:1)/d;enable_cached_server=yes please", []string{"enable_cached_server", "true or false"}},
		{"bad name", "obroute:backends.h*t.dsn=root@tcp(h:1)/d;backends.h*t.role=hot", []string{"invalid name"}},
		{"time table without key", "obroute:backends.hot.dsn=root@tcp(h:1)/d;time_tables.orders.hot_window.days=3", []string{"time_tables", "shard_key"}},
		{"bad hot days", "obroute:backends.hot.dsn=root@tcp(h:1)/d;time_tables.orders.shard_key=t;time_tables.orders.hot_window.days=-2", []string{"time_tables.orders.hot_window", "negative"}},
		{"hot days not a number", "obroute:backends.hot.dsn=root@tcp(h:1)/d;time_tables.orders.hot_window.days=two", []string{"time_tables.orders.hot_window.days", "whole number"}},
		{"unknown time option", "obroute:backends.hot.dsn=root@tcp(h:1)/d;time_tables.orders.window=3", []string{"time_tables.orders.window", "unknown DSN key"}},
		{"bad refresh", "obroute:backends.hot.dsn=root@tcp(h:1)/d;metadata.refresh=soon", []string{"metadata.refresh", "5m"}},
		{"metadata on unknown backend", "obroute:backends.hot.dsn=root@tcp(h:1)/d;metadata.backend=meta", []string{"metadata.backend", `"meta"`}},
		{"bad cache size", "obroute:backends.hot.dsn=root@tcp(h:1)/d;parse_cache_size=lots", []string{"parse_cache_size"}},
		{"shadow to unknown backend", "obroute:backends.hot.dsn=root@tcp(h:1)/d;shadow.mappings.hot.shadow=nowhere", []string{"shadow", "nowhere"}},
		{"missing config file", "obroute:config=" + filepath.Join(dir, "missing.yaml"), []string{"config=", "cannot read"}},
		{"config given twice", "obroute:config=a.yaml;config=b.yaml", []string{"config", "given twice"}},
		{"unknown YAML field", "obroute:config=" + badYAML, []string{"colour"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDSN(tc.dsn)
			if err == nil {
				t.Fatalf("ParseDSN(%q) succeeded, want an error", tc.dsn)
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			if strings.Contains(msg, secret) {
				t.Errorf("error %q contains the password", msg)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("error %T is not a *config.Error", err)
			}
		})
	}
}

// The example configuration in the repository stays valid.
func TestExampleConfigFile(t *testing.T) {
	c, err := ParseDSN("obroute:config=../examples/obroute.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Backends) != 5 || c.Default != "hot" || c.Routes["audit_log"] != "cold" || c.Shadow == nil || len(c.TimeTables) != 1 {
		t.Fatalf("example config read as %+v", c)
	}
	if tt := c.TimeTables[0]; tt.Budgets.L2.Seconds() != 2 || tt.HotWindow.Months != 2 {
		t.Fatalf("time table read as %+v", tt)
	}
}

func TestRoutesMatchTablesCaseInsensitively(t *testing.T) {
	c := &Config{Backends: []Backend{{Name: "hot", DSN: "root@tcp(h:1)/d"}, {Name: "cold", DSN: "root@tcp(h:2)/d"}}, Routes: map[string]string{"AuditLog": "cold"}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Routes["auditlog"] != "cold" {
		t.Fatalf("routes = %v, want the key lower-cased", c.Routes)
	}
	c = &Config{Backends: []Backend{{Name: "hot", DSN: "root@tcp(h:1)/d"}, {Name: "cold", DSN: "root@tcp(h:2)/d"}}, Routes: map[string]string{"AuditLog": "cold", "auditlog": "hot"}}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "routed twice") {
		t.Fatalf("conflicting routes: err = %v", err)
	}
}

func TestInvalidCandidateIsFencedEverywhere(t *testing.T) {
	s := &Service{Candidates: []string{"a:1", "b:1", "a:1"}, Invalid: []string{"a:1"}}
	if got := s.Valid(); len(got) != 1 || got[0] != "b:1" {
		t.Fatalf("Valid() = %v, want [b:1]: an address marked INVALID is never used", got)
	}
}
