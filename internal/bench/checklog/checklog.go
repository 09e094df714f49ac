// Package checklog writes synthetic MariaDB general query logs for measuring `obroute check`:
// many client sessions at once, interleaved line by line as a busy server logs them, each a
// run of statements drawn from realistic templates (point reads and writes of a default table,
// a static route's table, time ranges on a time-sharded table that stay hot, cross into the
// history store or stay there, transactions, SET, temporary tables, prepared statements with
// their Prepare / Execute / Close stmt lines, shadow and level hints, multi-line statements,
// statements obroute refuses: no time range, a function on the shard key, and transactions that
// write both the static route's table and another) with fresh literal values in each. The tables are those of
// examples/obroute.yaml and examples/shards.csv, with the clock at 2025-03-15.
package checklog

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"
)

// Options shape a log.
type Options struct {
	// Size is the number of bytes to write, at least (the last session ends after it).
	Size int64
	// Sessions is the number of client sessions open at any time.
	Sessions int
	// Statements is the mean number of statements of a client session before it quits.
	Statements int
	// Seed makes the log reproducible.
	Seed uint64
}

// Stats are what Write wrote.
type Stats struct {
	Bytes int64
	// Statements are the Query and Execute entries (what obroute check routes).
	Statements int64
	// Sessions are the client sessions (Connect … Quit).
	Sessions int64
}

// session is one client session being written: the statements it still has to send.
type session struct {
	id      int
	pending []string // statements of a started unit (a transaction, a temp table's life)
	left    int      // statements before it quits
}

// Write writes a general log of about o.Size bytes to w.
func Write(w io.Writer, o Options) (Stats, error) {
	if o.Sessions <= 0 {
		o.Sessions = 1000
	}
	if o.Statements <= 0 {
		o.Statements = 200
	}
	g := &generator{rng: rand.New(rand.NewPCG(o.Seed, o.Seed^0x5eed)), bw: bufio.NewWriterSize(w, 1<<20), clock: time.Date(2025, 3, 15, 8, 0, 0, 0, time.UTC)}
	g.header()
	open := make([]*session, 0, o.Sessions)
	for g.st.Bytes < o.Size || len(open) > 0 {
		if g.st.Bytes < o.Size && len(open) < o.Sessions {
			open = append(open, g.connect(o.Statements))
			continue
		}
		i := g.rng.IntN(len(open))
		s := open[i]
		if s.left <= 0 && len(s.pending) == 0 {
			g.line(s.id, "Quit", "")
			open[i] = open[len(open)-1]
			open = open[:len(open)-1]
			continue
		}
		g.next(s)
	}
	if err := g.bw.Flush(); err != nil {
		return g.st, err
	}
	return g.st, g.err
}

type generator struct {
	rng    *rand.Rand
	bw     *bufio.Writer
	st     Stats
	err    error
	clock  time.Time
	lastTS string
	nextID int
	b      strings.Builder
}

func (g *generator) header() {
	g.raw("/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:\n" +
		"Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\n" +
		"Time\t\t    Id Command\tArgument\n")
}

func (g *generator) raw(s string) {
	if g.err != nil {
		return
	}
	n, err := g.bw.WriteString(s)
	g.st.Bytes += int64(n)
	g.err = err
}

// line writes one entry as MariaDB does: the time only when it changed since the last line.
func (g *generator) line(id int, cmd, arg string) {
	g.clock = g.clock.Add(time.Duration(g.rng.IntN(200)) * time.Microsecond)
	ts := g.clock.Format("060102 15:04:05")
	g.b.Reset()
	if ts != g.lastTS {
		g.b.WriteString(ts)
		g.lastTS = ts
	} else {
		g.b.WriteByte('\t')
	}
	fmt.Fprintf(&g.b, "\t%6d %s\t%s\n", id, cmd, arg)
	g.raw(g.b.String())
	if cmd == "Query" || cmd == "Execute" {
		g.st.Statements++
	}
}

