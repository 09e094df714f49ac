package difftest_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/internal/routing"
)

// TestGroupedHavingRanges: HAVING x [NOT] BETWEEN a AND b and x [NOT] IN (…) over a merged
// COUNT, SUM or AVG (or its alias) filter the merged groups as one server does (issue 22: shapes
// with one answer that were refused). The bounds are read from the reference, so that each
// condition keeps some groups and drops others.
func TestGroupedHavingRanges(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	rows, err := c.refDB[0].Query("SELECT COUNT(*)" + groupedWhere + " GROUP BY qty ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	var counts []int
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, n)
	}
	rows.Close()
	if len(counts) < 6 || counts[1] == counts[len(counts)-2] {
		t.Fatalf("group counts %v: too few distinct groups for the test", counts)
	}
	lo, hi := counts[1], counts[len(counts)-2]
	in := fmt.Sprintf("%d, %d, NULL, %d", counts[0], counts[len(counts)/2], counts[len(counts)-1]+1000)
	cases := []string{
		fmt.Sprintf("SELECT qty, COUNT(*) AS c%s GROUP BY qty HAVING c BETWEEN %d AND %d", groupedWhere, lo, hi),
		fmt.Sprintf("SELECT qty, COUNT(*)%s GROUP BY qty HAVING COUNT(*) BETWEEN %d AND %d", groupedWhere, lo, hi),
		fmt.Sprintf("SELECT qty, COUNT(*)%s GROUP BY qty HAVING COUNT(*) NOT BETWEEN %d AND %d", groupedWhere, lo, hi),
		fmt.Sprintf("SELECT qty, COUNT(*) AS c%s GROUP BY qty HAVING c IN (%s)", groupedWhere, in),
		fmt.Sprintf("SELECT qty, COUNT(*)%s GROUP BY qty HAVING COUNT(*) NOT IN (%s)", groupedWhere, in),
		fmt.Sprintf("SELECT qty, COUNT(*)%s GROUP BY qty HAVING COUNT(*) NOT IN (%d, %d)", groupedWhere, lo, hi),
		fmt.Sprintf("SELECT qty, SUM(amount) AS s%s GROUP BY qty HAVING s BETWEEN 1000.5 AND 1e9", groupedWhere),
		fmt.Sprintf("SELECT qty, SUM(amount)%s GROUP BY qty HAVING SUM(amount) NOT BETWEEN NULL AND 4500", groupedWhere),
		fmt.Sprintf("SELECT qty%s GROUP BY qty HAVING COUNT(*) BETWEEN %d AND %d OR qty IN (1, 2)", groupedWhere, lo, hi),
	}
	var gc []groupedCase
	for _, q := range cases {
		n := refRowCount(t, c, q)
		if q == cases[0] && (n == 0 || n == len(counts)) {
			t.Fatalf("%s keeps %d of %d groups: the test would not tell", q, n, len(counts))
		}
		gc = append(gc, groupedCase{q, true})
	}
	c.runGrouped(t, gc)
	c.refused(t, "SELECT qty, COUNT(*)"+groupedWhere+" GROUP BY qty HAVING COUNT(*) BETWEEN '1' AND '9'", "write '1' as a number")
	c.refused(t, "SELECT qty, COUNT(*)"+groupedWhere+" GROUP BY qty HAVING COUNT(*) IN (SELECT 1)", "only a list of numbers")
	// AVG keeps digits it does not show, and BETWEEN compares with them.
	c.refused(t, "SELECT qty, AVG(amount)"+groupedWhere+" GROUP BY qty HAVING AVG(amount) NOT BETWEEN NULL AND 450", "compare it with =, <, <=, >, >= and a decimal number")
}

// refRowCount returns how many rows the reference gives for q.
func refRowCount(t *testing.T, c *groupedCluster, q string) int {
	t.Helper()
	rows, err := c.refDB[0].Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n
}

