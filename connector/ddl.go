package connector

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"slices"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/internal/routing"
	"github.com/obroute/obroute/metadata"
)

// DDL on a time-sharded table (ALTER TABLE, CREATE/DROP INDEX, TRUNCATE, OPTIMIZE, ANALYZE,
// REPAIR, CHECK TABLE) runs on each of its physical tables, oldest first, one after the other,
// outside any transaction: each physical table's statement commits on its own server. The first
// failure stops it, and the error (a *DDLError) names the tables changed, the one that failed
// and those not run; running the statement again in its IF [NOT] EXISTS form completes it.

// ErrDDLPartial: DDL on a time-sharded table changed some of its physical tables and then failed
// on one; the *DDLError says which (errors.As), and wraps the server's error.
var ErrDDLPartial = errors.New("obroute: DDL on a time-sharded table changed only some of its physical tables")

// DDLError is the failure of DDL on a time-sharded table on one of its physical tables. Each
// table is named "table on backend". errors.Is(err, ErrDDLPartial) holds when Changed is not
// empty; the server's error (a *mysql.MySQLError) is reachable with errors.As.
type DDLError struct {
	// Statement is the statement's leading words ("ALTER TABLE …"), without its literals.
	Statement string
	// Changed are the physical tables the statement ran on before the failure.
	Changed []string
	// Failed is the physical table whose statement failed.
	Failed string
	// NotRun are the physical tables it did not run on.
	NotRun []string
	// Err is the failure.
	Err error
}

// Error implements error.
func (e *DDLError) Error() string {
	var b strings.Builder
	b.WriteString("obroute: " + e.Statement + " failed on " + e.Failed + ": " + errorText(e.Err) + "; ")
	if len(e.Changed) == 0 {
		b.WriteString("no physical table was changed")
	} else {
		b.WriteString("changed: " + strings.Join(e.Changed, ", "))
	}
	if len(e.NotRun) > 0 {
		b.WriteString("; not run on: " + strings.Join(e.NotRun, ", "))
	}
	if len(e.Changed) > 0 {
		b.WriteString("; run it again in its IF [NOT] EXISTS form (ADD COLUMN IF NOT EXISTS, DROP INDEX IF EXISTS, …) to complete it, and check with obroute metadata verify")
	}
	return b.String()
}

// Unwrap returns the failure, and ErrDDLPartial when some table was changed.
func (e *DDLError) Unwrap() []error {
	if len(e.Changed) > 0 {
		return []error{ErrDDLPartial, e.Err}
	}
	return []error{e.Err}
}

// runFanOut runs DDL on a time-sharded table on each of its physical tables (plan.FanOut).
func (cs *clientSession) runFanOut(ctx context.Context, plan *routing.Plan, wantRows bool) (driver.Result, driver.Rows, error) {
	if cs.tx.active || !cs.autocommitFor(plan.Shadow) {
		return nil, nil, errorf("%w: it runs on each physical table, each committing on its own; run it outside the transaction (with autocommit on)", routing.ErrDDLInTransaction)
	}
	var (
		total int64
		out   bufferedRows
	)
	for i, t := range plan.Targets {
		res, rows, err := cs.runTarget(ctx, plan, t, wantRows, nil)
		if err == nil && rows != nil {
			err = out.add(rows)
		}
		if err == nil && res != nil {
			n, _ := res.RowsAffected()
			total += n
		}
		if err != nil {
			names := make([]string, len(plan.Targets))
			for k, t := range plan.Targets {
				names[k] = strings.Join(t.Tables, ", ") + " on " + t.Backend
			}
			return nil, nil, &DDLError{Statement: statementWords(plan.Statement), Changed: names[:i], Failed: names[i], NotRun: names[i+1:], Err: err}
		}
	}
	if wantRows {
		if len(out.columns) == 0 {
			return nil, emptyRows{}, nil
		}
		return nil, &out, nil
	}
	return driver.RowsAffected(total), nil, nil
}

// statementWords returns the words of the statement up to the first literal or parenthesis, for
// messages: "ALTER TABLE orders ADD COLUMN note".
func statementWords(st *routing.Statement) string {
	text := st.LogText()
	if i := strings.IndexAny(text, "('\"`;"); i >= 0 {
		text = text[:i]
	}
	return strings.Join(strings.Fields(text), " ")
}

