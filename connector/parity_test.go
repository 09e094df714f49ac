package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/internal/rowscan"
	"github.com/obroute/obroute/sqltest"
)

// Changing "mysql" to "obroute" with a plain go-sql-driver DSN changes nothing an application
// sees: column types, values (text and binary protocol), errors.
func TestDropInParityWithGoSQLDriver(t *testing.T) {
	b := sqltest.Shared(t, "parity")[0]
	b.Exec(t, `CREATE TABLE kinds (
		id INT PRIMARY KEY, big BIGINT UNSIGNED, d DECIMAL(12,3), f DOUBLE, s VARCHAR(20) NOT NULL,
		t TEXT, bl BLOB, dt DATETIME(3), dd DATE, ts TIMESTAMP NULL, j JSON, e ENUM('a','b'), bt BIT(4), y YEAR)`)
	b.Exec(t, `INSERT INTO kinds VALUES
		(1, 18446744073709551615, 123.456, 1.5, 'x', 'long', 0x00ff, '2025-03-01 10:00:00.123', '2025-03-01', '2025-03-01 10:00:00', '{"a":1}', 'b', b'1010', 2025),
		(2, NULL, NULL, NULL, '', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`)
	plain, err := sql.Open("mysql", b.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	routed, err := sql.Open("obroute", b.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer routed.Close()

	const q = "SELECT * FROM kinds ORDER BY id"
	for _, tc := range []struct {
		name string
		args []any
	}{{"text protocol", nil}, {"binary protocol", []any{0}}} {
		t.Run(tc.name, func(t *testing.T) {
			query := q
			if tc.args != nil {
				query = "SELECT * FROM kinds WHERE id > ? ORDER BY id"
			}
			want := readAll(t, plain, query, tc.args...)
			got := readAll(t, routed, query, tc.args...)
			if !reflect.DeepEqual(got.types, want.types) {
				t.Errorf("column types differ:\nobroute %+v\nmysql   %+v", got.types, want.types)
			}
			if !reflect.DeepEqual(got.rows, want.rows) {
				t.Errorf("values differ:\nobroute %#v\nmysql   %#v", got.rows, want.rows)
			}
		})
	}

	// Errors: same type, same number, same message.
	for _, query := range []string{"SELECT * FROM no_such_table", "SELEKT 1", "INSERT INTO kinds (id, s) VALUES (1, 'dup')"} {
		_, perr := plain.Exec(query)
		_, rerr := routed.Exec(query)
		var pm, rm *mysql.MySQLError
		if !errors.As(perr, &pm) || !errors.As(rerr, &rm) {
			t.Fatalf("%q: errors %T %v / %T %v, want *mysql.MySQLError from both", query, perr, perr, rerr, rerr)
		}
		if pm.Number != rm.Number || pm.Message != rm.Message {
			t.Errorf("%q: obroute %v, mysql %v", query, rerr, perr)
		}
		if _, ok := rerr.(*mysql.MySQLError); !ok {
			t.Errorf("%q: obroute's error is %T, want *mysql.MySQLError itself (type assertion)", query, rerr)
		}
	}
	// A context cancelled while the statement runs on the server: the same error value.
	for name, db := range map[string]*sql.DB{"mysql": plain, "obroute": routed} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err := db.ExecContext(ctx, "SELECT SLEEP(3)")
		cancel()
		if err != context.DeadlineExceeded {
			t.Errorf("%s: statement past its deadline: err = %v, want context.DeadlineExceeded by ==", name, err)
		}
	}
	// uint64 with the high bit set is accepted as go-sql-driver accepts it.
	var n int
	if err := routed.QueryRow("SELECT COUNT(*) FROM kinds WHERE big = ?", uint64(18446744073709551615)).Scan(&n); err != nil || n != 1 {
		t.Errorf("uint64 argument: n=%d err=%v", n, err)
	}
}

type columnType struct {
	Name, DatabaseType, ScanType string
	Length                       int64
	HasLength                    bool
	Precision, Scale             int64
	HasDecimal                   bool
	Nullable, HasNullable        bool
}

type result struct {
	types []columnType
	rows  [][]any
}

func readAll(t *testing.T, db *sql.DB, query string, args ...any) result {
	t.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	var r result
	for _, ct := range cts {
		c := columnType{Name: ct.Name(), DatabaseType: ct.DatabaseTypeName(), ScanType: ct.ScanType().String()}
		c.Length, c.HasLength = ct.Length()
		c.Precision, c.Scale, c.HasDecimal = ct.DecimalSize()
		c.Nullable, c.HasNullable = ct.Nullable()
		r.types = append(r.types, c)
	}
	for rows.Next() {
		vals := make([]any, len(cts))
		ptrs := rowscan.Targets(vals)
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		r.rows = append(r.rows, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return r
}
