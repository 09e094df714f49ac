package connector_test

import (
	"testing"

	"github.com/obroute/obroute/connector"
)

// TestTempTableDroppedByPlainDropTable: DROP TABLE t, without TEMPORARY, drops the temporary
// table t when there is one (only it: the permanent t stays), so obroute forgets it, and a
// statement on t then goes to the permanent table's backend, as on one server.
func TestTempTableDroppedByPlainDropTable(t *testing.T) {
	o := newOneServer(t, false, "")
	p := o.pair(t)
	p.steps(`
		INSERT INTO audit_log VALUES (1,'permanent')
		/*+ OBROUTE(backend=hot) */ CREATE TEMPORARY TABLE audit_log (id INT PRIMARY KEY, note VARCHAR(64))
		INSERT INTO audit_log VALUES (2,'temporary')
		SELECT id, note FROM audit_log
		DROP TABLE audit_log
		INSERT INTO audit_log VALUES (93,'after drop')
		SELECT id, note FROM audit_log ORDER BY id
		CREATE TEMPORARY TABLE audit_log (id INT PRIMARY KEY, note VARCHAR(64))
		INSERT INTO audit_log VALUES (3,'temporary on cold')
		DROP TABLE IF EXISTS audit_log
		SELECT id, note FROM audit_log ORDER BY id
		/*+ OBROUTE(backend=cold) */ CREATE TEMPORARY TABLE ta (id INT)
		/*+ OBROUTE(backend=cold) */ CREATE TEMPORARY TABLE items (id INT PRIMARY KEY, note VARCHAR(64))
		INSERT INTO items VALUES (4,'temporary items')
		DROP TABLE ta, items
		SELECT id FROM ta
		INSERT INTO items VALUES (94,'after drop')
		SELECT id, note FROM items
		/*+ OBROUTE(backend=cold) */ CREATE TEMPORARY TABLE tb (id INT)
		/*+ OBROUTE(backend=hot) */ CREATE TEMPORARY TABLE tc (id INT)
		!state DROP TABLE tb, items
		!state DROP TABLE tb, tc
		!state DROP TEMPORARY TABLE tc, tb
		DROP TABLE tb
		DROP TABLE tc
		SELECT id FROM tb
		SELECT id FROM tc
	`, map[string]error{"state": connector.ErrSessionState})
	o.samePlacement(t)
}

// TestTempTableRenamesAreFollowed: ALTER TABLE … RENAME [TO|AS] and RENAME TABLE of a temporary
// table move it to its new name on its server session, and obroute follows it there; a rename
// it cannot follow is refused.
func TestTempTableRenamesAreFollowed(t *testing.T) {
	o := newOneServer(t, false, "")
	p := o.pair(t)
	p.steps(`
		INSERT INTO audit_log VALUES (1,'a'),(2,'b')
		INSERT INTO items VALUES (10,'x')
		CREATE TEMPORARY TABLE tq AS SELECT * FROM audit_log
		ALTER TABLE tq RENAME TO items
		SELECT COUNT(*) FROM items
		SELECT id FROM tq
		INSERT INTO items VALUES (11,'temporary')
		SELECT id, note FROM items ORDER BY id
		DROP TEMPORARY TABLE items
		SELECT id, note FROM items ORDER BY id
		CREATE TEMPORARY TABLE tq2 (id INT PRIMARY KEY, note VARCHAR(64))
		ALTER TABLE tq2 RENAME TO audit_log
		INSERT INTO audit_log VALUES (50,'temporary')
		SELECT id, note FROM audit_log ORDER BY id
		DROP TEMPORARY TABLE audit_log
		CREATE TEMPORARY TABLE tr1 (id INT)
		INSERT INTO tr1 VALUES (7)
		RENAME TABLE tr1 TO tr2
		SELECT id FROM tr2
		SELECT id FROM tr1
		ALTER TABLE tr2 RENAME AS tr3
		ALTER TABLE tr3 ADD COLUMN x INT, RENAME tr4
		SELECT id, x FROM tr4
		RENAME TABLE tr4 TO tr5, tr5 TO tr6
		SELECT id FROM tr6
		SELECT id FROM tr4
		CREATE TEMPORARY TABLE audit_log (id INT PRIMARY KEY, note VARCHAR(64))
		INSERT INTO audit_log VALUES (60,'temporary on cold')
		ALTER TABLE audit_log RENAME TO tmpx
		SELECT id, note FROM tmpx
		SELECT id, note FROM audit_log ORDER BY id
		INSERT INTO audit_log VALUES (3,'c')
		/*+ OBROUTE(backend=hot) */ CREATE TEMPORARY TABLE th (id INT)
		!state RENAME TABLE th TO tmpx
		!state RENAME TABLE tmpx TO th
		!state RENAME TABLE tmpx TO ty, items TO items2
		!state ALTER TABLE items RENAME TO th
		!state RENAME TABLE th TO tz, tmpx TO tw
		SELECT id FROM tmpx
	`, map[string]error{"state": connector.ErrSessionState})
	o.samePlacement(t)
}

// TestTempTableRenamedToATimeShardedTable: a temporary table renamed to the name of a
// time-sharded table hides it, as on one server: statements on that name go to the temporary
// table, not to the physical tables, until it is dropped.
func TestTempTableRenamedToATimeShardedTable(t *testing.T) {
	p := newSplitPair(t)
	p.steps(`
		CREATE TEMPORARY TABLE tq (id INT PRIMARY KEY, order_time DATETIME NOT NULL, amount INT, note VARCHAR(20))
		INSERT INTO tq VALUES (100, '2025-03-01 00:00:00', 5, 'temporary')
		ALTER TABLE tq RENAME TO orders
		SELECT COUNT(*), SUM(amount) FROM orders
		SELECT id, note FROM orders WHERE order_time >= '2025-01-01'
		INSERT INTO orders VALUES (101, '2024-12-20 00:00:00', 6, 'temporary')
		SELECT id, amount FROM orders ORDER BY id
		DROP TABLE orders
		SELECT COUNT(*), SUM(amount) FROM orders WHERE order_time >= '2024-12-01'
		CREATE TEMPORARY TABLE tr (id INT)
		RENAME TABLE tr TO orders
		SELECT COUNT(*) FROM orders
		DROP TEMPORARY TABLE orders
		SELECT COUNT(*) FROM orders WHERE order_time >= '2024-12-01'
	`, nil)
}
