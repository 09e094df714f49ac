package driver_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Footprint goals of a hello-world program that imports the driver (testdata/hello, the
// README's figure), built with -trimpath so that its size does not depend on where the source
// is: go-sql-driver alone (testdata/hellomysql) makes 176 packages and 4.2 MB; the parser adds
// most of the rest.
const (
	maxPackages    = 270
	maxBinaryBytes = 19_000_000
)

// TestImportChangesNothing builds and runs a program that defines its own -v flag and imports
// the driver: it must run, and flag.CommandLine, the standard log and slog must be as the
// program left them — the import adds no flag (vitess.io's parser registered glog's nine, and
// "-v" panicked with "flag redefined") and changes no logger; it registers "obroute" (and
// go-sql-driver, which obroute imports, registers "mysql").
func TestImportChangesNothing(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the test program: %v", err)
	}
	exe := filepath.Join(t.TempDir(), "flagprog")
	if out, err := exec.Command(goTool, "build", "-o", exe, "./testdata/flagprog").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(exe, "-v").CombinedOutput()
	if err != nil {
		t.Fatalf("the program failed: %v\n%s", err, out)
	}
	want := "flags=v v=true\n" +
		"drivers=mysql,obroute\n" + // go-sql-driver registers "mysql" when it is imported
		"log: flags=3 prefix=\"\" stderr=true\n" +
		"slog: *slog.defaultHandler\n"
	if string(out) != want {
		t.Errorf("the program printed\n%s\nwant\n%s", out, want)
	}

	hello := filepath.Join(t.TempDir(), "hello")
	if out, err := exec.Command(goTool, "build", "-trimpath", "-o", hello, "./testdata/hello").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	deps, err := exec.Command(goTool, "list", "-deps", "./testdata/hello").Output()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(deps), "\n"); n > maxPackages {
		t.Errorf("a hello-world program importing the driver builds %d packages, want at most %d", n, maxPackages)
	}
	info, err := os.Stat(hello)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() > maxBinaryBytes {
		t.Errorf("a hello-world program importing the driver is %d bytes, want at most %d", info.Size(), maxBinaryBytes)
	}
}
