package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/sqltest"
)

// resilient opens an obroute handle over backends with the DSN items extra, and returns a
// function that closes it and checks that no goroutine of obroute is left behind.
func resilient(t *testing.T, dsn string) (*sql.DB, *connector.Connector, func(bs ...*sqltest.Backend)) {
	t.Helper()
	before := goleak.IgnoreCurrent()
	cfg, err := config.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c, err := connector.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	closed := false
	t.Cleanup(func() {
		if !closed {
			db.Close()
		}
	})
	return db, c, func(bs ...*sqltest.Backend) {
		t.Helper()
		closed = true
		if err := db.Close(); err != nil {
			t.Errorf("db.Close: %v", err)
		}
		for _, b := range bs { // the admin handles' idle connections have watcher goroutines too
			b.DB.SetMaxIdleConns(0)
		}
		// sqltest waits for every mariadbd it (re)started.
		goleak.VerifyNone(t, before, goleak.IgnoreAnyFunction("github.com/obroute/obroute/sqltest.(*instance).start.func1"))
	}
}

func processIDs(t *testing.T, b *sqltest.Backend, where string) []int64 {
	t.Helper()
	rows, err := b.DB.Query("SELECT ID FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND " + where)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// Every idle server session killed from the server side, then 1000 statements
// all succeed with the session's time zone and database still in effect.
func TestIdleServerSessionsKilledAreReplaced(t *testing.T) {
	hot := sqltest.MariaDB(t, "hot")[0]
	hot.Exec(t, "CREATE DATABASE other")
	for _, mode := range []string{"sql.Conn", "pool"} {
		t.Run(mode, func(t *testing.T) {
			db, c, closeCheck := resilient(t, "obroute:backends.hot.dsn="+hot.DSN)
			ctx := context.Background()
			var q interface {
				ExecContext(context.Context, string, ...any) (sql.Result, error)
				QueryRowContext(context.Context, string, ...any) *sql.Row
			} = db
			if mode == "sql.Conn" {
				conn, err := db.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				q = conn
			} else {
				db.SetMaxOpenConns(1) // one client session: the SET below stays with it
			}
			for _, s := range []string{"SET time_zone = '+03:00'", "USE other"} {
				if _, err := q.ExecContext(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			var ids []int64
			for range 100 { // the server may not have finished the USE yet
				if ids = processIDs(t, hot, "COMMAND = 'Sleep' AND DB = 'other'"); len(ids) > 0 {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if len(ids) != 1 {
				rows, _ := hot.DB.Query("SELECT ID, COMMAND, IFNULL(DB,''), IFNULL(INFO,'') FROM information_schema.PROCESSLIST")
				for rows.Next() {
					var a, b, c, d string
					rows.Scan(&a, &b, &c, &d)
					t.Logf("%s %s %s %s", a, b, c, d)
				}
				rows.Close()
				t.Fatalf("idle server sessions in database other = %v, want 1", ids)
			}
			for _, id := range ids {
				hot.Exec(t, fmt.Sprintf("KILL CONNECTION %d", id))
			}
			replacedBefore := c.Stats().ServerSessionsReplaced
			for i := range 1000 {
				var tz, dbName string
				if err := q.QueryRowContext(ctx, "SELECT @@time_zone, DATABASE()").Scan(&tz, &dbName); err != nil {
					t.Fatalf("statement %d: %v", i, err)
				}
				if tz != "+03:00" || dbName != "other" {
					t.Fatalf("statement %d: time_zone %q, database %q; want +03:00, other", i, tz, dbName)
				}
			}
			if got := c.Stats().ServerSessionsReplaced - replacedBefore; got != 1 {
				t.Errorf("ServerSessionsReplaced grew by %d, want 1", got)
			}
			if mode == "sql.Conn" {
				q.(*sql.Conn).Close()
			}
			closeCheck(hot)
		})
	}
}

// SIGKILL in the middle of 100 concurrent transactions.
func TestBackendKilledDuringTransactions(t *testing.T) {
	bs := sqltest.MariaDB(t, "hot", "cold")
	hot, cold := bs[0], bs[1]
	for _, b := range bs {
		b.Exec(t, "CREATE TABLE items (tx INT, n INT, PRIMARY KEY (tx, n)) ENGINE=InnoDB")
	}
	db, c, closeCheck := resilient(t, fmt.Sprintf("obroute:backends.hot.dsn=%s;backends.cold.dsn=%s;timeouts.connect=2s;timeouts.read=5s", hot.DSN, cold.DSN))
	db.SetMaxOpenConns(100)
	const txs, rowsPerTx = 100, 5
	errs := make([]error, txs)
	var started sync.WaitGroup
	var wg sync.WaitGroup
	started.Add(txs)
	for i := range txs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = func() error {
				ctx := context.Background()
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					started.Done()
					return err
				}
				defer tx.Rollback()
				once := sync.OnceFunc(started.Done)
				defer once()
				for n := range rowsPerTx {
					if _, err := tx.ExecContext(ctx, "INSERT INTO items VALUES (?, ?)", i, n); err != nil {
						return err
					}
					once()
					time.Sleep(time.Duration(i%7) * 3 * time.Millisecond)
				}
				return tx.Commit()
			}()
		}()
	}
	started.Wait() // every transaction has written at least one row (or failed)
	hot.Kill(t)
	wg.Wait()
	hot.Start(t)

	committed, failed := 0, map[string]int{}
	for i, err := range errs {
		n := count(t, hot, fmt.Sprintf("SELECT COUNT(*) FROM items WHERE tx = %d", i))
		switch {
		case err == nil && n != rowsPerTx:
			t.Errorf("transaction %d returned success but has %d of %d rows", i, n, rowsPerTx)
		case err == nil:
			committed++
		case n != 0 && n != rowsPerTx:
			t.Errorf("transaction %d failed (%v) and left %d of %d rows", i, err, n, rowsPerTx)
		case n != 0 && errors.Is(err, connector.ErrTxBackendLost):
			t.Errorf("transaction %d: %v, yet its rows were committed", i, err)
		default:
			kind := "other"
			switch {
			case errors.Is(err, connector.ErrCommitUnknown):
				kind = "ErrCommitUnknown"
			case errors.Is(err, connector.ErrTxBackendLost):
				kind = "ErrTxBackendLost"
			case errors.Is(err, connector.ErrBackendDown):
				kind = "ErrBackendDown"
			}
			failed[kind]++
		}
	}
	if n := count(t, cold, "SELECT COUNT(*) FROM items"); n != 0 {
		t.Errorf("%d rows ran on cold, want none on another backend", n)
	}
	t.Logf("100 transactions: %d committed, failed: %v; stats %+v", committed, failed, c.Stats())
	if failed["ErrTxBackendLost"] == 0 {
		t.Errorf("no transaction failed with ErrTxBackendLost: the kill came too late to test anything")
	}
	// The client sessions stay usable once the backend is back.
	waitUsable(t, db)
	if _, err := db.Exec("INSERT INTO items VALUES (1000, 0)"); err != nil {
		t.Fatal(err)
	}
	closeCheck(hot, cold)
}

// SIGSTOP yields errors within the configured bound; SIGCONT brings the service
// back within 2 s.
func TestPausedBackendErrorsWithinBound(t *testing.T) {
	hot := sqltest.MariaDB(t, "hot")[0]
	const connectTO, readTO = time.Second, 2 * time.Second
	db, c, closeCheck := resilient(t, fmt.Sprintf("obroute:backends.hot.dsn=%s;timeouts.connect=%s;timeouts.read=%s;timeouts.write=%s;health.down_after=3", hot.DSN, connectTO, readTO, readTO))
	const callers = 8
	db.SetMaxOpenConns(callers)
	run := func() (time.Duration, error) {
		start := time.Now()
		var one int
		err := db.QueryRow("SELECT 1").Scan(&one)
		return time.Since(start), err
	}
	var wg sync.WaitGroup
	for range callers { // warm: every client session has its server session
		wg.Add(1)
		go func() { defer wg.Done(); run() }()
	}
	wg.Wait()

	hot.Pause(t)
	time.Sleep(50 * time.Millisecond) // SIGSTOP reaches every thread of mariadbd
	bound := max(connectTO, readTO)
	var worst atomic.Int64
	var fails atomic.Int64
	for round := range 3 { // the first round waits for the read timeout, later ones fail fast
		for range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := run()
				if err == nil {
					t.Errorf("round %d: SELECT 1 on a paused backend succeeded", round)
					return
				}
				fails.Add(1)
				for old := worst.Load(); int64(d) > old && !worst.CompareAndSwap(old, int64(d)); old = worst.Load() {
				}
			}()
		}
		wg.Wait()
	}
	d, err := run()
	if !errors.Is(err, connector.ErrBackendDown) || d > 100*time.Millisecond {
		t.Errorf("after the failures: %v after %s, want ErrBackendDown at once", err, d)
	}
	t.Logf("paused backend: bound %s (connect %s, read %s); %d errors, worst case %s; then %v after %s",
		bound, connectTO, readTO, fails.Load(), time.Duration(worst.Load()), err, d)
	if w := time.Duration(worst.Load()); w > bound+500*time.Millisecond {
		t.Errorf("worst case %s exceeds the bound %s", w, bound)
	}

	hot.Resume(t)
	resumed := time.Now()
	for {
		if _, err := run(); err == nil {
			break
		}
		if time.Since(resumed) > 2*time.Second {
			t.Fatalf("service not back 2s after SIGCONT: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("service back %s after SIGCONT; stats %+v", time.Since(resumed), c.Stats())
	if s := c.Stats(); s.BackendsDown != 1 || s.BackendsUp != 1 {
		t.Errorf("BackendsDown %d, BackendsUp %d; want 1 and 1", s.BackendsDown, s.BackendsUp)
	}
	closeCheck(hot)
}

// SELECT SLEEP(30) cancelled after 200 ms is gone from the processlist within 1 s.
func TestCancelledQueryIsKilled(t *testing.T) {
	hot := sqltest.MariaDB(t, "hot")[0]
	db, c, closeCheck := resilient(t, "obroute:backends.hot.dsn="+hot.DSN)
	for i, tc := range []struct {
		name string
		run  func(ctx context.Context, sleep string) error
	}{
		{"query", func(ctx context.Context, sleep string) error {
			rows, err := db.QueryContext(ctx, "SELECT "+sleep)
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			return err
		}},
		{"exec", func(ctx context.Context, sleep string) error {
			_, err := db.ExecContext(ctx, "DO "+sleep)
			return err
		}},
		{"prepared", func(ctx context.Context, sleep string) error {
			st, err := db.PrepareContext(context.Background(), "SELECT "+sleep)
			if err != nil {
				return err
			}
			defer st.Close()
			var v int
			return st.QueryRowContext(ctx).Scan(&v)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sleep := fmt.Sprintf("SLEEP(30.%d)", i) // a text of its own in the processlist
			running := fmt.Sprintf("INFO LIKE '%%%s%%' AND INFO NOT LIKE '%%PROCESSLIST%%'", sleep)
			// Cancel once the server runs the statement (however long this loaded machine takes
			// to get it there), so the test sees a cancel of a running query, not a timing race.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			seen := make(chan bool, 1)
			go func() {
				defer cancel()
				for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					if len(processIDs(t, hot, running)) == 1 {
						seen <- true
						return
					}
				}
				seen <- false
			}()
			err := tc.run(ctx, sleep)
			cancelled := time.Now()
			if !<-seen {
				t.Fatalf("the query never ran on the server within 20 s (%v)", err)
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want context.Canceled", err)
			}
			for len(processIDs(t, hot, running)) > 0 {
				if time.Since(cancelled) > time.Second {
					t.Fatalf("%s still in the processlist 1s after the cancel", sleep)
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Logf("%s gone from the processlist %s after the cancel", sleep, time.Since(cancelled))
			var one int
			if err := db.QueryRow("SELECT 1").Scan(&one); err != nil {
				t.Fatalf("after the cancel: %v", err)
			}
		})
	}
	if got := c.Stats().QueriesKilled; got != 3 {
		t.Errorf("QueriesKilled = %d, want 3", got)
	}
	closeCheck(hot)
}

// A service-name switchover under a steady write load: no write fails (one the old
// primary refused as read-only waits for the new primary and runs there), none lands on the old
// primary after it turned read-only, and a transaction open on the old primary gets
// ErrPrimaryChanged.
func TestServiceSwitchover(t *testing.T) {
	bs := sqltest.MariaDB(t, "east", "west", "fenced")
	east, west, fenced := bs[0], bs[1], bs[2]
	for _, b := range bs {
		b.Exec(t, "CREATE USER app@'%' IDENTIFIED BY 'app-pw'")
		b.Exec(t, "GRANT ALL ON test.* TO app@'%'")
		b.Exec(t, "CREATE TABLE writes (seq INT PRIMARY KEY, at DATETIME(6) DEFAULT NOW(6))")
	}
	west.Exec(t, "SET GLOBAL read_only = 1")
	// fenced is writable but marked INVALID: it must never be used.
	dsn := fmt.Sprintf("obroute:backends.hot.dsn=app@SERVICE:orders:app-pw@tcp(127.0.0.1:1)/test;services.orders.candidates=%s,%s;services.orders.invalid=%s;services.orders.interval=200ms",
		east.Addr, west.Addr, fenced.Addr)
	db, c, closeCheck := resilient(t, dsn)
	ctx := context.Background()

	// A transaction open on the primary before the switchover.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRow("SELECT COUNT(*) FROM writes").Scan(&n); err != nil {
		t.Fatal(err)
	}

	type write struct {
		seq        int
		start, end time.Time
		err        error
	}
	var mu sync.Mutex
	var writes []write
	var seq atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				w := write{seq: int(seq.Add(1)), start: time.Now()}
				_, w.err = db.Exec("INSERT INTO writes (seq) VALUES (?)", w.seq)
				w.end = time.Now()
				mu.Lock()
				writes = append(writes, w)
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	time.Sleep(700 * time.Millisecond)
	east.Exec(t, "SET GLOBAL read_only = 1")
	flipped := time.Now()
	eastRows := count(t, east, "SELECT COUNT(*) FROM writes")
	time.Sleep(100 * time.Millisecond)
	west.Exec(t, "SET GLOBAL read_only = 0")
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()

	if got := count(t, east, "SELECT COUNT(*) FROM writes"); got != eastRows {
		t.Errorf("%d writes landed on the old primary after it became read-only", got-eastRows)
	}
	if got := count(t, fenced, "SELECT COUNT(*) FROM writes"); got != 0 {
		t.Errorf("%d writes landed on the INVALID candidate", got)
	}
	failed, afterFlip := 0, 0
	for _, w := range writes {
		on := count(t, east, fmt.Sprintf("SELECT COUNT(*) FROM writes WHERE seq = %d", w.seq)) +
			count(t, west, fmt.Sprintf("SELECT COUNT(*) FROM writes WHERE seq = %d", w.seq))
		switch {
		case w.err != nil:
			failed++
			t.Errorf("write %d failed after %s: %v", w.seq, w.end.Sub(w.start), w.err)
			if on != 0 {
				t.Errorf("write %d failed (%v) but landed", w.seq, w.err)
			}
		case on != 1:
			t.Errorf("write %d succeeded but is on %d backends", w.seq, on)
		}
		if w.start.After(flipped.Add(time.Second)) {
			afterFlip++
			if w.err != nil || count(t, west, fmt.Sprintf("SELECT COUNT(*) FROM writes WHERE seq = %d", w.seq)) != 1 {
				t.Errorf("write %d, 1s after the flip, did not land on the new primary (%v)", w.seq, w.err)
			}
		}
	}
	t.Logf("switchover: %d writes, %d failed, %d on east before read_only, %d on west; %d checked ≥1s after the flip; stats %+v",
		len(writes), failed, eastRows, count(t, west, "SELECT COUNT(*) FROM writes"), afterFlip, c.Stats())
	if afterFlip == 0 || count(t, west, "SELECT COUNT(*) FROM writes") == 0 {
		t.Errorf("no write reached the new primary")
	}

	// The transaction open on the old primary gets a clear error.
	_, err = tx.Exec("INSERT INTO writes (seq) VALUES (-1)")
	if !errors.Is(err, connector.ErrTxBackendLost) || !errors.Is(err, connector.ErrPrimaryChanged) {
		t.Errorf("statement of a transaction on the old primary: %v, want ErrTxBackendLost and ErrPrimaryChanged", err)
	} else if !strings.Contains(err.Error(), east.Addr) {
		t.Errorf("error %q does not name the old primary %s", err, east.Addr)
	}
	tx.Rollback()
	closeCheck(bs...)
}

// A backend marked down fails fast, and its reads outside transactions go to its replica.
func TestReplicaServesReadsWhileDown(t *testing.T) {
	bs := sqltest.MariaDB(t, "hot", "copy")
	hot, cp := bs[0], bs[1]
	db, c, closeCheck := resilient(t, fmt.Sprintf("obroute:backends.hot.dsn=%s;backends.copy.dsn=%s;backends.copy.role=replica;backends.copy.replica_of=hot;health.down_after=1", hot.DSN, cp.DSN))
	port := func() (int, error) {
		var p int
		err := db.QueryRow("SELECT @@port").Scan(&p)
		return p, err
	}
	if p, err := port(); err != nil || p != hot.Port {
		t.Fatalf("before: port %d, %v; want hot's %d", p, err, hot.Port)
	}
	hot.Kill(t)
	port() // the failure that marks hot down
	for _, tc := range []struct {
		name    string
		run     func() error
		wantErr error
	}{
		{"read goes to the replica", func() error {
			p, err := port()
			if err == nil && p != cp.Port {
				return fmt.Errorf("read answered by port %d, want the replica's %d", p, cp.Port)
			}
			return err
		}, nil},
		{"write fails fast", func() error { _, err := db.Exec("CREATE TABLE t (id INT)"); return err }, connector.ErrBackendDown},
		{"read in a transaction fails fast", func() error {
			tx, err := db.Begin()
			if err != nil {
				return err
			}
			defer tx.Rollback()
			var p int
			return tx.QueryRow("SELECT @@port").Scan(&p)
		}, connector.ErrBackendDown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			err := tc.run()
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("got %v, want %v", err, tc.wantErr)
			}
			if d := time.Since(start); d > 200*time.Millisecond {
				t.Errorf("took %s, want at once", d)
			}
		})
	}
	hot.Start(t)
	deadline := time.Now().Add(3 * time.Second)
	for {
		if p, err := port(); err == nil && p == hot.Port {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hot restarted but reads do not go back to it; stats %+v", c.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	closeCheck(bs...)
}

// waitUsable waits until db runs statements again after its backend restarted.
func waitUsable(t *testing.T, db *sql.DB) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := db.Exec("SELECT 1")
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("backend restarted, but statements still fail: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// SIGKILL while 100 transactions commit. A commit error that says "not committed"
// (ErrTxBackendLost) is true: the transaction's rows are absent after the restart; every other
// commit error says the outcome is unknown (ErrCommitUnknown). Four rounds kill the server before
// the COMMITs are sent, and after 0, 1 and 10 of them have been answered.
func TestCommitOutcomeUnderKill(t *testing.T) {
	hot := sqltest.MariaDB(t, "hot")[0]
	hot.Exec(t, "CREATE TABLE items (tx INT, n INT, PRIMARY KEY (tx, n)) ENGINE=InnoDB")
	db, _, closeCheck := resilient(t, fmt.Sprintf("obroute:backends.hot.dsn=%s;timeouts.connect=2s;timeouts.read=5s", hot.DSN))
	const txs, rowsPerTx = 100, 5
	db.SetMaxOpenConns(txs)
	commitErrors := 0
	for round, killAfter := range []int64{-1, 0, 1, 10} {
		waitUsable(t, db)
		kinds := map[string]int{}
		errs := make([]error, txs)
		atCommit := make([]bool, txs)
		var ready, wg sync.WaitGroup
		release, kill := make(chan struct{}), make(chan struct{})
		var committed atomic.Int64
		ready.Add(txs)
		for i := range txs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tx, err := db.Begin()
				if err == nil {
					for n := 0; n < rowsPerTx && err == nil; n++ {
						_, err = tx.Exec("INSERT INTO items VALUES (?, ?)", round*txs+i, n)
					}
				}
				ready.Done()
				if err != nil {
					errs[i] = err
					return
				}
				<-release
				atCommit[i] = true
				if errs[i] = tx.Commit(); errs[i] == nil && committed.Add(1) == killAfter {
					close(kill)
				}
			}()
		}
		ready.Wait()
		if killAfter < 0 {
			hot.Kill(t)
		}
		close(release) // 100 COMMITs on their way …
		if killAfter > 0 {
			select {
			case <-kill:
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: %d COMMITs answered in 10s, want %d; first error %v", round+1, committed.Load(), killAfter, firstError(errs))
			}
		}
		if killAfter >= 0 {
			hot.Kill(t) // … and the server dies among them
		}
		wg.Wait()
		hot.Start(t)
		for i, err := range errs {
			n := count(t, hot, fmt.Sprintf("SELECT COUNT(*) FROM items WHERE tx = %d", round*txs+i))
			switch {
			case err == nil && n != rowsPerTx:
				t.Errorf("transaction %d: Commit succeeded but %d of %d rows are there", i, n, rowsPerTx)
			case err == nil:
				kinds["committed"]++
			case n != 0 && n != rowsPerTx:
				t.Errorf("transaction %d: %d of %d rows after %v", i, n, rowsPerTx, err)
			case errors.Is(err, connector.ErrTxBackendLost) && n != 0:
				t.Errorf("transaction %d: %v, yet its %d rows were committed", i, err, n)
			case !atCommit[i]:
				kinds["failed before COMMIT"]++
			case errors.Is(err, connector.ErrTxBackendLost):
				kinds["ErrTxBackendLost, not committed"]++
				commitErrors++
			case errors.Is(err, connector.ErrCommitUnknown) && n == rowsPerTx:
				kinds["ErrCommitUnknown, committed"]++
				commitErrors++
			case errors.Is(err, connector.ErrCommitUnknown):
				kinds["ErrCommitUnknown, not committed"]++
				commitErrors++
			default:
				t.Errorf("transaction %d: Commit failed with %v, neither ErrTxBackendLost nor ErrCommitUnknown", i, err)
			}
		}
		t.Logf("round %d, kill after %d answered COMMITs (-1: before they are sent): %v", round+1, killAfter, kinds)
	}
	if commitErrors == 0 {
		t.Errorf("no COMMIT failed: the kill never came in the middle of a commit")
	}
	closeCheck(hot)
}
