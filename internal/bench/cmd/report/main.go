// Command report measures obroute's overhead against plain go-sql-driver/mysql in one process,
// on the same MariaDB server and the same statements, and prints the table (Markdown):
//
//	go run ./internal/bench/cmd/report            # 21 rounds: the README's table
//	go run ./internal/bench/cmd/report -short     # 3 short rounds: checks that everything runs (CI)
//
// The drivers alternate in rounds (package bench); each figure is the median over the rounds with
// the 95 % confidence interval of that median and the range of the rounds. The server is the one of OBROUTE_TEST_DSN (default root@tcp(127.0.0.1:3306)/): two
// throwaway databases are created on it and dropped at the end.
//
// It exits with status 1 when a measure fails to run, not when a target is missed: the table
// says which targets the rounds show met.
package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	_ "github.com/obroute/obroute/driver"
	"github.com/obroute/obroute/internal/bench"
)

func main() {
	short := flag.Bool("short", false, "3 rounds of few statements: check that every measure runs (figures mean nothing)")
	rounds := flag.Int("rounds", 21, "alternating rounds")
	only := flag.String("only", "", "run only the measures whose name contains this")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	mutexProfile := flag.String("mutexprofile", "", "write a mutex contention profile of the run to this file")
	blockProfile := flag.String("blockprofile", "", "write a blocking profile of the run to this file")
	flag.Parse()
	o := bench.Options{Rounds: *rounds, Scale: 1, Progress: os.Stderr, Only: *only}
	if *short {
		o.Rounds, o.Scale = 3, 0.02
	}
	stop, err := profile(*cpuProfile, *mutexProfile, *blockProfile)
	if err == nil {
		err = run(o)
		if perr := stop(); err == nil {
			err = perr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

// profile starts the profiles asked for; stop writes them.
func profile(cpuFile, mutexFile, blockFile string) (stop func() error, err error) {
	var cpu *os.File
	if cpuFile != "" {
		if cpu, err = os.Create(cpuFile); err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			return nil, err
		}
	}
	if mutexFile != "" {
		runtime.SetMutexProfileFraction(1)
	}
	if blockFile != "" {
		runtime.SetBlockProfileRate(1)
	}
	return func() error {
		if cpu != nil {
			pprof.StopCPUProfile()
			if err := cpu.Close(); err != nil {
				return err
			}
		}
		for name, file := range map[string]string{"mutex": mutexFile, "block": blockFile} {
			if file == "" {
				continue
			}
			f, err := os.Create(file)
			if err != nil {
				return err
			}
			if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

func run(o bench.Options) error {
	dsn := os.Getenv("OBROUTE_TEST_DSN")
	if dsn == "" {
		dsn = "root@tcp(127.0.0.1:3306)/"
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return fmt.Errorf("OBROUTE_TEST_DSN is not a go-sql-driver DSN: %w", err)
	}
	ctx := context.Background()
	root, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return err
	}
	defer root.Close()
	var version string
	if err := root.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return fmt.Errorf("no server at %s@%s: %w", cfg.User, cfg.Addr, err)
	}
	var r [4]byte
	rand.Read(r[:])
	dsns := map[string]string{}
	handles := map[string]*sql.DB{}
	for _, name := range []string{"hot", "cold"} {
		db := "bench_" + name + "_" + hex.EncodeToString(r[:])
		if _, err := root.ExecContext(ctx, "CREATE DATABASE "+db); err != nil {
			return err
		}
		defer root.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+db)
		c := cfg.Clone()
		c.DBName, c.ParseTime, c.Loc = db, true, time.UTC
		dsns[name] = c.FormatDSN()
		h, err := sql.Open("mysql", dsns[name])
		if err != nil {
			return err
		}
		defer h.Close()
		handles[name] = h
	}
	if err := bench.Load(ctx, handles["hot"], handles["cold"]); err != nil {
		return err
	}
	f, err := bench.Open(dsns["hot"], dsns["cold"])
	if err != nil {
		return err
	}
	defer f.Close()
	var out strings.Builder
	if err := bench.Report(ctx, f, o, &out); err != nil {
		return err
	}
	fmt.Printf("obroute vs go-sql-driver/mysql, one process, the drivers alternating in %d rounds (%s/%s, GOMAXPROCS %d, %s; server %s on %s)\n\n",
		o.Rounds, runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.Version(), version, cfg.Addr)
	fmt.Print(out.String())
	return nil
}
