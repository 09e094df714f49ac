package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/obroute/obroute/connector"
)

const checkUsage = `obroute check: how a workload would route through obroute, before switching

Reads a workload and the obroute configuration and routes every statement as obroute would,
without sending anything to a backend: each connection of a log is a new client session fed
its statements in their order, so that transactions, SET, USE and temporary tables are followed
as obroute follows them (connector.WithDryRun: the connector's own analysis, routing and session
bookkeeping). Prints a summary by route class and the statement templates (statements that
differ only in literal values, as obroute's parse cache groups them), the most frequent first,
each with its count, class, backends and query level, and for a refusal its reason and how to
rewrite the statement. Only the shard metadata is read from its backend, unless -metadata
gives it. Exit status 1 when any statement would be refused or its route cannot be decided
without a server (unknown, needs_values, truncated), or when the log does not fix where a
statement ends (a quote left unbalanced, a sql_mode it does not say: listed): a CI gate; or on
an error.

Inputs:
  LOG              a general query log (general_log=1, log_output=FILE), a slow query log
                   (slow_query_log=1 with long_query_time=0, so that it holds every statement),
                   or a file of statements (ended by ";", the mysql client's DELIMITER followed;
                   or one per line when no line ends with ";"); "-" reads standard input
  -digests DSN     instead of LOG: performance_schema.events_statements_summary_by_digest of
                   the server at DSN (a go-sql-driver DSN, user:password@tcp(host:3306)/), each
                   digest routed once in a client session of its own and counted COUNT_STAR
                   times; the ? of its text are unknown values, so a time-sharded table's route
                   shows as needs_values

Classes: default, static (a static table route), forced (transaction, temporary table,
previous statement's session, backend hint; SET and USE), cached (route not computable),
hot_only, split, cold_only (history store only), shadow, session (BEGIN, COMMIT, ROLLBACK:
kept by obroute itself), unknown (a SET of a value only a server computes, such as SET
time_zone = @@global.time_zone, and every later statement of its client session),
refused (by reason, as Stats().Rejections names them). Stats().Routes
counts static as default, and a statement refused once routed (routed_class in -json) in the
class it was routed to.

Usage:
  obroute check (-config FILE | -dsn DSN) [flags] LOG
  obroute check (-config FILE | -dsn DSN) [flags] -digests DSN

Flags:
  -config FILE        obroute YAML configuration
  -dsn DSN            obroute DSN (obroute:backends.hot.dsn=…;…), instead of -config
  -metadata FILE      shard metadata as CSV or YAML (as obroute explain); default: read the
                      configured metadata table from its backend
  -now TIME           the clock for the hot window: 2006-01-02, "2006-01-02 15:04:05" (UTC) or
                      RFC 3339; default: now
  -format F           general, slow or statements; default: read from LOG's first lines
  -time-zone ZONE     the time_zone the workload's server sessions started with (its server's
                      global time_zone, or its DSN's): '+08:00' or a name such as Asia/Shanghai;
                      each client session starts with it, as if it had run SET time_zone (the
                      session's own SET time_zone still wins). It decides what NOW() means and,
                      for a TIMESTAMP shard key, which instant a literal is. Default: the metadata
                      backend's, read with the metadata; with -metadata, unknown (NOW() is read
                      as any wall clock within 14 hours of UTC, a TIMESTAMP literal likewise)
  -user NAME          only the client sessions of this user (general and slow logs)
  -schema NAME        with -digests: only the digests of this schema
  -json               print the report as JSON (every template)
  -top N              templates in the text table (default 50; 0: all)
  -wide               do not shorten templates in the text table
  -quiet              no progress on standard error
  -workers N          client sessions are routed by N goroutines (default: the number of CPUs)
  -max-sessions N     open client sessions at most (default 20000): a slow log never says when
                      a connection ends; past N, the least recently used quarter is closed
  -max-templates N    distinct templates in the table at most (default 100000); the statements
                      of the others are counted in the summary

Examples:
  obroute check -config obroute.yaml /var/lib/mysql/general.log
  obroute check -config obroute.yaml -metadata shards.csv -now 2025-03-15 -user app slow.log
  zcat general.log.gz | obroute check -config obroute.yaml -json - > report.json
  obroute check -config obroute.yaml -digests 'monitor:pw@tcp(10.0.0.1:3306)/' -schema shop
`

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("check", checkUsage, stdout)
	cfgFile := fs.String("config", "", "obroute YAML configuration")
	dsn := fs.String("dsn", "", "obroute DSN")
	metaFile := fs.String("metadata", "", "shard metadata file (CSV or YAML)")
	nowText := fs.String("now", "", "the clock for the hot window")
	format := fs.String("format", "", "general, slow or statements")
	timeZone := fs.String("time-zone", "", "the time_zone the workload's server sessions started with")
	digests := fs.String("digests", "", "read the statement digests of the server at this DSN")
	user := fs.String("user", "", "only this user's client sessions")
	schema := fs.String("schema", "", "with -digests: only this schema's digests")
	asJSON := fs.Bool("json", false, "print JSON")
	top := fs.Int("top", 50, "templates in the text table")
	wide := fs.Bool("wide", false, "do not shorten templates")
	quiet := fs.Bool("quiet", false, "no progress")
	workers := fs.Int("workers", 0, "goroutines routing client sessions")
	maxSessions := fs.Int("max-sessions", 20000, "open client sessions at most")
	maxTemplates := fs.Int("max-templates", 100000, "distinct templates at most")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *digests == "" && fs.NArg() != 1:
		return fmt.Errorf("give one log file (or -digests DSN), got %d arguments; see obroute help check", fs.NArg())
	case *digests != "" && fs.NArg() != 0:
		return errors.New("give a log file or -digests DSN, not both")
	case *digests != "" && *user != "":
		return errors.New("-user reads a log's connections; digests have none (-schema keeps one schema's)")
	case *digests == "" && *schema != "":
		return errors.New("-schema goes with -digests")
	case *maxSessions < 1 || *maxTemplates < 1:
		return errors.New("-max-sessions and -max-templates must be at least 1")
	}
	if err := checkTimeZone(*timeZone); err != nil {
		return err
	}
	c, err := routeConnector(*cfgFile, *dsn, *nowText, *metaFile, connector.WithDryRun(), connector.WithObserver(checkObserver{}))
	if err != nil {
		return err
	}
	defer c.Close()

	in := checkInput{}
	var (
		read   func(sink) error
		stats  inputStats
		counts *countingReader
		size   int64
	)
	if *digests != "" {
		in.Format, in.Source = "digests", "performance_schema.events_statements_summary_by_digest"
		read = func(out sink) error { return readDigests(ctx, *digests, *schema, out) }
	} else {
		name := fs.Arg(0)
		var f io.Reader = os.Stdin
		in.Source = "standard input"
		if name != "-" {
			file, err := os.Open(name)
			if err != nil {
				return err
			}
			defer file.Close()
			if st, err := file.Stat(); err == nil && st.Mode().IsRegular() {
				size = st.Size()
			}
			f, in.Source = file, name
		}
		counts = &countingReader{r: f}
		br := bufio.NewReaderSize(counts, 1<<20)
		if in.Format, err = logFormat(*format, br); err != nil {
			return err
		}
		switch in.Format {
		case "general_log":
			read = func(out sink) error { return readGeneralLog(br, &stats, out) }
		case "slow_log":
			read = func(out sink) error { return readSlowLog(br, out) }
		default:
			read = func(out sink) error { return readStatements(br, out) }
		}
	}
	defer tuneGC()()
	copts := checkOptions{user: *user, digests: *digests != "", maxSessions: *maxSessions, maxTemplate: *maxTemplates, timeZone: *timeZone, connects: in.Format == "general_log"}
	if in.Format == "statements" {
		*workers = 1 // one client session
	}
	start := time.Now()
	d := newDispatcher(ctx, c, *workers, copts)
	var stop func()
	if !*quiet {
		stop = showProgress(stderr, isTerminal(stderr), start, counts, size, d)
	}
	err = read(func(e entry) error {
		if e.kind == entryStatement && ctx.Err() != nil {
			return ctx.Err()
		}
		return d.add(e)
	})
	if errors.Is(err, errWorkerStopped) {
		err = nil // finish returns the worker's error
	}
	if ferr := d.finish(); ferr != nil {
		err = ferr
	}
	if stop != nil {
		stop()
	}
	if err != nil {
		return err
	}
	if counts != nil {
		in.Bytes = counts.n.Load()
	}
	in.Ignored = stats.ignored
	r := buildReport(in, d.workers, time.Since(start))
	if *asJSON {
		err = r.writeJSON(stdout)
	} else {
		err = r.writeText(stdout, *top, *wide)
	}
	if err != nil {
		return err
	}
	if v := r.verdict(); v != "" {
		return errors.New(v)
	}
	return nil
}

