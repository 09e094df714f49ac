package difftest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/obroute/obroute/metadata"
)

// CreateTableSQL creates one table of the orders data set; %s is the table name. The reference
// table and every monthly table share it.
const CreateTableSQL = `CREATE TABLE %s (
  id BIGINT NOT NULL PRIMARY KEY,
  user_id INT NULL,
  amount DECIMAL(12,2) NULL,
  status VARCHAR(16) NULL,
  order_time DATETIME NOT NULL,
  KEY idx_time (order_time)
) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci`

// Columns are the columns of the orders tables, in CreateTableSQL order.
var Columns = []string{"id", "user_id", "amount", "status", "order_time"}

// Order is one row of the data set. Nil pointers are NULLs.
type Order struct {
	ID        int64
	UserID    *int64
	Amount    *string // DECIMAL(12,2) as its exact text
	Status    *string
	OrderTime time.Time
}

// statuses mix letter case on purpose: the _ci collation orders them as equals.
var statuses = []string{"paid", "PAID", "Paid", "shipped", "refunded", "new"}

// GenerateOrders returns n orders with times in [from, to), deterministic for a seed. About one
// value in eight is NULL in each nullable column; times repeat (several orders in the same
// second, and on month starts) and amounts repeat, so sorts have ties.
func GenerateOrders(seed uint64, from, to time.Time, n int) []Order {
	rng := rand.New(rand.NewPCG(seed, 0x0dd5))
	span := to.Sub(from) / time.Second
	out := make([]Order, 0, n)
	for i := range n {
		o := Order{ID: int64(i + 1)}
		switch {
		case i > 0 && rng.IntN(6) == 0: // same second as the previous order
			o.OrderTime = out[i-1].OrderTime
		case rng.IntN(25) == 0: // exactly a month start: the edge of a table
			m := from.AddDate(0, rng.IntN(monthsBetween(from, to)+1), 0)
			o.OrderTime = time.Date(m.Year(), m.Month(), 1, 0, 0, 0, 0, time.UTC)
		default:
			o.OrderTime = from.Add(time.Duration(rng.Int64N(int64(span))) * time.Second)
		}
		if o.OrderTime.Before(from) || !o.OrderTime.Before(to) {
			o.OrderTime = from
		}
		if rng.IntN(8) != 0 {
			u := int64(rng.IntN(40) + 1)
			o.UserID = &u
		}
		if rng.IntN(8) != 0 {
			a := fmt.Sprintf("%d.%02d", rng.IntN(50)*10, []int{0, 0, 50, 99, 5}[rng.IntN(5)])
			o.Amount = &a
		}
		if rng.IntN(8) != 0 {
			s := statuses[rng.IntN(len(statuses))]
			o.Status = &s
		}
		out = append(out, o)
	}
	return out
}

func monthsBetween(from, to time.Time) int {
	return (to.Year()-from.Year())*12 + int(to.Month()) - int(from.Month())
}

// MonthlyTables returns the shard metadata of monthly tables prefix_YYYYMM covering the months
// from first to last (inclusive); tables of months starting at or after hotFrom are hot.
func MonthlyTables(prefix string, first, last, hotFrom time.Time) []metadata.Table {
	var out []metadata.Table
	for m := time.Date(first.Year(), first.Month(), 1, 0, 0, 0, 0, time.UTC); !m.After(last); m = m.AddDate(0, 1, 0) {
		out = append(out, metadata.Table{
			Name: fmt.Sprintf("%s_%04d%02d", prefix, m.Year(), m.Month()),
			Min:  m, Max: m.AddDate(0, 1, 0).Add(-time.Second), Hot: !m.Before(hotFrom),
		})
	}
	return out
}

// Split assigns each order to the table whose span holds its time; orders no table holds are
// returned under "".
func Split(orders []Order, tables []metadata.Table) map[string][]Order {
	return splitBy(orders, tables, func(o Order) time.Time { return o.OrderTime })
}

// splitBy assigns each row to the table whose span holds its time (at), "" when none does.
func splitBy[T any](rows []T, tables []metadata.Table, at func(T) time.Time) map[string][]T {
	out := map[string][]T{}
	for _, r := range rows {
		name := ""
		for _, t := range tables {
			if tm := at(r); !tm.Before(t.Min) && !tm.After(t.Max) {
				name = t.Name
				break
			}
		}
		out[name] = append(out[name], r)
	}
	return out
}

// InsertSQL returns INSERT statements with literal values loading rows into table, at most
// batch rows each.
func InsertSQL(table string, rows []Order, batch int) []string {
	if batch <= 0 {
		batch = 500
	}
	var out []string
	for start := 0; start < len(rows); start += batch {
		var b strings.Builder
		fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", table, strings.Join(Columns, ", "))
		for i, o := range rows[start:min(start+batch, len(rows))] {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "(%d, %s, %s, %s, '%s')", o.ID, intOrNull(o.UserID), textOrNull(o.Amount, false), textOrNull(o.Status, true), o.OrderTime.Format(time.DateTime))
		}
		out = append(out, b.String())
	}
	return out
}

func intOrNull(v *int64) string {
	if v == nil {
		return "NULL"
	}
	return fmt.Sprint(*v)
}

func textOrNull(v *string, quote bool) string {
	if v == nil {
		return "NULL"
	}
	if quote {
		return "'" + *v + "'"
	}
	return *v
}
