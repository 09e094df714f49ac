package metadata

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Source reads every row of the shard metadata. Load must be safe to call
// from several goroutines, though the connector never runs two loads of one Source at once.
type Source interface {
	// Load returns all tables; it should stop when ctx ends.
	Load(ctx context.Context) ([]Table, error)
}

// StaticSource is a fixed list of tables, for tests and the embedded demo.
type StaticSource []Table

// Load returns a copy of the tables.
func (s StaticSource) Load(context.Context) ([]Table, error) { return slices.Clone(s), nil }

var (
	_ Source = StaticSource(nil)
	_ Source = (*sqlSource)(nil)
)

// sqlSource reads a metadata table through database/sql.
type sqlSource struct {
	db     *sql.DB
	quoted string // quoted table name; "" when err is set
	err    error  // a bad table name, reported by Load
}

// NewSQLSource returns a Source reading the metadata table (DefaultTable when
// table is ""; "schema.table" is accepted) through db, which must reach a
// MySQL-compatible server. An invalid table name is reported by every Load
// as an error wrapping ErrInvalidIdentifier.
//
// The table needs the columns table_name, min_time, max_time and is_hot; the
// columns location and updated_at are optional, so the seed's schema without
// location is read as is (every Location is then ""). Columns are found on
// each Load, so adding location later needs no restart.
//
// Times do not depend on the DSN: min_time and max_time are read as text and
// taken as UTC wall-clock times (as with parseTime=true&loc=UTC), and
// updated_at is read as a Unix timestamp, so it is the true instant whatever
// the session time_zone.
func NewSQLSource(db *sql.DB, table string) Source {
	quoted, err := quoteTable(table)
	if err == nil && db == nil {
		err = errors.New("metadata: NewSQLSource: db is nil")
	}
	return &sqlSource{db: db, quoted: quoted, err: err}
}

// Load implements Source.
func (s *sqlSource) Load(ctx context.Context) ([]Table, error) {
	if s.err != nil {
		return nil, s.err
	}
	hasLocation, hasUpdatedAt, err := s.columns(ctx)
	if err != nil {
		return nil, err
	}
	location, updatedAt := "NULL", "NULL"
	if hasLocation {
		location = "location"
	}
	if hasUpdatedAt {
		updatedAt = "UNIX_TIMESTAMP(updated_at)"
	}
	query := fmt.Sprintf("SELECT table_name, CAST(min_time AS CHAR), CAST(max_time AS CHAR), is_hot, %s, %s FROM %s",
		location, updatedAt, s.quoted)
	rows, err := s.db.QueryContext(ctx, query)
	if err != nil {
		return nil, errorf("metadata: read %s: %w", s.quoted, err)
	}
	defer rows.Close()
	var tables []Table
	for rows.Next() {
		var (
			t                Table
			minText, maxText string
			hot              int64
			loc, upd         sql.NullString
		)
		if err := rows.Scan(&t.Name, &minText, &maxText, &hot, &loc, &upd); err != nil {
			return nil, errorf("metadata: read %s: %w", s.quoted, err)
		}
		if t.Min, err = parseDateTime(minText); err != nil {
			return nil, errorf("%w: %q has min_time %q: %v", ErrInvalidTable, t.Name, minText, err)
		}
		if t.Max, err = parseDateTime(maxText); err != nil {
			return nil, errorf("%w: %q has max_time %q: %v", ErrInvalidTable, t.Name, maxText, err)
		}
		if t.UpdatedAt, err = parseUnix(upd.String); err != nil {
			return nil, errorf("%w: %q has updated_at %q: %v", ErrInvalidTable, t.Name, upd.String, err)
		}
		t.Hot = hot != 0
		t.Location = loc.String
		tables = append(tables, t)
	}
	if err := rows.Err(); err != nil {
		return nil, errorf("metadata: read %s: %w", s.quoted, err)
	}
	return tables, nil
}

// columns reports which optional columns the table has, and fails when a
// required one is missing.
func (s *sqlSource) columns(ctx context.Context) (hasLocation, hasUpdatedAt bool, err error) {
	rows, err := s.db.QueryContext(ctx, "SELECT * FROM "+s.quoted+" LIMIT 0")
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == errNoSuchTable {
		return false, false, errorf("metadata: read %s (it does not exist: CreateTable creates it): %w", s.quoted, err)
	}
	if err != nil {
		return false, false, errorf("metadata: read %s: %w", s.quoted, err)
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return false, false, errorf("metadata: read columns of %s: %w", s.quoted, err)
	}
	have := make(map[string]bool, len(names))
	for _, n := range names {
		have[strings.ToLower(n)] = true
	}
	for _, required := range []string{"table_name", "min_time", "max_time", "is_hot"} {
		if !have[required] {
			return false, false, errorf("%w: %s has no column %s; it needs table_name, min_time, max_time, is_hot (see CreateTable)",
				ErrSchema, s.quoted, required)
		}
	}
	return have["location"], have["updated_at"], rows.Close()
}

// errNoSuchTable is the server's error number for a table that does not exist (ER_NO_SUCH_TABLE).
const errNoSuchTable = 1146

// parseDateTime reads MySQL's text form of a DATETIME ("2025-01-31
// 23:59:59", with up to 6 fractional digits) as a UTC time.
func parseDateTime(s string) (time.Time, error) {
	t, err := time.ParseInLocation("2006-01-02 15:04:05.999999999", s, time.UTC)
	if err != nil {
		return time.Time{}, errors.New("not a DATETIME (a zero date such as 0000-00-00 is not allowed)")
	}
	return t, nil
}

// parseUnix reads the text of UNIX_TIMESTAMP ("1735689600" or
// "1735689600.123456"); "" and "0" (NULL and the zero TIMESTAMP) give the
// zero time.
func parseUnix(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	secText, fracText, _ := strings.Cut(s, ".")
	// ParseUint, not ParseInt: no sign may appear in either part.
	sec, err := strconv.ParseUint(secText, 10, 63)
	if err != nil || len(fracText) > 9 {
		return time.Time{}, errors.New("not a Unix timestamp")
	}
	var nsec uint64
	if fracText != "" {
		padded := fracText + strings.Repeat("0", 9-len(fracText))
		if nsec, err = strconv.ParseUint(padded, 10, 32); err != nil {
			return time.Time{}, errors.New("not a Unix timestamp")
		}
	}
	if sec == 0 && nsec == 0 {
		return time.Time{}, nil
	}
	return time.Unix(int64(sec), int64(nsec)).UTC(), nil
}
