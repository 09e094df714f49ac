package connector

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/metadata"
)

// An INSERT on a time-sharded table whose shard-key value has a fraction of a second goes to
// the table that holds the value as the server stores it (routing/time_fraction.go). For that
// the router needs each backend's server flavour and the sql_mode its server sessions start
// with, the precision of every physical table's shard-key column, and the client session's own
// sql_mode. The first two are read back with the first load of the shard metadata, within the
// statement that needs it, in one query per backend that an INSERT may write to, run
// concurrently (on the metadata backend the same query reads the default time zone). The
// backends of the history store, which an INSERT writes to only with allow_cold_writes, are
// read when obroute first opens a server session there (storeFacts.opened), or after the next
// metadata refresh, and so are the columns of tables that appear later.
// The unique keys of the tables are read with their columns (for REPLACE and ON DUPLICATE KEY
// UPDATE, routing/time_upsert.go). When a backend's server changes (serverRun: a restart, a
// service's new primary), all of it is read again for that backend with the first server
// session opened on the new server; other changes of a global sql_mode or of a column's type
// need a restart of the connector.

// factsTimeout bounds the reading of columns after a background refresh, and again after a
// backend's server changed.
const factsTimeout = 10 * time.Second

// timeFacts is where storeFacts gives the router what it read: *routing.Router for
// production's backends, routing.TimeFacts of the shadow side for the shadow backends.
type timeFacts interface {
	UnknownKeyColumns(snap *metadata.Snapshot) []routing.KeyColumn
	KeyColumnsOn(snap *metadata.Snapshot, backend string) []routing.KeyColumn
	SetDefaultTimeZone(name string, system *time.Location)
	SetBackendServer(backend string, flavor routing.Flavor, sqlMode, timeZone string)
	ForgetBackendServer(backend string)
	SetShardKeyColumns(cols map[string]routing.ShardKeyColumn)
	SetUniqueKeys(keys map[string]string)
	ForgetTables(cols []routing.KeyColumn)
}

// storeFacts reads the backends' servers and the shard-key columns for the router.
type storeFacts struct {
	router timeFacts
	open   func(backend string) *sql.DB // a handle on backend, opening nothing yet; nil: not read
	meta   string                       // the metadata backend, whose default time zone is read
	// ownMeta: the metadata backend's handle was opened here (the metadata come from a source
	// of the application's) and is closed with the others.
	ownMeta bool
	// later are the backends read only after a refresh: the history store's, when no time
	// table allows writes there.
	later  map[string]bool
	ctx    context.Context // cancelled by close
	cancel context.CancelFunc

	mu      sync.Mutex
	dbs     map[string]*sql.DB
	servers map[string]bool // the backends whose server was read
	// runs is the last change of each backend's server handled (serverRun); stale are the
	// backends whose server changed and whose facts are not read again yet.
	runs  map[string]uint64
	stale map[string]bool
}

func newStoreFacts(router timeFacts, cfg *config.Config, metaDB *sql.DB, open func(string) *sql.DB) *storeFacts {
	meta := cfg.Metadata.Backend
	f := &storeFacts{router: router, open: open, meta: meta, later: map[string]bool{}, dbs: map[string]*sql.DB{meta: metaDB}, servers: map[string]bool{},
		runs: map[string]uint64{}, stale: map[string]bool{}}
	if !slices.ContainsFunc(cfg.TimeTables, func(t config.TimeTable) bool { return t.AllowColdWrites }) {
		for _, b := range cfg.Backends {
			if b.Role == config.RoleCold && b.Name != meta {
				f.later[b.Name] = true
			}
		}
	}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	return f
}

// first reads, within the first statement's context, the metadata backend's default time zone
// and what is unknown of the backends an INSERT may write to.
func (f *storeFacts) first(ctx context.Context, snap *metadata.Snapshot) {
	f.read(ctx, snap, true)
}

