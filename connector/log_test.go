package connector_test

import (
	"context"
	"database/sql"
	"log/slog"
	"runtime"
	"sync"
	"testing"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
)

// callSites is a slog.Handler that keeps, for each record's message, the function its PC is
// in: what a handler with AddSource prints.
type callSites struct {
	mu    *sync.Mutex
	sites map[string]string
}

func (h callSites) Enabled(context.Context, slog.Level) bool { return true }
func (h callSites) Handle(_ context.Context, r slog.Record) error {
	f, _ := runtime.CallersFrames([]uintptr{r.PC}).Next()
	h.mu.Lock()
	h.sites[r.Message] = f.Function
	h.mu.Unlock()
	return nil
}
func (h callSites) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h callSites) WithGroup(string) slog.Handler      { return h }

// The connector's records carry the PC of the connector's code that logged them, as
// (*slog.Logger).LogAttrs records it: a handler with AddSource shows where a record comes from,
// not the connector's logging helper.
func TestLogRecordsCarryTheirCallSite(t *testing.T) {
	h := callSites{mu: &sync.Mutex{}, sites: map[string]string{}}
	cfg, err := config.ParseDSN("obroute:backends.hot.dsn=app:pw@tcp(" + closedPort(t) + ")/test;timeouts.connect=1s;health.down_after=1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := connector.New(cfg, connector.WithLogger(slog.New(h)))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	if _, err := db.Exec("SELECT 1"); err == nil { // refused connection: the backend goes down
		t.Fatal("SELECT 1 on a closed port succeeded")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	want := map[string]string{
		"route":        "github.com/obroute/obroute/connector.(*Connector).routeDone",
		"backend down": "github.com/obroute/obroute/connector.(*events).state",
	}
	for msg, fn := range want {
		if got, ok := h.sites[msg]; !ok || got != fn {
			t.Errorf("record %q logged from %q, want %q (all: %v)", msg, got, fn, h.sites)
		}
	}
}
