package difftest_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/internal/difftest"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// createGroupedSQL is the table of the grouped-results tests (issue 22, classes 3 to 7): FLOAT,
// ENUM, SET and JSON columns next to integers and text, NULLs in each.
const createGroupedSQL = `CREATE TABLE %s (
  id BIGINT NOT NULL PRIMARY KEY,
  t_time DATETIME NOT NULL,
  user_id INT NULL,
  status VARCHAR(16) NULL,
  qty INT NULL,
  f FLOAT NULL,
  e ENUM('new', 'paid', 'shipped', 'Refunded') NULL,
  st SET('x', 'y', 'z') NULL,
  j JSON NULL,
  amount DECIMAL(12,2) NULL,
  k TINYINT NOT NULL,
  KEY idx_time (t_time)
) DEFAULT CHARSET=utf8mb4`

// groupedCluster holds the grouped data set in one reference table and in monthly tables on
// hot and cold, with obroute over hot and cold, each in the text protocol and in the binary one.
type groupedCluster struct {
	refDB, obDB [2]*sql.DB
}

// groupedRows draws n rows of the grouped data set (as INSERT value lists) from seed.
func groupedRows(seed uint64, n int) (rows []string, times []time.Time) {
	r := rand.New(rand.NewPCG(seed, 22))
	span := dataTo.Sub(dataFrom)
	or := func(p float64, v string) string {
		if r.Float64() < p {
			return "NULL"
		}
		return v
	}
	statuses := []string{"new", "paid", "shipped", "refunded", "void"}
	enums := []string{"new", "paid", "shipped", "Refunded"}
	sets := []string{"", "x", "y", "z", "x,y", "x,z", "y,z", "x,y,z"}
	for i := range n {
		at := dataFrom.Add(time.Duration(r.Int64N(int64(span/time.Second))) * time.Second)
		times = append(times, at)
		rows = append(rows, fmt.Sprintf("(%d, '%s', %s, %s, %s, %s, %s, %s, %s, %s, %d)", i+1, at.Format(time.DateTime),
			or(0.1, fmt.Sprint(r.IntN(12))),
			or(0.1, "'"+statuses[r.IntN(len(statuses))]+"'"),
			or(0.1, fmt.Sprint(r.IntN(10))),
			or(0.1, fmt.Sprintf("%d.%02d", r.IntN(2000)-500, r.IntN(100))),
			or(0.1, "'"+enums[r.IntN(len(enums))]+"'"),
			or(0.1, "'"+sets[r.IntN(len(sets))]+"'"),
			or(0.1, fmt.Sprintf(`'{"k": %d, "s": "%s"}'`, r.IntN(6), statuses[r.IntN(len(statuses))])),
			or(0.1, fmt.Sprintf("%d.%02d", r.IntN(900), r.IntN(100))), r.IntN(4)))
	}
	return rows, times
}

