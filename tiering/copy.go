package tiering

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/obroute/obroute/internal/rowscan"
)

// pacer keeps a step under a rate of rows per second: after each chunk it sleeps until the
// rows done so far are due.
type pacer struct {
	rate  float64 // rows per second; <= 0: no limit
	start time.Time
	done  int64
}

func newPacer(rate int) *pacer { return &pacer{rate: float64(rate), start: time.Now()} }

// wait counts n more rows and sleeps until they are due.
func (p *pacer) wait(ctx context.Context, n int64) error {
	p.done += n
	if p.rate <= 0 {
		return ctx.Err()
	}
	d := time.Until(p.start.Add(time.Duration(float64(p.done) / p.rate * float64(time.Second))))
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// chunkRange is the predicate of the rows after lo (nil: from the start) up to and including
// hi (nil: to the end), with its arguments.
func chunkRange(key []string, lo, hi []any) (string, []any) {
	var conds []string
	var args []any
	if lo != nil {
		conds, args = append(conds, afterKey(key)), keyArgs(lo)
	}
	if hi != nil {
		conds, args = append(conds, notAfterKey(key)), append(args, keyArgs(hi)...)
	}
	if len(conds) == 0 {
		return "1 = 1", nil
	}
	return strings.Join(conds, " AND "), args
}

// sum is a row count and the BIT_XOR of the rows' checksums.
type sum struct {
	rows     int64
	checksum uint64
}

// checksum computes the sum of the rows of table matching where on db.
func checksum(ctx context.Context, db *sql.DB, table string, columns []string, where string, args []any) (sum, error) {
	var s sum
	err := db.QueryRowContext(ctx, "SELECT COUNT(*), COALESCE(BIT_XOR("+checksumExpr(columns)+"), 0) FROM "+quoteIdent(table)+" WHERE "+where, args...).
		Scan(&s.rows, &s.checksum)
	return s, err
}

// copier copies one table from source to target in primary-key chunks.
type copier struct {
	source, target *Backend
	table          string
	shape          tableShape
	keyAt          []int // positions of the key columns in shape.columns
	chunk          int
	sel, selFirst  *sql.Stmt // the chunk SELECTs, after a key and from the start
}

// newCopier prepares the chunk SELECTs on the source: prepared statements use the binary
// protocol, so numbers arrive exact (floats as IEEE values, not text). Close it when done.
func newCopier(source, target *Backend, table string, shape tableShape, chunk int) (*copier, error) {
	c := &copier{source: source, target: target, table: table, shape: shape, chunk: chunk}
	for _, k := range shape.key {
		i := indexOf(shape.columns, k)
		if i < 0 {
			return nil, fmt.Errorf("the primary key column %s of %s is generated; a move needs a stored primary key", k, table)
		}
		c.keyAt = append(c.keyAt, i)
	}
	order := columnList(shape.key)
	// Each row comes with its checksum, computed by the source as it reads the row: the
	// chunk's sum needs no second read of the source.
	base := "SELECT " + columnList(shape.columns) + ", " + checksumExpr(shape.columns) + " FROM " + quoteIdent(table)
	var err error
	if c.selFirst, err = source.DB.Prepare(base + " ORDER BY " + order + " LIMIT ?"); err != nil {
		return nil, fmt.Errorf("prepare the chunk read of %s on %s: %w", table, source.Name, err)
	}
	if c.sel, err = source.DB.Prepare(base + " WHERE " + afterKey(shape.key) + " ORDER BY " + order + " LIMIT ?"); err != nil {
		c.selFirst.Close()
		return nil, fmt.Errorf("prepare the chunk read of %s on %s: %w", table, source.Name, err)
	}
	return c, nil
}

func (c *copier) close() {
	c.sel.Close()
	c.selFirst.Close()
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if strings.EqualFold(x, s) {
			return i
		}
	}
	return -1
}

// readChunk reads up to c.chunk rows after lo (nil: from the start) from the source, and
// their sum as the source computes it.
func (c *copier) readChunk(ctx context.Context, lo []any) ([][]any, sum, error) {
	stmt, args := c.selFirst, []any{}
	if lo != nil {
		stmt, args = c.sel, keyArgs(lo)
	}
	rows, err := stmt.QueryContext(ctx, append(args, c.chunk)...)
	if err != nil {
		return nil, sum{}, err
	}
	defer rows.Close()
	var out [][]any
	var s sum
	for rows.Next() {
		vals := make([]any, len(c.shape.columns))
		var crc uint64
		if err := rows.Scan(append(rowscan.Targets(vals), &crc)...); err != nil {
			return nil, sum{}, err
		}
		out = append(out, vals)
		s.rows++
		s.checksum ^= crc
	}
	return out, s, rows.Err()
}

