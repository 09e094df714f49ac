package metacache

import (
	"context"
	"database/sql"
	"log/slog"
	"slices"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// TestCacheFollowsMigrationOnMariaDB moves December's orders to the history
// store: a new history table with its span, the hot table's span narrowed.
// After Refresh routing sees it.
func TestCacheFollowsMigrationOnMariaDB(t *testing.T) {
	b := sqltest.Shared(t, "metacache")[0]
	base, _, _ := strings.Cut(b.DSN, "?")
	db, err := sql.Open("mysql", base+"?parseTime=true&loc=UTC")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := metadata.CreateTable(ctx, db, ""); err != nil {
		t.Fatal(err)
	}
	b.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES "+
		"('orders_202412', '2024-12-01', '2024-12-31 23:59:59', 1), ('orders_202501', '2025-01-01', '2025-01-31 23:59:59', 1)")
	c, err := New(metadata.NewSQLSource(db, ""), Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	from, to := at(t, "2024-12-01"), at(t, "2025-01-15")
	if got := names(c.Snapshot().Overlapping("orders", from, to, false)); !slices.Equal(got, []string{"orders_202412", "orders_202501"}) {
		t.Fatalf("before migration: %v", got)
	}

	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot, location) VALUES ('orders_202412_h', '2024-12-01', '2024-12-20 23:59:59', 0, 'history')",
		"UPDATE shard_metadata SET min_time = '2024-12-21' WHERE table_name = 'orders_202412'",
	} {
		if _, err := tx.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	got := c.Snapshot().Overlapping("orders", at(t, "2024-12-10"), at(t, "2024-12-15"), false)
	if len(got) != 1 || got[0].Name != "orders_202412_h" || got[0].Location != "history" || got[0].Hot {
		t.Fatalf("after migration, Dec 10-15 is served by %+v, want orders_202412_h on history", got)
	}
	got = c.Snapshot().Overlapping("orders", at(t, "2024-12-25"), at(t, "2025-01-05"), false)
	if names(got)[0] != "orders_202412" || len(got) != 2 || !got[0].Hot {
		t.Fatalf("after migration, Dec 25 - Jan 5 is served by %+v", got)
	}
}
