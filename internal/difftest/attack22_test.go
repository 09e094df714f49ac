package difftest_test

import (
	"database/sql"
	"fmt"
	"strconv"
	"testing"
)

// Attacks on dcf24aa (issue 22's shapes with one answer): each test is a statement one server
// answers, compared with obroute over hot and cold in both protocols.

// TestAttack22HavingBetweenDoubleBound: MariaDB compares x BETWEEN a AND b in one type
// aggregated over the three operands; when one bound is a DOUBLE (1e9) it compares as DOUBLE,
// so a DECIMAL bound with more digits than a DOUBLE holds rounds to the number next to it.
// With a group of COUNT(*) = c, one server keeps it under HAVING COUNT(*) BETWEEN
// c.0000000000000000001 AND 1e9 (3 BETWEEN 3.0000000000000000001 AND 1e9 is 1 on MariaDB
// 10.11); obroute compares each bound on its own, exactly, and drops it.
func TestAttack22HavingBetweenDoubleBound(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	counts, err := queryAll(c.refDB[0], "SELECT COUNT(*)"+groupedWhere+" GROUP BY qty ORDER BY 1")
	if err != nil || len(counts) < 4 {
		t.Fatalf("group counts %v, %v: too few groups", counts, err)
	}
	n, _ := strconv.Atoi(counts[1][0]) // a count one group has
	cases := []string{
		fmt.Sprintf("SELECT qty, COUNT(*)%s GROUP BY qty HAVING COUNT(*) BETWEEN %d.0000000000000000001 AND 1e9", groupedWhere, n),
		fmt.Sprintf("SELECT qty, COUNT(*)%s GROUP BY qty HAVING COUNT(*) NOT BETWEEN %d.0000000000000000001 AND 1e9", groupedWhere, n),
		fmt.Sprintf("SELECT qty, COUNT(*) AS c%s GROUP BY qty HAVING c BETWEEN 1e0 AND %d.9999999999999999999", groupedWhere, n-1),
		// BIT_OR(qty) of a qty group is qty: the group qty = 3 is kept by one server. (AVG here is
		// refused: TestAttack22bHavingAvgHiddenDigits.)
		"SELECT qty, BIT_OR(qty)" + groupedWhere + " GROUP BY qty HAVING BIT_OR(qty) BETWEEN 3.0000000000000000001 AND 1e9",
	}
	var gc []groupedCase
	for _, q := range cases {
		gc = append(gc, groupedCase{q, true})
	}
	c.runGrouped(t, gc)
}

// TestAttack22HavingNegativeBounds: a negative bound other than an integer (-1e4, -0.5, -(1))
// is a number written in the statement, which one server compares as it compares -1; obroute
// refuses it, saying to write it as a number.
func TestAttack22HavingNegativeBounds(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	c.runGrouped(t, []groupedCase{
		{"SELECT qty, SUM(amount)" + groupedWhere + " GROUP BY qty HAVING SUM(amount) BETWEEN -1e4 AND 1e9", true},
		{"SELECT qty, SUM(amount)" + groupedWhere + " GROUP BY qty HAVING SUM(amount) NOT BETWEEN -0.5 AND 420.5", true},
		{"SELECT qty, COUNT(*)" + groupedWhere + " GROUP BY qty HAVING COUNT(*) BETWEEN -(1) AND 1e9", true},
		{"SELECT qty, SUM(amount)" + groupedWhere + " GROUP BY qty HAVING SUM(amount) NOT IN (-0.5, -1e1)", true},
	})
}

