package metadata

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/sqltest"
)

// The real-server tests each get a fresh database on the shared MariaDB (sqltest.Shared:
// OBROUTE_TEST_DSN, default 127.0.0.1:3306), dropped at the end.

// seedSchema is the metadata table without obroute's optional location column.
const seedSchema = `CREATE TABLE %s (
  table_name VARCHAR(64) PRIMARY KEY,
  min_time DATETIME NOT NULL,
  max_time DATETIME NOT NULL,
  is_hot TINYINT NOT NULL DEFAULT 0,
  updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP
)`

// testDatabase creates a database for one test and returns a function that opens it with the
// given DSN parameters (e.g. "parseTime=true&loc=UTC").
func testDatabase(t *testing.T) (open func(params string) *sql.DB) {
	t.Helper()
	base, _, _ := strings.Cut(sqltest.Shared(t, "metadata")[0].DSN, "?")
	return func(params string) *sql.DB {
		t.Helper()
		db, err := sql.Open("mysql", base+"?"+params)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
}

func mustExec(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func TestSQLSourceReadsBothSchemas(t *testing.T) {
	open := testDatabase(t)
	db := open("parseTime=true&loc=UTC&time_zone=%27%2B00%3A00%27")
	if err := CreateTable(context.Background(), db, ""); err != nil {
		t.Fatal(err)
	}
	if err := CreateTable(context.Background(), db, ""); err != nil {
		t.Fatalf("second CreateTable: %v", err)
	}
	mustExec(t, db, "CREATE TABLE seed_metadata"+seedSchema[len("CREATE TABLE %s"):])
	mustExec(t, db, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot, location, updated_at) VALUES "+
		"('orders_202412', '2024-12-01 00:00:00', '2024-12-31 23:59:59', 0, 'history', '2025-01-02 03:04:05'),"+
		"('orders_202501', '2025-01-01 00:00:00', '2025-01-31 23:59:59', 1, NULL, '2025-02-01 00:00:00')")
	mustExec(t, db, "INSERT INTO seed_metadata (table_name, min_time, max_time, is_hot, updated_at) VALUES "+
		"('orders_202412', '2024-12-01 00:00:00', '2024-12-31 23:59:59', 0, '2025-01-02 03:04:05'),"+
		"('orders_202501', '2025-01-01 00:00:00', '2025-01-31 23:59:59', 1, '2025-02-01 00:00:00')")

	want := func(location string) []Table {
		return []Table{
			{Name: "orders_202412", Min: at(t, "2024-12-01"), Max: at(t, "2024-12-31 23:59:59"), Hot: false, Location: location,
				UpdatedAt: at(t, "2025-01-02 03:04:05")},
			{Name: "orders_202501", Min: at(t, "2025-01-01"), Max: at(t, "2025-01-31 23:59:59"), Hot: true,
				UpdatedAt: at(t, "2025-02-01 00:00:00")},
		}
	}
	tests := []struct {
		table  string
		params string
		want   []Table
	}{
		{"", "parseTime=true&loc=UTC", want("history")},
		{"shard_metadata", "parseTime=true&loc=UTC", want("history")},
		{"seed_metadata", "parseTime=true&loc=UTC", want("")},
		// The DSN's time settings and the session time zone do not move times.
		{"shard_metadata", "", want("history")},
		{"seed_metadata", "parseTime=true&loc=Asia%2FShanghai&time_zone=%27%2B08%3A00%27", want("")},
	}
	for _, tt := range tests {
		t.Run(tt.table+"?"+tt.params, func(t *testing.T) {
			got, err := NewSQLSource(open(tt.params), tt.table).Load(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			slices.SortFunc(got, compareTables)
			if len(got) != len(tt.want) {
				t.Fatalf("Load = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if g.Name != w.Name || !g.Min.Equal(w.Min) || !g.Max.Equal(w.Max) || g.Hot != w.Hot || g.Location != w.Location || !g.UpdatedAt.Equal(w.UpdatedAt) {
					t.Errorf("table %d = %+v, want %+v", i, g, w)
				}
				if g.Min.Location() != time.UTC || g.Max.Location() != time.UTC {
					t.Errorf("table %d times are not UTC: %v, %v", i, g.Min, g.Max)
				}
			}
		})
	}

	t.Run("location column added later", func(t *testing.T) {
		src := NewSQLSource(db, "seed_metadata")
		mustExec(t, db, "ALTER TABLE seed_metadata ADD COLUMN location VARCHAR(64) NULL")
		mustExec(t, db, "UPDATE seed_metadata SET location = 'archive' WHERE table_name = 'orders_202412'")
		got, err := src.Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(got, compareTables)
		if got[0].Location != "archive" || got[1].Location != "" {
			t.Fatalf("Load after ALTER TABLE = %+v", got)
		}
	})
}

func TestSQLSourceErrors(t *testing.T) {
	open := testDatabase(t)
	db := open("parseTime=true&loc=UTC")
	mustExec(t, db, "CREATE TABLE no_is_hot (table_name VARCHAR(64) PRIMARY KEY, min_time DATETIME NOT NULL, max_time DATETIME NOT NULL)")
	if err := CreateTable(context.Background(), db, "bad_rows"); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "CREATE TABLE reversed LIKE bad_rows")
	mustExec(t, db, "INSERT INTO reversed (table_name, min_time, max_time) VALUES ('t_1', '2025-02-01', '2025-01-01')")

	tests := []struct {
		table string
		want  error // nil: any error
	}{
		{"no_is_hot", ErrSchema},
		{"missing_table", nil},
		{"reversed", nil}, // loads; NewSnapshot rejects it
		{"bad name", ErrInvalidIdentifier},
		{"a.b.c", ErrInvalidIdentifier},
		{"x`; DROP TABLE t", ErrInvalidIdentifier},
	}
	for _, tt := range tests {
		t.Run(tt.table, func(t *testing.T) {
			tables, err := NewSQLSource(db, tt.table).Load(context.Background())
			if tt.table == "reversed" {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := NewSnapshot(tables, time.Time{}); !errors.Is(err, ErrInvalidTable) {
					t.Fatalf("NewSnapshot of a reversed row = %v, want ErrInvalidTable", err)
				}
				return
			}
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("Load = %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := NewSQLSource(nil, "").Load(context.Background()); err == nil {
		t.Fatal("Load with a nil db succeeded")
	}
}

func TestSQLSourceQualifiedName(t *testing.T) {
	open := testDatabase(t)
	db := open("parseTime=true&loc=UTC")
	var schema string
	if err := db.QueryRow("SELECT DATABASE()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if err := CreateTable(context.Background(), db, schema+".meta"); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "INSERT INTO meta (table_name, min_time, max_time) VALUES ('t_1', '2025-01-01', '2025-01-02')")
	server := os.Getenv(sqltest.EnvTestDSN)
	if server == "" {
		server = sqltest.DefaultTestDSN
	}
	other, err := sql.Open("mysql", server+"mysql") // another default database
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	got, err := NewSQLSource(other, schema+".meta").Load(context.Background())
	if err != nil || len(got) != 1 || got[0].Name != "t_1" {
		t.Fatalf("Load(%s.meta) = %+v, %v", schema, got, err)
	}
}

func TestMarkHot(t *testing.T) {
	open := testDatabase(t)
	db := open("parseTime=true&loc=UTC&time_zone=%27%2B00%3A00%27")
	ctx := context.Background()
	if err := CreateTable(ctx, db, ""); err != nil {
		t.Fatal(err)
	}
	const old = "2025-01-01 00:00:00"
	mustExec(t, db, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot, updated_at) VALUES "+
		"('orders_202411', '2024-11-01 00:00:00', '2024-11-30 23:59:59', 1, ?),"+ // hot -> cold
		"('orders_202412', '2024-12-01 00:00:00', '2024-12-31 23:59:59', 0, ?),"+ // cold, one second before the boundary
		"('late_202412', '2024-12-01 00:00:00', '2025-01-01 00:00:00', 0, ?),"+ // cold -> hot: max_time at the boundary
		"('orders_202501', '2025-01-01 00:00:00', '2025-01-31 23:59:59', 1, ?),"+ // stays hot
		"('orders_202502', '2025-02-01 00:00:00', '2025-02-28 23:59:59', 2, ?),"+ // odd flag 2 -> 1
		"('orders_202503', '2025-03-01 00:00:00', '2025-03-31 23:59:59', 0, ?)", // cold -> hot
		old, old, old, old, old, old)

	// Months=2 on 2025-03-15: the window starts 2025-01-01 00:00:00.
	now := time.Date(2025, 3, 15, 10, 0, 0, 0, time.UTC)
	res, err := MarkHot(ctx, db, "", HotWindow{Months: 2}, now)
	if err != nil {
		t.Fatal(err)
	}
	want := MarkResult{Boundary: at(t, "2025-01-01"), BecameHot: 3, BecameCold: 1, Hot: 4, Cold: 2}
	if res != want {
		t.Fatalf("MarkHot = %+v, want %+v", res, want)
	}
	rows, err := db.Query("SELECT table_name, is_hot, updated_at <> ? FROM shard_metadata ORDER BY table_name", old)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type row struct {
		name    string
		hot     int
		touched bool
	}
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.name, &r.hot, &r.touched); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	wantRows := []row{
		{"late_202412", 1, true},
		{"orders_202411", 0, true},
		{"orders_202412", 0, false},
		{"orders_202501", 1, false},
		{"orders_202502", 1, true},
		{"orders_202503", 1, true},
	}
	if !slices.Equal(got, wantRows) {
		t.Fatalf("rows after MarkHot = %+v, want %+v", got, wantRows)
	}

	again, err := MarkHot(ctx, db, "", HotWindow{Months: 2}, now)
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed() != 0 || again.Hot != 4 || again.Cold != 2 {
		t.Fatalf("second MarkHot = %+v, want no change", again)
	}

	// A day later in UTC+8, with Days=1: the window starts at 2025-03-31
	// 00:00 UTC+8, which is 2025-03-30 16:00 UTC in max_time's terms.
	mustExec(t, db, "UPDATE shard_metadata SET max_time = '2025-03-30 16:00:00' WHERE table_name = 'orders_202503'")
	mustExec(t, db, "UPDATE shard_metadata SET max_time = '2025-03-30 15:59:59' WHERE table_name = 'orders_202502'")
	shanghai := time.FixedZone("UTC+8", 8*3600)
	res, err = MarkHot(ctx, db, "", HotWindow{Days: 1}, time.Date(2025, 3, 31, 9, 0, 0, 0, shanghai))
	if err != nil {
		t.Fatal(err)
	}
	if res.Hot != 1 || res.BecameCold != 3 || res.BecameHot != 0 || !res.Boundary.Equal(at(t, "2025-03-30 16:00:00")) {
		t.Fatalf("MarkHot with Days=1 in UTC+8 = %+v", res)
	}
}

func TestMarkHotSeedSchemaAndErrors(t *testing.T) {
	open := testDatabase(t)
	db := open("")
	ctx := context.Background()
	mustExec(t, db, "CREATE TABLE seed_metadata"+seedSchema[len("CREATE TABLE %s"):])
	mustExec(t, db, "INSERT INTO seed_metadata (table_name, min_time, max_time) VALUES "+
		"('orders_202401', '2024-01-01', '2024-01-31 23:59:59'), ('orders_202503', '2025-03-01', '2025-03-31 23:59:59')")
	res, err := MarkHot(ctx, db, "seed_metadata", HotWindow{Days: 90}, time.Date(2025, 3, 31, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if want := (MarkResult{Boundary: at(t, "2025-01-01"), BecameHot: 1, Hot: 1, Cold: 1}); res != want {
		t.Fatalf("MarkHot = %+v, want %+v", res, want)
	}
	if _, err := MarkHot(ctx, db, "seed_metadata", HotWindow{}, time.Now()); !errors.Is(err, ErrInvalidHotWindow) {
		t.Fatalf("MarkHot with an unset window = %v", err)
	}
	if _, err := MarkHot(ctx, db, "seed metadata", HotWindow{Days: 1}, time.Now()); !errors.Is(err, ErrInvalidIdentifier) {
		t.Fatalf("MarkHot with a bad table name = %v", err)
	}
	if _, err := MarkHot(ctx, db, "missing", HotWindow{Days: 1}, time.Now()); err == nil {
		t.Fatal("MarkHot on a missing table succeeded")
	}
}
