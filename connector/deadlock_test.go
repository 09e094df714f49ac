package connector_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A deadlock on one part of a split write inside an application transaction rolls the whole
// transaction back, as on one server: the row written before it is gone, the statements after
// it run in autocommit (a ROLLBACK undoes nothing), and the client session is usable. The
// scenario runs on obroute and on one server alike: the client's transaction locks March's row
// 2, another session inserts rows in February (heavier, so InnoDB picks the client's
// transaction as the victim) and waits for row 2, and the client's split UPDATE waits for the
// other session's rows.
func TestDeadlockInSplitWriteEndsTheTransaction(t *testing.T) {
	f := newTimeWrites(t, 0)
	ctx := context.Background()
	scenario := func(client *sql.Conn, other *sql.DB, tables [2]string) []string {
		var log []string
		step := func(q string) {
			oc, err := run(client, q)
			log = append(log, q+" → "+oc.String())
			_ = err
		}
		step("BEGIN")
		step("INSERT INTO orders (id, order_time, n) VALUES (300, '2025-03-20 10:00:00', 1)")
		step("SELECT id FROM orders WHERE id = 2 AND order_time >= '2025-03-01' AND order_time < '2025-04-01' FOR UPDATE")
		o, err := other.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		if _, err := o.ExecContext(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		var rows []string
		for i := 0; i < 50; i++ {
			rows = append(rows, fmt.Sprintf("(%d, '2025-02-%02d 10:00:00', 1)", 1000+i, 1+i%28))
		}
		if _, err := o.ExecContext(ctx, "INSERT INTO "+tables[0]+" (id, order_time, n) VALUES "+strings.Join(rows, ", ")); err != nil {
			t.Fatal(err)
		}
		waited := make(chan error, 1)
		go func() {
			_, err := o.ExecContext(ctx, "UPDATE "+tables[1]+" SET n = n + 10 WHERE id = 2")
			waited <- err
		}()
		time.Sleep(500 * time.Millisecond) // the other session waits for row 2
		step("UPDATE orders SET n = n + 1 WHERE order_time >= '2025-02-01' AND order_time < '2025-04-01'")
		if err := <-waited; err != nil {
			t.Fatalf("the other session's UPDATE: %v", err)
		}
		if _, err := o.ExecContext(ctx, "COMMIT"); err != nil {
			t.Fatal(err)
		}
		step("INSERT INTO orders (id, order_time, n) VALUES (301, '2025-03-21 10:00:00', 1)")
		step("ROLLBACK")
		step("SELECT id, n FROM orders WHERE id IN (2, 300, 301) AND order_time >= '2025-02-01' AND order_time < '2025-04-01' ORDER BY id")
		return log
	}
	ob, err := f.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	ref, err := f.ref.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	want := scenario(ref, f.ref.DB, [2]string{"orders", "orders"})
	got := scenario(ob, f.hot.DB, [2]string{"orders_202502", "orders_202503"})
	if !strings.Contains(want[3], "1213") {
		t.Fatalf("one server: %s; want a deadlock (1213)", want[3])
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("obroute:    %s\none server: %s", got[i], want[i])
		}
	}
	f.same(t, "after the deadlock")
}
