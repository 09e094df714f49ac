package sqltest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// mariadbBinaries are the programs needed to run instances.
type mariadbBinaries struct {
	server    string // mariadbd
	installDB string // mariadb-install-db
	// client and tzinfo (the mariadb client and mariadb-tzinfo-to-sql) load the zone database;
	// "" when missing, which only MariaDBOptions.TimeZones needs.
	client, tzinfo string
}

var (
	binOnce sync.Once
	binVal  mariadbBinaries
	binErr  error
)

func findMariaDB() (mariadbBinaries, error) {
	binOnce.Do(func() {
		find := func(name string, dirs ...string) string {
			if p, err := exec.LookPath(name); err == nil {
				return p
			}
			for _, d := range dirs {
				p := filepath.Join(d, name)
				if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
					return p
				}
			}
			return ""
		}
		binVal.server = find("mariadbd", "/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin", "/usr/libexec")
		binVal.installDB = find("mariadb-install-db", "/usr/bin", "/usr/local/bin", "/usr/local/mysql/scripts")
		binVal.client = find("mariadb", "/usr/bin", "/usr/local/bin", "/usr/local/mysql/bin")
		binVal.tzinfo = find("mariadb-tzinfo-to-sql", "/usr/bin", "/usr/local/bin", "/usr/local/mysql/bin")
		switch {
		case binVal.server == "":
			binErr = errors.New("mariadbd not found in PATH or /usr/sbin")
		case binVal.installDB == "":
			binErr = errors.New("mariadb-install-db not found in PATH or /usr/bin")
		}
	})
	return binVal, binErr
}

// baseArgs are the options shared by the template initialisation and every
// instance; the template cache key depends on them.
var baseArgs = []string{
	"--innodb-buffer-pool-size=16M",
	"--innodb-log-file-size=8M",
	"--skip-log-bin",
	"--skip-name-resolve",
	"--character-set-server=utf8mb4",
	"--collation-server=utf8mb4_general_ci",
}

var (
	tmplOnce sync.Once
	tmplDir  string
	tmplErr  error
)

// template returns a data directory initialised by mariadb-install-db, with
// root@localhost having an empty password (auth "normal", so KILL and the
// processlist behave as in production). It is created once per machine,
// mariadbd version and options, in os.TempDir(), because initialising takes
// seconds and copying takes milliseconds; instances copy it.
func (bin mariadbBinaries) template() (string, error) {
	tmplOnce.Do(func() {
		version, err := exec.Command(bin.server, "--version").Output()
		if err != nil {
			tmplErr = fmt.Errorf("%s --version: %w", bin.server, err)
			return
		}
		sum := sha256.Sum256([]byte(string(version) + strings.Join(baseArgs, " ") + strconv.Itoa(os.Geteuid())))
		dir := filepath.Join(os.TempDir(), "obroute-sqltest-template-"+hex.EncodeToString(sum[:6]))
		if _, err := os.Stat(filepath.Join(dir, "mysql")); err == nil {
			tmplDir = dir
			return
		}
		// Initialise beside the final name and rename, so concurrent test
		// processes never see a half-written template.
		work, err := os.MkdirTemp(os.TempDir(), "obroute-sqltest-init-")
		if err != nil {
			tmplErr = err
			return
		}
		defer os.RemoveAll(work)
		data := filepath.Join(work, "data")
		args := []string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal", "--skip-test-db"}
		if os.Geteuid() == 0 {
			args = append(args, "--user=root")
		}
		args = append(args, baseArgs...)
		out, err := exec.Command(bin.installDB, args...).CombinedOutput()
		if err != nil {
			tmplErr = fmt.Errorf("%s failed: %w\n%s", bin.installDB, err, tail(out, 20))
			return
		}
		if err := os.Rename(data, dir); err != nil {
			if _, statErr := os.Stat(filepath.Join(dir, "mysql")); statErr != nil {
				tmplErr = fmt.Errorf("store MariaDB template data dir: %w", err)
				return
			}
			// Another process stored it first; use theirs.
		}
		tmplDir = dir
	})
	return tmplDir, tmplErr
}

