package connector

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"

	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/metadata"
)

// A statement on a shadow table whose algorithms read column values is routed by those values
// as the server stores and compares them, which takes the table's definition (its columns'
// order and types). The router asks for the definitions it lacks (routing.ColumnsNeeded):
// first of the shadow backend the statement would go to, then, only when its rows are not
// shadow rows there, of the production backend. Each is read from information_schema on a
// connection of that backend of its own, within the statement's context, and kept for the
// metadata refresh interval; a DDL statement run through obroute on a backend drops what was
// kept of its tables there.

// maxDefinitionReads bounds the definitions one statement may need (two per shadow table).
const maxDefinitionReads = 8

// shadowDefs holds a handle per backend for reading definitions.
type shadowDefs struct {
	mu  sync.Mutex
	dbs map[string]*sql.DB
}

// routeReading routes st, first reading the definitions of shadow tables the router asks for.
func (cs *clientSession) routeReading(ctx context.Context, st *routing.Statement, hints hint.Set, args []driver.NamedValue, explain bool) (*routing.Plan, error) {
	if !cs.c.noReadBack && cs.c.router.ShadowViewsNeeded(cs.shadowByHints(st, hints) || cs.c.isShadowBackend(hints.Backend)) {
		if err := cs.c.readShadowViews(ctx); err != nil {
			return nil, err
		}
	}
	for reads := 0; ; reads++ {
		plan, err := cs.route(st, hints, args, explain)
		if err == nil || reads == maxDefinitionReads {
			return plan, err
		}
		var need *routing.ColumnsNeeded // declared here: it escapes, and only a refusal pays for it
		if !errors.As(err, &need) {
			return plan, err
		}
		if err := cs.c.readDefinition(ctx, need); err != nil {
			return nil, err
		}
	}
}

// readShadowViews reads the views of every shadow backend's database, with their definitions,
// and gives them to the router: a statement decided by column values that names one is refused,
// and so is shadow traffic naming one that reaches another database. They are read on the
// shadow backends only, never on production.
func (c *Connector) readShadowViews(ctx context.Context) error {
	var views []routing.View
	seen := map[string]bool{}
	for _, m := range c.cfg.Shadow.Mappings {
		if seen[m.Shadow] {
			continue
		}
		seen[m.Shadow] = true
		rows, err := c.defs.handle(c, m.Shadow).QueryContext(ctx, "SELECT TABLE_NAME, TABLE_SCHEMA, VIEW_DEFINITION FROM information_schema.VIEWS WHERE TABLE_SCHEMA = DATABASE()")
		if err != nil {
			return errorf("obroute: reading the views of the shadow backend %s (a view may reach a shadow table, or another database): %w", m.Shadow, err)
		}
		for rows.Next() {
			var v routing.View
			if err := rows.Scan(&v.Name, &v.Schema, &v.Definition); err != nil {
				rows.Close()
				return errorf("obroute: reading the views of the shadow backend %s: %w", m.Shadow, err)
			}
			views = append(views, v)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return errorf("obroute: reading the views of the shadow backend %s: %w", m.Shadow, err)
		}
	}
	c.router.SetShadowViewDefinitions(views)
	return nil
}

// readViews reads the views of a production backend's database and gives them to the router,
// which asks for them only for a statement it routes there (never for shadow traffic).
func (c *Connector) readViews(ctx context.Context, backend string) error {
	if c.noReadBack {
		return errorf("%w: the route depends on whether the statement names a view of backend %s (a view may reach a shadow table whose rule reads column values), which this connector does not read (WithoutReadBack); hint it as shadow or production traffic", routing.ErrUnreadable, backend)
	}
	names, err := c.viewNames(ctx, backend)
	if err != nil {
		return err
	}
	c.router.SetViews(backend, names)
	return nil
}