// refreshed reads what is still unknown after a background refresh: the history store's
// backends, tables that appeared, and what an earlier read could not get.
func (f *storeFacts) refreshed(snap *metadata.Snapshot) {
	ctx, cancel := context.WithTimeout(f.ctx, factsTimeout)
	defer cancel()
	f.read(ctx, snap, false)
}

func (f *storeFacts) read(ctx context.Context, snap *metadata.Snapshot, first bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctx.Err() != nil {
		return
	}
	cols := map[string][]routing.KeyColumn{}
	for _, k := range f.router.UnknownKeyColumns(snap) {
		if !first || !f.later[k.Backend] {
			cols[k.Backend] = append(cols[k.Backend], k)
		}
	}
	for b := range f.stale {
		cols[b] = f.router.KeyColumnsOn(snap, b)
	}
	if _, ok := cols[f.meta]; first && !ok {
		cols[f.meta] = nil
	}
	f.readLocked(ctx, cols, first)
}

// serverChanged reads again, within ctx, what was read of backend's server and tables: the
// server session just opened there is the first of another run of its server (change run of
// serverRun), which may start server sessions with another sql_mode (or time zone, on the
// metadata backend) and hold its tables with other columns. Until they are read again, INSERTs
// whose routing needs them are refused; a read that fails is tried again at the next refresh.
func (f *storeFacts) serverChanged(ctx context.Context, backend string, run uint64, snap *metadata.Snapshot) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctx.Err() != nil || f.runs[backend] >= run {
		return
	}
	f.runs[backend] = run
	if !f.servers[backend] && !f.stale[backend] && backend != f.meta {
		return // nothing was read of it
	}
	f.router.ForgetBackendServer(backend)
	if backend == f.meta {
		f.router.SetDefaultTimeZone("", nil) // unknown: NOW() is read widely until it is read
	}
	delete(f.servers, backend)
	f.stale[backend] = true
	ctx, cancel := context.WithTimeout(ctx, factsTimeout)
	defer cancel()
	f.readLocked(ctx, map[string][]routing.KeyColumn{backend: f.router.KeyColumnsOn(snap, backend)}, false)
}

// tablesChanging forgets what was read of backend's physical tables: a DDL statement is about
// to run there, which may add a unique key or change a column. Until tablesChanged reads them
// again, what needs them is refused.
func (f *storeFacts) tablesChanging(backend string, snap *metadata.Snapshot) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.router.ForgetTables(f.router.KeyColumnsOn(snap, backend))
}

// tablesChanged reads again, within ctx, what was read of backend's physical tables after a
// DDL statement ran there; a read that fails is tried again at the next refresh.
func (f *storeFacts) tablesChanged(ctx context.Context, backend string, snap *metadata.Snapshot) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctx.Err() != nil {
		return
	}
	cols := f.router.KeyColumnsOn(snap, backend)
	if len(cols) == 0 {
		return
	}
	f.router.ForgetTables(cols)
	ctx, cancel := context.WithTimeout(ctx, factsTimeout)
	defer cancel()
	f.readLocked(ctx, map[string][]routing.KeyColumn{backend: cols}, false)
}

// readLocked reads the servers of cols' backends and the columns cols, concurrently, and gives
// the router what it read; first is the first load's read. f.mu is held.
func (f *storeFacts) readLocked(ctx context.Context, cols map[string][]routing.KeyColumn, first bool) {
	type outcome struct {
		backend string
		db      *sql.DB
		read    *serverRead
		err     error
	}
	outs := make([]outcome, 0, len(cols))
	for b := range cols {
		if f.dbs[b] == nil {
			if db := f.open(b); db != nil {
				f.dbs[b] = db
			}
		}
		if f.dbs[b] != nil {
			outs = append(outs, outcome{backend: b, db: f.dbs[b]})
		}
	}
	var wg sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i].read, outs[i].err = readServer(ctx, outs[i].db, cols[outs[i].backend])
		}()
	}
	wg.Wait()
	for _, o := range outs {
		if (first || f.stale[o.backend]) && o.backend == f.meta {
			if o.err != nil { // a server that cannot answer the whole query may answer the zone's
				f.router.SetDefaultTimeZone(defaultTimeZone(ctx, o.db))
			} else {
				f.router.SetDefaultTimeZone(o.read.zone.resolve())
			}
		}
		if o.err != nil {
			continue // left unknown: routing refuses what it would need them for
		}
		delete(f.stale, o.backend)
		if !f.servers[o.backend] {
			f.router.SetBackendServer(o.backend, routing.ServerFlavor(o.read.version, o.read.comment), o.read.sqlMode, o.read.zone.key())
			f.servers[o.backend] = true
		}
		f.router.SetShardKeyColumns(o.read.keys)
		f.router.SetUniqueKeys(o.read.unique)
	}
}