// zoneDir is the zone database the time-zone template loads.
const zoneDir = "/usr/share/zoneinfo"

var (
	zoneOnce sync.Once
	zoneTmpl string
	zoneErr  error
)

// zoneTemplate returns a copy of the template base whose time-zone tables hold the machine's
// zone database, made once per machine beside base: a server started on a copy of base loads
// `mariadb-tzinfo-to-sql /usr/share/zoneinfo` through the mariadb client and stops.
func (bin mariadbBinaries) zoneTemplate(base string) (string, error) {
	zoneOnce.Do(func() {
		dir := base + "-zones"
		if _, err := os.Stat(filepath.Join(dir, "mysql")); err == nil {
			zoneTmpl = dir
			return
		}
		if bin.client == "" || bin.tzinfo == "" {
			zoneErr = errors.New("the mariadb client or mariadb-tzinfo-to-sql is not installed; they load the time-zone tables")
			return
		}
		if _, err := os.Stat(zoneDir); err != nil {
			zoneErr = fmt.Errorf("no zone database to load: %w (apt-get install tzdata)", err)
			return
		}
		work, err := os.MkdirTemp(os.TempDir(), "obroute-sqltest-zones-")
		if err != nil {
			zoneErr = err
			return
		}
		defer os.RemoveAll(work)
		if err := copyDir(base, filepath.Join(work, "data")); err != nil {
			zoneErr = err
			return
		}
		if err := os.Mkdir(filepath.Join(work, "tmp"), 0o700); err != nil {
			zoneErr = err
			return
		}
		in := &instance{name: "zones", bin: bin.server, dir: work}
		if in.port, err = freePort(); err != nil {
			zoneErr = err
			return
		}
		in.args = in.buildArgs(MariaDBOptions{})
		in.admin = newAdminConns(net.JoinHostPort("127.0.0.1", strconv.Itoa(in.port)))
		if err := in.start(); err != nil {
			zoneErr = fmt.Errorf("start a server to load the time-zone tables: %w", err)
			return
		}
		err = loadZones(bin, in.port)
		if stopErr := in.stop(false); err == nil {
			err = stopErr
		}
		if err != nil {
			zoneErr = err
			return
		}
		if err := os.Rename(filepath.Join(work, "data"), dir); err != nil {
			if _, statErr := os.Stat(filepath.Join(dir, "mysql")); statErr != nil {
				zoneErr = fmt.Errorf("store the time-zone template: %w", err)
				return
			}
			// Another process stored it first; use theirs.
		}
		zoneTmpl = dir
	})
	return zoneTmpl, zoneErr
}

// loadZones runs mariadb-tzinfo-to-sql /usr/share/zoneinfo | mariadb … mysql on the server at port.
func loadZones(bin mariadbBinaries, port int) error {
	gen := exec.Command(bin.tzinfo, zoneDir)
	load := exec.Command(bin.client, "--no-defaults", "--protocol=TCP", "-h127.0.0.1", "-P"+strconv.Itoa(port), "-uroot", "mysql")
	pipe, err := gen.StdoutPipe()
	if err != nil {
		return err
	}
	load.Stdin = pipe
	var genErr, loadOut strings.Builder
	gen.Stderr = &genErr
	load.Stdout, load.Stderr = &loadOut, &loadOut
	if err := gen.Start(); err != nil {
		return fmt.Errorf("%s: %w", bin.tzinfo, err)
	}
	loadErr := load.Run()
	if err := gen.Wait(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", bin.tzinfo, zoneDir, err, tail([]byte(genErr.String()), 10))
	}
	if loadErr != nil {
		return fmt.Errorf("load the time-zone tables: %w\n%s", loadErr, tail([]byte(loadOut.String()), 10))
	}
	return nil
}
