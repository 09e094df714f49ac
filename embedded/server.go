package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/server"
	gmssql "github.com/dolthub/go-mysql-server/sql"
	"github.com/go-sql-driver/mysql"
)

// ErrInvalidOptions is returned (wrapped) by [Start] when [Options] cannot
// describe a server, for example a blank or duplicate database name.
var ErrInvalidOptions = errors.New("embedded: invalid options")

// Options describes one embedded server. The zero value is valid: one empty
// database "test", user root with no password, no logging.
type Options struct {
	// Name identifies the server in log messages (for example "hot" or "cold").
	Name string
	// Databases are created empty when the server starts. Default ["test"].
	// More can be created later with CREATE DATABASE.
	Databases []string
	// User and Password are the only account the server accepts.
	// Default user "root" with an empty password.
	User     string
	Password string
	// Logger receives go-mysql-server's log messages. Nil drops them.
	Logger *slog.Logger
	// Port is the TCP port to listen on; 0 (the default) picks a free one.
	// Set it to start a server again on the port of one that was closed.
	Port int
}

// Server is a running in-process MySQL-protocol server. Its methods are safe
// for concurrent use.
type Server struct {
	name     string
	user     string
	password string
	addr     string
	logger   *slog.Logger

	engine   *sqle.Engine
	srv      *server.Server
	listener *trackingListener
	served   chan struct{} // closed when the accept loop returns

	closeOnce sync.Once
}

// Start starts a server listening on 127.0.0.1 (on a free port unless
// [Options.Port] is set) and returns once
// it accepts connections. Call [Server.Close] to stop it.
func Start(opts Options) (*Server, error) {
	dbNames, err := opts.databases()
	if err != nil {
		return nil, err
	}
	user := opts.User
	if user == "" {
		user = "root"
	}

	dbs := make([]gmssql.Database, 0, len(dbNames))
	for _, name := range dbNames {
		db := memory.NewDatabase(name)
		db.BaseDatabase.EnablePrimaryKeyIndexes()
		dbs = append(dbs, db)
	}
	provider := memory.NewDBProvider(dbs...)
	engine := sqle.NewDefault(provider)
	mysqlDB := engine.Analyzer.Catalog.MySQLDb
	ed := mysqlDB.Editor()
	mysqlDB.AddSuperUser(ed, user, "%", opts.Password)
	ed.Close()

	tcp, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.Port)))
	if err != nil {
		_ = engine.Close()
		return nil, fmt.Errorf("embedded: start server %q: listen on 127.0.0.1 port %d (0 means any free port): %w", opts.Name, opts.Port, err)
	}
	tl := newTrackingListener(tcp)

	s := &Server{
		name:     opts.Name,
		user:     user,
		password: opts.Password,
		addr:     tcp.Addr().String(),
		logger:   opts.Logger,
		engine:   engine,
		listener: tl,
		served:   make(chan struct{}),
	}
	registerLogger(s.logger)

	cfg := server.Config{Protocol: "tcp", Address: s.addr, Listener: tl}
	srv, err := server.NewServer(cfg, engine, gmssql.NewContext, memory.NewSessionBuilder(provider), nil)
	if err != nil {
		_ = tcp.Close()
		_ = engine.Close()
		unregisterLogger(s.logger)
		return nil, fmt.Errorf("embedded: start server %q: %w", opts.Name, err)
	}
	s.srv = srv
	go func() {
		defer close(s.served)
		_ = srv.Start() // returns when the listener is closed
	}()
	if s.logger != nil {
		s.logger.Info("embedded backend started", "backend", s.name, "addr", s.addr, "databases", dbNames)
	}
	return s, nil
}

func (o Options) databases() ([]string, error) {
	if o.Port < 0 || o.Port > 65535 {
		return nil, fmt.Errorf("%w: server %q: Port %d is not a TCP port; use 0 for any free port", ErrInvalidOptions, o.Name, o.Port)
	}
	if len(o.Databases) == 0 {
		return []string{"test"}, nil
	}
	seen := make(map[string]bool, len(o.Databases))
	for _, name := range o.Databases {
		if name == "" {
			return nil, fmt.Errorf("%w: server %q: blank database name in Databases; remove it or name the database", ErrInvalidOptions, o.Name)
		}
		if seen[name] {
			return nil, fmt.Errorf("%w: server %q: database %q listed twice in Databases", ErrInvalidOptions, o.Name, name)
		}
		seen[name] = true
	}
	return append([]string(nil), o.Databases...), nil
}

// Name returns [Options.Name].
func (s *Server) Name() string { return s.name }

// Addr returns the listening address, "127.0.0.1:PORT".
func (s *Server) Addr() string { return s.addr }

// Port returns the listening TCP port.
func (s *Server) Port() int {
	_, p, _ := net.SplitHostPort(s.addr)
	n, _ := strconv.Atoi(p)
	return n
}

// DSN returns a go-sql-driver/mysql DSN for database db on this server, with
// parseTime=true and loc=UTC. It contains the password when one was set, so
// it must not be logged; [Server.String] is the loggable form.
func (s *Server) DSN(db string) string {
	cfg := mysql.NewConfig()
	cfg.User = s.user
	cfg.Passwd = s.password
	cfg.Net = "tcp"
	cfg.Addr = s.addr
	cfg.DBName = db
	cfg.ParseTime = true
	return cfg.FormatDSN()
}

// String describes the server without credentials, for logs.
func (s *Server) String() string {
	return fmt.Sprintf("embedded backend %q at %s", s.name, s.addr)
}

// Close stops accepting connections, closes every client connection, waits
// for the server's goroutines to finish and discards the data. It is safe to
// call more than once; later calls return nil.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		_ = s.srv.Close() // closes the listener; the accept loop returns
		<-s.served
		s.listener.closeConns()
		s.listener.wait()
		// Shutdown cancels the engine's background threads, which report that
		// as context.Canceled: that is the expected outcome, not a failure.
		if cerr := s.engine.Close(); cerr != nil && !errors.Is(cerr, context.Canceled) {
			err = cerr
		}
		if s.logger != nil {
			s.logger.Info("embedded backend stopped", "backend", s.name, "addr", s.addr)
		}
		unregisterLogger(s.logger)
		if err != nil {
			err = fmt.Errorf("embedded: close server %q: %w", s.name, err)
		}
	})
	return err
}

// trackingListener remembers the connections it accepted so that Close can
// end them, and lets Close wait until the server's handler is done with each.
type trackingListener struct {
	net.Listener

	mu     sync.Mutex
	conns  map[*trackedConn]struct{}
	active sync.WaitGroup
}

func newTrackingListener(l net.Listener) *trackingListener {
	return &trackingListener{Listener: l, conns: make(map[*trackedConn]struct{})}
}

// Accept implements net.Listener.
func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, owner: l}
	l.mu.Lock()
	l.conns[tc] = struct{}{}
	l.mu.Unlock()
	l.active.Add(1)
	return tc, nil
}

// closeConns closes the sockets of every open connection; the handler
// goroutines see the error and finish, closing their trackedConn.
func (l *trackingListener) closeConns() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.conns {
		_ = c.Conn.Close()
	}
}

func (l *trackingListener) wait() { l.active.Wait() }

// trackedConn reports its Close, which go-mysql-server's handler calls last
// when a connection ends.
type trackedConn struct {
	net.Conn
	owner *trackingListener
	once  sync.Once
}

// Close implements net.Conn.
func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.owner.mu.Lock()
		delete(c.owner.conns, c)
		c.owner.mu.Unlock()
		c.owner.active.Done()
	})
	return err
}
