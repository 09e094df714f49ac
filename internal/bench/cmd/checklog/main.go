// Command checklog measures `obroute check` on a synthetic MariaDB general log (package
// internal/bench/checklog: realistic templates, fresh literals, many interleaved client
// sessions): it writes the log once, builds obroute, runs
//
//	obroute check -config examples/obroute.yaml -metadata examples/shards.csv -now 2025-03-15 -json LOG
//
// several times under /usr/bin/time -v, and prints each run's wall time, CPU time (user +
// system), peak resident memory and throughput, then their minimum, median and maximum. On a
// machine shared with other work the wall time mostly measures the others: the CPU time less so. Run it from the repository's root:
//
//	go run ./internal/bench/cmd/checklog                    # 1 GiB, 5 runs: the README's figures
//	go run ./internal/bench/cmd/checklog -size 64MiB -runs 3
//
// The goal is a 1 GB log in at most 60 s and 256 MiB. It exits with status 1 when a run fails
// or routes another number of statements than the log holds, not when the goal is missed.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/obroute/obroute/internal/bench/checklog"
)

func main() {
	size := flag.String("size", "1GiB", "log size: bytes, or with KiB, MiB, GiB, KB, MB, GB")
	runs := flag.Int("runs", 5, "runs of obroute check")
	logPath := flag.String("log", "", "the log file (default: in the temporary directory, named by size and seed; reused when present)")
	sessions := flag.Int("sessions", 2000, "client sessions open at once")
	seed := flag.Uint64("seed", 1, "the log's random seed")
	workers := flag.Int("workers", 0, "obroute check -workers (0: its default)")
	flag.Parse()
	if err := measure(*size, *runs, *logPath, *sessions, *seed, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "checklog:", err)
		os.Exit(1)
	}
}

func measure(sizeText string, runs int, logPath string, sessions int, seed uint64, workers int) error {
	size, err := parseSize(sizeText)
	if err != nil {
		return err
	}
	if _, err := os.Stat("examples/obroute.yaml"); err != nil {
		return errors.New("run it from the repository's root (it uses examples/obroute.yaml and examples/shards.csv)")
	}
	if logPath == "" {
		logPath = filepath.Join(os.TempDir(), fmt.Sprintf("obroute-checklog-%d-s%d-seed%d.log", size, sessions, seed))
	}
	statements, err := ensureLog(logPath, size, sessions, seed)
	if err != nil {
		return err
	}
	st, err := os.Stat(logPath)
	if err != nil {
		return err
	}
	bin := filepath.Join(os.TempDir(), "obroute-checklog-bin")
	build := exec.Command("go", "build", "-o", bin, "./cmd/obroute")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/obroute: %w", err)
	}
	fmt.Printf("log %s: %.2f GiB, %d statements\n", logPath, float64(st.Size())/(1<<30), statements)
	args := []string{"-v", bin, "check", "-config", "examples/obroute.yaml", "-metadata", "examples/shards.csv", "-now", "2025-03-15", "-json", "-quiet"}
	if workers > 0 {
		args = append(args, "-workers", strconv.Itoa(workers))
	}
	args = append(args, logPath)
	fmt.Printf("command: /usr/bin/time %s\n", strings.Join(args, " "))
	var walls, rss, cpus []float64
	for i := range runs {
		cmd := exec.Command("/usr/bin/time", args...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) { // 1: some statements are refused
			return fmt.Errorf("run %d: %w\n%s", i+1, err, errOut.String())
		}
		var report struct {
			Input struct {
				Statements int64 `json:"statements"`
			} `json:"input"`
		}
		if err := json.Unmarshal(out.Bytes(), &report); err != nil {
			return fmt.Errorf("run %d: the report is not JSON: %w\n%s", i+1, err, errOut.String())
		}
		if report.Input.Statements != statements {
			return fmt.Errorf("run %d: obroute check routed %d statements, the log has %d", i+1, report.Input.Statements, statements)
		}
		wall, peak, err := timeFigures(errOut.String())
		if err != nil {
			return fmt.Errorf("run %d: %w", i+1, err)
		}
		cpu := cpuSeconds(errOut.String())
		walls, rss, cpus = append(walls, wall), append(rss, peak), append(cpus, cpu)
		fmt.Printf("run %d: %6.1f s wall, %6.1f s CPU (user+sys), %6.1f MiB peak RSS, %5.1f MiB/s, %7.0f statements/s\n",
			i+1, wall, cpu, peak, float64(st.Size())/(1<<20)/wall, float64(statements)/wall)
	}
	fmt.Printf("wall time: min %.1f s, median %.1f s, max %.1f s (goal: 60 s for 1 GB)\n", minOf(walls), median(walls), slices.Max(walls))
	fmt.Printf("CPU time:  min %.1f s, median %.1f s, max %.1f s (on 2 idle cores the wall time is at least half of it)\n", minOf(cpus), median(cpus), slices.Max(cpus))
	fmt.Printf("peak RSS:  min %.1f MiB, median %.1f MiB, max %.1f MiB (goal: 256 MiB)\n", minOf(rss), median(rss), slices.Max(rss))
	if out, err := exec.Command("uptime").Output(); err == nil {
		fmt.Printf("load at the end: %s", out)
	}
	return nil
}

// ensureLog writes the log unless a file of that name is there, and returns its statements
// (written beside it in LOG.statements).
func ensureLog(path string, size int64, sessions int, seed uint64) (int64, error) {
	countFile := path + ".statements"
	if b, err := os.ReadFile(countFile); err == nil {
		if _, err := os.Stat(path); err == nil {
			return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	st, err := checklog.Write(f, checklog.Options{Size: size, Sessions: sessions, Seed: seed})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	fmt.Printf("wrote %s in %s: %d statements, %d client sessions\n", path, time.Since(start).Round(time.Millisecond), st.Statements, st.Sessions)
	return st.Statements, os.WriteFile(countFile, []byte(strconv.FormatInt(st.Statements, 10)), 0o644)
}

var (
	wallLine = regexp.MustCompile(`Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)`)
	rssLine  = regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`)
	userLine = regexp.MustCompile(`User time \(seconds\): ([\d.]+)`)
	sysLine  = regexp.MustCompile(`System time \(seconds\): ([\d.]+)`)
)

// cpuSeconds reads the user and system CPU time from /usr/bin/time -v's output.
func cpuSeconds(s string) float64 {
	var total float64
	for _, re := range []*regexp.Regexp{userLine, sysLine} {
		if m := re.FindStringSubmatch(s); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			total += v
		}
	}
	return total
}

// timeFigures reads the wall time (s) and peak RSS (MiB) from /usr/bin/time -v's output.
func timeFigures(s string) (wall, rssMiB float64, err error) {
	m := wallLine.FindStringSubmatch(s)
	r := rssLine.FindStringSubmatch(s)
	if m == nil || r == nil {
		return 0, 0, fmt.Errorf("no figures in /usr/bin/time's output:\n%s", s)
	}
	var h float64
	if m[1] != "" {
		h, _ = strconv.ParseFloat(m[1], 64)
	}
	mins, _ := strconv.ParseFloat(m[2], 64)
	secs, _ := strconv.ParseFloat(m[3], 64)
	kb, _ := strconv.ParseFloat(r[1], 64)
	return h*3600 + mins*60 + secs, kb / 1024, nil
}

func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		n      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}}
	for _, u := range units {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int64(f * float64(u.n)), err
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

func minOf(v []float64) float64 { return slices.Min(v) }

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