func (g *generator) connect(mean int) *session {
	g.nextID++
	s := &session{id: g.nextID, left: mean/2 + g.rng.IntN(mean+1)}
	g.st.Sessions++
	g.line(s.id, "Connect", fmt.Sprintf("app@10.0.%d.%d on shop using TCP/IP", g.rng.IntN(4), 2+g.rng.IntN(250)))
	return s
}

// next writes the session's next statement, starting a new unit when none is pending.
func (g *generator) next(s *session) {
	if len(s.pending) == 0 {
		s.pending = g.unit()
	}
	stmt := s.pending[0]
	s.pending = s.pending[1:]
	s.left--
	if prepared, ok := strings.CutPrefix(stmt, "\x00"); ok {
		// a prepared statement: its template, the execution with the values, the close
		tmpl, values, _ := strings.Cut(prepared, "\x00")
		g.line(s.id, "Prepare", tmpl)
		g.line(s.id, "Execute", values)
		g.line(s.id, "Close stmt", "")
		return
	}
	g.line(s.id, "Query", stmt)
}

// prepared marks a statement sent as a prepared statement: its template and its text with
// the values, as the general log shows them.
func prepared(tmpl, values string) string { return "\x00" + tmpl + "\x00" + values }

// unit returns the statements of one unit of work: most often one statement, sometimes a
// transaction or a temporary table's life.
func (g *generator) unit() []string {
	switch n := g.rng.IntN(100); {
	case n < 6:
		stmts := []string{"BEGIN"}
		for range 2 + g.rng.IntN(4) {
			stmts = append(stmts, g.write())
		}
		return append(stmts, "COMMIT")
	case n < 8:
		return []string{"SET autocommit = 0", g.write(), g.write(), "COMMIT", "SET autocommit = 1"}
	case n < 9:
		return []string{
			"CREATE TEMPORARY TABLE tmp_totals (user_id BIGINT PRIMARY KEY, total DECIMAL(12,2))",
			fmt.Sprintf("INSERT INTO tmp_totals VALUES (%d, %d.%02d)", g.id(), g.rng.IntN(1000), g.rng.IntN(100)),
			"SELECT user_id, total FROM tmp_totals ORDER BY total DESC",
			"DROP TEMPORARY TABLE tmp_totals",
		}
	case n < 10:
		return []string{fmt.Sprintf("SET time_zone = '+0%d:00'", g.rng.IntN(9)), fmt.Sprintf("SET @request_id = %d", g.id())}
	case n < 55:
		return []string{g.read()}
	case n < 80:
		return []string{g.preparedRead()}
	default:
		return []string{g.write()}
	}
}

func (g *generator) id() int { return 1 + g.rng.IntN(5_000_000) }

func (g *generator) word() string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 4+g.rng.IntN(10))
	for i := range b {
		b[i] = letters[g.rng.IntN(len(letters))]
	}
	return string(b)
}

// day returns a time in [from, from+days).
func (g *generator) day(from string, days int) string {
	t, _ := time.Parse(time.DateOnly, from)
	t = t.Add(time.Duration(g.rng.Int64N(int64(days) * 86400 * int64(time.Second))))
	return t.Format(time.DateTime)
}

