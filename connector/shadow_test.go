package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/routing"
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
				_, err = tx.ExecContext(ctx, "UPDATE items SET note = 'tx' WHERE id = ?", id-1)
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
	if _, err := tx.ExecContext(bg, "SELECT 1"); err != nil {
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
		{"hint in a trailing comment", bg, "SELECT note FROM audit_log WHERE id = 1 /* SHARDINGSPHERE_HINT: SHADOW=true */", "on production"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var note string
			if err := db.QueryRowContext(tc.ctx, tc.sql).Scan(&note); err != nil {
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