// serverChanged reads again what was read of backend's server (see storeFacts.serverChanged),
// within ctx: be's server session just opened is the first of its server's change run.
func (c *Connector) serverChanged(ctx context.Context, be *backend, run uint64) {
	if c.meta == nil || c.meta.facts == nil {
		return
	}
	snap := c.meta.snapshot()
	if snap == nil && c.shadowMeta == nil {
		return // nothing was read yet: the first load reads it
	}
	c.events.state(ctx, StateServerChanged, slog.LevelInfo, "backend's server changed",
		slog.String("backend", be.name), slog.String("addr", be.addr))
	if snap != nil && !c.isShadowBackend(be.name) {
		c.meta.facts.serverChanged(ctx, be.name, run, snap)
	}
	// The shadow side's facts of a shadow backend are kept under the production backends it
	// stands for.
	if m := c.shadowMeta; m != nil && m.facts != nil && c.isShadowBackend(be.name) {
		if snap := m.snapshot(); snap != nil {
			for _, mp := range c.cfg.Shadow.Mappings {
				if mp.Shadow == be.name {
					m.facts.serverChanged(ctx, mp.Production, run, snap)
				}
			}
		}
	}
}

// startChanged follows a global sql_mode changed without a restart (SET GLOBAL), which the
// connection ids do not show: s, a server session just opened on be, is read for the sql_mode
// it starts with (one statement, before anything else ran there), for a production backend
// whose server was read for time routing. When it is not what was read, the router is given it,
// so that a plan made with the old one is routed again; it reports whether it changed.
func (c *Connector) startChanged(ctx context.Context, be *backend, s *serverSession) bool {
	if c.meta == nil || c.meta.facts == nil || be.dryRun || c.isShadowBackend(be.name) {
		return false
	}
	facts := c.router.TimeFacts(false)
	flavor, mode, zone, ok := facts.BackendStart(be.name)
	if !ok {
		return false
	}
	rows, err := s.query(ctx, "SELECT @@session.sql_mode"+oneRow, nil, false)
	if err != nil {
		return false // the statement that needs the session finds out
	}
	defer rows.Close()
	dest := make([]driver.Value, 1)
	if rows.Next(dest) != nil {
		return false
	}
	got, _ := valueText(dest[0])
	if got == mode {
		return false
	}
	c.events.state(ctx, StateServerChanged, slog.LevelInfo, "backend's sql_mode changed",
		slog.String("backend", be.name), slog.String("sql_mode", got))
	facts.SetBackendServer(be.name, flavor, got, zone)
	return true
}

// close stops reading and closes the handles opened here (not the metadata backend's).
func (f *storeFacts) close() error {
	f.cancel()
	f.mu.Lock()
	defer f.mu.Unlock()
	var err error
	for b, db := range f.dbs {
		if b != f.meta || f.ownMeta {
			if cerr := db.Close(); err == nil {
				err = cerr
			}
		}
	}
	return err
}

// serverRead is what readServer read back from one backend.
type serverRead struct {
	zone             serverZone
	version, comment string
	sqlMode          string                            // the sql_mode a server session starts with
	keys             map[string]routing.ShardKeyColumn // physical table → its shard-key column
	// unique maps each physical table found to its first unique key without the shard key
	// ("PRIMARY (id)"), "" when every unique key holds it (see routing.Router.SetUniqueKeys).
	unique map[string]string
}