// concatTargets runs the targets of plan one after the other and returns their rows in that
// order (plain EXPLAIN of a statement split across tables).
func (cs *clientSession) concatTargets(ctx context.Context, plan *routing.Plan) (driver.Rows, error) {
	var out bufferedRows
	for _, t := range plan.Targets {
		_, rows, err := cs.runTarget(ctx, plan, t, true, nil)
		if err != nil {
			return nil, err
		}
		if err := out.add(rows); err != nil {
			return nil, err
		}
	}
	return &out, nil
}

// ErrDDLBusy: DDL on a time-sharded table was refused because obroute migrate is moving one of
// its physical tables, or obroute metadata prepare (or other DDL on it) is running; the
// message says which. Run it again once that has ended.
var ErrDDLBusy = errors.New("obroute: a move or prepare of the time-sharded table is running")

// lockFanOut keeps DDL on a time-sharded table apart from obroute migrate and obroute metadata
// prepare, which copy its physical tables' definitions (SHOW CREATE TABLE, CREATE TABLE … LIKE):
// it takes the table's DDL lock on the metadata backend (metadata.DDLLockName), which prepare
// holds while it creates tables, refuses the DDL while a move of one of its tables runs or is
// recorded unfinished, and routes the statement again by the metadata read afresh, so that a
// table prepare has just added is changed too. release ends the lock once the DDL has run. With
// a metadata source of the application's own (WithMetadataSource) there is nothing to lock.
// Shadow traffic's DDL does all this on the shadow side: the shadow backend of the metadata
// backend, its shard metadata.
func (c *Connector) lockFanOut(ctx context.Context, plan *routing.Plan, reroute func() (*routing.Plan, error)) (release func(), next *routing.Plan, err error) {
	m := c.meta
	if plan.Shadow {
		m = c.shadowMeta
	}
	if m == nil || m.db == nil {
		return func() {}, plan, nil
	}
	conn, err := m.db.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			conn.Close()
		}
	}()
	var db sql.NullString
	if err := conn.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&db); err != nil {
		return nil, nil, err
	}
	name := metadata.DDLLockName(db.String, plan.FanOut)
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", name).Scan(&got); err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil && got.Int64 == 1 {
			conn.ExecContext(context.WithoutCancel(ctx), "DO RELEASE_LOCK(?)", name)
		}
	}()
	if got.Int64 != 1 {
		return nil, nil, errorf("%w: obroute metadata prepare, or other DDL on %s, is running (it holds the lock %s on backend %s); run the statement again once it has ended",
			ErrDDLBusy, plan.FanOut, name, m.backend)
	}
	if err := m.refresh(ctx); err != nil {
		return nil, nil, err
	}
	if next, err = reroute(); err != nil {
		return nil, nil, err
	}
	var tables []string
	for _, t := range next.Targets {
		tables = append(tables, t.Tables...)
	}
	for _, t := range tables {
		var holder sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", metadata.MoveLockName(db.String, t)).Scan(&holder); err != nil {
			return nil, nil, err
		}
		if holder.Valid {
			return nil, nil, errorf("%w: obroute migrate is moving %s, a physical table of %s, and copies its definition; run the statement again once the move has ended", ErrDDLBusy, t, plan.FanOut)
		}
	}
	state := "shard_migration" // tiering.DefaultStateTable, beside the shard metadata
	if i := strings.LastIndexByte(c.cfg.Metadata.Table, '.'); i >= 0 {
		state = c.cfg.Metadata.Table[:i+1] + state
	}
	moves, err := conn.QueryContext(ctx, "SELECT table_name, step FROM "+state+" WHERE step <> 'done'")
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &me) && me.Number == 1146: // no move ever recorded
		err = nil
	case err != nil:
		return nil, nil, err
	default:
		for moves.Next() {
			var table, step string
			if err = moves.Scan(&table, &step); err != nil {
				break
			}
			if slices.ContainsFunc(tables, func(t string) bool { return strings.EqualFold(t, table) }) {
				moves.Close()
				return nil, nil, errorf("%w: the move of %s, a physical table of %s, is recorded unfinished (step %s in %s); finish it (obroute migrate %s) or abort it (obroute migrate -abort %s), then run the statement again",
					ErrDDLBusy, table, plan.FanOut, step, state, table, table)
			}
		}
		if cerr := moves.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return func() {
		// Closing a *sql.Conn returns its connection to the pool, which keeps the lock.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
		defer cancel()
		if _, err := conn.ExecContext(uctx, "DO RELEASE_LOCK(?)", name); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn }) // discarded, and the lock with it
		}
		conn.Close()
	}, next, nil
}
