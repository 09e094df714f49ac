package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/internal/routing"
)

const explainUsage = `obroute explain: print the route plan of a statement without running it

Reads the obroute configuration (a YAML file or an obroute DSN), the shard metadata (from its
backend, or from a file with -metadata), routes the statement as a new client session would,
and prints the plan: the route prompts and the plan steps (statement kind and tables, hints,
route_info_type, backends and addresses, every rewritten sub-query with its arguments, the
merge). Nothing is sent to any backend except, when no -metadata file is given, the read of the
shard metadata table and of what a connector reads back with it (the servers' time zone and
sql_mode, the shard-key columns); with -metadata the shard key's type is the configuration's
shard_key_type. Hints go in the statement: /*+ OBROUTE(query_level=L1) */ SELECT …

A statement obroute would refuse prints its refusal and exits with status 1.

Usage:
  obroute explain (-config FILE | -dsn DSN) [-metadata FILE] [-now TIME] [-arg VALUE]... "SQL"

Flags:
  -config FILE     obroute YAML configuration
  -dsn DSN         obroute DSN (obroute:backends.hot.dsn=…;…), instead of -config
  -metadata FILE   shard metadata as CSV (header table_name,min_time,max_time,is_hot[,location])
                   or YAML (a list of {table_name, min_time, max_time, is_hot, location});
                   default: read the configured metadata table from its backend
  -now TIME        the clock for the hot window: 2006-01-02, "2006-01-02 15:04:05" (UTC) or
                   RFC 3339; default: now
  -arg VALUE       the value of the next ? placeholder (repeat for each)

Example:
  obroute explain -config obroute.yaml -metadata shards.csv -now 2025-03-15 \
      -arg 2024-12-01 "SELECT user_id, SUM(amount) FROM orders WHERE order_time >= ? GROUP BY user_id"
`

func runExplain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("explain", explainUsage, stdout)
	cfgFile := fs.String("config", "", "obroute YAML configuration")
	dsn := fs.String("dsn", "", "obroute DSN")
	metaFile := fs.String("metadata", "", "shard metadata file (CSV or YAML)")
	nowText := fs.String("now", "", "the clock for the hot window")
	var sqlArgs []any
	fs.Func("arg", "value of the next ? placeholder", func(v string) error { sqlArgs = append(sqlArgs, v); return nil })
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("give exactly one SQL statement (quoted), got %d arguments; see obroute help explain", fs.NArg())
	}
	c, err := routeConnector(*cfgFile, *dsn, *nowText, *metaFile)
	if err != nil {
		return err
	}
	defer c.Close()
	query := fs.Arg(0)
	lines, err := c.ExplainLines(ctx, query, sqlArgs...)
	text := make([]routing.ExplainLine, len(lines))
	for i, l := range lines {
		text[i] = routing.ExplainLine(l)
	}
	if werr := routing.WriteExplain(stdout, text); werr != nil {
		return werr
	}
	if err != nil {
		return fmt.Errorf("the statement would be refused (%s)", routing.RefusalReason(err))
	}
	return nil
}

// loadConfig reads the configuration from exactly one of a YAML file and a DSN.
func loadConfig(file, dsn string) (*config.Config, error) {
	switch {
	case file != "" && dsn != "":
		return nil, errors.New("give -config or -dsn, not both")
	case file != "":
		return config.LoadFile(file)
	case dsn != "":
		return config.ParseDSN(dsn)
	}
	return nil, errors.New("no configuration: give -config obroute.yaml or -dsn 'obroute:backends.hot.dsn=…'")
}

// parseNow reads the -now flag: a date, a date and time (UTC) or RFC 3339.
func parseNow(s string) (time.Time, error) {
	for _, layout := range []string{time.DateOnly, time.DateTime, time.RFC3339Nano} {
		if t, err := time.ParseInLocation(layout, strings.TrimSpace(s), time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("-now %q: write it 2025-03-15, \"2025-03-15 12:00:00\" (UTC) or 2025-03-15T12:00:00+08:00", s)
}
