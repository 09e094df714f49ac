package routing

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/internal/shadow"
	"github.com/obroute/obroute/sqltest"
)

// shadowTypes are the column types whose values the column algorithms read, and some they refuse.
var shadowTypes = []struct{ table, ddl string }{
	{"s_int", "INT"}, {"s_uint", "INT UNSIGNED"}, {"s_tiny", "TINYINT"}, {"s_big", "BIGINT"},
	{"s_dec", "DECIMAL(10,2)"}, {"s_dec0", "DECIMAL(5,0)"},
	{"s_vbin", "VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"}, {"s_cbin", "CHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"},
	{"s_nopad", "VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin"}, {"s_latin", "VARCHAR(20) CHARACTER SET latin1 COLLATE latin1_bin"},
	{"s_vbinary", "VARBINARY(20)"}, {"s_text", "TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"},
	{"s_ci", "VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"}, {"s_double", "DOUBLE"},
}

// shadowSpellings are ways of writing a value: numbers, strings, hexadecimal and bit literals,
// booleans, NULL, constant expressions; an int, string, float, bool or nil argument (?).
var shadowSpellings = []string{
	"0", "-0", "+0", "00", "0.0", "0.4", "0.5", "-0.4", "-0.5", "0.49", "0.005", "0.001", "0.0049",
	"0e0", "-0e0", "0.5e0", "1.5e0", "2.5e0", "-0.5e0", "0.4e0", "4e-1", "0.0e5",
	"0x0", "0x00", "0x30", "0x41", "X'30'", "X'00'", "X'3020'", "b'0'", "b'110000'",
	"'0'", "'00'", "'0.0'", "' 0'", "'0 '", "'0  '", "'\t0'", "'0e0'", "'+0'", "'-0'", "'0.4'", "'0.5'",
	"'0.5e0'", "'0x0'", "''", "'abc'", "'0abc'", "' '",
	"TRUE", "FALSE", "NULL", "1-1", "3*0", "-(0)", "0+0.0", "'0'+0", "0-0e0", "2*0.25",
	"7", "'7'", "7.0", "7e0", "65", "'A'", "255", "256", "-1", "-128", "-129", "2147483648",
	"9223372036854775807", "18446744073709551615", "99999999.995", "123456789", "'00000'", "'test'",
}

var shadowArgs = []any{int64(0), int64(7), "0", "0 ", "00", []byte("0"), float64(0), float64(0.5), float64(7), nil, true, false, uint64(0)}