func (g *generator) read() string {
	switch n := g.rng.IntN(100); {
	case n < 30:
		return fmt.Sprintf("SELECT id, name, price FROM items WHERE id = %d", g.id())
	case n < 40:
		return fmt.Sprintf("SELECT id, user_id, amount, order_time FROM orders WHERE order_time >= '%s' AND order_time < '%s' AND user_id = %d ORDER BY order_time DESC LIMIT 20",
			g.day("2025-03-01", 10), g.day("2025-03-11", 4), g.id())
	case n < 47:
		return fmt.Sprintf("SELECT user_id, SUM(amount) AS total, COUNT(*) AS n\nFROM orders\nWHERE order_time >= '%s'\n  AND order_time < '%s'\nGROUP BY user_id\nORDER BY total DESC\nLIMIT 10",
			g.day("2024-12-01", 20), g.day("2025-02-01", 20))
	case n < 52:
		return fmt.Sprintf("/*+ OBROUTE(query_level=L3) */ SELECT COUNT(*) FROM orders WHERE order_time >= '%s' AND order_time < '%s'", g.day("2024-10-01", 20), g.day("2024-11-01", 20))
	case n < 60:
		return fmt.Sprintf("SELECT note, created_at FROM audit_log WHERE user_id = %d ORDER BY created_at DESC LIMIT 50", g.id())
	case n < 66:
		ids := make([]string, 3+g.rng.IntN(8))
		for i := range ids {
			ids[i] = fmt.Sprint(g.id())
		}
		return "SELECT id, name FROM items WHERE id IN (" + strings.Join(ids, ", ") + ")"
	case n < 70:
		return fmt.Sprintf("/* shadow */ SELECT id, name FROM items WHERE name = '%s'", g.word())
	case n < 73:
		return fmt.Sprintf("SELECT * FROM orders WHERE user_id = %d", g.id()) // no time range: refused
	case n < 75:
		return fmt.Sprintf("SELECT * FROM orders WHERE DATE(order_time) = '%s'", g.day("2025-03-01", 14)[:10]) // refused
	case n < 80:
		return "SELECT FOUND_ROWS()"
	default:
		return fmt.Sprintf("SELECT i.id, i.name, s.qty FROM items i JOIN stock s ON s.item_id = i.id WHERE i.category = '%s' AND s.qty > %d", g.word(), g.rng.IntN(100))
	}
}

func (g *generator) preparedRead() string {
	switch n := g.rng.IntN(3); n {
	case 0:
		id := g.id()
		return prepared("SELECT id, name, price FROM items WHERE id = ?", fmt.Sprintf("SELECT id, name, price FROM items WHERE id = %d", id))
	case 1:
		from, to := g.day("2025-03-01", 10), g.day("2025-03-11", 4)
		return prepared("SELECT id, amount FROM orders WHERE order_time >= ? AND order_time < ?",
			fmt.Sprintf("SELECT id, amount FROM orders WHERE order_time >= '%s' AND order_time < '%s'", from, to))
	default:
		u := g.id()
		return prepared("SELECT note FROM audit_log WHERE user_id = ? LIMIT 10", fmt.Sprintf("SELECT note FROM audit_log WHERE user_id = %d LIMIT 10", u))
	}
}

func (g *generator) write() string {
	switch n := g.rng.IntN(100); {
	case n < 35:
		return fmt.Sprintf("INSERT INTO orders (id, user_id, order_time, amount, note) VALUES (%d, %d, '%s', %d.%02d, '%s')",
			g.id(), g.id(), g.day("2025-03-14", 2), g.rng.IntN(500), g.rng.IntN(100), g.word())
	case n < 55:
		return fmt.Sprintf("UPDATE items SET price = %d.%02d, name = '%s' WHERE id = %d", g.rng.IntN(500), g.rng.IntN(100), g.word(), g.id())
	case n < 70:
		return fmt.Sprintf("INSERT INTO audit_log (user_id, note, created_at) VALUES (%d, '%s', '%s')", g.id(), g.word()+" "+g.word(), g.day("2025-03-15", 1))
	case n < 80:
		return fmt.Sprintf("UPDATE orders SET amount = %d WHERE id = %d AND order_time >= '%s' AND order_time < '%s'", g.rng.IntN(500), g.id(), g.day("2025-03-01", 5), g.day("2025-03-06", 5))
	case n < 90:
		return fmt.Sprintf("DELETE FROM items WHERE id = %d", g.id())
	default:
		return fmt.Sprintf("INSERT INTO items (id, name, price, category) VALUES (%d, '%s', %d.%02d, '%s') ON DUPLICATE KEY UPDATE price = VALUES(price)",
			g.id(), g.word(), g.rng.IntN(500), g.rng.IntN(100), g.word())
	}
}
