package tiering

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/internal/metacache"
	"github.com/obroute/obroute/internal/rules"
	"github.com/obroute/obroute/metadata"
)

// Backend is one backend of the store, opened for operations.
type Backend struct {
	// Name and Role are the backend's name and role in the configuration.
	Name, Role string
	// Addr is its network address, for messages (never credentials).
	Addr string
	// DB reaches it with the session settings of operations (see Open).
	DB *sql.DB
}

// Store is the hot/cold store of one obroute configuration, opened for operations: every
// backend, the shard metadata table and the time-sharded logical tables.
type Store struct {
	backends  []*Backend
	hot, cold string // the first backends of role hot and cold: where tables without a location live
	meta      *Backend
	metaTable string // as configured: table or schema.table
	stateName string // the migration state table, beside the metadata table
	tables    []config.TimeTable
	settle    time.Duration
	loc       *time.Location // the first backend's loc: the calendar of the clock given (clock.go)
}

// DefaultStateTable is the table, beside the shard metadata table, where migrations record
// their progress.
const DefaultStateTable = "shard_migration"

// Open validates cfg and opens every backend for operations. The sessions read values exactly
// as stored, whatever the DSN says: no time parsing, no client-side interpolation, UTC session
// time zone (so TIMESTAMP values read from one server and written to another keep their
// instant), utf8mb4, and a read timeout of at least ten minutes (a checksum of a large table
// sends nothing until it is done). Backends that follow a service name are refused: give
// operations a configuration naming each server's address. Close the store when done.
func Open(cfg *config.Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(cfg.TimeTables) == 0 {
		return nil, errors.New("tiering: the configuration has no time-sharded table (time_tables); there is nothing to operate on")
	}
	tables, err := rules.TimeTables(cfg)
	if err != nil {
		return nil, err
	}
	s := &Store{metaTable: cfg.Metadata.Table, tables: tables}
	if len(cfg.Backends) > 0 && cfg.Backends[0].MySQL != nil {
		s.loc = cfg.Backends[0].MySQL.Loc
	}
	s.stateName = DefaultStateTable
	if schema, _, ok := strings.Cut(cfg.Metadata.Table, "."); ok {
		s.stateName = schema + "." + DefaultStateTable
	}
	for _, b := range cfg.Backends {
		if b.Service != "" {
			s.Close()
			return nil, fmt.Errorf("tiering: backend %s follows service %s; operations connect to one server: give them a configuration whose backend DSNs name the servers' addresses", b.Name, b.Service)
		}
		db, err := openOps(b.MySQL)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("tiering: backend %s: %w", b.Name, err)
		}
		be := &Backend{Name: b.Name, Role: b.Role, Addr: b.Address(), DB: db}
		s.backends = append(s.backends, be)
		if b.Role == config.RoleHot && s.hot == "" {
			s.hot = b.Name
		}
		if b.Role == config.RoleCold && s.cold == "" {
			s.cold = b.Name
		}
		if b.Name == cfg.Metadata.Backend {
			s.meta = be
		}
	}
	s.settle = settleTime(cfg)
	return s, nil
}

// connectTimeout bounds opening an operations connection when the backend's DSN sets no timeout.
const connectTimeout = 5 * time.Second

// statementAllowance is how long a statement routed before a metadata change is assumed to run
// when neither a level budget nor a read timeout bounds statements (obroute migrate -wait sets
// the whole wait instead). A statement still reading the moved table later is not answered
// wrongly: the table is renamed away only once the statements holding it have finished.
const statementAllowance = 30 * time.Second

// openOps opens a backend with the session settings of operations.
func openOps(mc *mysql.Config) (*sql.DB, error) {
	c := mc.Clone()
	c.ParseTime, c.InterpolateParams, c.MultiStatements, c.ClientFoundRows = false, false, false, false
	c.Loc = time.UTC
	if c.Params == nil {
		c.Params = map[string]string{}
	}
	c.Params["time_zone"] = "'+00:00'"
	if c.Timeout == 0 {
		c.Timeout = connectTimeout
	}
	c.ReadTimeout = max(c.ReadTimeout, 10*time.Minute)
	if err := c.Apply(mysql.Charset("utf8mb4", "")); err != nil {
		return nil, err
	}
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxIdleConns(4)
	return db, nil
}

// settleTime is how long after a change of the shard metadata every obroute process of cfg
// routes by it and has finished the statements it routed before: a refresh interval, a load
// that began just before the change (metacache.DefaultLoadTimeout), and the longest statement
// (the longest level budget, or the read timeout when no budget is set).
func settleTime(cfg *config.Config) time.Duration {
	var stmt time.Duration
	for _, t := range cfg.TimeTables {
		stmt = max(stmt, t.Budgets.L1, t.Budgets.L2, t.Budgets.L3)
	}
	if stmt == 0 {
		stmt = time.Duration(cfg.Timeouts.Read)
		if stmt == 0 {
			stmt = statementAllowance
		}
	}
	return time.Duration(cfg.Metadata.Refresh) + metacache.DefaultLoadTimeout + stmt
}

