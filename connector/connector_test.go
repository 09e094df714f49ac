package connector_test

import (
	"strings"
	"testing"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/routing"
)

// Time routing reads time.Time arguments in the backends' go-sql-driver loc: backends that
// disagree are refused at New, before any statement could be routed in the wrong zone.
func TestTimeRoutingNeedsOneDataTimeZone(t *testing.T) {
	cfg := &config.Config{
		Backends: []config.Backend{
			{Name: "hot", Role: "hot", DSN: "root@tcp(127.0.0.1:1)/d?loc=UTC"},
			{Name: "cold", Role: "cold", DSN: "root@tcp(127.0.0.1:2)/d?loc=Asia%2FShanghai"},
		},
		TimeTables: []routing.TimeTable{{Table: "orders", ShardKey: "order_time", Window: metadata.HotWindow{Months: 2}}},
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