// viewNames returns the names of the views of backend's database.
func (c *Connector) viewNames(ctx context.Context, backend string) ([]string, error) {
	rows, err := c.defs.handle(c, backend).QueryContext(ctx, "SELECT TABLE_NAME FROM information_schema.VIEWS WHERE TABLE_SCHEMA = DATABASE()")
	if err != nil {
		return nil, errorf("obroute: reading the views of backend %s (a view may reach a shadow table whose rule reads column values): %w", backend, err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, errorf("obroute: reading the views of backend %s: %w", backend, err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return nil, errorf("obroute: reading the views of backend %s: %w", backend, err)
	}
	return names, nil
}

// readDefinition reads the definition of need's table on its backend and gives it to the router.
func (c *Connector) readDefinition(ctx context.Context, need *routing.ColumnsNeeded) error {
	if need.Views {
		return c.readViews(ctx, need.Backend)
	}
	if c.noReadBack {
		return errorf("obroute: the route depends on the definition of the shadow table %s on backend %s (its column values decide the route), which this connector does not read (WithoutReadBack); route it where the backends can be read, or hint it as shadow or production traffic", need.Table, need.Backend)
	}
	db := c.defs.handle(c, need.Backend)
	var schema any
	if need.Schema != "" {
		schema = need.Schema
	}
	rows, err := db.QueryContext(ctx, "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IFNULL(NUMERIC_PRECISION, 0), IFNULL(NUMERIC_SCALE, 0), "+
		"IFNULL(CHARACTER_MAXIMUM_LENGTH, 0), IFNULL(COLLATION_NAME, ''), COLUMN_DEFAULT, EXTRA, TABLE_NAME, @@SESSION.sql_mode FROM information_schema.COLUMNS "+
		"WHERE TABLE_SCHEMA = IFNULL(?, DATABASE()) AND LOWER(TABLE_NAME) = ? ORDER BY TABLE_NAME, ORDINAL_POSITION", schema, need.Table)
	if err != nil {
		return errorf("obroute: reading the definition of the shadow table %s on backend %s (its column values decide the route): %w", need.Table, need.Backend, err)
	}
	defer rows.Close()
	var def routing.TableColumns
	name := ""
	for rows.Next() {
		var col routing.TableColumn
		var dflt sql.NullString
		var table string
		if err := rows.Scan(&col.Name, &col.DataType, &col.ColumnType, &col.Precision, &col.Scale, &col.MaxLength, &col.Collation, &dflt, &col.Extra, &table, &def.SQLMode); err != nil {
			return errorf("obroute: reading the definition of the shadow table %s on backend %s: %w", need.Table, need.Backend, err)
		}
		if name != "" && table != name {
			return errorf("%w: backend %s has tables %s and %s, whose names differ only in case; obroute cannot tell which a statement names", routing.ErrUnreadable, need.Backend, name, table)
		}
		name = table
		if dflt.Valid {
			col.Default = &dflt.String
		}
		def.Columns = append(def.Columns, col)
	}
	if err := rows.Err(); err != nil {
		return errorf("obroute: reading the definition of the shadow table %s on backend %s: %w", need.Table, need.Backend, err)
	}
	c.router.SetTableDefinition(need.Backend, need.Schema, need.Table, def)
	return nil
}

// handle returns the handle of backend, opening nothing yet.
func (d *shadowDefs) handle(c *Connector, backend string) *sql.DB {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dbs == nil {
		d.dbs = map[string]*sql.DB{}
	}
	db := d.dbs[backend]
	if db == nil {
		db = sql.OpenDB(c.backends[backend].connect)
		db.SetMaxIdleConns(1)
		d.dbs[backend] = db
	}
	return db
}

// close closes the handles.
func (d *shadowDefs) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var err error
	for _, db := range d.dbs {
		err = errors.Join(err, db.Close())
	}
	d.dbs = nil
	return err
}

// forgetDefinitions drops what the router keeps of the tables a statement that ran on plan's
// backends may have changed: a DDL statement's tables, and every table of the backend after a
// statement that may run DDL it does not name (EXECUTE of a prepared ALTER, EXECUTE IMMEDIATE,
// SET STATEMENT … FOR ALTER, CALL of a procedure that alters a table, any statement of kind
// OTHER or a DDL statement whose tables are not known).
func (c *Connector) forgetDefinitions(st *routing.Statement, plan *routing.Plan) {
	if c.cfg.Shadow == nil || plan == nil {
		return
	}
	var tables []string // nil: every table
	switch st.Kind {
	case routing.KindDDL:
		if len(st.Tables) > 0 {
			tables = st.Tables
		}
	case routing.KindOther, routing.KindExecute:
	default:
		return
	}
	for _, t := range plan.Targets {
		c.router.ForgetTableDefinitions(t.Backend, tables)
	}
}

// ddlBackends calls do with the facts (production's or the shadow side's) and the backend they
// are kept under, for each backend plan's DDL statement runs on.
func (c *Connector) ddlBackends(st *routing.Statement, plan *routing.Plan, do func(f *storeFacts, backend string, snap *metadata.Snapshot)) {
	if st.Kind != routing.KindDDL || plan == nil {
		return
	}
	seen := map[string]bool{}
	for _, t := range plan.Targets {
		if seen[t.Backend] {
			continue
		}
		seen[t.Backend] = true
		if !c.isShadowBackend(t.Backend) {
			if c.meta != nil && c.meta.facts != nil {
				if snap := c.meta.snapshot(); snap != nil {
					do(c.meta.facts, t.Backend, snap)
				}
			}
			continue
		}
		if m := c.shadowMeta; m != nil && m.facts != nil {
			if snap := m.snapshot(); snap != nil {
				for _, mp := range c.cfg.Shadow.Mappings {
					if mp.Shadow == t.Backend {
						do(m.facts, mp.Production, snap)
					}
				}
			}
		}
	}
}