// Close closes every backend.
func (s *Store) Close() error {
	var errs []error
	for _, b := range s.backends {
		errs = append(errs, b.DB.Close())
	}
	return errors.Join(errs...)
}

// Backend returns the named backend, nil when it is not configured.
func (s *Store) Backend(name string) *Backend {
	for _, b := range s.backends {
		if b.Name == name {
			return b
		}
	}
	return nil
}

// Settle returns how long after a change of the shard metadata every obroute process of the
// configuration routes by the new rows and has finished the statements routed by the old
// ones: the metadata refresh interval, plus the longest load of the metadata (30 s), plus
// the longest statement (the longest level budget of the time tables, or the read timeout
// when none is set).
func (s *Store) Settle() time.Duration { return s.settle }

// Snapshot reads the shard metadata now.
func (s *Store) Snapshot(ctx context.Context) (*metadata.Snapshot, error) {
	tables, err := metadata.NewSQLSource(s.meta.DB, s.metaTable).Load(ctx)
	if err != nil {
		return nil, err
	}
	return metadata.NewSnapshot(tables, time.Now())
}

// IsTimeTable reports whether name is a configured time table (a logical table).
func (s *Store) IsTimeTable(name string) bool {
	_, ok := s.timeTable(name)
	return ok
}

// timeTable returns the configured time table named logical (case-insensitive).
func (s *Store) timeTable(logical string) (*config.TimeTable, bool) {
	if i := s.tableIndex(logical); i >= 0 {
		return &s.tables[i], true
	}
	return nil, false
}

// tableIndex returns the index in s.tables of the time table named logical (case-insensitive),
// -1 if none.
func (s *Store) tableIndex(logical string) int {
	return slices.IndexFunc(s.tables, func(t config.TimeTable) bool { return strings.EqualFold(t.Table, logical) })
}

// tablesOf returns the physical tables of a configured logical table, sorted by Min: those of
// snap.Logical, without the tables of a longer configured name (stats_5min_202501 belongs to
// stats_5min, not to stats, when both are configured), as the router counts them.
func (s *Store) tablesOf(snap *metadata.Snapshot, tt *config.TimeTable) []metadata.Table {
	var out []metadata.Table
	for _, t := range snap.Logical(tt.Table) {
		if s.ownerOf(t.Name) == tt {
			out = append(out, t)
		}
	}
	return out
}

// ownerOf returns the configured logical table a physical table belongs to: the longest
// configured name L such that the table is named L_<digit>…; nil if none.
func (s *Store) ownerOf(name string) *config.TimeTable {
	var best *config.TimeTable
	lower := strings.ToLower(name)
	for i := range s.tables {
		p := strings.ToLower(s.tables[i].Table) + "_"
		if len(lower) > len(p) && strings.HasPrefix(lower, p) && lower[len(p)] >= '0' && lower[len(p)] <= '9' &&
			(best == nil || len(s.tables[i].Table) > len(best.Table)) {
			best = &s.tables[i]
		}
	}
	return best
}

// locate returns the backend a table lives on by the shard metadata, as the router resolves
// it: its location, else the first backend of role hot (is_hot = 1) or cold.
func (s *Store) locate(t metadata.Table) (*Backend, error) {
	name, role := t.Location, ""
	if name == "" {
		name, role = s.cold, config.RoleCold
		if t.Hot {
			name, role = s.hot, config.RoleHot
		}
		if name == "" {
			return nil, fmt.Errorf("%s has no location and no backend has role %s: set its location", t.Name, role)
		}
	}
	b := s.Backend(name)
	if b == nil {
		return nil, fmt.Errorf("%s has location %q, which is not a configured backend: fix the metadata row or the configuration", t.Name, name)
	}
	return b, nil
}

// hasLocation reports whether the shard metadata table has the location column.
func (s *Store) hasLocation(ctx context.Context) (bool, error) {
	rows, err := s.meta.DB.QueryContext(ctx, "SELECT * FROM "+quoteQualified(s.metaTable)+" LIMIT 0")
	if err != nil {
		return false, fmt.Errorf("read %s on %s: %w", s.metaTable, s.meta.Name, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return false, err
	}
	for _, c := range cols {
		if strings.EqualFold(c, "location") {
			return true, nil
		}
	}
	return false, nil
}

// quoteQualified quotes table or schema.table; names come from a validated configuration or
// shard metadata (plain identifiers), so this only adds the backquotes.
func quoteQualified(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = quoteIdent(p)
	}
	return strings.Join(parts, ".")
}

// quoteIdent quotes an identifier with backquotes, doubling any inside.
func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// formatTime writes a shard-key time as MySQL reads a DATETIME literal.
func formatTime(t time.Time) string {
	if t.Nanosecond() != 0 {
		return t.Format("2006-01-02 15:04:05.999999")
	}
	return t.Format(time.DateTime)
}

// parseTime reads a DATETIME or DATE as text, as UTC.
func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", time.DateOnly} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a DATETIME or DATE", s)
}

// tableMissing reports the server error of a table that does not exist (1146).
func tableMissing(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1146
}