// TestSplitSelectOptionsAndConstants: the query cache's options (SQL_NO_CACHE, SQL_CACHE) are
// answered as without them (MariaDB takes them only in the first SELECT of the backend's UNION
// ALL, so the sub-queries drop them), items reading no column are one value in every group
// (literals, their arithmetic and functions, the clock: every sub-query runs at the
// statement's instant), and what differs between backends, or what the parser does not read,
// is refused with the rewrite (issue 22).
func TestSplitSelectOptionsAndConstants(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	c.runGrouped(t, []groupedCase{
		{"SELECT SQL_NO_CACHE qty, COUNT(*)" + groupedWhere + " GROUP BY qty", true},
		{"SELECT SQL_NO_CACHE id, status" + groupedWhere + " ORDER BY id LIMIT 20", true},
		{"SELECT SQL_CACHE DISTINCT qty" + groupedWhere + " ORDER BY qty", true},
		{"SELECT SQL_NO_CACHE COUNT(*), SUM(amount)" + groupedWhere, true},
		{"SELECT 'x', COUNT(*)" + groupedWhere, true},
		{"SELECT 1 + 1 AS two, CONCAT('a', 'b') AS ab, COUNT(*)" + groupedWhere, true},
		{"SELECT qty, -3 * 2, COUNT(*)" + groupedWhere + " GROUP BY qty", true},
	})
	// The clock: obroute's clock of this test (clockNow), the same in every sub-query.
	for p := range protocols {
		var now string
		var n int
		if err := c.obDB[p].QueryRow("SELECT CAST(NOW() AS CHAR), COUNT(*)"+groupedWhere).Scan(&now, &n); err != nil {
			t.Fatal(err)
		}
		if want := clockNow.Format(time.DateTime); now != want || n != refRowCount(t, c, "SELECT id"+groupedWhere) {
			t.Errorf("%s: NOW(), COUNT(*) = %s, %d; want %s and the reference's count", protocols[p], now, n, want)
		}
	}
	for _, q := range []string{
		"SELECT CONNECTION_ID(), COUNT(*)" + groupedWhere,
		"SELECT id, DATABASE()" + groupedWhere + " ORDER BY id",
		"SELECT qty, @@hostname, COUNT(*)" + groupedWhere + " GROUP BY qty",
		"SELECT id" + groupedWhere + " AND user_id <> CONNECTION_ID() ORDER BY id",
		"SELECT UUID_SHORT(), id" + groupedWhere,
		"SELECT LAST_INSERT_ID(), COUNT(*)" + groupedWhere,
	} {
		c.refused(t, q, "read it in a statement of its own")
	}
	for q, fix := range map[string]string{
		"SELECT SQL_BUFFER_RESULT id" + groupedWhere + " ORDER BY id LIMIT 5":         "remove SQL_BUFFER_RESULT",
		"SELECT DISTINCTROW qty" + groupedWhere + " ORDER BY qty":                     "write DISTINCT for DISTINCTROW",
		"SELECT HIGH_PRIORITY id" + groupedWhere:                                      "remove HIGH_PRIORITY",
		"SELECT SQL_SMALL_RESULT qty, COUNT(*)" + groupedWhere + " GROUP BY qty":      "remove SQL_SMALL_RESULT",
		"SELECT SQL_BIG_RESULT qty, COUNT(*)" + groupedWhere + " GROUP BY qty":        "remove SQL_BIG_RESULT",
		"SELECT qty, COUNT(*)" + groupedWhere + " GROUP BY qty DESC":                  "GROUP BY x ORDER BY x DESC",
		"SELECT qty, user_id, COUNT(*)" + groupedWhere + " GROUP BY qty, user_id ASC": "GROUP BY x ORDER BY x ASC",
	} {
		for p := range protocols {
			_, err := c.obDB[p].Query(q)
			if !errors.Is(err, routing.ErrUnreadable) || !strings.Contains(err.Error(), fix) {
				t.Errorf("%s: %s: err = %v, want routing.ErrUnreadable saying %q", protocols[p], q, err, fix)
			}
		}
	}
}

// TestGroupedBitAggregates: BIT_AND, BIT_OR and BIT_XOR are merged from their partials (AND, OR,
// XOR of them; over no rows the server's identity, all ones or 0), as one server computes them,
// grouped or not, in HAVING, ORDER BY and expressions (issue 22).
func TestGroupedBitAggregates(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	c.runGrouped(t, []groupedCase{
		{"SELECT BIT_AND(qty), BIT_OR(qty), BIT_XOR(qty), BIT_XOR(id)" + groupedWhere, true},
		{"SELECT BIT_AND(qty + 1), BIT_OR(user_id), BIT_XOR(amount), BIT_OR(f)" + groupedWhere, true},
		{"SELECT user_id, BIT_AND(qty), BIT_OR(qty), BIT_XOR(id)" + groupedWhere + " GROUP BY user_id", true},
		{"SELECT status, BIT_XOR(id) AS x" + groupedWhere + " GROUP BY status ORDER BY x DESC", true},
		{"SELECT qty, BIT_OR(user_id)" + groupedWhere + " GROUP BY qty HAVING BIT_OR(user_id) > 7", true},
		{"SELECT k, BIT_OR(id), COUNT(*)" + groupedWhere + " GROUP BY k WITH ROLLUP", true},
		{"SELECT BIT_AND(id), BIT_OR(id), BIT_XOR(id)" + groupedWhere + " AND id < 0", true},
		{"SELECT BIT_AND(qty), BIT_OR(qty)" + groupedWhere + " AND qty IS NULL", true},
		{"SELECT e, BIT_AND(k), BIT_XOR(k)" + groupedWhere + " GROUP BY e", true},
	})
	// BIGINT UNSIGNED arithmetic overflows by each table's partial: refused.
	c.refused(t, "SELECT qty, BIT_XOR(id) + 1, COUNT(*)"+groupedWhere+" GROUP BY qty", "compute the expression in the application")
}