// TestAttack22SeededRand: RAND(N) is a repeatable sequence, one value per evaluation (MariaDB's
// manual: "RAND(N) … produces a repeatable sequence of column values"), not "any value": one
// server draws it once over all rows, each sub-query restarts it on its own table. Grouped, the
// value of a group is the one of its first row (isConstant takes any partial's); DISTINCT of
// it keeps one value per row (one server: 896 distinct values of 896 rows; obroute 175).
func TestAttack22SeededRand(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	// Fixed: refused, as one server's sequence runs over all rows.
	c.refused(t, "SELECT qty, RAND(1)"+groupedWhere+" GROUP BY qty", "number the rows in the application")
	c.refused(t, "SELECT DISTINCT ROUND(RAND(1) * 1e6)"+groupedWhere, "number the rows in the application")
}

// TestAttack22Rownum: ROWNUM() numbers the rows of the statement 1, 2, … on one server (MariaDB
// 10.6.1); isConstant takes it as a constant and each sub-query numbers its own table's rows.
// Grouped, one server gives each group the number of its first row; ungrouped, the numbers
// 1 to the count, each once, which obroute repeats.
func TestAttack22Rownum(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	// Fixed: refused.
	for _, q := range []string{
		"SELECT qty, ROWNUM(), COUNT(*)" + groupedWhere + " GROUP BY qty",
		"SELECT ROWNUM()" + groupedWhere,
		"SELECT qty, ROWNUM() AS r" + groupedWhere + " GROUP BY qty HAVING r > 5",
	} {
		c.refused(t, q, "number the rows in the application")
	}
}

// TestAttack22SqlNoCacheUnion: SQL_NO_CACHE in the first SELECT of a UNION is accepted by one
// server (it is the statement's first SELECT), also as mysqldump writes it (/*!40001 … */);
// obroute sends it into a sub-query that is not its backend's first SELECT, and the backend
// fails the statement (Error 1234, Incorrect usage/placement of 'SQL_NO_CACHE').
func TestAttack22SqlNoCacheUnion(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	c.runGrouped(t, []groupedCase{
		{"SELECT SQL_NO_CACHE id" + groupedWhere + " UNION ALL SELECT id" + groupedWhere + " ORDER BY 1 LIMIT 5", true},
		{"SELECT /*!40001 SQL_NO_CACHE */ id" + groupedWhere + " UNION ALL SELECT id" + groupedWhere + " ORDER BY 1 LIMIT 5", true},
		{"SELECT SQL_CACHE qty" + groupedWhere + " UNION SELECT user_id" + groupedWhere + " ORDER BY 1", true},
	})
}

// TestAttack22BitExpressionEmptyTable: an expression over a BIT aggregate of an ungrouped
// statement is computed by each sub-query too, and a table with no row of the WHERE gives the
// identity (BIT_OR 0, BIT_AND all ones), where BIT_OR(id) - 1 and BIT_AND(qty) * 2 are out of
// the BIGINT UNSIGNED range: the backend fails the statement (Error 1690) while one server,
// over the one row, answers.
func TestAttack22BitExpressionEmptyTable(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	var id int
	if err := c.refDB[0].QueryRow("SELECT MIN(id)" + groupedWhere + " AND qty = 3").Scan(&id); err != nil {
		t.Fatal(err)
	}
	// Fixed: arithmetic on a BIT aggregate is refused.
	c.refused(t, fmt.Sprintf("SELECT BIT_OR(id) - 1, COUNT(*)%s AND id = %d", groupedWhere, id), "compute the expression in the application")
	c.refused(t, fmt.Sprintf("SELECT BIT_AND(qty) * 2, COUNT(*)%s AND id = %d", groupedWhere, id), "compute the expression in the application")
}

