package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/sqltest"
)

// shadowSetup starts production hot+cold (with the general log on, to count on the servers
// themselves) and shadow hot+cold, with the same tables on each, and an obroute handle whose
// shadow rule maps hot→shadow_hot and cold→shadow_cold with a default hint algorithm.
func shadowSetup(t *testing.T) (db *sql.DB, prod, shadows []*sqltest.Backend) {
	t.Helper()
	prod = sqltest.MariaDBWith(t, sqltest.MariaDBOptions{GeneralLog: true}, "hot", "cold")
	shadows = sqltest.MariaDB(t, "shadow_hot", "shadow_cold")
	for _, b := range append(append([]*sqltest.Backend{}, prod...), shadows...) {
		b.Exec(t, "CREATE TABLE audit_log (id INT PRIMARY KEY, note VARCHAR(64))")
		b.Exec(t, "CREATE TABLE items (id INT PRIMARY KEY, note VARCHAR(64))")
	}
	dsn := fmt.Sprintf("obroute:backends.hot.dsn=%s;backends.cold.dsn=%s;backends.shadow_hot.dsn=%s;backends.shadow_hot.role=shadow;backends.shadow_cold.dsn=%s;backends.shadow_cold.role=shadow;"+
		"routes.audit_log=cold;shadow.mappings.hot.shadow=shadow_hot;shadow.mappings.cold.shadow=shadow_cold", prod[0].DSN, prod[1].DSN, shadows[0].DSN, shadows[1].DSN)
	db, err := sql.Open("obroute", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, prod, shadows
}

func TestShadowTrafficNeverReachesProduction(t *testing.T) {
	db, prod, shadows := shadowSetup(t)
	db.SetMaxOpenConns(8)
	ctx := hint.WithShadow(context.Background())
	rng := rand.New(rand.NewPCG(7, 7))
	const statements = 10000
	sent, inserted := 0, 0
	for sent < statements {
		var err error
		id := sent
		switch k := rng.IntN(10); {
		case k < 3:
			var n int
			err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM items WHERE id < ?", id).Scan(&n)
			sent++
		case k < 5:
			_, err = db.ExecContext(ctx, "INSERT INTO audit_log VALUES (?, 'shadow')", id)
			inserted++
			sent++
		case k < 7:
			_, err = db.ExecContext(ctx, "INSERT INTO items VALUES (?, 'shadow')", id)
			sent++
		case k == 7:
			_, err = db.ExecContext(ctx, fmt.Sprintf("CREATE TABLE IF NOT EXISTS t%d (a INT)", id%20))
			sent++
		case k == 8:
			var tx *sql.Tx
			if tx, err = db.BeginTx(ctx, nil); err != nil {
				break
			}
			if _, err = tx.ExecContext(ctx, "INSERT INTO audit_log VALUES (?, 'tx')", id); err == nil {
				_, err = tx.ExecContext(ctx, "UPDATE audit_log SET note = 'tx' WHERE id = ?", id-1)
			}
			if err == nil {
				err = tx.Commit()
			}
			inserted++
			sent += 4
		default:
			conn, cerr := db.Conn(ctx)
			if cerr != nil {
				err = cerr
				break
			}
			_, err = conn.ExecContext(ctx, "SET time_zone = '+02:00'")
			if err == nil {
				var tz string
				err = conn.QueryRowContext(ctx, "SELECT @@time_zone").Scan(&tz)
			}
			conn.Close()
			sent += 2
		}
		if err != nil {
			t.Fatalf("statement %d: %v", sent, err)
		}
	}
	for _, p := range prod {
		if log := p.GeneralLog(t); len(log) != 0 {
			t.Errorf("production backend %s received %d commands from shadow traffic, first: %+v", p.Name, len(log), log[0])
		}
	}
	var n int
	if err := shadows[1].DB.QueryRow("SELECT COUNT(*) FROM audit_log").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != inserted {
		t.Errorf("shadow_cold has %d audit_log rows, want the %d shadow inserts", n, inserted)
	}
	t.Logf("%d shadow statements: 0 commands on production (general log), %d audit rows on shadow_cold", sent, n)
}

func TestMixedHintTransactionIsRefused(t *testing.T) {
	db, prod, shadows := shadowSetup(t)
	bg := context.Background()
	tx, err := db.BeginTx(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(hint.WithShadow(bg), "INSERT INTO items VALUES (1, 'shadow first')"); err != nil {
		t.Fatal(err)
	}
	_, err = tx.ExecContext(hint.WithProduction(bg), "INSERT INTO items VALUES (2, 'production later')")
	if !errors.Is(err, routing.ErrShadowConflict) {
		t.Fatalf("production-hinted statement in a shadow transaction: err = %v, want ErrShadowConflict", err)
	}
	_, err = tx.ExecContext(bg, "/*+ OBROUTE(shadow=false) */ INSERT INTO items VALUES (3, 'production comment')")
	if !errors.Is(err, routing.ErrShadowConflict) {
		t.Fatalf("production comment in a shadow transaction: err = %v, want ErrShadowConflict", err)
	}
	// An unhinted statement follows its shadow transaction.
	if _, err := tx.ExecContext(bg, "INSERT INTO items VALUES (4, 'follows')"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if log := prod[0].GeneralLog(t); len(log) != 0 {
		t.Fatalf("production hot received %d commands, first %+v", len(log), log[0])
	}
	var n int
	shadows[0].DB.QueryRow("SELECT COUNT(*) FROM items").Scan(&n)
	if n != 2 {
		t.Fatalf("shadow_hot has %d items, want 2 (ids 1 and 4)", n)
	}

	// The other way round: a production transaction refuses a shadow statement.
	tx, err = db.BeginTx(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	// A statement on a table binds the transaction to production (a tableless one, SELECT 1,
	// binds nothing: TestTablelessFirstInTransaction).
	if _, err := tx.ExecContext(bg, "SELECT COUNT(*) FROM items"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(hint.WithShadow(bg), "INSERT INTO items VALUES (5, 'x')"); !errors.Is(err, routing.ErrShadowConflict) {
		t.Fatalf("shadow statement in a production transaction: err = %v, want ErrShadowConflict", err)
	}
}

func TestCommentHintsRouteLikeContextHints(t *testing.T) {
	db, prod, shadows := shadowSetup(t)
	bg := context.Background()
	shadows[1].Exec(t, "INSERT INTO audit_log VALUES (1, 'on shadow')")
	prod[1].Exec(t, "INSERT INTO audit_log VALUES (1, 'on production')")
	cases := []struct {
		name string
		ctx  context.Context
		sql  string
		want string
	}{
		{"context shadow", hint.WithShadow(bg), "SELECT note FROM audit_log WHERE id = 1", "on shadow"},
		{"ShardingSphere comment", bg, "/* SHARDINGSPHERE_HINT: SHADOW=true */ SELECT note FROM audit_log WHERE id = 1", "on shadow"},
		{"obroute comment", bg, "/*+ OBROUTE(shadow=true) */ SELECT note FROM audit_log WHERE id = 1", "on shadow"},
		{"no hint", bg, "SELECT note FROM audit_log WHERE id = 1", "on production"},
		{"hint text in a literal", bg, "SELECT note FROM audit_log WHERE id = 1 AND note <> '/* shadow */'", "on production"},
		{"hint in a trailing comment", bg, "SELECT note FROM audit_log WHERE id = 1 /* SHARDINGSPHERE_HINT: SHADOW=true */", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var note string
			err := db.QueryRowContext(tc.ctx, tc.sql).Scan(&note)
			if tc.want == "" { // a hint where obroute reads none: refused, never run
				if !errors.Is(err, hint.ErrMalformedHint) {
					t.Fatalf("err = %v, want %v", err, hint.ErrMalformedHint)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if note != tc.want {
				t.Fatalf("read %q, want %q", note, tc.want)
			}
		})
	}
}

// A shadow hint on BEGIN holds for the whole transaction.
func TestShadowHintOnBeginBindsTheTransaction(t *testing.T) {
	db, prod, shadows := shadowSetup(t)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{"/* shadow */ BEGIN", "INSERT INTO items VALUES (1, 'unhinted, in a shadow transaction')", "COMMIT"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if n := count(t, prod[0], "SELECT COUNT(*) FROM items"); n != 0 {
		t.Fatalf("production hot has %d items: the shadow transaction wrote to production", n)
	}
	if n := count(t, shadows[0], "SELECT COUNT(*) FROM items"); n != 1 {
		t.Fatalf("shadow_hot has %d items, want 1", n)
	}
}

// shadowStateSetup is shadowSetup with databases other (everywhere) and shadowdb (on the shadow
// backends only), each with the tables of test.
func shadowStateSetup(t *testing.T) (db *sql.DB, prod, shadows []*sqltest.Backend) {
	t.Helper()
	db, prod, shadows = shadowSetup(t)
	for _, b := range append(append([]*sqltest.Backend{}, prod...), shadows...) {
		dbs := []string{"other"}
		if b.Name == "shadow_hot" || b.Name == "shadow_cold" {
			dbs = append(dbs, "shadowdb")
		}
		for _, d := range dbs {
			b.Exec(t, "CREATE DATABASE "+d)
			b.Exec(t, "CREATE TABLE "+d+".audit_log (id INT PRIMARY KEY, note VARCHAR(64))")
			b.Exec(t, "CREATE TABLE "+d+".items (id INT PRIMARY KEY, note VARCHAR(64))")
		}
	}
	return db, prod, shadows
}

// sessionView is what one statement sees of its server session's state.
type sessionView struct {
	probe, probe2, prodOnly, derived sql.NullString
	sqlMode, timeZone, db            string
	count                            int
}

// Production and shadow traffic interleaved on the same client sessions of one pool
// — SET of user variables, sql_mode and time_zone, USE, transactions, prepared statements —
// and no value shadow traffic set ever reaches a production server (their general logs), while
// shadow traffic sees its own values over production's.
func TestShadowStateNeverReachesProduction(t *testing.T) {
	db, prod, _ := shadowStateSetup(t)
	const workers, statements = 16, 10000
	db.SetMaxOpenConns(workers)
	db.SetMaxIdleConns(workers)
	bg := context.Background()
	shadowCtx := hint.WithShadow(bg)
	var sent, ids atomic.Int64
	var checks [2]atomic.Int64 // production, shadow
	const view = "SELECT @probe, @probe2, @prodonly, @derived, @@session.sql_mode, @@session.time_zone, IFNULL(DATABASE(), ''), COUNT(*) FROM "
	read := func(ctx context.Context, q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}, table string) (sessionView, error) {
		var v sessionView
		err := q.QueryRowContext(ctx, view+table).Scan(&v.probe, &v.probe2, &v.prodOnly, &v.derived, &v.sqlMode, &v.timeZone, &v.db, &v.count)
		sent.Add(1)
		return v, err
	}
	// episode runs one client session's mixed traffic; tag makes its values its own.
	episode := func(rng *rand.Rand, tag string) error {
		conn, err := db.Conn(bg)
		if err != nil {
			return err
		}
		defer conn.Close()
		exec := func(ctx context.Context, q string, args ...any) error {
			sent.Add(1)
			if _, err := conn.ExecContext(ctx, q, args...); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
			return nil
		}
		prodDB := "test"
		wantProd := func(v sessionView) error {
			checks[0].Add(1)
			if v.probe.String != "prod-"+tag || v.probe2.Valid || v.prodOnly.String != "p-"+tag || v.derived.String != "prod-"+tag+"-d" ||
				strings.Contains(v.sqlMode, "ANSI_QUOTES") || !strings.Contains(v.sqlMode, "STRICT_ALL_TABLES") || v.timeZone != "+02:00" || v.db != prodDB {
				return fmt.Errorf("production statement saw %+v; want its own values (tag %s, database %s)", v, tag, prodDB)
			}
			return nil
		}
		wantShadow := func(v sessionView) error {
			checks[1].Add(1)
			if v.probe.String != "shadow-"+tag || v.probe2.String != "shadow2-"+tag || v.prodOnly.String != "p-"+tag || v.derived.String != "prod-"+tag+"-d" ||
				v.sqlMode != "ANSI_QUOTES" || v.timeZone != "+07:00" || v.db != "shadowdb" {
				return fmt.Errorf("shadow statement saw %+v; want shadow values over production's (tag %s)", v, tag)
			}
			return nil
		}
		for _, s := range []struct {
			ctx context.Context
			q   string
		}{
			{bg, "USE test"},
			{bg, "SET @probe = 'prod-" + tag + "', @prodonly = 'p-" + tag + "', @probe2 = NULL, SESSION sql_mode = 'TRADITIONAL', time_zone = '+02:00'"},
			{shadowCtx, "SET @probe = 'shadow-" + tag + "', SESSION sql_mode = 'ANSI_QUOTES', time_zone = '+07:00'"},
			{shadowCtx, "SET @probe2 = 'shadow2-" + tag + "'"},
			{shadowCtx, "USE shadowdb"},
			// Production's expression is computed from production's values, even right after
			// shadow traffic.
			{bg, "SET @derived = CONCAT(@probe, '-d')"},
		} {
			if err := exec(s.ctx, s.q); err != nil {
				return err
			}
		}
		stmt, err := conn.PrepareContext(bg, "SELECT @probe, @@session.time_zone FROM items WHERE id > ? LIMIT 1")
		if err != nil {
			return err
		}
		defer stmt.Close()
		for range 20 {
			var err error
			switch k := rng.IntN(12); k {
			case 0, 1, 2, 3: // reads on hot and cold, as production (0, 1) or shadow traffic (2, 3)
				ctx, want := bg, wantProd
				if k >= 2 {
					ctx, want = shadowCtx, wantShadow
				}
				for _, table := range []string{"items", "audit_log"} {
					var v sessionView
					if v, err = read(ctx, conn, table); err == nil {
						err = want(v)
					}
					if err != nil {
						break
					}
				}
			case 4: // production changes database; shadow keeps its own
				prodDB = map[string]string{"test": "other", "other": "test"}[prodDB]
				err = exec(bg, "USE "+prodDB)
			case 5: // shadow sets its values again, on whatever backend came last
				err = exec(shadowCtx, "SET time_zone = '+07:00', @probe = 'shadow-"+tag+"'")
			case 6: // production sets its values again
				err = exec(bg, "SET time_zone = '+02:00', SESSION sql_mode = 'TRADITIONAL'")
			case 7:
				err = exec(bg, "INSERT INTO items VALUES (?, 'prod')", ids.Add(1))
			case 8:
				err = exec(shadowCtx, "INSERT INTO audit_log VALUES (?, 'shadow')", ids.Add(1))
			case 9, 10: // a transaction of each kind
				ctx, want, table := bg, wantProd, "audit_log"
				if k == 10 {
					ctx, want, table = shadowCtx, wantShadow, "items"
				}
				var tx *sql.Tx
				if tx, err = conn.BeginTx(ctx, nil); err != nil {
					break
				}
				sent.Add(1)
				if _, err = tx.ExecContext(ctx, "INSERT INTO "+table+" VALUES (?, 'tx')", ids.Add(1)); err == nil {
					sent.Add(1)
					var v sessionView
					if v, err = read(ctx, tx, table); err == nil {
						err = want(v)
					}
				}
				if err == nil {
					err = tx.Commit()
					sent.Add(1)
				} else {
					tx.Rollback()
				}
			case 11: // the prepared statement, as production and as shadow traffic
				for _, ctx := range []context.Context{bg, shadowCtx} {
					var probe, tz sql.NullString
					err = stmt.QueryRowContext(ctx, -1).Scan(&probe, &tz)
					sent.Add(1)
					want := "prod-" + tag
					if ctx != bg {
						want = "shadow-" + tag
					}
					if err == sql.ErrNoRows {
						err = nil // no row yet in this database
					} else if err == nil && probe.String != want {
						err = fmt.Errorf("prepared statement saw @probe %q, want %q", probe.String, want)
					}
					if err != nil {
						break
					}
				}
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 12))
			for e := 0; sent.Load() < statements; e++ {
				if err := episode(rng, fmt.Sprintf("%d-%d", w, e)); err != nil {
					errs <- fmt.Errorf("worker %d episode %d: %w", w, e, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	lines, leaked := 0, 0
	for _, p := range prod {
		for _, e := range p.GeneralLog(t) {
			lines++
			text := strings.ToLower(e.Text)
			if strings.Contains(text, "shadow") || strings.Contains(text, "ansi_quotes") || strings.Contains(text, "+07:00") {
				leaked++
				if leaked <= 5 {
					t.Errorf("production backend %s received shadow state: %s %q", p.Name, e.Command, e.Text)
				}
			}
		}
	}
	t.Logf("%d statements from %d goroutines: %d production and %d shadow views checked; %d production general-log lines, %d with a shadow value",
		sent.Load(), workers, checks[0].Load(), checks[1].Load(), lines, leaked)
	if checks[0].Load() == 0 || checks[1].Load() == 0 || lines == 0 {
		t.Errorf("the workload checked nothing")
	}
}

// Temporary tables of shadow traffic are not production's: a production statement naming a
// table that shadow traffic created as temporary reads production's table.
func TestShadowTemporaryTablesStayInShadow(t *testing.T) {
	db, prod, shadows := shadowSetup(t)
	prod[0].Exec(t, "INSERT INTO items VALUES (1, 'p'), (2, 'p'), (3, 'p')")
	ctx, shadowCtx := context.Background(), hint.WithShadow(context.Background())
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{"CREATE TEMPORARY TABLE items (id INT PRIMARY KEY, note VARCHAR(64))", "INSERT INTO items VALUES (7, 'temporary')"} {
		if _, err := conn.ExecContext(shadowCtx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM items").Scan(&n); err != nil || n != 3 {
		t.Fatalf("production read of items: %d rows, %v; want production's 3", n, err)
	}
	if err := conn.QueryRowContext(shadowCtx, "SELECT COUNT(*) FROM items").Scan(&n); err != nil || n != 1 {
		t.Fatalf("shadow read of items: %d rows, %v; want the temporary table's 1", n, err)
	}
	if n := count(t, shadows[0], "SELECT COUNT(*) FROM items"); n != 0 {
		t.Fatalf("shadow_hot's permanent items has %d rows, want 0", n)
	}
	for _, e := range prod[0].GeneralLog(t) {
		if strings.Contains(strings.ToLower(e.Text), "temporary") {
			t.Fatalf("production received %q", e.Text)
		}
	}
}
