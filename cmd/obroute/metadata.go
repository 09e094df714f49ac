package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"gopkg.in/yaml.v3"

	"github.com/obroute/obroute/metadata"
)

const metadataUsage = `obroute metadata: shard metadata jobs

Commands:
  mark-hot   the daily job of the hot window: sets is_hot = 1 on the rows of the shard
             metadata table whose max_time is inside the hot window, 0 on the others (in one
             transaction, writing only rows that change), and prints the counts. Routing
             follows after the next metadata refresh of each obroute process.

Usage:
  obroute metadata mark-hot -dsn DSN (-hot-days N | -hot-months N) [-table NAME] [-now TIME]

Flags:
  -dsn DSN         go-sql-driver DSN of the backend holding the metadata table
                   (user:password@tcp(host:3306)/db)
  -table NAME      the metadata table, "table" or "schema.table" (default shard_metadata)
  -hot-days N      hot window: the last N calendar days, today included
  -hot-months N    hot window: the current month plus N before it
  -now TIME        the day the window is computed for: 2006-01-02, "2006-01-02 15:04:05" (UTC)
                   or RFC 3339; default: now

The window counts the days and months of the shard-key times' calendar: UTC, or the DSN's
loc= when it sets one (obroute reads the times the same way), whatever the machine's zone.

Example:
  obroute metadata mark-hot -dsn 'app:secret@tcp(10.0.0.1:3306)/shop' -hot-months 2
`

func runMetadata(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stdout, metadataUsage)
		return errors.New("missing command: mark-hot")
	}
	switch args[0] {
	case "mark-hot":
		return runMarkHot(ctx, args[1:], stdout)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, metadataUsage)
		return nil
	}
	return fmt.Errorf("unknown command %q: the metadata commands are: mark-hot", args[0])
}

func runMarkHot(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("metadata mark-hot", metadataUsage, stdout)
	dsn := fs.String("dsn", "", "DSN of the metadata backend")
	table := fs.String("table", metadata.DefaultTable, "metadata table")
	days := fs.Int("hot-days", 0, "hot window in days")
	months := fs.Int("hot-months", 0, "hot window in months before the current one")
	nowText := fs.String("now", "", "the day the window is computed for")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q; see obroute help metadata", fs.Arg(0))
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
