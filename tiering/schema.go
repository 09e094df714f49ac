package tiering

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// createLike creates table dst on backend to with the schema of table src on backend from,
// unless dst exists already: CREATE TABLE … LIKE on the same backend, else the statement of
// SHOW CREATE TABLE with the name changed. keepAutoIncrement keeps the counter of src (a
// table moved keeps counting); otherwise the new table starts from 1, as with LIKE.
func createLike(ctx context.Context, from *Backend, src string, to *Backend, dst string, keepAutoIncrement bool) error {
	if from == to && !keepAutoIncrement {
		_, err := to.DB.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+quoteIdent(dst)+" LIKE "+quoteIdent(src))
		if err != nil {
			return fmt.Errorf("create %s like %s on %s: %w", dst, src, to.Name, err)
		}
		return nil
	}
	stmt, err := showCreate(ctx, from, src)
	if err != nil {
		return err
	}
	head := "CREATE TABLE " + quoteIdent(src) + " "
	if !strings.HasPrefix(stmt, head) {
		return fmt.Errorf("SHOW CREATE TABLE %s on %s does not start with %q; create %s on %s by hand", src, from.Name, head, dst, to.Name)
	}
	stmt = "CREATE TABLE IF NOT EXISTS " + quoteIdent(dst) + " " + stmt[len(head):]
	if !keepAutoIncrement {
		stmt = autoIncrement.ReplaceAllString(stmt, "")
	}
	if _, err := to.DB.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("create %s on %s with the schema of %s on %s: %w", dst, to.Name, src, from.Name, err)
	}
	return nil
}

// autoIncrement is the table option of SHOW CREATE TABLE that carries the counter.
var autoIncrement = regexp.MustCompile(` AUTO_INCREMENT=\d+`)

// showCreate returns the CREATE TABLE statement of a table.
func showCreate(ctx context.Context, b *Backend, table string) (string, error) {
	var name, stmt string
	if err := b.DB.QueryRowContext(ctx, "SHOW CREATE TABLE "+quoteIdent(table)).Scan(&name, &stmt); err != nil {
		return "", fmt.Errorf("SHOW CREATE TABLE %s on %s: %w", table, b.Name, err)
	}
	return stmt, nil
}

// tableShape is what a copy needs of a table: its stored columns and its primary key.
type tableShape struct {
	columns []string // stored (not generated) columns, in table order
	key     []string // primary-key columns, in key order
}

// readShape reads a table's columns and primary key from information_schema.
func readShape(ctx context.Context, b *Backend, table string) (tableShape, error) {
	var sh tableShape
	rows, err := b.DB.QueryContext(ctx, `SELECT COLUMN_NAME FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND EXTRA NOT LIKE '%GENERATED%' AND EXTRA NOT LIKE '%PERSISTENT%'
ORDER BY ORDINAL_POSITION`, table)
	if err != nil {
		return sh, fmt.Errorf("read the columns of %s on %s: %w", table, b.Name, err)
	}
	if sh.columns, err = scanStrings(rows); err != nil {
		return sh, fmt.Errorf("read the columns of %s on %s: %w", table, b.Name, err)
	}
	rows, err = b.DB.QueryContext(ctx, `SELECT COLUMN_NAME FROM information_schema.STATISTICS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX`, table)
	if err != nil {
		return sh, fmt.Errorf("read the primary key of %s on %s: %w", table, b.Name, err)
	}
	if sh.key, err = scanStrings(rows); err != nil {
		return sh, fmt.Errorf("read the primary key of %s on %s: %w", table, b.Name, err)
	}
	return sh, nil
}

func scanStrings(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
	Close() error
}) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// checksumExpr is the per-row checksum: CRC32 of the columns' text joined by '#', followed by
// one flag per column saying whether it is NULL (CONCAT_WS skips NULLs, so NULL, ” and a
// shifted value would otherwise collide). Both servers render each column from the same
// schema in the same session settings (UTC, utf8mb4), so equal rows give equal checksums.
func checksumExpr(columns []string) string {
	var b strings.Builder
	b.WriteString("CRC32(CONCAT_WS('#'")
	for _, c := range columns {
		b.WriteString(", ")
		b.WriteString(quoteIdent(c))
	}
	b.WriteString(", CONCAT(")
	for i, c := range columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("ISNULL(" + quoteIdent(c) + ")")
	}
	b.WriteString(")))")
	return b.String()
}

// columnList returns the quoted columns joined by ", ".
func columnList(columns []string) string {
	q := make([]string, len(columns))
	for i, c := range columns {
		q[i] = quoteIdent(c)
	}
	return strings.Join(q, ", ")
}

// afterKey is the predicate "primary key after (k1, k2, …)" as a union of ranges the
// optimizer reads from the key: k1 > ? OR (k1 = ? AND k2 > ?) OR …; it takes the arguments
// keyArgs returns.
func afterKey(key []string) string {
	var ors []string
	for i := range key {
		var ands []string
		for _, k := range key[:i] {
			ands = append(ands, quoteIdent(k)+" = ?")
		}
		ands = append(ands, quoteIdent(key[i])+" > ?")
		ors = append(ors, "("+strings.Join(ands, " AND ")+")")
	}
	return "(" + strings.Join(ors, " OR ") + ")"
}

// notAfterKey is the negation of afterKey: the primary key at or before (k1, k2, …).
func notAfterKey(key []string) string { return "NOT " + afterKey(key) }

// keyArgs returns the arguments of afterKey for the key values v.
func keyArgs(v []any) []any {
	var out []any
	for i := range v {
		out = append(out, v[:i+1]...)
	}
	return out
}
