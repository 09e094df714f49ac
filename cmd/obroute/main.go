// Command obroute runs obroute's demo and its operational tools.
//
//	obroute demo                       run the showcase on embedded backends (no server needed)
//	obroute explain -config F "SQL"    print the route of a statement without running it
//	obroute check -config F LOG        how a workload's logged statements would route
//	obroute metadata mark-hot ...      the daily job: prepare the coming tables, recompute is_hot
//	obroute metadata verify ...        compare shard_metadata with the data
//	obroute metadata prepare ...       create the coming periods' tables and their metadata rows
//	obroute migrate ... TABLE          move a table that left the hot window from hot to cold
//
// Run `obroute help COMMAND` for a command's flags and an example.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one subcommand of the CLI.
type command struct {
	name    string
	summary string
	usage   string // flags and an example
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{name: "demo", summary: "run the showcase on embedded hot, cold and shadow backends (no database server needed)", usage: demoUsage, run: runDemo},
		{name: "explain", summary: "print the route plan of a statement without running it", usage: explainUsage, run: runExplain},
		{name: "check", summary: "how a workload (general or slow log, statements, digests) would route, before switching", usage: checkUsage, run: runCheck},
		{name: "metadata", summary: "shard metadata jobs: verify against the data, prepare the coming tables, mark-hot", usage: metadataUsage, run: runMetadata},
		{name: "migrate", summary: "move a table that left the hot window from hot to cold, resumably", usage: migrateUsage, run: runMigrate},
	}
}

const mainUsage = `obroute routes SQL statement by statement across MySQL-protocol backends
(hot store, cold/history store, shadow copies) from inside a Go program.

Usage:
  obroute COMMAND [flags]

Commands:
%s
Run 'obroute help COMMAND' for a command's flags and an example.

Examples:
  obroute demo
  obroute explain -dsn 'obroute:backends.hot.dsn=app@tcp(10.0.0.1:3306)/shop;routes.audit_log=hot' "SELECT * FROM audit_log"
  obroute check -config obroute.yaml /var/lib/mysql/general.log
  obroute metadata mark-hot -dsn 'app:pw@tcp(10.0.0.1:3306)/shop' -hot-months 2
  obroute metadata verify -config obroute.yaml
  obroute migrate -config obroute.yaml orders_202501
`

func main() {
	// SIGTERM too: a Kubernetes Job's pod is stopped with it, and a move then records where it
	// stopped before exiting.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the CLI and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printMainUsage(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 {
			if c, ok := findCommand(args[1]); ok {
				fmt.Fprint(stdout, c.usage)
				return 0
			}
			fmt.Fprintf(stderr, "obroute: unknown command %q\n\n", args[1])
			printMainUsage(stderr)
			return 2
		}
		printMainUsage(stdout)
		return 0
	}
	c, ok := findCommand(name)
	if !ok {
		fmt.Fprintf(stderr, "obroute: unknown command %q\n\n", name)
		printMainUsage(stderr)
		return 2
	}
	if err := c.run(ctx, args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "obroute %s: %v\n", name, err)
		return 1
	}
	return 0
}

func findCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func printMainUsage(w io.Writer) {
	list := ""
	for _, c := range commands() {
		list += fmt.Sprintf("  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, mainUsage, list)
}

// newFlags returns a flag set whose -h prints the command's usage to stdout.
func newFlags(name, usage string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() { fmt.Fprint(stdout, usage) }
	return fs
}
