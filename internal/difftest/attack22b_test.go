package difftest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/obroute/obroute/internal/difftest"
)

// Attacks on 10e07df (the fixed merge of issue 22's shapes with one answer): each test is a
// statement one server answers, compared with obroute over hot and cold in both protocols.

// avgGroups returns the AVG(qty) of each user_id group of the grouped data set as the reference
// shows it (scale 4 under div_precision_increment 4).
func avgGroups(t *testing.T, c *groupedCluster) []string {
	t.Helper()
	rows, err := queryAll(c.refDB[0], "SELECT AVG(qty)"+groupedWhere+" GROUP BY user_id")
	if err != nil || len(rows) < 4 {
		t.Fatalf("AVG(qty) by user_id: %v, %v: too few groups", rows, err)
	}
	var shown []string
	for _, r := range rows {
		shown = append(shown, r[0])
	}
	return shown
}

// TestAttack22bHavingAvgHiddenDigits: MariaDB's AVG of an integer keeps the quotient's 9-digit
// word (4/3 is 1.333333333 inside, 1.3333 shown); BETWEEN, an IN list of two or more values and a
// comparison with a DOUBLE (1.3333e0) compare that inner value, where = and < compare the shown
// one. On 10.11: SELECT AVG(x) a FROM (SELECT 1 x UNION ALL SELECT 1 UNION ALL SELECT 2) t
// HAVING a BETWEEN 1.3333 AND 1.3333 gives no row, HAVING a IN (1.3333, 1.4) no row,
// HAVING a > 1.3333e0 the row, HAVING a BETWEEN 1.333333333 AND 1.333333333 the row. obroute
// merges AVG to its shown digits and compares those: it keeps a group whose AVG is shown as a
// value of the list that one server drops (one run: one server keeps 2 of 13 groups of
// HAVING AVG(qty) IN (<every shown AVG>), the ones whose AVG is exact at 4 digits, 4.2800 and
// 4.7200; obroute keeps all 13), and drops the group that one server keeps under > s e0.
func TestAttack22bHavingAvgHiddenDigits(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	shown := avgGroups(t, c)
	var exps, betweens []string
	for _, s := range shown {
		if s == "NULL" {
			continue
		}
		exps = append(exps, s+"e0")
		betweens = append(betweens, fmt.Sprintf("AVG(qty) BETWEEN %s AND %s", s, s))
	}
	list := strings.Join(shown, ", ")
	q := "SELECT user_id, AVG(qty)" + groupedWhere + " GROUP BY user_id HAVING AVG(qty) IN (" + list + ")"
	if n := refRowCount(t, c, q); n == len(shown) {
		t.Fatalf("%s keeps every group: every AVG is exact at its shown digits, the test would not tell", q)
	}
	cases := []string{
		q,
		"SELECT user_id, AVG(qty) AS a" + groupedWhere + " GROUP BY user_id HAVING a NOT IN (" + list + ")",
		"SELECT user_id, AVG(qty)" + groupedWhere + " GROUP BY user_id HAVING " + strings.Join(betweens, " OR "),
		"SELECT user_id, AVG(qty)" + groupedWhere + " GROUP BY user_id HAVING NOT (" + strings.Join(betweens, " OR ") + ")",
		"SELECT user_id, AVG(qty)" + groupedWhere + " GROUP BY user_id HAVING AVG(qty) IN (" + strings.Join(exps, ", ") + ")",
		"SELECT user_id, AVG(qty) AS a" + groupedWhere + " GROUP BY user_id HAVING a IN (" + list + ", NULL)",
		"SELECT user_id, AVG(qty) AS a" + groupedWhere + " GROUP BY user_id HAVING a > " + exps[0],
		"SELECT user_id, AVG(qty) AS a" + groupedWhere + " GROUP BY user_id HAVING a <= " + exps[0],
		"SELECT user_id, AVG(qty)" + groupedWhere + " GROUP BY user_id HAVING AVG(qty) BETWEEN " + exps[0] + " AND 1e9",
		"SELECT user_id, AVG(qty)" + groupedWhere + " GROUP BY user_id HAVING AVG(qty) IN (" + shown[1] + ", " + exps[0] + ", 1e9)",
	}
	// Fixed: refused, saying to compare with = < > and a decimal number; those still merge.
	for _, q := range cases {
		c.refused(t, q, "compare it with =, <, <=, >, >= and a decimal number")
	}
	c.runGrouped(t, []groupedCase{
		{"SELECT user_id, AVG(qty) AS a" + groupedWhere + " GROUP BY user_id HAVING a = " + shown[1], true},
		{"SELECT user_id, AVG(qty) AS a" + groupedWhere + " GROUP BY user_id HAVING a > " + shown[1], true},
		{"SELECT user_id, AVG(qty)" + groupedWhere + " GROUP BY user_id HAVING AVG(qty) IN (" + shown[1] + ")", true},
	})
}

// TestAttack22bConstantOverNoRows: an item reading no column is taken from any partial row,
// but a statement with a DISTINCT aggregate and no GROUP BY has no partial row when no row
// anywhere matches: the merge makes the one row of aggregates over no rows (COUNT 0, the others
// NULL) and gives the constant items NULL too. One server: SELECT 'x', COUNT(DISTINCT qty) …
// AND id < 0 is ('x', 0); obroute (NULL, 0); SELECT 'x' AS a, 1 + 1, SUM(DISTINCT amount) …
// ('x', 2, NULL), obroute (NULL, NULL, NULL).
func TestAttack22bConstantOverNoRows(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	// Fixed: refused (the statement's constants next to a DISTINCT aggregate without GROUP BY).
	for _, q := range []string{
		"SELECT 'x', COUNT(DISTINCT qty)" + groupedWhere + " AND id < 0",
		"SELECT 'x' AS a, 1 + 1, SUM(DISTINCT amount)" + groupedWhere + " AND id < 0",
		"SELECT COUNT(DISTINCT qty), CONCAT('a', 'b') AS ab, AVG(DISTINCT qty)" + groupedWhere + " AND id < 0",
		"SELECT COALESCE(NULL, 7) AS c, COUNT(DISTINCT status)" + groupedWhere + " AND qty > 100",
	} {
		c.refused(t, q, "has no value for it")
	}
}