// checkTimeZone checks a -time-zone value: an offset ('+08:00', '-05:30') or a named zone of
// the machine's zone database (as the server's time-zone tables hold it).
func checkTimeZone(zone string) error {
	if zone == "" {
		return nil
	}
	if m := offsetZoneText.FindStringSubmatch(zone); m != nil {
		if h, _ := strconv.Atoi(m[1]); h <= 14 {
			return nil
		}
	}
	if strings.EqualFold(zone, "system") {
		return errors.New("-time-zone SYSTEM: give the zone the server's system zone is ('+00:00', 'Europe/Berlin')")
	}
	if _, err := time.LoadLocation(zone); err != nil || zone == "Local" {
		return fmt.Errorf("-time-zone %q: give an offset such as +08:00 or a zone name such as Asia/Shanghai", zone)
	}
	return nil
}

var offsetZoneText = regexp.MustCompile(`^[+-](\d{1,2}):[0-5]\d$`)

// tuneGC lets the heap grow to 5 times the live data between collections (GOGC=400) within a
// soft limit of 128 MiB, unless GOGC or GOMEMLIMIT say otherwise: check keeps little live data
// (its templates, client sessions and the parse cache: some tens of MiB) and allocates much per
// statement, and collections at the default pace cost about a tenth of its time. The returned
// function restores the settings.
func tuneGC() (restore func()) {
	percent, limit := -2, int64(-1)
	if os.Getenv("GOGC") == "" {
		percent = debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		limit = debug.SetMemoryLimit(128 << 20)
	}
	return func() {
		if percent != -2 {
			debug.SetGCPercent(percent)
		}
		if limit >= 0 {
			debug.SetMemoryLimit(limit)
		}
	}
}

