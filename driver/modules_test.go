package driver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/sqltest"

	// Keeps obroute's requirement on a genproto monolith from after the split of googleapis/rpc
	// (go mod tidy drops a requirement no package imports): every module that imports obroute
	// then selects a monolith without googleapis/rpc, whatever older one the rest of its graph
	// names (dolthub's vitess names one from 2019). A two-line alias package.
	_ "google.golang.org/genproto/protobuf/field_mask"
)

// The newest versions the Go module proxy served when these tests were written: an importing
// module requires them next to obroute, and its build must not break.
const (
	newestGRPC  = "v1.85.0"
	newestGoose = "v3.30.1"
)

// splitGenproto is the first version of the genproto monolith without package
// googleapis/rpc/status (it requires the module google.golang.org/genproto/googleapis/rpc,
// which holds it since): a module graph that selects an older monolith next to any current
// gRPC finds that package in two modules ("ambiguous import").
const splitGenproto = "v0.0.0-20230525234025-438c736192d0"

// goTool runs the go command in dir and returns its output; a failure fails the test. Module
// mode reads and writes the throwaway module's go.mod (-mod=mod); GOMODCACHE and GOCACHE stay
// the machine's, so only a first run downloads and compiles the modules.
func goTool(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	goPath, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the throwaway modules: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goPath, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"))
	cmd.Env = append(cmd.Env, env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("go %s (in %s): %.1fs", strings.Join(args, " "), filepath.Base(dir), time.Since(start).Seconds())
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// checkout returns the root of obroute's module (the checkout the tests run in).
func checkout(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

// throwawayModule copies testdata/name into a new directory and writes its go.mod: module
// example.com/name requiring obroute (replaced by this checkout) and the given modules at the
// given versions, as the go.mod of an application that adds obroute next to them. It runs go
// mod tidy there and checks that package googleapis/rpc/status (imported by grpc/status, and
// by obroute's parser) comes from its own module, and that the module selects no genproto
// monolith from before the split.
func throwawayModule(t *testing.T, name string, requires ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	gomod := fmt.Sprintf("module example.com/%s\n\ngo 1.26\n\nrequire (\n\tgithub.com/obroute/obroute v0.0.0\n", name)
	for _, r := range requires {
		gomod += "\t" + r + "\n"
	}
	gomod += ")\n\nreplace github.com/obroute/obroute => " + checkout(t) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	goTool(t, dir, nil, "mod", "tidy")
	const rpcStatus = "google.golang.org/genproto/googleapis/rpc/status"
	if got := strings.TrimSpace(goTool(t, dir, nil, "list", "-f", "{{.Module.Path}}", rpcStatus)); got != "google.golang.org/genproto/googleapis/rpc" {
		t.Errorf("package %s comes from module %s, want google.golang.org/genproto/googleapis/rpc", rpcStatus, got)
	}
	checkGenproto(t, dir)
	return dir
}

// checkGenproto fails the test when the module in dir selects a genproto monolith from before
// the split of googleapis/rpc.
func checkGenproto(t *testing.T, dir string) {
	t.Helper()
	v := strings.TrimSpace(goTool(t, dir, nil, "list", "-m", "-e", "-f", "{{.Version}}", "google.golang.org/genproto"))
	if v != "" && v < splitGenproto {
		t.Errorf("%s selects google.golang.org/genproto %s, older than the split of googleapis/rpc (%s)", filepath.Base(dir), v, splitGenproto)
	}
}

// TestImportNextToCurrentGRPC: a gRPC service's module that requires the newest gRPC adds
// obroute's driver (testdata/grpcuser imports grpc/status and the driver): go mod tidy and go
// build succeed, and the program runs. With the pre-split genproto in obroute's go.mod, tidy
// failed with "ambiguous import" on googleapis/rpc/status.
func TestImportNextToCurrentGRPC(t *testing.T) {
	dir := throwawayModule(t, "grpcuser", "google.golang.org/grpc "+newestGRPC)
	exe := filepath.Join(t.TempDir(), "grpcuser")
	goTool(t, dir, nil, "build", "-o", exe, ".")
	out, err := exec.Command(exe).CombinedOutput()
	if want := "Unavailable [mysql obroute]\n"; err != nil || string(out) != want {
		t.Errorf("the program printed %q (%v), want %q", out, err, want)
	}
}

// TestImportNextToOldGenproto: a module that requires the 2023 genproto monolith and uses
// packages later monoliths dropped (testdata/oldgenprotouser: monitoring/v3, pubsub/v1) adds
// obroute's driver: go mod tidy and go build succeed, and the program runs. With the newest
// monolith in obroute's go.mod, tidy failed: the selected monolith no longer holds them.
func TestImportNextToOldGenproto(t *testing.T) {
	dir := throwawayModule(t, "oldgenprotouser", "google.golang.org/genproto v0.0.0-20230110181048-76db0878b65f", "google.golang.org/grpc v1.56.3")
	exe := filepath.Join(t.TempDir(), "oldgenprotouser")
	goTool(t, dir, nil, "build", "-o", exe, ".")
	out, err := exec.Command(exe).CombinedOutput()
	if want := "true true [mysql obroute]\n"; err != nil || string(out) != want {
		t.Errorf("the program printed %q (%v), want %q", out, err, want)
	}
}

// TestGooseThroughObroute: an application whose tests import pressly/goose v3 and obroute's
// driver (testdata/gooseuser) tidies and builds, and its tests pass: goose's status, up and
// down through obroute with a plain and a routed DSN, SQL migrations in and out of
// transactions and Go migrations, the schema and goose's versions checked on the backends
// after each step (see testdata/gooseuser/goose_test.go).
func TestGooseThroughObroute(t *testing.T) {
	dir := throwawayModule(t, "gooseuser", "github.com/pressly/goose/v3 "+newestGoose)
	bs := sqltest.Shared(t, "plain", "hot", "cold")
	out := goTool(t, dir, []string{
		"OBROUTE_GOOSE_PLAIN_DSN=" + bs[0].DSN,
		"OBROUTE_GOOSE_HOT_DSN=" + bs[1].DSN,
		"OBROUTE_GOOSE_COLD_DSN=" + bs[2].DSN,
	}, "test", "-count=1", "-v", "-timeout=5m", ".")
	for _, test := range []string{"TestOpenDBWithDriver", "TestGoose", "TestGoose/plain", "TestGoose/routed"} {
		if !strings.Contains(out, "--- PASS: "+test+" ") {
			t.Errorf("the module's tests did not report %s as passed:\n%s", test, out)
		}
	}
}

// TestModuleRequirements: go mod tidy leaves obroute's go.mod and go.sum as they are, and
// obroute requires exactly the first genproto monolith from after the split of googleapis/rpc
// (kept by the import of field_mask above; a newer one drops packages that modules still use:
// TestImportNextToOldGenproto), so that no module importing obroute selects an older one:
// dolthub's vitess, go-mysql-server and go-kit, in their newest versions, still require
// monoliths from 2019 to 2023, and so may anything old in an importing module's graph (GORM's
// test module has one: scripts/gorm-parity.sh failed with "ambiguous import" without it).
func TestModuleRequirements(t *testing.T) {
	root := checkout(t)
	goTool(t, root, nil, "mod", "tidy", "-diff")
	required := ""
	for _, edge := range strings.Split(goTool(t, root, nil, "mod", "graph"), "\n") {
		if from, to, ok := strings.Cut(edge, " "); ok && from == "github.com/obroute/obroute" {
			if path, version, _ := strings.Cut(to, "@"); path == "google.golang.org/genproto" {
				required = version
			}
		}
	}
	if required != splitGenproto {
		t.Errorf("go mod graph: obroute requires google.golang.org/genproto %q, want %s, the first version without googleapis/rpc (an older one holds it; a newer one lacks packages modules still import)", required, splitGenproto)
	}
	checkGenproto(t, root)
}