// TestAttack22bClockTypes: the clock functions are sent to every sub-query as the statement's
// instant written as a literal (TIMESTAMP'…', DATE'…', TIME'…', a number), and the column's
// type is the sub-query's: compared with one server whose session clock is the same instant
// (SET timestamp), each item should have one server's value and column type properties.
// UNIX_TIMESTAMP() is nullable to one server (BIGINT, scan type sql.NullInt64); its literal
// in the sub-queries (1742040000) is NOT NULL, and obroute reports it so (scan type int64).
func TestAttack22bClockTypes(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	ctx := context.Background()
	cases := []string{
		"SELECT NOW(), COUNT(*)" + groupedWhere,
		"SELECT NOW(6), CURRENT_TIMESTAMP(3), COUNT(*)" + groupedWhere,
		"SELECT CURDATE() + 0, NOW() + 0, NOW(6) + 0, COUNT(*)" + groupedWhere,
		"SELECT CURTIME(), CURTIME(2) + 0, UTC_TIME(), COUNT(*)" + groupedWhere,
		"SELECT UTC_DATE(), UTC_TIMESTAMP(6), COUNT(*)" + groupedWhere,
		"SELECT CURRENT_DATE, CURRENT_TIMESTAMP, LOCALTIME, COUNT(*)" + groupedWhere,
		"SELECT qty, NOW(), CURDATE(), COUNT(*)" + groupedWhere + " GROUP BY qty",
		"SELECT DATE_FORMAT(NOW(6), '%Y %f %W'), COUNT(*)" + groupedWhere,
		"SELECT NOW() - INTERVAL 1 DAY AS d, DATEDIFF(NOW(), '2025-01-01') AS n, COUNT(*)" + groupedWhere,
		"SELECT IF(qty > 5, NOW(), CURDATE()) AS x, COUNT(*)" + groupedWhere + " GROUP BY x",
		"SELECT COALESCE(NULL, CURDATE()), IFNULL(NULL, NOW(3)), COUNT(*)" + groupedWhere,
		"SELECT id, NOW(6) FROM g WHERE t_time >= '2024-09-10' AND t_time < '2025-02-20' ORDER BY id LIMIT 3",
		"SELECT id, UNIX_TIMESTAMP(), UNIX_TIMESTAMP() + 0 FROM g WHERE t_time >= '2024-09-10' AND t_time < '2025-02-20' ORDER BY id LIMIT 3",
		"SELECT id, UNIX_TIMESTAMP() FROM g WHERE t_time >= '2025-02-01' AND t_time < '2025-02-20' ORDER BY id LIMIT 3",
	}
	for p := range protocols {
		conn, err := c.refDB[p].Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, fmt.Sprintf("SET timestamp = %d", clockNow.Unix())); err != nil {
			t.Fatal(err)
		}
		for _, q := range cases {
			want, got, ms := diffTypes(ctx, conn, c.obDB[p], q, nil)
			if want != nil {
				if err := difftest.Compare(want.rows, got.rows, true); err != nil {
					ms = append(ms, mismatch{"rows", err})
				}
			}
			for _, m := range ms {
				t.Errorf("%s: %s: %s: %v", strings.Fields(protocols[p])[0], q, m.class, m.err)
			}
		}
		conn.Close()
	}
	// Fixed: UNIX_TIMESTAMP() is no constant item (the sub-queries' literal is typed NOT NULL).
	// UNIX_TIMESTAMP() is sent as NULLIF(n, NULL), typed as one server types it; as an item next
	// to aggregates it is no constant (not in constantFuncs).
	c.refused(t, "SELECT UNIX_TIMESTAMP(), COUNT(*)"+groupedWhere, "neither aggregated nor in GROUP BY")
}

// TestAttack22bHavingIntegerBeyondBigint: HAVING compares a merged aggregate with an integer
// beyond BIGINT (BIT_AND's all ones, 18446744073709551615, the value of a group whose x is all
// NULL; a bound past the signed range) as one server does, but =, <, > … read only integers of
// int64 and refuse the statement with "HAVING literal 18446744073709551615 cannot be compared
// after merging; write it as a decimal number": it is one, the README's table names no such
// refusal, and the same number is accepted in IN and BETWEEN (numberBound).
func TestAttack22bHavingIntegerBeyondBigint(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	c.runGrouped(t, []groupedCase{
		{"SELECT user_id, BIT_AND(IF(qty IS NULL, NULL, 1)) AS b" + groupedWhere + " GROUP BY user_id HAVING b = 18446744073709551615", true},
		{"SELECT k, BIT_OR(qty - 5) AS b" + groupedWhere + " GROUP BY k HAVING b >= 18446744073709551615", true},
		{"SELECT qty, COUNT(*)" + groupedWhere + " GROUP BY qty HAVING COUNT(*) < 9223372036854775808", true},
		{"SELECT qty, SUM(amount)" + groupedWhere + " GROUP BY qty HAVING SUM(amount) > -99999999999999999999", true},
	})
}
