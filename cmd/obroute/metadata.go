package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"gopkg.in/yaml.v3"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/tiering"
)

const metadataUsage = `obroute metadata: shard metadata jobs

Commands:
  verify     compare shard_metadata with the data: for every table of every time table, the
             earliest and latest shard-key value on the backend its row places it on. Reports
             rows outside their table's span (routing hides them), tables missing on their
             backend, overlapping spans (a row in both is counted twice), gaps and a present
             no table covers (INSERTs there are refused). Exits with status 1 when a row would
             be hidden or counted twice, or a table cannot be reached.
  prepare    create the physical tables of the coming periods on the hot backend (CREATE TABLE
             … LIKE the newest one) and their metadata rows, so that the period after the
             current one has its table before it starts; idempotent, run it daily. Periods are
             read from the newest table's name: _YYYYMM, _YYYY_MM (months), _YYYYMMDD,
             _YYYY_MM_DD (days), _YYYY (years).
  mark-hot   the daily job of the hot window: sets is_hot = 1 on the rows whose max_time is
             inside the hot window, 0 on the others (in one transaction, writing only rows
             that change), and prints the counts. With -config (or an obroute -dsn naming
             time tables) it first runs prepare, then uses each time table's own window and
             gives a changing row without location the backend it lives on, so that only a
             move (obroute migrate) changes where a table is read. Routing follows after the
             next metadata refresh of each obroute process.

Usage:
  obroute metadata verify (-config FILE | -dsn DSN) [-now TIME]
  obroute metadata prepare (-config FILE | -dsn DSN) [-table LOGICAL] [-now TIME]
  obroute metadata mark-hot (-config FILE | -dsn DSN) [-now TIME]
  obroute metadata mark-hot -dsn DSN (-hot-days N | -hot-months N) [-table NAME] [-now TIME]

Flags:
  -config FILE     obroute YAML configuration (backends, time_tables, metadata)
  -dsn DSN         obroute DSN (obroute:backends.hot.dsn=…;time_tables.orders.shard_key=…); for mark-hot
                   with -hot-days/-hot-months, the go-sql-driver DSN of the backend holding
                   the metadata table (user:password@tcp(host:3306)/db)
  -table NAME      prepare: only this time table; mark-hot -dsn: the metadata table, "table"
                   or "schema.table" (default shard_metadata)
  -hot-days N      hot window: the last N calendar days, today included
  -hot-months N    hot window: the current month plus N before it
  -now TIME        the clock: 2006-01-02, "2006-01-02 15:04:05" (UTC) or RFC 3339; default: now

Times are counted on the calendar of the shard-key times: UTC, or the DSN's loc= when it
sets one (obroute reads the times the same way), whatever the machine's zone.

Examples:
  obroute metadata verify -config /etc/obroute.yaml
  obroute metadata prepare -config /etc/obroute.yaml
  obroute metadata mark-hot -config /etc/obroute.yaml
  obroute metadata mark-hot -dsn 'app:secret@tcp(10.0.0.1:3306)/shop' -hot-months 2
`

func runMetadata(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stdout, metadataUsage)
		return errors.New("missing command: verify, prepare or mark-hot")
	}
	switch args[0] {
	case "mark-hot":
		return runMarkHot(ctx, args[1:], stdout)
	case "verify":
		return runVerify(ctx, args[1:], stdout)
	case "prepare":
		return runPrepare(ctx, args[1:], stdout)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, metadataUsage)
		return nil
	}
	return fmt.Errorf("unknown command %q: the metadata commands are: verify, prepare, mark-hot", args[0])
}

// errFaults makes the exit status 1 after a report was printed.
var errFaults = errors.New("faults found")

func runVerify(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("metadata verify", metadataUsage, stdout)
	s, now, err := addStoreFlags(fs).parseOpen(fs, args)
	if err != nil {
		return err
	}
	defer s.Close()
	r, err := s.Verify(ctx, now)
	if err != nil {
		return err
	}
	if err := tiering.WriteReport(stdout, r); err != nil {
		return err
	}
	if !r.OK() {
		return fmt.Errorf("%w: %d fault(s)", errFaults, r.Faults())
	}
	return nil
}

func runPrepare(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("metadata prepare", metadataUsage, stdout)
	sf := addStoreFlags(fs)
	table := fs.String("table", "", "only this time table")
	s, now, err := sf.parseOpen(fs, args)
	if err != nil {
		return err
	}
	defer s.Close()
	return prepare(ctx, s, now, *table, stdout)
}

// prepare runs Store.Prepare and prints what it did.
func prepare(ctx context.Context, s *tiering.Store, now time.Time, table string, stdout io.Writer) error {
	done, err := s.Prepare(ctx, now, table)
	for _, p := range done {
		if p.Widened != "" {
			fmt.Fprintf(stdout, "raised max_time of %s from %s to %s to meet the next table\n", p.Widened,
				p.WidenedFrom.Format(time.DateTime), p.Table.Min.Add(-time.Second).Format(time.DateTime))
		}
		fmt.Fprintf(stdout, "created %s on %s for %s … %s\n", p.Table.Name, p.Backend, p.Table.Min.Format(time.DateTime), p.Table.Max.Format(time.DateTime))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "prepare: %d table(s) created; the period after %s has its table\n", len(done), now.Format(time.DateOnly))
	return nil
}

// parseNoArgs parses flags and refuses positional arguments.
func parseNoArgs(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q; see obroute help metadata", fs.Arg(0))
	}
	return nil
}