// TestAttack22StoredAggregate: a stored aggregate function (CREATE AGGREGATE FUNCTION, MariaDB
// 10.3.3) of a literal reads no column, and isConstant takes one partial's value for it: a
// count over one table, where one server counts every row.
func TestAttack22StoredAggregate(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	// The function lives in the database test, which every backend of the shared server holds.
	for _, q := range []string{"DROP FUNCTION IF EXISTS test.a22_cnt", `CREATE AGGREGATE FUNCTION test.a22_cnt(x INT) RETURNS INT
BEGIN
  DECLARE n INT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR NOT FOUND RETURN n;
  LOOP
    FETCH GROUP NEXT ROW;
    SET n = n + 1;
  END LOOP;
END`} {
		if _, err := c.refDB[0].Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _, _ = c.refDB[0].Exec("DROP FUNCTION IF EXISTS test.a22_cnt") })
	// Fixed: a stored function is no constant; refused as an item neither aggregated nor grouped.
	c.refused(t, "SELECT test.a22_cnt(1), COUNT(*)"+groupedWhere, "neither aggregated nor in GROUP BY")
	c.refused(t, "SELECT qty, test.a22_cnt(1), COUNT(*)"+groupedWhere+" GROUP BY qty", "neither aggregated nor in GROUP BY")
}

// TestAttack22BitUnsignedBelowZero: BIT_AND(x) - 1 is BIGINT UNSIGNED; where the merged
// BIT_AND is 0 (the cold tables' rows have bit 2, the hot ones' bit 1), one server fails the
// statement (Error 1690, BIGINT UNSIGNED value is out of range) and obroute answers -1, which no
// BIGINT UNSIGNED column holds (each sub-query's own BIT_AND is 2 or 1, above 0). The overflow
// upwards (BIT_OR(…) * 3) is refused as the server fails.
func TestAttack22BitUnsignedBelowZero(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	for _, q := range []string{
		"SELECT BIT_AND(IF(t_time < '2025-01-01', 2, 1)) - 1" + groupedWhere,
		"SELECT k, BIT_AND(IF(t_time < '2025-01-01', 2, 1)) - 1, COUNT(*)" + groupedWhere + " GROUP BY k",
		"SELECT k, COUNT(*)" + groupedWhere + " GROUP BY k HAVING BIT_AND(IF(t_time < '2025-01-01', 2, 1)) - 1 < 0",
	} {
		for p := range protocols {
			if _, err := queryAll(c.refDB[p], q); err == nil {
				t.Fatalf("%s: the reference answers; the test would not tell", q)
			}
			if rows, err := queryAll(c.obDB[p], q); err == nil {
				t.Errorf("%s: %s: obroute answers %v; one server fails it (Error 1690, BIGINT UNSIGNED value is out of range)", protocols[p], q, rows)
			}
		}
	}
}

// queryAll runs q and returns its rows as text, or the error of the query or of reading it.
func queryAll(db *sql.DB, q string) ([][]string, error) {
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]string
	for rows.Next() {
		v := make([]sql.NullString, len(cols))
		pv := make([]any, len(cols))
		for i := range v {
			pv[i] = &v[i]
		}
		if err := rows.Scan(pv...); err != nil {
			return nil, err
		}
		r := make([]string, len(v))
		for i, s := range v {
			r[i] = "NULL"
			if s.Valid {
				r[i] = s.String
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// TestAttack22ColumnExpressionTakenAsConstant: isConstant walks the item with sqlparser.Walk,
// which goes on to an operator's next operand after a column, so qty + 0 (a column, then a
// literal) is a constant to it and the item, neither aggregated nor in GROUP BY, is no longer
// refused as qty and CONCAT(status, 'x') are: obroute answers with one partial's qty of each
// group (one run: one server 0, 2, 219 for k = 0; obroute 0, 9, 219; the ROLLUP row too
// differs). Before dcf24aa it was refused.
func TestAttack22ColumnExpressionTakenAsConstant(t *testing.T) {
	c := newGroupedCluster(t, testSeed(t), 1500)
	for _, q := range []string{
		"SELECT k, qty + 0 AS q, COUNT(*)" + groupedWhere + " GROUP BY k",
		"SELECT k, qty + 0 AS q, COUNT(*)" + groupedWhere + " GROUP BY k WITH ROLLUP",
		"SELECT user_id, 1 - id + 1" + groupedWhere + " GROUP BY user_id",
	} {
		c.refused(t, q, "neither aggregated nor in GROUP BY")
	}
}