// keyOf returns the primary key of a row.
func (c *copier) keyOf(row []any) []any {
	k := make([]any, len(c.keyAt))
	for i, at := range c.keyAt {
		k[i] = row[at]
	}
	return k
}

// maxPlaceholders is the protocol's limit of ? per statement.
const maxPlaceholders = 65535

// writeChunk replaces the target's rows in (lo, hi] by rows, in one transaction, so that a
// chunk written again after a crash leaves the same rows.
func (c *copier) writeChunk(ctx context.Context, lo, hi []any, rows [][]any) error {
	tx, err := c.target.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	where, args := chunkRange(c.shape.key, lo, hi)
	if _, err := tx.ExecContext(ctx, "DELETE FROM "+quoteIdent(c.table)+" WHERE "+where, args...); err != nil {
		return err
	}
	ncol := len(c.shape.columns)
	per := max(1, maxPlaceholders/ncol)
	row := "(" + strings.Repeat("?, ", ncol-1) + "?)"
	head := "INSERT INTO " + quoteIdent(c.table) + " (" + columnList(c.shape.columns) + ") VALUES "
	for start := 0; start < len(rows); start += per {
		batch := rows[start:min(start+per, len(rows))]
		var b strings.Builder
		b.WriteString(head)
		vals := make([]any, 0, len(batch)*ncol)
		for i, r := range batch {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(row)
			vals = append(vals, r...)
		}
		if _, err := tx.ExecContext(ctx, b.String(), vals...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// copyChunk copies the chunk after lo and verifies it on both servers; it returns the chunk's
// last key and sum, and a nil key when there was nothing left to copy.
func (c *copier) copyChunk(ctx context.Context, lo []any) ([]any, sum, error) {
	rows, src, err := c.readChunk(ctx, lo)
	if err != nil {
		return nil, sum{}, fmt.Errorf("read a chunk of %s on %s: %w", c.table, c.source.Name, err)
	}
	if len(rows) == 0 {
		return nil, sum{}, nil
	}
	hi := c.keyOf(rows[len(rows)-1])
	if err := c.writeChunk(ctx, lo, hi, rows); err != nil {
		return nil, sum{}, fmt.Errorf("write a chunk of %s on %s: %w", c.table, c.target.Name, err)
	}
	where, args := chunkRange(c.shape.key, lo, hi)
	dst, err := checksum(ctx, c.target.DB, c.table, c.shape.columns, where, args)
	if err != nil {
		return nil, sum{}, fmt.Errorf("checksum a chunk of %s on %s: %w", c.table, c.target.Name, err)
	}
	if src != dst {
		return nil, sum{}, fmt.Errorf("%w: the chunk of %s after key %v up to %v: %s read %d rows (checksum %d), %s holds %d rows (checksum %d); "+
			"the two servers render a value differently (a type or character set mismatch) or the rows changed",
			ErrChecksum, c.table, keyText(lo), keyText(hi), c.source.Name, src.rows, src.checksum, c.target.Name, dst.rows, dst.checksum)
	}
	return hi, src, nil
}

// keyText writes a primary key for messages.
func keyText(k []any) string {
	if k == nil {
		return "(start)"
	}
	parts := make([]string, len(k))
	for i, v := range k {
		parts[i] = string(keyBytes(v))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// deleteChunk deletes up to n rows of table after lo (nil: from the start) on b, in key
// order. It returns the last key it deleted up to, how many rows went, and whether no row was
// left after them.
func deleteChunk(ctx context.Context, b *Backend, table string, key []string, lo []any, n int) (hi []any, gone int64, last bool, err error) {
	q := "SELECT " + columnList(key) + " FROM " + quoteIdent(table)
	var args []any
	if lo != nil {
		q, args = q+" WHERE "+afterKey(key), keyArgs(lo)
	}
	q += " ORDER BY " + columnList(key) + " LIMIT 1 OFFSET ?"
	hi = make([]any, len(key))
	err = b.DB.QueryRowContext(ctx, q, append(args, n-1)...).Scan(rowscan.Targets(hi)...)
	if errors.Is(err, sql.ErrNoRows) {
		hi, last = nil, true // fewer than n rows left: delete them all
	} else if err != nil {
		return nil, 0, false, err
	}
	where, wargs := chunkRange(key, lo, hi)
	res, err := b.DB.ExecContext(ctx, "DELETE FROM "+quoteIdent(table)+" WHERE "+where, wargs...)
	if err != nil {
		return nil, 0, false, err
	}
	gone, err = res.RowsAffected()
	return hi, gone, last, err
}
