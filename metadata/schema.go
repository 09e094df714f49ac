package metadata

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// DefaultTable is the name of the metadata table when none is given.
const DefaultTable = "shard_metadata"

// createTableSQL is the metadata table: the seed's schema plus the nullable
// location column. %s is the quoted table name.
const createTableSQL = `CREATE TABLE IF NOT EXISTS %s (
  table_name VARCHAR(64) PRIMARY KEY,
  min_time DATETIME NOT NULL,
  max_time DATETIME NOT NULL,
  is_hot TINYINT NOT NULL DEFAULT 0,
  location VARCHAR(64) NULL,
  updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP
)`

// CreateTable creates the metadata table if it does not exist yet, with the
// columns table_name, min_time, max_time, is_hot, location and updated_at.
// table defaults to DefaultTable and may be qualified as schema.table.
// An existing table is left as it is, whatever its columns.
func CreateTable(ctx context.Context, db *sql.DB, table string) error {
	quoted, err := quoteTable(table)
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf(createTableSQL, quoted)); err != nil {
		return errorf("metadata: create table %s: %w", quoted, err)
	}
	return nil
}

// quoteTable validates a metadata table name and returns it quoted with
// backquotes. "" means DefaultTable; "schema.table" is accepted.
func quoteTable(table string) (string, error) {
	if table == "" {
		table = DefaultTable
	}
	parts := strings.Split(table, ".")
	if len(parts) > 2 {
		return "", errorf("%w: %q has more than one '.'; use table or schema.table", ErrInvalidIdentifier, table)
	}
	for i, p := range parts {
		if err := checkIdentifier(p); err != nil {
			return "", errorf("%w: %q: %s", ErrInvalidIdentifier, table, err)
		}
		parts[i] = "`" + p + "`"
	}
	return strings.Join(parts, "."), nil
}

// checkIdentifier accepts what MySQL accepts unquoted, minus the rarely used
// non-ASCII letters: so the quoted form can never need escaping.
func checkIdentifier(s string) error {
	if s == "" {
		return errors.New("empty name")
	}
	if len(s) > 64 {
		return errorf("name is %d characters, MySQL allows 64", len(s))
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '$') {
			return errorf("character %q is not allowed; use letters, digits, '_' or '$'", r)
		}
	}
	return nil
}
