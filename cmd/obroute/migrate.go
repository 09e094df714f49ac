package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/obroute/obroute/tiering"
)

const migrateUsage = `obroute migrate: move a table that left the hot window from hot to cold

Moves one physical table of a time-sharded table from the backend holding it to the cold
backend, so that no statement routed by obroute, in any process, sees a row of it twice or
not at all while it runs:

  1. guard   the table becomes read-only on hot (triggers refuse writes, naming the move)
  2. create  the table is created on cold with the same schema
  3. copy    rows are copied in primary-key chunks under a rate limit; each chunk is checked
             on both servers (row count and BIT_XOR of CRC32 of every column)
  4. check   the whole copy is compared with the rows copied
  5. flip    shard_metadata places the table on cold (location, is_hot = 0)
  6. wait    every obroute process refreshes its metadata and ends the statements routed
             before (metadata.refresh + 30s load + the longest level budget or read timeout)
  7. fence   the hot table is renamed out of reach (a process still on the old metadata gets
             an error, not a wrong answer) and checked unchanged since the copy
  8. delete  its rows are deleted in chunks under the rate limit
  9. drop    the emptied table is dropped

Each step is recorded in shard_migration (beside shard_metadata); run the same command again
after a crash, a kill or an error and it resumes where it stopped. Progress is drawn as a bar
on a terminal, as log lines otherwise. Exit status 0 when the table is moved (also when it
was already), 1 otherwise.

Usage:
  obroute migrate (-config FILE | -dsn DSN) [flags] TABLE
  obroute migrate (-config FILE | -dsn DSN) [flags] LOGICAL

TABLE is a physical table (orders_202501). LOGICAL is a configured time table (orders): every
table of it that left the hot window and is not on the target yet is moved, oldest first, and
an unfinished move is finished; nothing is done when none is due, so the command can run daily.

Flags:
  -config FILE   obroute YAML configuration (backends, time_tables, metadata)
  -dsn DSN       obroute DSN, instead of -config
  -to NAME       target backend (default: the first backend of role cold)
  -chunk N       rows per chunk (default 1000)
  -rate N        rows per second of the copy and the delete (default 10000; 0: no limit)
  -wait DUR      wait between the flip and the fence (default: computed from the configuration)
  -now TIME      the clock of the hot-window check: 2006-01-02, "2006-01-02 15:04:05" (UTC)
                 or RFC 3339; default: now
  -dry-run       print the plan (and where a recorded move stands) and change nothing
  -abort         undo a move that has not reached the flip: drop the copy, lift the guard

The user needs SELECT, INSERT, DELETE, CREATE, DROP and TRIGGER on both backends' tables and
UPDATE on shard_metadata.

Example:
  obroute migrate -config /etc/obroute.yaml -dry-run orders_202501
  obroute migrate -config /etc/obroute.yaml orders_202501
  obroute migrate -config /etc/obroute.yaml orders
`

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("migrate", migrateUsage, stdout)
	sf := addStoreFlags(fs)
	to := fs.String("to", "", "target backend")
	chunk := fs.Int("chunk", tiering.DefaultChunkRows, "rows per chunk")
	rate := fs.Int("rate", tiering.DefaultRowsPerSecond, "rows per second")
	wait := fs.Duration("wait", 0, "wait between the flip and the fence")
	dryRun := fs.Bool("dry-run", false, "print the plan only")
	abort := fs.Bool("abort", false, "undo a move before its flip")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("give exactly one table to move (e.g. orders_202501), got %d arguments; see obroute help migrate", fs.NArg())
	}
	if *chunk <= 0 || *rate < 0 || *wait < 0 {
		return errors.New("-chunk must be positive, -rate and -wait not negative")
	}
	table := fs.Arg(0)
	s, now, err := sf.open()
	if err != nil {
		return err
	}
	defer s.Close()
	if *abort {
		if err := s.AbortMove(ctx, table); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "the move of %s is undone: its copy is dropped, it is writable again\n", table)
		return nil
	}
	opts := tiering.MoveOptions{To: *to, ChunkRows: *chunk, RowsPerSecond: *rate, Settle: *wait, Now: now}
	if *rate == 0 {
		opts.RowsPerSecond = -1
	}
	tables := []string{table}
	if s.IsTimeTable(table) { // a logical table: every table of it that is due
		if tables, err = s.DueMoves(ctx, table, opts); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%d table(s) of %s to move: %s\n", len(tables), table, strings.Join(tables, ", "))
	}
	for _, table := range tables {
		if err := migrate(ctx, s, table, opts, *dryRun, stdout); err != nil {
			return err
		}
	}
	return nil
}

// migrate moves one table, or prints its plan.
func migrate(ctx context.Context, s *tiering.Store, table string, opts tiering.MoveOptions, dryRun bool, stdout io.Writer) error {
	if dryRun {
		plan, err := s.PlanMove(ctx, table, opts)
		if err != nil {
			return err
		}
		return plan.Write(stdout)
	}
	bar := newProgress(stdout, isTerminal(stdout))
	opts.Observer = bar.event
	start := time.Now()
	plan, err := s.Move(ctx, table, opts)
	bar.end()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "moved %s from %s to %s: %d rows (run took %s)\n", table, plan.Source, plan.Target, plan.Rows, time.Since(start).Round(time.Millisecond))
	return nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