func newGroupedCluster(t *testing.T, seed uint64, n int) *groupedCluster {
	t.Helper()
	bs := sqltest.Shared(t, "ref", "hot", "cold")
	ref, hot, cold := bs[0], bs[1], bs[2]
	rows, times := groupedRows(seed, n)
	tables := difftest.MonthlyTables("g", dataFrom, dataTo.AddDate(0, -1, 0), boundary)
	insert := func(b *sqltest.Backend, table string, rows []string) {
		b.Exec(t, fmt.Sprintf(createGroupedSQL, table))
		for len(rows) > 0 {
			k := min(len(rows), 200)
			b.Exec(t, "INSERT INTO "+table+" VALUES "+strings.Join(rows[:k], ", "))
			rows = rows[k:]
		}
	}
	insert(ref, "g", rows)
	if err := metadata.CreateTable(context.Background(), hot.DB, metadata.DefaultTable); err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		var part []string
		for i, at := range times {
			if !at.Before(tb.Min) && !at.After(tb.Max) {
				part = append(part, rows[i])
			}
		}
		b := cold
		if tb.Hot {
			b = hot
		}
		insert(b, tb.Name, part)
		hot.Exec(t, "INSERT INTO shard_metadata (table_name, min_time, max_time, is_hot) VALUES (?, ?, ?, ?)",
			tb.Name, tb.Min.Format(time.DateTime), tb.Max.Format(time.DateTime), tb.Hot)
	}
	c := &groupedCluster{}
	for p, param := range []string{"&interpolateParams=true", ""} {
		c.refDB[p] = openMySQL(t, ref.DSN+param)
		cfg := &config.Config{
			Backends: []config.Backend{
				{Name: "hot", Role: "hot", DSN: hot.DSN + param},
				{Name: "cold", Role: "cold", DSN: cold.DSN + param},
			},
			TimeTables: []config.TimeTable{{Table: "g", ShardKey: "t_time", HotWindow: config.HotWindow(window)}},
			Metadata:   config.Metadata{Backend: "hot"},
		}
		_, c.obDB[p] = openObrouteConfig(t, cfg, clockNow)
	}
	return c
}

// groupedCase is one statement over the grouped data set; ordered: its rows' order is one
// server's (compared in order).
type groupedCase struct {
	sql     string
	ordered bool
}

// runGrouped runs each statement on the reference and through obroute in both protocols and
// compares rows and the six column type properties.
func (c *groupedCluster) runGrouped(t *testing.T, cases []groupedCase) {
	t.Helper()
	ctx := context.Background()
	for p := range protocols {
		for _, tc := range cases {
			want, got, ms := diffTypes(ctx, c.refDB[p], c.obDB[p], tc.sql, nil)
			if want != nil {
				if err := difftest.Compare(want.rows, got.rows, tc.ordered); err != nil {
					ms = append(ms, mismatch{"rows", err})
				}
			}
			for _, m := range ms {
				t.Errorf("%s: %s: %s: %v", strings.Fields(protocols[p])[0], tc.sql, m.class, m.err)
			}
		}
	}
}

// groupedWhere spans cold and hot tables.
const groupedWhere = " FROM g WHERE t_time >= '2024-09-10' AND t_time < '2025-02-20'"

// TestGroupedOrder: GROUP BY without ORDER BY returns the groups ordered by the GROUP BY keys,
// as MariaDB does (so LIMIT keeps the first groups in that order); ORDER BY NULL leaves the
// order unspecified (issue 22, class 5).
func TestGroupedOrder(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	c.runGrouped(t, []groupedCase{
		{"SELECT qty, COUNT(*)" + groupedWhere + " GROUP BY qty", true},
		{"SELECT qty, COUNT(*)" + groupedWhere + " GROUP BY qty LIMIT 3", true},
		{"SELECT COUNT(*), qty" + groupedWhere + " GROUP BY qty LIMIT 4 OFFSET 2", true},
		{"SELECT COUNT(*), SUM(amount)" + groupedWhere + " GROUP BY qty LIMIT 4", true},
		{"SELECT user_id, qty, COUNT(*)" + groupedWhere + " GROUP BY user_id, qty LIMIT 7", true},
		{"SELECT qty, user_id, MAX(amount)" + groupedWhere + " GROUP BY user_id, qty LIMIT 9", true},
		{"SELECT status, COUNT(*)" + groupedWhere + " GROUP BY status", true},
		{"SELECT qty % 3 AS m, COUNT(*)" + groupedWhere + " GROUP BY m", true},
		{"SELECT user_id, COUNT(DISTINCT qty)" + groupedWhere + " GROUP BY user_id LIMIT 5", true},
		{"SELECT qty, COUNT(*)" + groupedWhere + " GROUP BY qty HAVING COUNT(*) > 1 LIMIT 5", true},
		{"SELECT qty, COUNT(*)" + groupedWhere + " GROUP BY qty ORDER BY NULL", false},
		{"SELECT qty, COUNT(*)" + groupedWhere + " GROUP BY qty ORDER BY COUNT(*) DESC, qty", true},
	})
}

