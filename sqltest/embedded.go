package sqltest

import (
	"errors"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/embedded"
)

// Embedded starts one in-process go-mysql-server per name (package
// embedded), each with an empty database `test`, and closes them at cleanup.
// It never skips. Stop, Kill, Start and Restart work (on the same port, but
// the data is lost); Pause and Resume need [MariaDB]. See package embedded
// for the SQL go-mysql-server does not support.
func Embedded(tb testing.TB, names ...string) []*Backend {
	tb.Helper()
	backends := make([]*Backend, 0, len(names))
	for _, name := range names {
		srv, err := embedded.Start(embedded.Options{Name: name})
		if err != nil {
			tb.Fatalf("sqltest: Embedded %s: %v", name, err)
		}
		admin := newAdminConns(srv.Addr())
		life := &embeddedLife{name: name, srv: srv, port: srv.Port(), admin: admin}
		tb.Cleanup(func() { _ = life.stop(true) })
		cfg, err := mysql.ParseDSN(srv.DSN(""))
		if err != nil {
			tb.Fatalf("sqltest: Embedded %s: %v", name, err)
		}
		b := &Backend{Name: name, kind: "embedded", database: "test", admin: admin, life: life}
		b.connect(tb, cfg)
		backends = append(backends, b)
	}
	return backends
}

// embeddedLife stops and starts an embedded server on a fixed port.
type embeddedLife struct {
	name  string
	port  int
	admin *adminConns

	mu  sync.Mutex
	srv *embedded.Server // nil while stopped
}

func (e *embeddedLife) stop(bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.srv == nil {
		return nil
	}
	err := e.srv.Close()
	e.srv = nil
	e.admin.reset()
	return err
}

func (e *embeddedLife) start() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.srv != nil {
		return nil
	}
	srv, err := embedded.Start(embedded.Options{Name: e.name, Port: e.port})
	if err != nil {
		return err
	}
	e.srv = srv
	return nil
}

var errEmbeddedPause = errors.New("an embedded backend runs inside the test process and cannot be paused; use sqltest.MariaDB")

func (e *embeddedLife) pause() error  { return errEmbeddedPause }
func (e *embeddedLife) resume() error { return errEmbeddedPause }

func (e *embeddedLife) describe() string { return "" }
