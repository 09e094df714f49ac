package sqltest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// MariaDBOptions adjusts the mariadbd instances started by [MariaDBWith].
type MariaDBOptions struct {
	// GeneralLog records every statement in the mysql.general_log table,
	// read back with [Backend.GeneralLog].
	GeneralLog bool
	// PerformanceSchema turns performance_schema on (off by default, to save
	// memory and startup time).
	PerformanceSchema bool
	// Args are extra mariadbd options, for example "--max-connections=20".
	Args []string
	// TimeZones loads the machine's zone database (/usr/share/zoneinfo, with
	// mariadb-tzinfo-to-sql) into the server's time-zone tables, so that sessions can SET
	// time_zone to a named zone such as 'Europe/Berlin'. It is loaded once per machine into a
	// data-directory template of its own, which instances copy.
	TimeZones bool
	// Env are extra environment variables of the mariadbd process ("TZ=Europe/London": the
	// zone its time_zone SYSTEM stands for), added to the test process's own.
	Env []string
}

// startTimeout bounds how long a mariadbd may take to accept connections.
const startTimeout = 30 * time.Second

// MariaDB starts one real mariadbd process per name, each on its own free
// port with its own throwaway data directory and an empty database `test`,
// and stops them at cleanup. Without mariadbd on the machine the test is
// skipped (failed under [RequireServers]).
func MariaDB(tb testing.TB, names ...string) []*Backend {
	tb.Helper()
	return MariaDBWith(tb, MariaDBOptions{}, names...)
}

// MariaDBWith is [MariaDB] with options.
func MariaDBWith(tb testing.TB, opts MariaDBOptions, names ...string) []*Backend {
	tb.Helper()
	bin, err := findMariaDB()
	if err != nil {
		unavailable(tb, "sqltest: %v; install it with `apt-get install mariadb-server` (Debian/Ubuntu) to run this test", err)
	}
	tmpl, err := bin.template()
	if err == nil && opts.TimeZones {
		tmpl, err = bin.zoneTemplate(tmpl)
	}
	if err != nil {
		tb.Fatalf("sqltest: %v", err)
	}
	backends := make([]*Backend, 0, len(names))
	for _, name := range names {
		backends = append(backends, startInstance(tb, bin, tmpl, opts, name))
	}
	return backends
}

// instance is one mariadbd process and its data directory.
type instance struct {
	name string
	bin  string
	dir  string
	port int
	args []string
	env  []string

	admin      *adminConns // also used for startup probes, so they stay out of counts
	generalLog bool

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
	paused bool
}

func startInstance(tb testing.TB, bin mariadbBinaries, tmpl string, opts MariaDBOptions, name string) *Backend {
	tb.Helper()
	// A short directory name: the Unix socket path must stay under 108 bytes.
	dir, err := os.MkdirTemp("", "obsq-")
	if err != nil {
		tb.Fatalf("sqltest: MariaDB %s: %v", name, err)
	}
	inst := &instance{name: name, bin: bin.server, dir: dir, generalLog: opts.GeneralLog, env: opts.Env}
	tb.Cleanup(func() {
		inst.destroy()
		_ = os.RemoveAll(dir)
	})
	if err := copyDir(tmpl, filepath.Join(dir, "data")); err != nil {
		tb.Fatalf("sqltest: MariaDB %s: copy template data dir: %v", name, err)
	}
	// Each instance its own temporary directory: instances sharing /tmp collide on the names
	// of their internal temporary tables.
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o700); err != nil {
		tb.Fatalf("sqltest: MariaDB %s: %v", name, err)
	}
	// The port is picked free and released before mariadbd binds it; retry
	// with another if something else took it in between.
	for attempt := 1; ; attempt++ {
		if inst.port, err = freePort(); err != nil {
			tb.Fatalf("sqltest: MariaDB %s: %v", name, err)
		}
		inst.args = inst.buildArgs(opts)
		inst.admin = newAdminConns(net.JoinHostPort("127.0.0.1", strconv.Itoa(inst.port)))
		err = inst.start()
		if err == nil {
			break
		}
		if attempt == 3 || !strings.Contains(inst.describe(), "Address already in use") {
			tb.Fatalf("sqltest: MariaDB %s: %v", name, err)
		}
	}

	if err := execOnce(inst.rootConfig(), "CREATE DATABASE IF NOT EXISTS test"); err != nil {
		tb.Fatalf("sqltest: MariaDB %s: %v", name, err)
	}
	b := &Backend{Name: name, kind: "mariadb", database: "test", admin: inst.admin, life: inst}
	b.connect(tb, inst.rootConfig())
	return b
}

