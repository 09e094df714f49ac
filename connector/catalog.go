package connector

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/internal/routing"
)

// The catalog of the logical tables (see routing's catalog.go for what is answered): a catalog
// statement reads the rows of the information_schema tables it needs on every backend of the
// logical view, maps them (routed tables from their backend, each time-sharded table under its
// logical name with its newest physical table's definition and the sum of its physical tables'
// row statistics, in TABLES and PARTITIONS, other tables from the default backend), keeps them in temporary tables of the
// server session that answers, and runs there with information_schema's tables standing for
// that server's rows of the other databases and the logical rows of the current one. The
// temporary tables are dropped once the answer is read.

// catalogTempPrefix names the temporary tables holding the logical rows of information_schema.
const catalogTempPrefix = "obroute_catalog_"

// catalogTempName names the temporary table of s holding the logical rows of
// information_schema.view: obroute_catalog_<random tag of s>_<view>, so that the client
// session's own temporary tables (obroute_catalog_tables, say) are never taken or dropped.
func catalogTempName(s *serverSession, view string) string {
	if s.catalogTag == "" {
		var b [6]byte
		rand.Read(b[:])
		s.catalogTag = hex.EncodeToString(b[:])
	}
	return catalogTempPrefix + s.catalogTag + "_" + strings.ToLower(view)
}

// isCatalogTemp reports whether table is one of s's catalog temporary tables (a server listing
// temporary tables in information_schema shows them).
func isCatalogTemp(s *serverSession, table string) bool {
	return s.catalogTag != "" && strings.HasPrefix(strings.ToLower(table), catalogTempPrefix+s.catalogTag+"_")
}

// errCatalogReadOnly refuses a catalog statement in a READ ONLY transaction.
func errCatalogReadOnly() error {
	return errorf("%w: a catalog statement inside a READ ONLY transaction: obroute answers it for the logical tables from temporary tables, which MariaDB does not create in a READ ONLY transaction; run it before the transaction, or in a read-write one", routing.ErrCatalog)
}

// catalogInsertRows bounds the rows of one INSERT into a catalog temporary table.
const catalogInsertRows = 200

