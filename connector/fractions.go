package connector

import (
	"context"
	"database/sql"
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
// read after the next metadata refresh, and so are the columns of tables that appear later.
// A change of a backend's global sql_mode or of a column's type needs a restart of the
// connector.

// factsTimeout bounds the reading of columns after a background refresh.
const factsTimeout = 10 * time.Second

// storeFacts reads the backends' servers and the shard-key columns for the router.
type storeFacts struct {
	router *routing.Router
	open   func(backend string) *sql.DB // a handle on backend, opening nothing yet
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
}

func newStoreFacts(router *routing.Router, cfg *config.Config, metaDB *sql.DB, open func(string) *sql.DB) *storeFacts {
	meta := cfg.Metadata.Backend
	f := &storeFacts{router: router, open: open, meta: meta, later: map[string]bool{}, dbs: map[string]*sql.DB{meta: metaDB}, servers: map[string]bool{}}
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
	if _, ok := cols[f.meta]; first && !ok {
		cols[f.meta] = nil
	}
	type outcome struct {
		backend string
		db      *sql.DB
		read    *serverRead
		err     error
	}
	outs := make([]outcome, 0, len(cols))
	for b := range cols {
		if f.dbs[b] == nil {
			f.dbs[b] = f.open(b)
		}
		outs = append(outs, outcome{backend: b, db: f.dbs[b]})
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
		if first && o.backend == f.meta {
			if o.err != nil { // a server that cannot answer the whole query may answer the zone's
				f.router.SetDefaultTimeZone(defaultTimeZone(ctx, o.db))
			} else {
				f.router.SetDefaultTimeZone(o.read.zone.resolve())
			}
		}
		if o.err != nil {
			continue // left unknown: routing refuses what it would need them for
		}
		if !f.servers[o.backend] {
			f.router.SetBackendServer(o.backend, routing.ServerFlavor(o.read.version, o.read.comment), o.read.sqlMode, o.read.zone.key())
			f.servers[o.backend] = true
		}
		f.router.SetShardKeyColumns(o.read.keys)
	}
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
}

// readServer reads, on a server session of db, its default time zone, flavour and sql_mode,
// and the type of the shard-key columns cols, in one query.
func readServer(ctx context.Context, db *sql.DB, cols []routing.KeyColumn) (*serverRead, error) {
	var q strings.Builder
	q.WriteString("SELECT @@session.time_zone, @@system_time_zone, TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), NOW()), @@version, @@version_comment, @@session.sql_mode, " +
		"c.TABLE_NAME, c.COLUMN_NAME, c.DATA_TYPE, c.DATETIME_PRECISION FROM (SELECT 1 AS one) AS one " +
		"LEFT JOIN information_schema.COLUMNS AS c ON c.TABLE_SCHEMA = DATABASE() AND ")
	args := make([]any, 0, len(cols))
	if len(cols) == 0 {
		q.WriteString("FALSE")
	} else {
		q.WriteString("c.TABLE_NAME IN (")
		for i, k := range cols {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteByte('?')
			args = append(args, k.Table)
		}
		q.WriteByte(')')
	}
	rows, err := db.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	s := &serverRead{keys: map[string]routing.ShardKeyColumn{}}
	for rows.Next() {
		var table, column, typ sql.NullString
		var prec sql.NullInt64
		if err := rows.Scan(&s.zone.name, &s.zone.system, &s.zone.offset, &s.version, &s.comment, &s.sqlMode, &table, &column, &typ, &prec); err != nil {
			return nil, err
		}
		if !table.Valid || !typ.Valid {
			continue
		}
		col := routing.ShardKeyColumn{Type: routing.ShardKeyTypeOf(typ.String), DataType: typ.String}
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
	return s, rows.Err()
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
