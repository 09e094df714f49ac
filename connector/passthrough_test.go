package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/sqltest"
)

// A plain DSN passes its statements through unparsed, and keeps every session semantic the
// routed path has: hints in a leading comment or in the context, transactions begun by text, by
// BeginTx or by autocommit=0, session variables, and the route counts.
func TestPassthroughKeepsSessionSemantics(t *testing.T) {
	b := sqltest.Shared(t, "pass")[0]
	b.Exec(t, "CREATE TABLE t (id INT PRIMARY KEY)")
	db, err := sql.Open("obroute", b.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := connector.FromDB(db)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	empty := func(t *testing.T, after string) {
		t.Helper()
		var n int
		if err := b.DB.QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d rows in t after %s, want 0", n, after)
		}
	}
	exec := func(ctx context.Context, query string) {
		t.Helper()
		if _, err := conn.ExecContext(ctx, query); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}

	t.Run("hints", func(t *testing.T) {
		for _, c := range []struct {
			ctx   context.Context
			query string
			want  error
		}{
			{ctx, "/* shadow */ SELECT 1", routing.ErrNoShadowBackend},
			{ctx, "  /*+ OBROUTE(backend=elsewhere) */ select 1", routing.ErrUnknownBackend},
			{ctx, "/*+ OBROUTE(shadow=yes please) */ SELECT 1", hint.ErrMalformedHint},
			{hint.WithShadow(ctx), "SELECT 1", routing.ErrNoShadowBackend},
			{hint.WithBackend(ctx, "elsewhere"), "INSERT INTO t VALUES (99)", routing.ErrUnknownBackend},
		} {
			if _, err := conn.ExecContext(c.ctx, c.query); !errors.Is(err, c.want) {
				t.Errorf("%s: %v, want %v", c.query, err, c.want)
			}
		}
		empty(t, "refused statements")
	})

	t.Run("text transaction", func(t *testing.T) {
		exec(ctx, "BEGIN")
		exec(ctx, "-- a comment first\nINSERT INTO t VALUES (1)")
		exec(ctx, "ROLLBACK")
		empty(t, "BEGIN, INSERT, ROLLBACK")
	})

	t.Run("BeginTx", func(t *testing.T) {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec("INSERT INTO t VALUES (2)"); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		empty(t, "a rolled back transaction")
	})

	t.Run("autocommit=0", func(t *testing.T) {
		exec(ctx, "SET autocommit = 0")
		exec(ctx, "REPLACE INTO t VALUES (3)")
		exec(ctx, "ROLLBACK")
		exec(ctx, "SET autocommit = 1")
		empty(t, "an implicit transaction rolled back")
	})

	t.Run("session variable", func(t *testing.T) {
		exec(ctx, "SET @v = 42")
		var v int
		if err := conn.QueryRowContext(ctx, "SELECT @v").Scan(&v); err != nil || v != 42 {
			t.Errorf("SELECT @v: %d, %v; want 42", v, err)
		}
	})

	s := c.Stats()
	if s.Routes["default"] == 0 || s.Rejected != 5 {
		t.Errorf("routes %v, rejected %d; want default routes counted and 5 refusals", s.Routes, s.Rejected)
	}
}
