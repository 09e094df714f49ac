package difftest_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/internal/difftest"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// dupRows are rows of a table without a key: whole rows repeated, and strings its collation
// (utf8mb4_general_ci, PAD SPACE) holds equal ('a', 'A', 'a '), in cold and hot months and on
// the tables' edges.
var dupRows = []string{
	"('2024-11-05 10:00:00', 1, 'a')", "('2024-11-05 10:00:00', 1, 'a')", "('2024-11-05 10:00:00', 1, 'A')",
	"('2024-11-05 10:00:00', 1, 'a ')", "('2024-11-05 10:00:00', 2, 'a')", "('2024-11-30 23:59:59', NULL, NULL)",
	"('2024-11-30 23:59:59', NULL, NULL)", "('2024-12-01 00:00:00', 1, 'a')", "('2024-12-01 00:00:00', 1, 'A')",
	"('2024-12-31 23:59:59', 3, 'b')", "('2025-01-01 00:00:00', 3, 'b')", "('2025-01-01 00:00:00', 3, 'B ')",
	"('2025-01-01 00:00:00', 3, 'b')", "('2025-02-14 08:00:00', 4, 'c')", "('2025-02-14 08:00:00', 4, 'c')",
}

// TestDistinctStarAcrossTables runs SELECT DISTINCT * and t.* over a table without a key whose
// rows repeat within each monthly table, through obroute over hot and cold and on one server
// holding every row: the same number of rows, and the same rows once strings are compared as
// the collation compares them (which of 'a' and 'A' a DISTINCT keeps is the server's choice).
func TestDistinctStarAcrossTables(t *testing.T) {
	bs := sqltest.Shared(t, "ref", "hot", "cold")
	ref, hot, cold := bs[0], bs[1], bs[2]
	const create = "CREATE TABLE %s (t DATETIME NOT NULL, n INT NULL, s VARCHAR(8) NULL) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
	ref.Exec(t, fmt.Sprintf(create, "dup"))
	ref.Exec(t, "INSERT INTO dup VALUES "+strings.Join(dupRows, ", "))
	if err := metadata.CreateTable(context.Background(), hot.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	for _, tb := range difftest.MonthlyTables("dup", time.Date(2024, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), boundary) {
		b := cold
		if tb.Hot {
			b = hot
		}
		b.Exec(t, fmt.Sprintf(create, tb.Name))
		var rows []string
		for _, r := range dupRows {
			if at := r[2:21]; at >= tb.Min.Format(time.DateTime) && at <= tb.Max.Format(time.DateTime) {
				rows = append(rows, r)
			}
		}
		if len(rows) > 0 {
			b.Exec(t, "INSERT INTO "+tb.Name+" VALUES "+strings.Join(rows, ", "))
		}
		hot.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES (?, ?, ?, ?)",
			tb.Name, tb.Min.Format(time.DateTime), tb.Max.Format(time.DateTime), tb.Hot)
	}
	for p, param := range []string{"&interpolateParams=true", ""} {
		refDB := openMySQL(t, ref.DSN+param)
		_, ob := openObrouteConfig(t, &config.Config{
			Backends: []config.Backend{
				{Name: "hot", Role: "hot", DSN: hot.DSN + param},
				{Name: "cold", Role: "cold", DSN: cold.DSN + param},
			},
			TimeTables: []config.TimeTable{{Table: "dup", ShardKey: "t", HotWindow: config.HotWindow(window)}},
			Metadata:   config.Metadata{Backend: "hot"},
		}, clockNow)
		for _, q := range []string{
			"SELECT DISTINCT * FROM dup WHERE t >= ? AND t < ?",
			"SELECT DISTINCT d.* FROM dup d WHERE t >= ? AND t < ? AND (s IS NULL OR s <> 'zz')",
			"SELECT DISTINCT * FROM dup WHERE t >= ? AND t < ? ORDER BY t DESC",
			"SELECT DISTINCT * FROM dup WHERE t >= ? AND t < ? LIMIT 100",
		} {
			args := []any{"2024-11-01", "2025-03-01"}
			want, err := distinctRows(refDB, q, args)
			if err != nil {
				t.Fatalf("%s: reference: %v", q, err)
			}
			got, err := distinctRows(ob, q, args)
			if err != nil {
				t.Errorf("%s (%s): obroute: %v", q, protocols[p], err)
				continue
			}
			if strings.Contains(q, "ORDER BY t DESC") && !slices.IsSortedFunc(got, func(a, b string) int { return strings.Compare(b[:20], a[:20]) }) {
				t.Errorf("%s (%s): not in descending order of t: %q", q, protocols[p], got)
			}
			slices.Sort(want)
			slices.Sort(got)
			if len(want) != 7 {
				t.Fatalf("%s: the reference returns %d rows, the data has 7 distinct ones: %q", q, len(want), want)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s (%s):\n got %q\nwant %q", q, protocols[p], got, want)
			}
		}
	}
}

// distinctRows returns q's rows, each as its values joined, strings folded as
// utf8mb4_general_ci compares them (lower case, trailing spaces cut).
func distinctRows(db *sql.DB, q string, args []any) ([]string, error) {
	rows, err := db.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var at, n, s sql.NullString
		if err := rows.Scan(&at, &n, &s); err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("%s|%s|%q", at.String, n.String, strings.ToLower(strings.TrimRight(s.String, " "))))
	}
	return out, rows.Err()
}