// refused runs q through obroute and fails unless it is refused with routing.ErrNotMergeable
// and a message saying fix.
func (c *groupedCluster) refused(t *testing.T, q, fix string) {
	t.Helper()
	for p := range protocols {
		rows, err := c.obDB[p].Query(q)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		if !errors.Is(err, routing.ErrNotMergeable) || !strings.Contains(err.Error(), fix) {
			t.Errorf("%s: %s: err = %v, want routing.ErrNotMergeable saying %q", strings.Fields(protocols[p])[0], q, err, fix)
		}
	}
}

// TestGroupedAliasColumn: a GROUP BY name that is a select alias and a column of the table is
// the column to MariaDB (warning 1052): where the alias's value differs from the column's the
// statement is refused, and where it does not, or the name is no column, it is merged as the
// server groups (issue 22, class 6).
func TestGroupedAliasColumn(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	c.refused(t, "SELECT user_id AS status, COUNT(*)"+groupedWhere+" GROUP BY status", "another alias")
	c.refused(t, "SELECT qty AS user_id, SUM(amount)"+groupedWhere+" GROUP BY user_id ORDER BY 2", "another alias")
	c.refused(t, "SELECT UPPER(status) AS status, COUNT(*)"+groupedWhere+" GROUP BY status", "GROUP BY the expression")
	c.refused(t, "SELECT status COLLATE utf8mb4_bin AS status, COUNT(*)"+groupedWhere+" GROUP BY status", "another alias")
	c.runGrouped(t, []groupedCase{
		{"SELECT CONCAT(status) AS status, COUNT(*)" + groupedWhere + " GROUP BY status", true},
		{"SELECT status AS status, COUNT(*)" + groupedWhere + " GROUP BY status", true},
		{"SELECT qty + 1 AS q1, COUNT(*)" + groupedWhere + " GROUP BY q1 LIMIT 4", true},
		{"SELECT user_id AS u, qty, COUNT(*)" + groupedWhere + " GROUP BY u, qty LIMIT 6", true},
	})
}

// TestGroupedFloatDistinct: SUM and AVG of DISTINCT values of a FLOAT column are DOUBLE values,
// as one server gives them (issue 22, class 4).
func TestGroupedFloatDistinct(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	c.runGrouped(t, []groupedCase{
		{"SELECT SUM(DISTINCT f)" + groupedWhere, true},
		{"SELECT AVG(DISTINCT f)" + groupedWhere, true},
		{"SELECT COUNT(DISTINCT f), SUM(DISTINCT f), AVG(DISTINCT f), MIN(f), MAX(f)" + groupedWhere, true},
		{"SELECT qty, SUM(DISTINCT f), AVG(DISTINCT f)" + groupedWhere + " GROUP BY qty", true},
	})
}