// runCatalog answers a catalog statement (plan.Catalog) for the logical view of the tables.
func (cs *clientSession) runCatalog(ctx context.Context, plan *routing.Plan, wantRows bool, prep *stmt) (driver.Result, driver.Rows, error) {
	if plan.Shadow {
		return nil, nil, errorf("%w: a catalog statement of shadow traffic is not answered for the logical tables; send it to a shadow backend with a backend hint", routing.ErrCatalog)
	}
	if cs.tx.active && cs.tx.opts.ReadOnly {
		return nil, nil, errCatalogReadOnly()
	}
	q := plan.Catalog
	t := plan.Targets[0]
	s, err := cs.server(ctx, t.Backend)
	if err == nil {
		err = cs.sync(ctx, s)
	}
	if err != nil {
		return nil, nil, err
	}
	var db string
	var lowerNames bool
	if db, lowerNames, err = catalogSession(ctx, s); err != nil {
		return nil, nil, err
	}
	if strings.EqualFold(db, "information_schema") || strings.EqualFold(db, "performance_schema") {
		return nil, nil, errorf("%w: the client session's database is %s, where the logical tables' catalog cannot be kept; USE the application's database first", routing.ErrCatalog, db)
	}
	// The answer is the last SELECT of s: FOUND_ROWS() is s's, as one server's is its own
	// (SQL_CALC_FOUND_ROWS counts the rows without LIMIT; the temporary tables' DROP leaves it).
	// The connector counts the rows it returns; once they are closed, s answers instead.
	found := func() { cs.funcs.foundRows = sessionValue{backend: cs.c.productionOf(t.Backend)} }
	view, err := cs.c.router.CatalogView()
	if err != nil {
		return nil, nil, err
	}
	current, dsn, err := cs.catalogDatabases(ctx, view)
	if err != nil {
		return nil, nil, err
	}
	switch from := q.Database(); {
	case from != "" && !sameName(from, db, lowerNames) && slices.ContainsFunc(dsn, func(d string) bool { return sameName(d, from, lowerNames) }):
		return nil, nil, errorf("%w: SHOW … FROM %s while the client session's database is %s: %s holds the physical tables of the logical tables (time-sharded and routed), which obroute maps only in the current database; USE %s first", routing.ErrCatalog, from, orNone(db), from, from)
	case q.Database() == "" && db == "" && len(q.Views()) > 0 && plan.Statement.Kind == routing.KindSelect:
		return nil, nil, errorf("%w: information_schema read with no current database: its rows of the backends' databases would be their physical tables, not the logical tables (time-sharded and routed); USE the application's database first", routing.ErrCatalog)
	case q.Database() == "" && db != "" && plan.Statement.Kind == routing.KindSelect:
		for _, d := range dsn {
			if !slices.ContainsFunc(current, func(c string) bool { return sameName(c, d, lowerNames) }) {
				return nil, nil, errorf("%w: information_schema read while the client session's database is %s: its rows of %s would be the physical tables of the logical tables (time-sharded and routed), which obroute maps only in the current database; USE %s first", routing.ErrCatalog, db, d, d)
			}
		}
	}
	logical := "" // the logical tables' database: the default backend's DSN's
	if b := cs.c.backends[cs.c.cfg.Default]; b != nil && b.mysql != nil {
		logical = b.mysql.DBName
	}
	if db == "" || q.Database() != "" && !sameName(q.Database(), db, lowerNames) || logical != "" && db != logical {
		// No current database, or another one: not the logical tables'. (A current database
		// named as the logical tables' in another case is refused by the router.)
		res, rows, err := cs.runTarget(ctx, plan, t, wantRows, prep)
		if rows != nil {
			rows = wrapRows(rows, func() error { found(); return nil })
		}
		return res, rows, err
	}
	temps := map[string]string{}
	var exclude []string
	warned := false // a read of the backends' rows gave warnings
	for _, v := range q.Views() {
		rows, cols, ex, err := cs.logicalRows(ctx, view, v, db, s, &warned)
		if err != nil {
			return nil, nil, err
		}
		for _, x := range ex {
			exclude = appendMissing(exclude, x)
		}
		name := catalogTempName(s, v)
		temps[v] = name // dropped even when filling it fails half-way
		if err := fillTemp(ctx, s, name, v, cols, rows); err != nil {
			dropTemps(s, temps)
			var me *mysql.MySQLError
			if errors.As(err, &me) && me.Number == 1792 { // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
				return nil, nil, errCatalogReadOnly()
			}
			return nil, nil, err
		}
	}
	if t.SQL, err = q.SQL(temps, db, exclude, lowerNames); err != nil {
		dropTemps(s, temps)
		return nil, nil, err
	}
	res, rows, err := cs.runOn(ctx, s, targetRun{plan: plan, target: t, wantRows: wantRows, prep: prep})
	if err != nil || rows == nil {
		dropTemps(s, temps)
		return res, rows, err
	}
	wrapped := wrapRows(rows, nil)
	wrapped.names = q.ColumnNames()
	wrapped.onClose = func() error {
		if n, ok := cs.catalogDiagnostics(ctx, s, warned); ok {
			cs.funcs.foundRows = heldValue(n)
		} else {
			found()
		}
		dropTemps(s, temps)
		return nil
	}
	return res, wrapped, nil
}

// catalogDiagnostics tells, once the answer of a catalog statement was read on s, whether one
// server's diagnostics for it are known: when neither the reads of the backends' rows nor the
// answer gave a warning or error, one server's gives none either (the answer evaluated the
// statement over the rows one server holds and more: the other backends' databases), and s,
// where dropping the temporary tables leaves none, answers SHOW WARNINGS and @@warning_count.
// Otherwise they are the rewritten statement's, which may differ from one server's, and stay
// refused. ok reports that they are known; found is then s's FOUND_ROWS() for the answer, which
// reading the diagnostics replaced.
func (cs *clientSession) catalogDiagnostics(ctx context.Context, s *serverSession, warned bool) (found int64, ok bool) {
	if warned || s.broken {
		return 0, false
	}
	rows, err := s.query(ctx, "SELECT @@warning_count, @@error_count, FOUND_ROWS()"+oneRow, nil, false)
	if err != nil {
		return 0, false
	}
	dest := make([]driver.Value, 3)
	err = rows.Next(dest)
	rows.Close()
	if err != nil || text(dest[0]) != "0" || text(dest[1]) != "0" {
		return 0, false
	}
	n, err := strconv.ParseInt(text(dest[2]), 10, 64)
	if err != nil {
		return 0, false
	}
	cs.funcs.diag = diagnostics{backend: cs.c.productionOf(s.backend.name)}
	return n, true
}

