// Command testprogress turns `go test -json` into a readable progress report, package by
// package as each one finishes: a line per package (ok, FAIL, no tests), the output of every
// failed test, and every minute the packages still running. It exits 1 when a test or a build
// failed, so `go test -json ./... | go run ./internal/testprogress` fails like `go test ./...`.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent).
type event struct {
	Time        time.Time
	Action      string
	Package     string
	ImportPath  string // build events
	Test        string
	Elapsed     float64
	Output      string
	FailedBuild string
}

// pkg is what is known of one package's run.
type pkg struct {
	started          time.Time
	passed, skipped  int
	failed           []string
	output           map[string]*strings.Builder // by test ("" for the package itself)
	done             bool
	buildFailed      bool
	failedTestOutput strings.Builder
}

type report struct {
	mu     sync.Mutex
	out    io.Writer
	pkgs   map[string]*pkg
	build  map[string]*strings.Builder // build output by import path
	failed bool
}

func main() {
	r := &report{out: os.Stdout, pkgs: map[string]*pkg{}, build: map[string]*strings.Builder{}}
	stop := make(chan struct{})
	go r.heartbeat(stop, time.Minute)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1024*1024), 64*1024*1024)
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			fmt.Fprintln(r.out, sc.Text()) // not an event: go's own message
			continue
		}
		r.handle(ev)
	}
	close(stop)
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		os.Exit(2)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for path, b := range r.build {
		if p := r.pkgs[path]; p == nil || p.buildFailed {
			fmt.Fprintf(r.out, "build output of %s:\n%s", path, b)
		}
	}
	if r.failed {
		os.Exit(1)
	}
}

func (r *report) get(name string) *pkg {
	p := r.pkgs[name]
	if p == nil {
		p = &pkg{started: time.Now(), output: map[string]*strings.Builder{}}
		r.pkgs[name] = p
	}
	return p
}

func (r *report) handle(ev event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev.Action {
	case "build-output":
		appendOutput(r.build, ev.ImportPath, ev.Output)
		return
	case "build-fail":
		r.failed = true
		return
	}
	if ev.Package == "" {
		return
	}
	p := r.get(ev.Package)
	switch ev.Action {
	case "start":
		p.started = time.Now()
	case "output":
		appendOutput(p.output, ev.Test, ev.Output)
	case "pass", "fail", "skip":
		if ev.Test != "" {
			r.testDone(p, ev)
			return
		}
		r.packageDone(p, ev)
	}
}

func (r *report) testDone(p *pkg, ev event) {
	switch ev.Action {
	case "pass":
		p.passed++
	case "skip":
		p.skipped++
	case "fail":
		p.failed = append(p.failed, ev.Test)
		if b := p.output[ev.Test]; b != nil {
			p.failedTestOutput.WriteString(b.String())
		}
	}
	delete(p.output, ev.Test)
}

func (r *report) packageDone(p *pkg, ev event) {
	p.done = true
	took := time.Duration(ev.Elapsed * float64(time.Second)).Round(100 * time.Millisecond)
	counts := fmt.Sprintf("%d passed", p.passed)
	if p.skipped > 0 {
		counts += fmt.Sprintf(", %d skipped", p.skipped)
	}
	switch {
	case ev.Action == "skip":
		fmt.Fprintf(r.out, "--   %s (no tests)\n", ev.Package)
	case ev.Action == "pass":
		fmt.Fprintf(r.out, "ok   %s %s (%s)\n", ev.Package, took, counts)
	default:
		r.failed = true
		p.buildFailed = ev.FailedBuild != ""
		fmt.Fprintf(r.out, "FAIL %s %s (%s, %d failed: %s)\n", ev.Package, took, counts, len(p.failed), strings.Join(p.failed, " "))
		fmt.Fprint(r.out, indent(p.failedTestOutput.String()))
		if b := p.output[""]; b != nil {
			fmt.Fprint(r.out, indent(b.String()))
		}
	}
	p.output = nil
}

// heartbeat names the packages still running, every interval, so that a long run shows life.
func (r *report) heartbeat(stop <-chan struct{}, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		r.mu.Lock()
		var running []string
		for name, p := range r.pkgs {
			if !p.done {
				running = append(running, fmt.Sprintf("%s (%s, %d tests done)", name, time.Since(p.started).Round(time.Second), p.passed+p.skipped+len(p.failed)))
			}
		}
		slices.Sort(running)
		if len(running) > 0 {
			fmt.Fprintf(r.out, "...  still running: %s\n", strings.Join(running, ", "))
		}
		r.mu.Unlock()
	}
}

// appendOutput adds text to the output kept under key.
func appendOutput(m map[string]*strings.Builder, key, text string) {
	b := m[key]
	if b == nil {
		b = &strings.Builder{}
		m[key] = b
	}
	b.WriteString(text)
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return "    " + strings.Join(lines, "\n    ") + "\n"
}