// routeConnector builds the connector of explain and check: the configuration of -config or
// -dsn, the clock of -now, the shard metadata of -metadata (and then nothing read back from the
// backends: connector.WithoutReadBack), and opts.
func routeConnector(cfgFile, dsn, nowText, metaFile string, opts ...connector.Option) (*connector.Connector, error) {
	cfg, err := loadConfig(cfgFile, dsn)
	if err != nil {
		return nil, err
	}
	if nowText != "" {
		now, err := parseNow(nowText)
		if err != nil {
			return nil, err
		}
		opts = append(opts, connector.WithClock(func() time.Time { return now }))
	}
	if metaFile != "" {
		src, err := readMetadataFile(metaFile)
		if err != nil {
			return nil, err
		}
		// Nothing reaches the backends: not even the facts read back with the metadata.
		opts = append(opts, connector.WithMetadataSource(src), connector.WithoutReadBack())
	}
	return connector.New(cfg, opts...)
}

// logFormat returns the format of -format, or the one LOG's first 64 KiB show: the first line
// past the server's header (which both logs start with) that starts an entry decides — a slow
// log's "# Time:" or "# User@Host:", a general log's entry line — else statements. Only the
// first counts: a statement's text in a log may hold lines that look like the other log's.
func logFormat(flag string, br *bufio.Reader) (string, error) {
	switch flag {
	case "general":
		return "general_log", nil
	case "slow":
		return "slow_log", nil
	case "statements":
		return "statements", nil
	case "":
	default:
		return "", fmt.Errorf("-format %q: give general, slow or statements", flag)
	}
	head, _ := br.Peek(64 << 10)
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		switch {
		case bytes.HasPrefix(line, []byte("# User@Host:")), bytes.HasPrefix(line, []byte("# Time:")):
			return "slow_log", nil
		case serverHeader(line), headerTail(line):
		default:
			if _, _, _, ok := generalEntry(line); ok {
				return "general_log", nil
			}
		}
	}
	return "statements", nil
}

// showProgress prints, every 2 s on w, the bytes read and the statements routed per second;
// on a terminal one line redrawn in place. The returned function stops it.
func showProgress(w io.Writer, tty bool, start time.Time, counts *countingReader, size int64, d *dispatcher) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		drawn := false
		for {
			select {
			case <-done:
				if drawn && tty {
					fmt.Fprintln(w)
				}
				return
			case now := <-tick.C:
				line := progressLine(now.Sub(start), counts, size, d.routed())
				if tty {
					fmt.Fprintf(w, "\r%s", line)
				} else {
					fmt.Fprintln(w, line)
				}
				drawn = true
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// progressLine is one progress report: "check: 512.0 MiB of 1.00 GiB (50%), 2 345 678
// statements, 81 234 statements/s, 31 s left".
func progressLine(elapsed time.Duration, counts *countingReader, size int64, routed int64) string {
	rate := float64(routed) / elapsed.Seconds()
	s := fmt.Sprintf("check: %s statements, %s statements/s", group(routed), group(int64(rate)))
	if counts == nil {
		return s
	}
	n := counts.n.Load()
	read := sizeText(n)
	if size > 0 {
		read += fmt.Sprintf(" of %s (%.0f%%)", sizeText(size), percent(n, size))
		if n > 0 && n < size {
			left := time.Duration(float64(elapsed) * float64(size-n) / float64(n))
			s += fmt.Sprintf(", %s left", left.Round(time.Second))
		}
	}
	return "check: " + read + ", " + s[len("check: "):]
}