// catalogDatabases returns the current database of the server session of each backend of the
// logical view (its DSN's until a USE), whose tables make the view, and the databases their
// DSNs name.
func (cs *clientSession) catalogDatabases(ctx context.Context, lv *routing.CatalogView) (current, dsn []string, err error) {
	for _, b := range lv.Sources() {
		src, err := cs.server(ctx, b)
		if err == nil {
			err = cs.sync(ctx, src)
		}
		if err != nil {
			return nil, nil, err
		}
		own := ""
		if src.backend.mysql != nil {
			own = src.backend.mysql.DBName
		}
		if own != "" {
			dsn = appendMissing(dsn, own)
		}
		if d := src.database; d != "" {
			own = d
		}
		if own != "" {
			current = appendMissing(current, own)
		}
	}
	return current, dsn, nil
}

// orNone names a database, "(none)" for no database.
func orNone(db string) string {
	if db == "" {
		return "(none)"
	}
	return db
}

// refusedCatalog records, after a catalog statement obroute refused (err), that its
// diagnostics are no server's: one server would have run it and shown its own warnings, so SHOW
// WARNINGS, SHOW ERRORS and @@warning_count are refused until the next statement, rather than
// answered with the statement's before it.
func (cs *clientSession) refusedCatalog(err error) {
	if errors.Is(err, routing.ErrCatalog) {
		cs.funcs.diag = diagnostics{why: "the statement before it was a catalog statement obroute refused, which no server ran and whose diagnostics one server would show"}
	}
}

// catalogSession reads the current database of s ("" when none) and whether its server compares
// table names in any case (lower_case_table_names != 0).
func catalogSession(ctx context.Context, s *serverSession) (string, bool, error) {
	rows, err := s.query(ctx, "SELECT DATABASE(), @@lower_case_table_names", nil, false)
	if err != nil {
		return "", false, err
	}
	dest := make([]driver.Value, 2)
	err = rows.Next(dest)
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", false, err
	}
	return text(dest[0]), text(dest[1]) != "0", nil
}

// logicalRows reads information_schema.view on every backend of the logical view and returns its
// rows for the current database, mapped to the logical tables, with the columns' names; exclude
// are the databases of the other backends on the same server as s. warned is set when a read
// gave warnings (a view that cannot be opened …), which one server would give for the statement.
func (cs *clientSession) logicalRows(ctx context.Context, lv *routing.CatalogView, view, db string, s *serverSession, warned *bool) (out [][]driver.Value, cols []string, exclude []string, err error) {
	schemas, tables := routing.ViewColumns(view)
	byLogical := map[string]int{} // logical table → its row in out (TABLES: statistics are summed)
	var parts [][]driver.Value    // TABLES rows of other physical tables, summed at the end
	var partNames []string
	summed := view == "TABLES" || view == "PARTITIONS" // statistics summed over the physical tables
	for _, b := range lv.Sources() {
		src, err := cs.server(ctx, b)
		if err == nil {
			err = cs.sync(ctx, src)
		}
		if err != nil {
			return nil, nil, nil, err
		}
		rows, err := src.query(ctx, "SELECT DATABASE(), t.* FROM information_schema."+view+" t WHERE t."+schemas[0]+" = DATABASE()", nil, false)
		if err != nil {
			return nil, nil, nil, err
		}
		var buf bufferedRows
		if err := buf.add(rows); err != nil {
			return nil, nil, nil, err
		}
		if !*warned {
			n, err := cs.readSessionNumber(ctx, src, "@@warning_count")
			if err != nil {
				return nil, nil, nil, err
			}
			*warned = n != 0
		}
		cols = buf.columns[1:]
		index := func(name string) int {
			for i, c := range cols {
				if strings.EqualFold(c, name) {
					return i
				}
			}
			return -1
		}
		key := func(name string, row []driver.Value) string { // a logical table's row: one per partition
			if view == "PARTITIONS" {
				for _, c := range []string{"PARTITION_NAME", "SUBPARTITION_NAME"} {
					if i := index(c); i >= 0 {
						name += "\x00" + text(row[i])
					}
				}
			}
			return name
		}
		srcDB := ""
		for _, r := range buf.values {
			srcDB = text(r[0])
			row := r[1:]
			if isCatalogTemp(src, text(row[index(tables[0])])) {
				continue
			}
			name, role := lv.Table(b, text(row[index(tables[0])]))
			switch role {
			case routing.TableHidden:
				continue
			case routing.TablePart:
				if summed {
					parts, partNames = append(parts, row), append(partNames, key(name, row))
				}
				continue
			}
			row[index(tables[0])] = []byte(name)
			for _, c := range tables[1:] {
				if i := index(c); i >= 0 && row[i] != nil {
					if n, role := lv.Table(b, text(row[i])); role != routing.TableHidden {
						row[i] = []byte(n)
					}
				}
			}
			for _, c := range schemas {
				if i := index(c); i >= 0 && row[i] != nil && text(row[i]) == srcDB {
					row[i] = []byte(db)
				}
			}
			if role == routing.TableDefinition && summed {
				byLogical[key(name, row)] = len(out)
			}
			out = append(out, row)
		}
		if src != s && src.backend.addr == s.backend.addr && srcDB != "" && srcDB != db {
			exclude = append(exclude, srcDB)
		}
		if srcDB == "" && src != s && src.backend.addr == s.backend.addr {
			if d, _, err := catalogSession(ctx, src); err == nil && d != "" && d != db {
				exclude = append(exclude, d)
			}
		}
	}
	if summed {
		idx := func(name string) int {
			for i, c := range cols {
				if c == name {
					return i
				}
			}
			return -1
		}
		for k, part := range parts {
			at, ok := byLogical[partNames[k]]
			if !ok {
				continue
			}
			row := out[at]
			for _, c := range []string{"TABLE_ROWS", "DATA_LENGTH", "INDEX_LENGTH", "DATA_FREE"} {
				if i := idx(c); i >= 0 {
					row[i] = addNumbers(row[i], part[i])
				}
			}
			if i := idx("AUTO_INCREMENT"); i >= 0 && part[i] != nil {
				// The logical table's counter: the largest (a table made ahead starts at 1).
				a, _ := strconv.ParseUint(text(row[i]), 10, 64)
				if b, err := strconv.ParseUint(text(part[i]), 10, 64); err == nil && (row[i] == nil || b > a) {
					row[i] = part[i]
				}
			}
			if i := idx("CREATE_TIME"); i >= 0 && part[i] != nil && (row[i] == nil || text(part[i]) < text(row[i])) {
				row[i] = part[i]
			}
			if i := idx("UPDATE_TIME"); i >= 0 && part[i] != nil && (row[i] == nil || text(part[i]) > text(row[i])) {
				row[i] = part[i]
			}
		}
	}
	return out, cols, exclude, nil
}

