package routing_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/internal/rowscan"
	"github.com/obroute/obroute/metadata"
	"github.com/obroute/obroute/sqltest"
)

// TestRewriteMeansTheSameOnMariaDB sends statements on a time-sharded table through the router
// and runs both the statement as written (on a view named like the logical table) and the
// rewritten statement (on the physical table) on MariaDB: same column names and types, same
// rows — or a refusal (ErrUnreadable) where the parser would change the meaning. It covers
// what the parser reads differently from the server: literals and their escapes, typed
// literals, operators and their precedence, functions the printer renames, comments.
func TestRewriteMeansTheSameOnMariaDB(t *testing.T) {
	b := sqltest.Shared(t, "rt")[0]
	// The character set is named: the statements compare s and literals under utf8mb4_bin, which
	// fails on a latin1 column (the shared server's or the database's default is not this
	// test's concern), and the client session's is set to match.
	b.Exec(t, "CREATE TABLE rt_202503 (id INT PRIMARY KEY, ts DATETIME NOT NULL, a INT, b INT, s VARCHAR(20), d DECIMAL(10,2), j JSON, note VARCHAR(20)) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci")
	b.Exec(t, `INSERT INTO rt_202503 VALUES
		(1, '2025-03-02 10:00:00', 1, 2, 'abc', 1.50, '{"a": 1}', 'a%b'),
		(2, '2025-03-03 00:00:00', 0, 0, 'a_c', -2.25, '{"a": "x"}', 'a\\%b'),
		(3, '2025-03-10 12:30:00', NULL, 5, 'it''s', NULL, NULL, 'a\\b'),
		(4, '2025-03-20 23:59:59', 7, NULL, 'ABD', 10.00, '[1,2]', 'x_y')`)
	b.Exec(t, "CREATE VIEW rt AS SELECT * FROM rt_202503")

	now := time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)
	snap, err := metadata.NewSnapshot([]metadata.Table{{Name: "rt_202503", Min: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), Max: time.Date(2025, 3, 31, 23, 59, 59, 0, time.UTC), Hot: true}}, now)
	if err != nil {
		t.Fatal(err)
	}
	r, err := routing.New(routing.Config{
		Settings: &config.Config{Backends: []config.Backend{{Name: "hot", Role: config.RoleHot}}, Default: "hot"},
		Time: &routing.TimeConfig{
			Tables:   []config.TimeTable{{Table: "rt", ShardKey: "ts", HotWindow: config.HotWindow{Months: 2}}},
			Snapshot: func() *metadata.Snapshot { return snap },
			Clock:    func() time.Time { return now },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.SetShardKeyColumns(map[string]routing.ShardKeyColumn{"rt_202503": {Type: routing.ShardKeyDatetime}})
	// Each statement twice: the second time with another literal value, from the analysis the
	// first kept in the cache (see normalize.go).
	same := func(from string) []string {
		return []string{
			// literals and escapes
			`SELECT id, 'it''s', "dq", 'a\nb', '\\', '\'', '\Z', 'a' 'b', _utf8mb4'x' COLLATE utf8mb4_bin, x'41', 0x41, b'1', 1e3, .5, 1.50, -1, - -1, 18446744073709551615` + from + " ORDER BY id",
			`SELECT id, note LIKE 'a\%b', note LIKE 'a\_b', note = 'a\%b', s LIKE 'a\_c', note LIKE 'a!%b' ESCAPE '!'` + from + " ORDER BY id",
			`SELECT id FROM rt WHERE ts >= '2025-03-01' AND note LIKE 'a\%%' ORDER BY id`,
			// typed literals
			"SELECT id, DATE '2025-03-03', TIME '10:00:00', TIMESTAMP '2025-03-02 10:00:00', TIMESTAMP '2025-03-02 10:00:00' = '2025-03-02 10:00:00', ts = TIMESTAMP '2025-03-03 00:00:00'" + from + " ORDER BY id",
			"SELECT id FROM rt WHERE ts >= TIMESTAMP '2025-03-03 00:00:00' AND ts < DATE '2025-03-21' ORDER BY id",
			// operators and precedence
			"SELECT id, !a = b, NOT a = b, !(a = b), ~a, a DIV 2, a MOD 2, a % 2, BINARY s = 'ABC', a IS TRUE, a IS NOT NULL, a <=> NULL, a XOR b, a && b, a || b, a | b, a & b, a ^ b, a << 1, b >> 1" + from + " ORDER BY id",
			"SELECT id, 1 - (2 - a), 2 * (a + 1), (a OR b) AND a, a OR (b AND a), -(a + b), a - -b, NOT (a AND b), a BETWEEN 0 AND 1, b NOT BETWEEN 1 AND 3, a IN (0, 7), a NOT IN (1)" + from + " ORDER BY id",
			"SELECT id, s REGEXP '^a', s NOT REGEXP 'b', s RLIKE 'c$', JSON_EXTRACT(j, '$.a'), JSON_UNQUOTE(JSON_EXTRACT(j, '$.a'))" + from + " ORDER BY id",
			// functions the printer writes in another form
			"SELECT id, CAST(a AS CHAR(10) CHARACTER SET utf8mb4), CONVERT(s USING latin1), CONVERT(d, DECIMAL(10,1)), CAST(d AS SIGNED), CAST(a AS UNSIGNED), CAST(ts AS DATE), CAST(ts AS TIME)" + from + " ORDER BY id",
			"SELECT id, TRIM(LEADING 'a' FROM s), TRIM(BOTH 'c' FROM s), EXTRACT(YEAR FROM ts), POSITION('b' IN s), SUBSTRING(s FROM 2 FOR 1), SUBSTRING(s, 2), CHAR(65 USING utf8mb4)" + from + " ORDER BY id",
			"SELECT id, DATE_ADD(ts, INTERVAL 1 DAY), ts + INTERVAL 2 HOUR, ts - INTERVAL 1 MONTH, TIMESTAMPADD(DAY, 1, ts), TIMESTAMPDIFF(SECOND, '2025-03-01', ts), CASE WHEN a THEN 1 ELSE 2 END, CASE a WHEN 1 THEN 'x' END, IF(a, 1, 2), IFNULL(a, 0), COALESCE(a, b), NULLIF(a, b)" + from + " ORDER BY id",
			"SELECT id, s COLLATE utf8mb4_bin, CONCAT(s, '%'), GREATEST(a, b), LEAST(1, 2), @@session.sql_mode IS NOT NULL, @nosuchvar" + from + " ORDER BY id",
			"SELECT id, 'a' = 'A', 'a' = 'A' COLLATE utf8mb4_bin, s LIKE BINARY 'a%', CAST('1.5' AS DECIMAL(5,2)), CONVERT('x', CHAR), ISNULL(a), s IN ('abc', 'a_c'), '\\0' = CHAR(0), 'a''b' = \"a'b\"" + from + " ORDER BY id",
			"SELECT id, 1 AND 0 OR 1, 1 + 2 * 3, (1 + 2) * 3, 2 - 1 - 1, 2 - (1 - 1), 8 / 2 / 2, -a * 2, NOT NOT a, a = b IS NULL, a / 3, ts + 0, 1.e2, 'x' AS \"y\"" + from + " ORDER BY id",
			"SELECT id, MAX(a) OVER (), ROW_NUMBER() OVER (ORDER BY id DESC)" + from + " ORDER BY a IS NULL, a, id",
			// clauses
			"SELECT DISTINCT a" + from + " ORDER BY a DESC LIMIT 2 OFFSET 1",
			"SELECT a, COUNT(*), SUM(d), MIN(s), MAX(ts), AVG(d), GROUP_CONCAT(s ORDER BY s SEPARATOR ';')" + from + " GROUP BY a WITH ROLLUP",
			"SELECT `a` AS `select`, b AS \"quoted alias\", s 'str alias', COUNT(*) c" + from + " GROUP BY a, b, s HAVING c > 0 ORDER BY 1, 2",
			"SELECT /*+ MAX_EXECUTION_TIME(10000) */ id /* a comment */" + from + " AND id IN (SELECT 1 UNION SELECT 2) AND EXISTS (SELECT 1) ORDER BY id -- trailing",
			"SELECT /*!50000 id, */ /*M! a, */ b /*!50701 , s */ /*M!100000 , d */" + from + " ORDER BY id",
		}
	}
	const from = " FROM rt WHERE ts >= '2025-03-01'"
	refused := []string{
		"SELECT id, N'abc'" + from,
		"SELECT id, @'quoted'" + from,
		"SELECT id, `weird@name`" + from,
		"SELECT id, 0b101" + from,
		"SELECT id /*M!100600 , a */" + from,
	}
	ctx := context.Background()
	conn, err := b.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET NAMES utf8mb4 COLLATE utf8mb4_general_ci"); err != nil {
		t.Fatal(err)
	}
	first := same(from)
	again := same(" FROM rt WHERE ts >= '2025-03-02 10:00:00'")
	hits := r.CacheStats().Hits
	for i, q := range append(first, again...) {
		if i == len(first) {
			hits = r.CacheStats().Hits
		}
		plan, err := r.Route(routing.Input{Statement: r.Analyze(q)})
		if err != nil {
			t.Errorf("%s\nrefused: %v", q, err)
			continue
		}
		if len(plan.Targets) != 1 || !strings.Contains(plan.Targets[0].SQL, "rt_202503") {
			t.Fatalf("%s: targets %+v, want one statement on rt_202503", q, plan.Targets)
		}
		want, err := runText(ctx, conn, q)
		if err != nil {
			t.Errorf("%s\nas written: %v", q, err)
			continue
		}
		got, err := runText(ctx, conn, plan.Targets[0].SQL)
		if err != nil {
			t.Errorf("%s\nrewritten %s\n: %v", q, plan.Targets[0].SQL, err)
			continue
		}
		if got != want {
			t.Errorf("%s\nrewritten %s\n got %s\nwant %s", q, plan.Targets[0].SQL, got, want)
		}
	}
	// The statements whose literals are not read as arguments (WITH ROLLUP set aside, the
	// executable comment, …) are kept by their text: at most 3.
	if h := r.CacheStats().Hits - hits; h < uint64(len(again))-3 {
		t.Errorf("%d of %d statements with another literal hit the cache, want all but 3", h, len(again))
	}
	for _, q := range refused {
		if _, err := r.Route(routing.Input{Statement: r.Analyze(q)}); !errors.Is(err, routing.ErrUnreadable) {
			t.Errorf("%s: %v, want ErrUnreadable", q, err)
		}
	}
}

// runText runs q on conn and writes its column names, types and rows as text.
func runText(ctx context.Context, conn *sql.Conn, q string) (string, error) {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, ct := range types {
		fmt.Fprintf(&b, "%s:%s ", ct.Name(), ct.DatabaseTypeName())
	}
	vals := make([]sql.NullString, len(types))
	ptrs := rowscan.Targets(vals)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		b.WriteString("\n")
		for _, v := range vals {
			if v.Valid {
				fmt.Fprintf(&b, "%q ", v.String)
			} else {
				b.WriteString("NULL ")
			}
		}
	}
	return b.String(), rows.Err()
}
