package sqltest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
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
