package connector_test

import (
	"testing"

	"github.com/obroute/obroute/connector"
)

// Executable comments are read as MariaDB reads them: the content of /*! … */, /*M! … */ and of
// those with a version up to 10.0.0 (/*!50000 …, /*M!100000 …) runs, that of /*!50700 … to
// /*!99999 … (MySQL 5.7 and later) does not. A routed table named only inside one routes the
// statement; a row, an assignment or a table inside one MariaDB skips is not read as code. A
// version above 10.0.0 runs or not by the server's version: refused.
func TestExecutableCommentsReadAsTheServerDoes(t *testing.T) {
	o := newOneServer(t, false, "")
	p := o.pair(t)
	p.steps(`
		INSERT INTO audit_log VALUES (1, 'a'), (2, 'b'), (3, 'c')
		INSERT INTO items VALUES (1, 'i'), (2, 'j')
		SELECT COUNT(*) /*M! FROM audit_log */
		SELECT COUNT(*) /*M!100000 FROM audit_log */
		SELECT COUNT(*) /*! FROM audit_log */
		SELECT COUNT(*) /*!50000 FROM audit_log */
		SELECT COUNT(*) /*!50701 FROM audit_log */
		SELECT COUNT(*) FROM items /*!50701 , audit_log */
		UPDATE audit_log SET note = 'u' /*M! WHERE id = 2 */
		UPDATE items SET note = 'v' /*!50701 WHERE id = 1 */
		INSERT INTO audit_log VALUES (4, 'd') /*!50701 , (5, 'skipped') */
		INSERT INTO audit_log VALUES (6, 'e') /*M! , (7, 'run') */
		DELETE FROM audit_log /*M! WHERE id = 1 */
		SELECT id, note FROM audit_log ORDER BY id
		SELECT id, note FROM items ORDER BY id`, refusals)
	o.samePlacement(t)
	for _, q := range []string{
		"SELECT COUNT(*) /*M!100600 FROM audit_log */",
		"SELECT 1 /*!100500 FROM audit_log */",
		"INSERT INTO items VALUES (9, 'x') /*M!110000 , (10, 'y') */",
	} {
		p.refused(q, connector.ErrUnreadable)
	}
	o.samePlacement(t)
}

// On a time-sharded table, a row or an assignment inside an executable comment MariaDB runs is
// routed as written outside it, and one inside a comment MariaDB skips is not written at all.
func TestExecutableCommentsOnTimeShardedTables(t *testing.T) {
	f := newTimeWrites(t, 0)
	for _, q := range []string{
		"INSERT INTO orders (id, order_time, n) VALUES (9, '2025-02-11 10:00:00', 1) /*!50701 , (10, '2025-03-12 10:00:00', 1) */",
		"INSERT INTO orders (id, order_time, n) VALUES (11, '2025-02-12 10:00:00', 1) /*M! , (12, '2025-03-13 10:00:00', 1) */",
		"UPDATE orders SET n = 7 /*!50701 , order_time = '2025-01-01 00:00:00' */ WHERE id = 2 AND order_time >= '2025-03-01' AND order_time < '2025-04-01'",
		"DELETE FROM orders WHERE order_time >= '2025-02-01' AND order_time < '2025-04-01' /*M! AND id = 3 */",
	} {
		f.both(t, q)
	}
	f.refused(t, "UPDATE orders SET n = 5 /*M! , order_time = '2025-02-20 00:00:00' */ WHERE id = 2 AND order_time >= '2025-03-01' AND order_time < '2025-04-01'",
		connector.ErrNotMergeable, "sets the shard key order_time")
}