// readServer reads, on a server session of db, its default time zone, flavour and sql_mode,
// and the type of the shard-key columns cols, in one query; then the unique keys of their tables.
func readServer(ctx context.Context, db *sql.DB, cols []routing.KeyColumn) (*serverRead, error) {
	s, found, err := readColumns(ctx, db, cols)
	if err != nil || len(found) == 0 {
		return s, err
	}
	if s.unique, err = readUniqueKeys(ctx, db, found); err != nil {
		return nil, err
	}
	return s, nil
}

// readColumns is readServer's first query; found are the tables of cols whose shard-key column
// exists.
func readColumns(ctx context.Context, db *sql.DB, cols []routing.KeyColumn) (*serverRead, []routing.KeyColumn, error) {
	var q strings.Builder
	q.WriteString("SELECT @@session.time_zone, @@system_time_zone, TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW()), @@version, @@version_comment, @@session.sql_mode, " +
		"c.TABLE_NAME, c.COLUMN_NAME, c.DATA_TYPE, c.DATETIME_PRECISION, c.EXTRA FROM (SELECT 1 AS one) AS one " +
		"LEFT JOIN information_schema.COLUMNS AS c ON c.TABLE_SCHEMA = DATABASE() AND ")
	var args []any
	if len(cols) == 0 {
		q.WriteString("FALSE")
	} else {
		q.WriteString("c.TABLE_NAME IN ")
		args = tableList(&q, cols)
	}
	rows, err := db.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	s := &serverRead{keys: map[string]routing.ShardKeyColumn{}}
	var found []routing.KeyColumn
	for rows.Next() {
		var table, column, typ, extra sql.NullString
		var prec sql.NullInt64
		if err := rows.Scan(&s.zone.name, &s.zone.system, &s.zone.offset, &s.version, &s.comment, &s.sqlMode, &table, &column, &typ, &prec, &extra); err != nil {
			return nil, nil, err
		}
		for _, k := range cols {
			if table.Valid && k.Table == table.String && strings.EqualFold(k.Column, column.String) {
				found = append(found, k)
			}
		}
		if !table.Valid || !typ.Valid {
			continue
		}
		col := routing.ShardKeyColumn{Type: routing.ShardKeyTypeOf(typ.String), DataType: typ.String,
			OnUpdate: strings.Contains(strings.ToLower(extra.String), "on update")}
		if col.Type == routing.ShardKeyDatetime || col.Type == routing.ShardKeyTimestamp {
			if !prec.Valid || prec.Int64 < 0 || prec.Int64 > 6 {
				continue // a precision obroute cannot read: the column stays unread
			}
			col.Digits = int(prec.Int64)
		}
		for _, k := range cols {
			if k.Table == table.String && strings.EqualFold(k.Column, column.String) {
				s.keys[k.Table] = col
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	s.zone.probe(ctx, db)
	return s, found, nil
}

// tableList writes "(?, ?, …)", one placeholder per table of cols, to q and returns the tables'
// names as its arguments.
func tableList(q *strings.Builder, cols []routing.KeyColumn) []any {
	args := make([]any, 0, len(cols))
	q.WriteByte('(')
	for i, k := range cols {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteByte('?')
		args = append(args, k.Table)
	}
	q.WriteByte(')')
	return args
}

// readUniqueKeys reads the unique keys (the primary key included) of the tables of cols and
// returns, per table, the first that does not hold the table's shard-key column ("" for none).
func readUniqueKeys(ctx context.Context, db *sql.DB, cols []routing.KeyColumn) (map[string]string, error) {
	var q strings.Builder
	q.WriteString("SELECT TABLE_NAME, INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND NON_UNIQUE = 0 AND TABLE_NAME IN ")
	args := tableList(&q, cols)
	// The primary key first: it is the key a message names first.
	q.WriteString(" ORDER BY TABLE_NAME, INDEX_NAME <> 'PRIMARY', INDEX_NAME, SEQ_IN_INDEX")
	rows, err := db.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type key struct {
		table, index string
		columns      []string
		holds        bool
	}
	var keys []*key
	for rows.Next() {
		var table, index, column string
		if err := rows.Scan(&table, &index, &column); err != nil {
			return nil, err
		}
		if n := len(keys); n == 0 || keys[n-1].table != table || keys[n-1].index != index {
			keys = append(keys, &key{table: table, index: index})
		}
		k := keys[len(keys)-1]
		k.columns = append(k.columns, column)
		for _, c := range cols {
			k.holds = k.holds || c.Table == table && strings.EqualFold(c.Column, column)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	// A WITHOUT OVERLAPS key lists its period's end and start columns last: it holds the shard
	// key only as a period, and rows of other shard-key values conflict when their periods
	// overlap. information_schema does not tell it from a plain key: SHOW CREATE TABLE does.
	periods := map[string]map[string]string{} // table → index → its columns as written
	for _, k := range keys {
		if n := len(k.columns); k.holds && n >= 3 && periods[k.table] == nil && slices.ContainsFunc(cols, func(c routing.KeyColumn) bool {
			return c.Table == k.table && (strings.EqualFold(c.Column, k.columns[n-1]) || strings.EqualFold(c.Column, k.columns[n-2]))
		}) {
			if periods[k.table], err = overlapKeys(ctx, db, k.table); err != nil {
				return nil, err
			}
		}
	}
	unique := make(map[string]string, len(cols))
	for _, c := range cols {
		unique[c.Table] = ""
	}
	for _, k := range keys {
		if written, ok := periods[k.table][k.index]; ok && unique[k.table] == "" {
			unique[k.table] = k.index + " (" + written + ")"
		}
		if !k.holds && unique[k.table] == "" {
			unique[k.table] = k.index + " (" + strings.Join(k.columns, ", ") + ")"
		}
	}
	return unique, nil
}

// overlapKeys returns the unique keys of table declared WITHOUT OVERLAPS, by name, each with its
// parts as SHOW CREATE TABLE writes them ("id, p WITHOUT OVERLAPS").
func overlapKeys(ctx context.Context, db *sql.DB, table string) (map[string]string, error) {
	var name, def string
	if err := db.QueryRowContext(ctx, "SHOW CREATE TABLE `"+strings.ReplaceAll(table, "`", "``")+"`").Scan(&name, &def); err != nil {
		return nil, err
	}
	keys := map[string]string{}
	for _, line := range strings.Split(def, "\n") {
		line = strings.TrimSpace(line)
		if !strings.Contains(line, " WITHOUT OVERLAPS") {
			continue
		}
		open, close := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
		if open < 0 || close < open {
			continue
		}
		index := "PRIMARY"
		if !strings.HasPrefix(line, "PRIMARY KEY") {
			head := line[:open]
			i, j := strings.IndexByte(head, '`'), strings.LastIndexByte(head, '`')
			if i < 0 || j <= i {
				continue
			}
			index = strings.ReplaceAll(head[i+1:j], "``", "`")
		}
		keys[index] = strings.ReplaceAll(strings.ReplaceAll(line[open+1:close], "`", ""), ",", ", ")
	}
	return keys, nil
}

// sqlMode returns the sql_mode the client session set for production traffic, or for shadow
// traffic when shadow traffic set its own.
func (cs *clientSession) sqlMode(shadow bool) routing.SessionSQLMode {
	var v *routing.SessionVar
	if shadow {
		v = cs.shadowState.variable("sql_mode")
	}
	if v == nil {
		v = cs.state.variable("sql_mode")
	}
	if v == nil {
		return routing.SessionSQLMode{}
	}
	lit, ok := v.Literal()
	return routing.SessionSQLMode{Set: true, Known: ok, Value: lit}
}