// fillTemp creates the temporary table name with the columns of information_schema.view on s
// and inserts rows into it.
func fillTemp(ctx context.Context, s *serverSession, name, view string, cols []string, rows [][]driver.Value) error {
	if _, err := s.exec(ctx, "DROP TEMPORARY TABLE IF EXISTS "+name, nil, false); err != nil {
		return err
	}
	if _, err := s.exec(ctx, "CREATE TEMPORARY TABLE "+name+" AS SELECT * FROM information_schema."+view+" LIMIT 0", nil, false); err != nil {
		return err
	}
	marks := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	for from := 0; from < len(rows); from += catalogInsertRows {
		batch := rows[from:min(from+catalogInsertRows, len(rows))]
		var b strings.Builder
		b.WriteString("INSERT INTO " + name + " VALUES ")
		args := make([]driver.NamedValue, 0, len(batch)*len(cols))
		for i, r := range batch {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(marks)
			for _, v := range r {
				args = append(args, driver.NamedValue{Ordinal: len(args) + 1, Value: v})
			}
		}
		if _, err := s.exec(ctx, b.String(), args, false); err != nil {
			return err
		}
	}
	return nil
}

// dropTemps drops the catalog's temporary tables on s; a failure leaves them to the next catalog
// statement, which replaces them.
func dropTemps(s *serverSession, temps map[string]string) {
	if len(temps) == 0 || s.broken {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	names := make([]string, 0, len(temps))
	for _, n := range temps {
		names = append(names, n)
	}
	s.exec(ctx, "DROP TEMPORARY TABLE IF EXISTS "+strings.Join(names, ", "), nil, false)
}

// text returns a catalog value as text.
func text(v driver.Value) string {
	switch v := v.(type) {
	case []byte:
		return string(v)
	case string:
		return v
	case nil:
		return ""
	case int64:
		return strconv.FormatInt(v, 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case time.Time:
		return v.Format("2006-01-02 15:04:05.999999")
	}
	return ""
}

// addNumbers adds two unsigned integer values of information_schema (NULL counts nothing).
func addNumbers(a, b driver.Value) driver.Value {
	if b == nil {
		return a
	}
	if a == nil {
		return b
	}
	x, err1 := strconv.ParseUint(string(bytes.TrimSpace([]byte(text(a)))), 10, 64)
	y, err2 := strconv.ParseUint(string(bytes.TrimSpace([]byte(text(b)))), 10, 64)
	if err1 != nil || err2 != nil {
		return a
	}
	return []byte(strconv.FormatUint(x+y, 10))
}

// sameName compares two database names as the server does.
func sameName(a, b string, anyCase bool) bool {
	if anyCase {
		return strings.EqualFold(a, b)
	}
	return a == b
}

func appendMissing(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// unqualifiedCatalog refuses a SELECT that names an information_schema table without its
// database in a client session whose database is information_schema: it would read one
// backend's physical tables, not the logical ones.
func (cs *clientSession) unqualifiedCatalog(st *routing.Statement, shadow bool) error {
	view := st.UnqualifiedCatalog()
	if view == "" {
		return nil
	}
	db := cs.state.database
	if shadow && cs.shadowState.database != "" {
		db = cs.shadowState.database
	}
	if db == "" {
		if b := cs.c.backends[cs.c.cfg.Default]; b != nil && b.mysql != nil {
			db = b.mysql.DBName
		}
	}
	if !strings.EqualFold(db, "information_schema") {
		return nil
	}
	return errorf("%w: the client session's database is information_schema, and %s without it reads one backend's tables; write information_schema.%s, which obroute answers for the logical tables", routing.ErrCatalog, view, view)
}

// logicalCounter reads the AUTO_INCREMENT counter of a time-sharded table for SHOW CREATE TABLE
// (plan.Counters): the largest of its physical tables', 0 for none. It runs before the SHOW, so
// that the SHOW's diagnostics are the last of its server session.
func (cs *clientSession) logicalCounter(ctx context.Context, plan *routing.Plan) (int64, error) {
	var max int64
	for _, t := range plan.Counters {
		s, err := cs.server(ctx, t.Backend)
		if err == nil {
			err = cs.sync(ctx, s)
		}
		if err != nil {
			return 0, err
		}
		names := make([]string, len(t.Tables))
		for i, n := range t.Tables {
			names[i] = "'" + strings.ReplaceAll(n, "'", "''") + "'"
		}
		n, err := cs.readSessionNumber(ctx, s, "(SELECT COALESCE(MAX(AUTO_INCREMENT), 0) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ("+strings.Join(names, ", ")+"))")
		if err != nil {
			return 0, err
		}
		max = maxOf(max, n)
	}
	return max, nil
}

// withCounter returns the rows of SHOW CREATE TABLE with the table option AUTO_INCREMENT=n (as
// the server writes it, for a counter past 1) in the Create Table column.
func withCounter(r driver.Rows, n int64) (driver.Rows, error) {
	var buf bufferedRows
	if err := buf.add(r); err != nil {
		return nil, err
	}
	col := slices.IndexFunc(buf.columns, func(c string) bool { return strings.EqualFold(c, "Create Table") })
	for _, row := range buf.values {
		if col < 0 || col >= len(row) {
			break
		}
		row[col] = []byte(setCounter(text(row[col]), n))
	}
	return &buf, nil
}

// setCounter sets the AUTO_INCREMENT table option of a CREATE TABLE text to n: replaced, or
// written after ENGINE= where the server writes it, or left out for a counter of 1 or less.
func setCounter(create string, n int64) string {
	at := strings.Index(create, "\n) ")
	if at < 0 {
		return create
	}
	head, opts := create[:at+3], create[at+3:]
	end := strings.IndexByte(opts, '\n')
	if end < 0 {
		end = len(opts)
	}
	line, tail := opts[:end], opts[end:]
	words := strings.Fields(line)
	out := words[:0:0]
	for _, w := range words {
		if !strings.HasPrefix(w, "AUTO_INCREMENT=") {
			out = append(out, w)
		}
	}
	if n > 1 {
		k := slices.IndexFunc(out, func(w string) bool { return strings.HasPrefix(w, "ENGINE=") })
		out = slices.Insert(out, k+1, "AUTO_INCREMENT="+strconv.FormatInt(n, 10))
	}
	return head + strings.Join(out, " ") + tail
}

func maxOf(a, b int64) int64 {
	if b > a {
		return b
	}
	return a
}