// TestGroupedColumnTypes: the column metadata of grouped results is one server's with rows:
// grouped JSON expressions, MIN and MAX of ENUM and SET, WITH ROLLUP, empty results (issue 22,
// class 3).
func TestGroupedColumnTypes(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	c.runGrouped(t, []groupedCase{
		{"SELECT JSON_VALUE(j, '$.s') AS s, COUNT(*)" + groupedWhere + " GROUP BY s", true},
		{"SELECT JSON_EXTRACT(j, '$.k') AS jk, COUNT(*)" + groupedWhere + " GROUP BY jk", true},
		{"SELECT JSON_UNQUOTE(JSON_EXTRACT(j, '$.s')) AS u, COUNT(*)" + groupedWhere + " GROUP BY u", true},
		{"SELECT qty, MIN(e), MAX(e), MIN(st), MAX(st)" + groupedWhere + " GROUP BY qty", true},
		{"SELECT MIN(e), MAX(st), COUNT(*)" + groupedWhere, true},
		{"SELECT status, COUNT(*)" + groupedWhere + " GROUP BY status WITH ROLLUP", true},
		{"SELECT qty, user_id, SUM(amount)" + groupedWhere + " GROUP BY qty, user_id WITH ROLLUP", true},
		{"SELECT k, COUNT(*), MIN(e)" + groupedWhere + " GROUP BY k WITH ROLLUP", true},
		{"SELECT k, qty, COUNT(*)" + groupedWhere + " GROUP BY k, qty WITH ROLLUP", true},
		{"SELECT k, COUNT(*)" + groupedWhere + " AND id < 0 GROUP BY k WITH ROLLUP", true},
		{"SELECT k, COUNT(*)" + groupedWhere + " AND id < 0 GROUP BY k", true},
		{"SELECT k, MAX(id)" + groupedWhere + " GROUP BY k", true},
		{"SELECT qty, COUNT(*), SUM(amount), MIN(status)" + groupedWhere + " AND id < 0 GROUP BY qty", true},
		{"SELECT status, COUNT(*)" + groupedWhere + " AND id < 0 GROUP BY status WITH ROLLUP", true},
		{"SELECT COUNT(*), SUM(amount), MAX(e)" + groupedWhere + " AND id < 0", true},
	})
}

// TestGroupedEnumSetOrder: ORDER BY and GROUP BY an ENUM or SET column order by the values'
// positions in the definition, as MariaDB does, and ORDER BY e+0 of a group key need not be
// selected (issue 22, class 7).
func TestGroupedEnumSetOrder(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	c.runGrouped(t, []groupedCase{
		{"SELECT e, COUNT(*)" + groupedWhere + " GROUP BY e", true},
		{"SELECT e, COUNT(*)" + groupedWhere + " GROUP BY e LIMIT 2", true},
		{"SELECT st, COUNT(*), SUM(amount)" + groupedWhere + " GROUP BY st", true},
		{"SELECT e, st, COUNT(*)" + groupedWhere + " GROUP BY e, st LIMIT 9", true},
		{"SELECT e, COUNT(*)" + groupedWhere + " GROUP BY e ORDER BY e DESC", true},
		{"SELECT e, COUNT(*)" + groupedWhere + " GROUP BY e ORDER BY e+0 DESC", true},
		{"SELECT COUNT(*)" + groupedWhere + " GROUP BY e ORDER BY e+0", true},
		{"SELECT e, COUNT(*)" + groupedWhere + " GROUP BY e WITH ROLLUP", true},
		{"SELECT id, e" + groupedWhere + " ORDER BY e, id LIMIT 30", true},
		{"SELECT id, st" + groupedWhere + " ORDER BY st DESC, id LIMIT 30", true},
		{"SELECT id" + groupedWhere + " ORDER BY e, id LIMIT 30", true},
		{"SELECT DISTINCT e" + groupedWhere + " ORDER BY e", true},
		{"SELECT e, MIN(st), MAX(st)" + groupedWhere + " GROUP BY e", true},
	})
}

// TestGroupedConcatRefused: GROUP_CONCAT and JSON_ARRAYAGG / JSON_OBJECTAGG are not merged;
// they are refused with ErrNotMergeable saying what to do (issue 22, class 7, not done).
func TestGroupedConcatRefused(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 300)
	for _, q := range []string{
		"SELECT qty, GROUP_CONCAT(status ORDER BY id SEPARATOR '|')" + groupedWhere + " GROUP BY qty",
		"SELECT GROUP_CONCAT(DISTINCT status)" + groupedWhere,
		"SELECT qty, JSON_ARRAYAGG(status)" + groupedWhere + " GROUP BY qty",
		"SELECT JSON_OBJECTAGG(id, status)" + groupedWhere,
	} {
		c.refused(t, q, "narrow the range to one table")
	}
}