func runMarkHot(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("metadata mark-hot", metadataUsage, stdout)
	sf := addStoreFlags(fs)
	dsn, nowText := sf.dsn, sf.now
	table := fs.String("table", metadata.DefaultTable, "metadata table")
	days := fs.Int("hot-days", 0, "hot window in days")
	months := fs.Int("hot-months", 0, "hot window in months before the current one")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *sf.config != "" || *days == 0 && *months == 0 && strings.HasPrefix(*dsn, config.Prefix) {
		return markHotStore(ctx, sf, stdout)
	}
	if *dsn == "" {
		return errors.New("no -dsn: give the go-sql-driver DSN of the backend holding the metadata table")
	}
	window := metadata.HotWindow{Days: *days, Months: *months}
	if err := window.Validate(); err != nil {
		return fmt.Errorf("%w (flags -hot-days and -hot-months)", err)
	}
	now := time.Now()
	if *nowText != "" {
		var err error
		if now, err = parseNow(*nowText); err != nil {
			return err
		}
	}
	mc, err := mysql.ParseDSN(*dsn)
	if err != nil {
		return fmt.Errorf("-dsn is not a go-sql-driver DSN (user:password@tcp(host:3306)/db): %v", err)
	}
	now = wallClock(now, mc.Loc)
	conn, err := mysql.NewConnector(mc)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	res, err := metadata.MarkHot(ctx, db, *table, window, now)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "hot window %s from %s: %d table(s) became hot, %d became cold; now %d hot, %d cold\n",
		window, res.Boundary.UTC().Format(time.DateTime), res.BecameHot, res.BecameCold, res.Hot, res.Cold)
	return nil
}

// markHotStore is mark-hot with the obroute configuration: prepare, then each time table's window.
func markHotStore(ctx context.Context, sf storeFlags, stdout io.Writer) error {
	s, now, err := sf.open()
	if err != nil {
		return err
	}
	defer s.Close()
	if err := prepare(ctx, s, now, "", stdout); err != nil {
		return err
	}
	marked, err := s.MarkHot(ctx, now)
	if err != nil {
		return err
	}
	hot := 0
	for _, m := range marked {
		if m.Kept {
			fmt.Fprintf(stdout, "%s kept is_hot: without a location column the change would move its route before its data; move it with obroute migrate\n", m.Table)
			continue
		}
		pinned := ""
		if m.Pinned != "" {
			pinned = fmt.Sprintf(" (location set to %s, where it is)", m.Pinned)
		}
		state := "cold"
		if m.Hot {
			state, hot = "hot", hot+1
		}
		fmt.Fprintf(stdout, "%s became %s%s\n", m.Table, state, pinned)
	}
	cold := 0
	for _, m := range marked {
		if !m.Kept && !m.Hot {
			cold++
		}
	}
	fmt.Fprintf(stdout, "mark-hot: %d table(s) became hot, %d became cold\n", hot, cold)
	return nil
}

// wallClock returns t's wall clock in loc (UTC when nil), labelled UTC: the form of
// shard_metadata's times, so the hot window is counted on their calendar and not on the
// machine's (time.Now is in the local zone) or -now's offset.
func wallClock(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	t = t.In(loc)
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// metadataRow is one row of a metadata file.
type metadataRow struct {
	Table    string `yaml:"table_name"`
	Min      string `yaml:"min_time"`
	Max      string `yaml:"max_time"`
	Hot      bool   `yaml:"is_hot"`
	Location string `yaml:"location"`
}

// readMetadataFile reads shard metadata from a CSV or YAML file (by extension).
func readMetadataFile(path string) (metadata.StaticSource, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-metadata: %w", err)
	}
	var rows []metadataRow
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		rows, err = parseMetadataCSV(data)
	case ".yaml", ".yml":
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err = dec.Decode(&rows); errors.Is(err, io.EOF) {
			err = nil
		}
	default:
		return nil, fmt.Errorf("-metadata %s: name a .csv or .yaml file", path)
	}
	if err != nil {
		return nil, fmt.Errorf("-metadata %s: %w", path, err)
	}
	src := make(metadata.StaticSource, 0, len(rows))
	for i, r := range rows {
		t := metadata.Table{Name: r.Table, Hot: r.Hot, Location: r.Location}
		if t.Min, err = parseNow(r.Min); err == nil {
			t.Max, err = parseNow(r.Max)
		}
		if err != nil || r.Table == "" {
			return nil, fmt.Errorf("-metadata %s: row %d (%s): needs table_name, and min_time and max_time written 2025-01-31 or \"2025-01-31 23:59:59\"", path, i+1, r.Table)
		}
		src = append(src, t)
	}
	return src, nil
}

// parseMetadataCSV reads a CSV file whose header names the columns table_name, min_time,
// max_time, is_hot and optionally location, in any order.
func parseMetadataCSV(data []byte) ([]metadataRow, error) {
	records, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, errors.New("empty file: the first line names the columns table_name,min_time,max_time,is_hot[,location]")
	}
	col := map[string]int{}
	for i, name := range records[0] {
		col[strings.ToLower(strings.TrimSpace(name))] = i
	}
	for _, need := range []string{"table_name", "min_time", "max_time", "is_hot"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("the header has no column %s: the first line names the columns table_name,min_time,max_time,is_hot[,location]", need)
		}
	}
	var rows []metadataRow
	for n, rec := range records[1:] {
		hot, err := strconv.ParseBool(strings.TrimSpace(rec[col["is_hot"]]))
		if err != nil {
			return nil, fmt.Errorf("line %d: is_hot %q: write 1 or 0", n+2, rec[col["is_hot"]])
		}
		r := metadataRow{Table: strings.TrimSpace(rec[col["table_name"]]), Min: rec[col["min_time"]], Max: rec[col["max_time"]], Hot: hot}
		if i, ok := col["location"]; ok {
			r.Location = strings.TrimSpace(rec[i])
		}
		rows = append(rows, r)
	}
	return rows, nil
}
