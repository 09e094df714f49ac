package connector_test

import (
	"context"
	"strconv"
	"testing"
)

// With autocommit off (in each spelling the server takes), a write split across physical tables
// opens the client session's transaction as it would on one server: a ROLLBACK undoes every
// part, a COMMIT keeps them; a part that fails undoes the statement only, the transaction goes
// on. The statements go through Query and through Exec.
func TestSplitWritesWithAutocommitOff(t *testing.T) {
	f := newTimeWrites(t, 0)
	ctx := context.Background()
	for i, set := range []string{"SET autocommit = 0", "SET @@session.autocommit = OFF", "SET SESSION autocommit = 'off'", "SET autocommit = FALSE", "SET @@autocommit := 0"} {
		ob, err := f.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := f.ref.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		id := 100 + 10*i
		for _, q := range []string{
			set,
			"INSERT INTO orders (id, order_time, n) VALUES (" + strconv.Itoa(id) + ", '2025-02-11 10:00:00', 1), (" + strconv.Itoa(id+1) + ", '2025-03-12 10:00:00', 1)",
			"UPDATE orders SET n = n + 1 WHERE order_time >= '2025-02-01' AND order_time < '2025-04-01'",
			"DELETE FROM events WHERE at >= '2025-02-01' AND at < '2025-04-01' AND id = 1",
			"ROLLBACK",
			"INSERT INTO orders (id, order_time, n) VALUES (" + strconv.Itoa(id+2) + ", '2025-02-11 10:00:00', 1), (" + strconv.Itoa(id+3) + ", '2025-03-12 10:00:00', 1)",
			// March's part fails (a duplicate in its own table): the statement is undone, not the transaction.
			"INSERT INTO orders (id, order_time, n) VALUES (" + strconv.Itoa(id+4) + ", '2025-02-11 10:00:00', 1), (2, '2025-03-12 10:00:00', 1)",
			"COMMIT",
			"INSERT INTO events (id, at, n) VALUES (" + strconv.Itoa(id) + ", '2025-02-11 10:00:00', 1), (" + strconv.Itoa(id) + ", '2025-03-12 10:00:00', 1)",
			"ROLLBACK",
			"SET autocommit = 1",
		} {
			got, gerr := run(ob, q)
			if _, err := ob.ExecContext(ctx, "DO 0"); err != nil { // and the session still answers
				t.Fatal(err)
			}
			want, werr := run(ref, q)
			if got.String() != want.String() {
				t.Fatalf("%s:\n obroute:    %v (%v)\n one server: %v (%v)", q, got, gerr, want, werr)
			}
		}
		ob.Close()
		ref.Close()
		f.same(t, set)
	}
	// Through Exec: the same under autocommit off.
	ob, _ := f.db.Conn(ctx)
	defer ob.Close()
	ref, _ := f.ref.DB.Conn(ctx)
	defer ref.Close()
	for _, q := range []string{
		"SET autocommit = 0",
		"INSERT INTO orders (id, order_time, n) VALUES (200, '2025-02-11 10:00:00', 1), (201, '2025-03-12 10:00:00', 1)",
		"ROLLBACK",
	} {
		if _, err := ob.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if _, err := ref.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s on one server: %v", q, err)
		}
	}
	f.same(t, "through Exec")
}