// The column algorithms read a value as the server stores and compares it: for every column
// type, spelling and argument, an INSERT the router classifies as shadow (production) stores a
// value equal (not equal) to the shadow value in the server's own comparison, and a WHERE the
// router classifies as shadow (production) reaches only rows that are (are not) shadow rows on
// the server. Refused statements are counted, not checked.
//
// CI reads a part of the matrix (nine column types, strict sql_mode for INSERT … SELECT and
// REPLACE, four WHERE forms per spelling); with OBROUTE_SHADOW_STATEMENTS set (the full runs of
// the shadow tests) it reads all of it.
func TestShadowValuesAsTheServerReadsThem(t *testing.T) {
	full := os.Getenv("OBROUTE_SHADOW_STATEMENTS") != ""
	types := shadowTypes
	if !full {
		types = slices.DeleteFunc(slices.Clone(types), func(ty struct{ table, ddl string }) bool {
			return slices.Contains([]string{"s_tiny", "s_big", "s_dec0", "s_nopad", "s_text"}, ty.table)
		})
	}
	b := sqltest.Shared(t, "shadowvalues")[0]
	ctx := context.Background()
	conn, err := b.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec := func(q string, args ...any) error { _, err := conn.ExecContext(ctx, q, args...); return err }
	var tables []shadow.Table
	var algs []shadow.Algorithm
	for _, ty := range types {
		for _, q := range []string{
			"CREATE TABLE " + ty.table + " (id INT PRIMARY KEY, v " + ty.ddl + ")",
			"CREATE TABLE " + ty.table + "_cfg (v " + ty.ddl + ")",
			"INSERT INTO " + ty.table + "_cfg VALUES ('0')",
		} {
			if err := exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		var names []string
		for _, op := range []string{shadow.OpInsert, shadow.OpSelect} {
			algs = append(algs, shadow.Algorithm{Name: ty.table + op, Kind: shadow.KindValueMatch, Column: "v", Operation: op, Values: []string{"0"}})
			names = append(names, ty.table+op)
		}
		tables = append(tables, shadow.Table{Name: ty.table, Algorithms: names})
	}
	r, err := New(Config{
		Settings: &config.Config{Backends: []config.Backend{{Name: "hot", Role: config.RoleHot}, {Name: "shadow_hot", Role: config.RoleShadow}}, Default: "hot"},
		Shadow:   &shadow.Rule{Shadow: config.Shadow{Mappings: []shadow.Mapping{{Production: "hot", Shadow: "shadow_hot"}}, Algorithms: algs, Tables: tables}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, ty := range types {
		def := readDefinition(t, conn, ty.table)
		r.SetTableDefinition("hot", "", ty.table, def)
		r.SetTableDefinition("shadow_hot", "", ty.table, def)
	}
	verdict := func(q string, args []any) string {
		named := make([]driver.NamedValue, len(args))
		for i, a := range args {
			named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
			if v, ok := a.([]byte); ok {
				named[i].Value = v
			}
			if v, ok := a.(bool); ok {
				named[i].Value = v
			}
		}
		p, err := r.Route(Input{Statement: r.Analyze(q), Args: named, Session: &SessionState{}})
		switch {
		case err == nil && p.Shadow:
			return "shadow"
		case err == nil:
			return "production"
		case errors.Is(err, ErrMixedShadow):
			return "mixed"
		case errors.Is(err, ErrUnreadable):
			return "unread"
		}
		t.Fatalf("%s %v: %v", q, args, err)
		return ""
	}
	type value struct {
		text string
		args []any
	}
	var values []value
	for _, s := range shadowSpellings {
		values = append(values, value{text: s})
	}
	for _, a := range shadowArgs {
		values = append(values, value{text: "?", args: []any{a}})
	}
	counts := map[string]int{}
	for _, mode := range []string{"", "STRICT_TRANS_TABLES"} {
		if err := exec("SET SESSION sql_mode = ?", mode); err != nil {
			t.Fatal(err)
		}
		for _, ty := range types {
			if err := exec("DELETE FROM " + ty.table); err != nil {
				t.Fatal(err)
			}
			id := 0
			inserted := map[int]insertCase{}
			for _, v := range values {
				forms := []string{"INSERT INTO %s (id, v) VALUES (%d, %s)", "INSERT INTO %s (id, v) SELECT %d, %s", "REPLACE INTO %s VALUES (%d, %s)"}
				if !full && mode == "" {
					forms = forms[:1]
				}
				for _, form := range forms {
					id++
					q := fmt.Sprintf(form, ty.table, id, v.text)
					got := verdict(q, v.args)
					counts["insert "+got]++
					if err := exec(q, v.args...); err == nil { // else the server refuses it: no row anywhere
						inserted[id] = insertCase{q: q, args: v.args, got: got}
					}
				}
			}
			rows, err := conn.QueryContext(ctx, fmt.Sprintf("SELECT t.id, IFNULL(t.v = c.v, 0) FROM %s t JOIN %s_cfg c", ty.table, ty.table))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var rid int
				var shadowRow bool
				if err := rows.Scan(&rid, &shadowRow); err != nil {
					t.Fatal(err)
				}
				if c := inserted[rid]; c.got == "shadow" && !shadowRow || c.got == "production" && shadowRow {
					t.Errorf("sql_mode %q, %s: %s %v: router says %s, the server stored a row that is a shadow row: %v", mode, ty.ddl, c.q, c.args, c.got, shadowRow)
				}
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
			if mode == "" {
				continue // a comparison does not depend on strict mode: read once
			}
			if err := exec("INSERT INTO " + ty.table + " (id, v) VALUES (100000, NULL)"); err != nil {
				t.Fatal(err)
			}
			conds := []string{"v = %s", "%s = v", "v <> %s", "v IN (%s, 7)", "v IN (%s)", "v < %s", "v >= %s", "v BETWEEN %s AND 7",
				"v = %s OR id < 0", "NOT (v = %s)", "v <=> %s", "v NOT IN (%s)", "v = %s AND id > 0"}
			for i, v := range values {
				for j, cond := range conds {
					if !full && (j-i%len(conds)+len(conds))%len(conds) >= 4 {
						continue // four forms per spelling, another four for the next
					}
					where := fmt.Sprintf(cond, v.text)
					q := "SELECT v FROM " + ty.table + " WHERE " + where
					got := verdict(q, v.args)
					counts["where "+got]++
					if got != "shadow" && got != "production" {
						continue
					}
					var matched, shadowRows sql.NullInt64
					err := conn.QueryRowContext(ctx, fmt.Sprintf("SELECT COUNT(*), SUM(t.v = c.v) FROM %s t, %s_cfg c WHERE %s", ty.table, ty.table, strings.ReplaceAll(where, "v", "t.v")), v.args...).Scan(&matched, &shadowRows)
					if err != nil {
						continue
					}
					if got == "shadow" && shadowRows.Int64 != matched.Int64 || got == "production" && shadowRows.Int64 != 0 {
						t.Errorf("sql_mode %q, %s: WHERE %s %v: router says %s, the server reaches %d rows, %d shadow rows", mode, ty.ddl, where, v.args, got, matched.Int64, shadowRows.Int64)
					}
				}
			}
		}
	}
	t.Logf("verdicts: %v", counts)
	if counts["insert shadow"] < 300 || counts["insert production"] < 300 || counts["where shadow"] < 150 || counts["where production"] < 300 {
		t.Errorf("too few statements read (%v): the test checks little", counts)
	}
}

// insertCase is an INSERT the server accepted and what the router said of it.
type insertCase struct {
	q    string
	args []any
	got  string
}

// readDefinition reads a table's definition from information_schema, as the connector does.
func readDefinition(t *testing.T, conn *sql.Conn, table string) TableColumns {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IFNULL(NUMERIC_PRECISION, 0), IFNULL(NUMERIC_SCALE, 0), "+
		"IFNULL(CHARACTER_MAXIMUM_LENGTH, 0), IFNULL(COLLATION_NAME, ''), COLUMN_DEFAULT, EXTRA FROM information_schema.COLUMNS "+
		"WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION", table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var def TableColumns
	for rows.Next() {
		var c TableColumn
		var d sql.NullString
		if err := rows.Scan(&c.Name, &c.DataType, &c.ColumnType, &c.Precision, &c.Scale, &c.MaxLength, &c.Collation, &d, &c.Extra); err != nil {
			t.Fatal(err)
		}
		if d.Valid {
			c.Default = &d.String
		}
		def.Columns = append(def.Columns, c)
	}
	return def
}
