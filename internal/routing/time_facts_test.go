package routing

import (
	"errors"
	"testing"
)

// A backend whose server changed is forgotten (ForgetBackendServer) until the connector has read
// it again: an INSERT of a fraction in a table's last second, whose table depends on the server's
// rule, is refused meanwhile, and a plan made before any change of what was read is outdated.
func TestFactsOfAChangedServer(t *testing.T) {
	const last = "insert into orders (id, order_time) values (1, '2025-01-31 23:59:59.7')"
	f := standard(t)
	f.r.SetBackendServer("hot", FlavorMariaDB, "STRICT_TRANS_TABLES", "")
	f.r.SetShardKeyColumns(map[string]ShardKeyColumn{"orders_202501": {Type: ShardKeyDatetime}, "orders_202502": {Type: ShardKeyDatetime}})
	p, err := f.route(last, nil, Input{})
	if err != nil || p.Targets[0].Tables[0] != "orders_202501" {
		t.Fatalf("truncated by MariaDB: %v, %v; want orders_202501", p, err)
	}
	if f.r.Outdated(p) {
		t.Fatal("a plan is outdated before anything changed")
	}
	f.r.ForgetBackendServer("hot")
	if !f.r.Outdated(p) {
		t.Error("a plan made before the backend's server was forgotten is not outdated")
	}
	if _, err := f.route(last, nil, Input{}); !errors.Is(err, ErrNoTimeRange) {
		t.Fatalf("while the changed server is not read again: %v, want ErrNoTimeRange", err)
	}
	f.r.SetBackendServer("hot", FlavorMariaDB, "STRICT_TRANS_TABLES,TIME_ROUND_FRACTIONAL", "")
	p, err = f.route(last, nil, Input{})
	if err != nil || p.Targets[0].Tables[0] != "orders_202502" {
		t.Fatalf("rounded after the server was read again: %v, %v; want orders_202502", p, err)
	}
	f.r.SetDefaultTimeZone("+01:00", nil)
	if !f.r.Outdated(p) {
		t.Error("a plan made before the default time zone was read again is not outdated")
	}
	if q, err := f.route("select id from items", nil, Input{}); err != nil || f.r.Outdated(q) {
		t.Errorf("a plan of no time-sharded table: %v, outdated %v; want never outdated", err, err == nil && f.r.Outdated(q))
	}
}