func (in *instance) buildArgs(opts MariaDBOptions) []string {
	args := []string{
		"--no-defaults",
		"--datadir=" + filepath.Join(in.dir, "data"),
		"--port=" + strconv.Itoa(in.port),
		"--bind-address=127.0.0.1",
		"--socket=" + filepath.Join(in.dir, "mariadb.sock"),
		"--pid-file=" + filepath.Join(in.dir, "mariadbd.pid"),
		"--log-error=" + filepath.Join(in.dir, "error.log"),
		"--innodb-use-native-aio=0", // many instances would exhaust fs.aio-max-nr
		"--max-connections=500",
		"--tmpdir=" + filepath.Join(in.dir, "tmp"),
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	args = append(args, baseArgs...)
	if opts.PerformanceSchema {
		args = append(args, "--performance-schema=ON")
	} else {
		args = append(args, "--performance-schema=OFF")
	}
	if opts.GeneralLog {
		args = append(args, "--general-log=1", "--log-output=TABLE")
	}
	return append(args, opts.Args...)
}

// start launches mariadbd (unless running) and waits until it accepts
// connections.
func (in *instance) start() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.cmd != nil {
		return nil
	}
	cmd := exec.Command(in.bin, in.args...)
	if len(in.env) > 0 {
		cmd.Env = append(os.Environ(), in.env...)
	}
	// If the test process dies without cleanup (timeout panic, SIGKILL), the
	// kernel kills mariadbd too, so no orphan server is left behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := os.OpenFile(filepath.Join(in.dir, "stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("start %s: %w", in.bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(exited)
	}()
	in.cmd, in.exited = cmd, exited

	cfg := in.rootConfig()
	cfg.Timeout = time.Second
	deadline := time.Now().Add(startTimeout)
	for {
		if err := execOnce(cfg, "SELECT 1"); err == nil {
			if in.generalLog {
				// GeneralLog covers what happened since this start.
				return execOnce(cfg, "TRUNCATE TABLE mysql.general_log")
			}
			return nil
		}
		select {
		case <-exited:
			in.cmd = nil
			return fmt.Errorf("mariadbd exited during startup (%s)\n%s", cmd.ProcessState, in.describeLocked())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			in.killLocked()
			return fmt.Errorf("mariadbd did not accept connections on port %d within %s\n%s", in.port, startTimeout, in.describeLocked())
		}
	}
}

// rootConfig is root's DSN, connecting through the admin connection tracker.
func (in *instance) rootConfig() *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = in.admin.network
	cfg.Addr = in.admin.addr
	return cfg
}

// stop ends mariadbd with SIGTERM (and waits for it) or SIGKILL.
func (in *instance) stop(kill bool) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.cmd == nil {
		return nil
	}
	if kill {
		in.killLocked()
		return nil
	}
	if in.paused {
		_ = in.cmd.Process.Signal(syscall.SIGCONT)
		in.paused = false
	}
	_ = in.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-in.exited:
		in.cmd = nil
		in.admin.reset()
		return nil
	case <-time.After(startTimeout):
		in.killLocked()
		return fmt.Errorf("mariadbd did not stop within %s of SIGTERM; killed it\n%s", startTimeout, in.describeLocked())
	}
}

func (in *instance) killLocked() {
	if in.cmd == nil {
		return
	}
	in.admin.reset()
	_ = in.cmd.Process.Kill()
	if in.paused {
		_ = in.cmd.Process.Signal(syscall.SIGCONT)
		in.paused = false
	}
	<-in.exited
	in.cmd = nil
}

func (in *instance) pause() error { return in.signal(syscall.SIGSTOP) }

func (in *instance) resume() error { return in.signal(syscall.SIGCONT) }

// signal sends SIGSTOP or SIGCONT to the running mariadbd and records whether it is paused;
// after SIGSTOP it returns once every thread has stopped.
func (in *instance) signal(sig syscall.Signal) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.cmd == nil {
		return errors.New("mariadbd is not running; Start it first")
	}
	if err := in.cmd.Process.Signal(sig); err != nil {
		return err
	}
	in.paused = sig == syscall.SIGSTOP
	if in.paused {
		waitStopped(in.cmd.Process.Pid)
	}
	return nil
}

// waitStopped waits (at most 2 s) until every thread of process pid is stopped, so that a paused
// server answers nothing more once Pause returns: SIGSTOP reaches a busy process's threads
// asynchronously. Without /proc (not Linux) it returns at once.
func waitStopped(pid int) {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		if err != nil || len(stats) == 0 {
			return
		}
		running := false
		for _, f := range stats {
			b, err := os.ReadFile(f)
			// The state follows the parenthesised command name: "pid (comm) S …"; T is stopped.
			if i := strings.LastIndexByte(string(b), ')'); err == nil && i+2 < len(b) && b[i+2] != 'T' {
				running = true
				break
			}
		}
		if !running {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// destroy kills the process, even a paused one; cleanup uses it.
func (in *instance) destroy() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.killLocked()
}

func (in *instance) describe() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.describeLocked()
}

// describeLocked returns the tail of the error log.
func (in *instance) describeLocked() string {
	data, err := os.ReadFile(filepath.Join(in.dir, "error.log"))
	if err != nil {
		return "(no error log: " + err.Error() + ")"
	}
	return "last lines of mariadbd's error log:\n" + tail(data, 25)
}

// execOnce runs one statement on a fresh connection.
func execOnce(cfg *mysql.Config, query string) error {
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = db.ExecContext(ctx, query)
	return err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// copyDir copies a directory tree of regular files.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o660)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
