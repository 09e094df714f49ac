package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/sqltest"
)

// EnvShadowStatements sets how many statements TestShadowGeneratorNeverReachesProduction sends;
// CI sends genDefaultStatements.
const EnvShadowStatements = "OBROUTE_SHADOW_STATEMENTS"

const genDefaultStatements = 2500

// traffic is what the generator knows a statement is: production, shadow, or refused.
type traffic uint8

const (
	trafficProduction traffic = iota
	trafficShadow
	trafficRefused
)

// genRow is a row as the generator knows it: its user_id (nil for NULL) and note.
type genRow struct {
	user *int64
	note string
}

func (r genRow) String() string {
	u := int64(-1)
	if r.user != nil {
		u = *r.user
	}
	return fmt.Sprintf("%d:%s", u, r.note)
}

// genSpelling is a way of writing a user_id: its SQL text (? for an argument) and the value
// the column stores.
type genSpelling struct {
	text string
	arg  any
	user *int64
}

func i64(n int64) *int64 { return &n }

var (
	// shadowSpellings are the value 0 of user_id, the shadow value of t_order and t_route.
	genShadowSpellings = []genSpelling{
		{text: "0"}, {text: "'0'"}, {text: "0.0"}, {text: "0e0"}, {text: "-0"}, {text: "+0"}, {text: "0x0"}, {text: "b'0'"},
		{text: "1 - 1"}, {text: "0.4"}, {text: "' 0'"}, {text: "'00'"}, {text: "3 * 0"}, {text: "FALSE"}, {text: "-(0)"}, {text: "0.4e0"},
		{text: "?", arg: int64(0)}, {text: "?", arg: "0"}, {text: "?", arg: []byte("0")}, {text: "?", arg: float64(0)}, {text: "?", arg: false},
	}
	genProdSpellings = []genSpelling{
		{text: "7", user: i64(7)}, {text: "'7'", user: i64(7)}, {text: "7.0", user: i64(7)}, {text: "6 + 1", user: i64(7)}, {text: "0x07", user: i64(7)},
		{text: "0.5", user: i64(1)}, {text: "TRUE", user: i64(1)}, {text: "NULL"}, {text: "-3", user: i64(-3)}, {text: "'12'", user: i64(12)},
		{text: "?", arg: int64(7), user: i64(7)}, {text: "?", arg: "7", user: i64(7)}, {text: "?", arg: nil}, {text: "?", arg: float64(9), user: i64(9)},
	}
	// genShadowCompared are the spellings of 0 that also compare equal to 0 (0.4 is stored as 0
	// but compares unequal).
	genShadowCompared = slices.DeleteFunc(slices.Clone(genShadowSpellings), func(s genSpelling) bool { return strings.Contains(s.text, "0.4") })
	// genShadowWheres compare user_id with %s, a shadow spelling, so that every row reached has it.
	genShadowWheres = []string{"user_id = %s", "%s = user_id", "user_id IN (%s)", "user_id <=> %s", "NOT (user_id <> %s)", "(user_id = %s OR user_id = 0)"}
	// genShadowComments are leading comments that make a statement shadow traffic.
	genShadowComments = []string{
		"/* shadow */ ", "/*SHADOW*/", "/*\n shadow\n*/\n", "/*+ OBROUTE(shadow=true) */ ", "/*+ MAX_EXECUTION_TIME(5000) OBROUTE (shadow=true) */ ",
		"/*+ obroute(SHADOW = TRUE) NO_ICP(t1) */ ", "/*+\n\tQB_NAME(q)\n\tOBROUTE(\n\t\tshadow=true\n\t)\n*/\n", "/* SHARDINGSPHERE_HINT: SHADOW=true */ ",
		"/* ShardingSphere hint: SHADOW=TRUE */ ", "/* request_id=9 */ /* shadow */ ", "-- note\n/*+ OBROUTE(shadow=true) */ ",
		"/** note */ /* shadow */ ", "--\x01note\n/* shadow */ ",
	}
	// genProdComments are leading comments of production traffic (an explicit production hint,
	// or the server's own hints).
	genProdComments = []string{"", "", "", "/*+ OBROUTE(shadow=false) */ ", "/* SHARDINGSPHERE_HINT: SHADOW=false */ ", "/*+ MAX_EXECUTION_TIME(5000) */ ", "/* request_id=9 */ "}
)

// genTables are the generator's tables; group says which backend a table lives on (0 hot, 1
// cold; orders by its month).
var genTables = []struct {
	name  string
	group int
	value bool // its shadow rule reads user_id
	hint  bool // a hint makes a statement on it shadow traffic
}{
	{"items", 0, false, true}, {"audit_log", 1, false, true}, {"t_order", 0, true, false}, {"t_route", 1, true, true}, {"orders", -1, false, true},
}

// genState is what the generator sent where: the rows each side must hold, and the traffic of
// every tag.
type genState struct {
	mu    sync.Mutex
	rows  [2]map[string]map[int]genRow // production, shadow → physical table → id
	tags  map[int]traffic
	sent  atomic.Int64
	tag   atomic.Int64
	kinds map[string]int
}

func (s *genState) record(tag int, tr traffic, kind string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tags[tag] = tr
	s.kinds[kind]++
}

// genWorker sends one goroutine's statements; it owns the ids of its range.
type genWorker struct {
	t    *testing.T
	db   *sql.DB
	rng  *rand.Rand
	st   *genState
	id   int
	rows [2]map[string]map[int]genRow // its own rows, merged into st at the end
	// only makes every statement of one traffic (-1: any).
	only int
}

// genStmt is one statement to run.
type genStmt struct {
	ctx   context.Context
	sql   string
	args  []any
	tr    traffic
	kind  string
	query bool
	apply func() // the model's change once it ran
	// want is the error a refused statement must end with (nil: any refusal of obroute's).
	want error
}

func (w *genWorker) newTag() int { return int(w.st.tag.Add(1)) }

func (w *genWorker) newID() int {
	w.id++
	return w.id
}

// traffic draws the traffic of the next statement.
func (w *genWorker) traffic() traffic {
	if w.only >= 0 {
		return traffic(w.only)
	}
	switch n := w.rng.IntN(20); {
	case n < 9:
		return trafficShadow
	case n < 18:
		return trafficProduction
	}
	return trafficRefused
}

// decorate returns the context and leading comment of a statement of traffic tr on a table
// needing a hint for shadow traffic (needsHint); inTx: the statement follows its transaction.
func (w *genWorker) decorate(tr traffic, needsHint, inTx bool) (context.Context, string) {
	bg := context.Background()
	if tr == trafficShadow {
		if inTx && w.rng.IntN(2) == 0 || !needsHint && w.rng.IntN(3) > 0 {
			return bg, ""
		}
		if w.rng.IntN(3) == 0 {
			return hint.WithShadow(bg), ""
		}
		return bg, genShadowComments[w.rng.IntN(len(genShadowComments))]
	}
	if inTx {
		return bg, ""
	}
	if w.rng.IntN(6) == 0 {
		return hint.WithProduction(bg), ""
	}
	return bg, genProdComments[w.rng.IntN(len(genProdComments))]
}

// value draws a user_id spelling of traffic tr.
func (w *genWorker) value(tr traffic) genSpelling {
	if tr == trafficShadow {
		return genShadowSpellings[w.rng.IntN(len(genShadowSpellings))]
	}
	return genProdSpellings[w.rng.IntN(len(genProdSpellings))]
}

// month draws a month of orders in group (0 hot, 1 cold, -1 any).
func (w *genWorker) month(group int) int {
	for {
		i := w.rng.IntN(len(orderMonths))
		if group < 0 || orderMonths[i].hot == (group == 0) {
			return i
		}
	}
}

func side(tr traffic) int {
	if tr == trafficShadow {
		return 1
	}
	return 0
}

// put and drop change the worker's model.
func (w *genWorker) put(tr traffic, table string, id int, r genRow) {
	s := side(tr)
	if w.rows[s][table] == nil {
		w.rows[s][table] = map[int]genRow{}
	}
	w.rows[s][table][id] = r
}

// existing returns an id the worker holds in table on the side of tr, -1 when none.
func (w *genWorker) existing(tr traffic, table string) int {
	ids := make([]int, 0, len(w.rows[side(tr)][table]))
	for id := range w.rows[side(tr)][table] {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return -1
	}
	slices.Sort(ids)
	return ids[w.rng.IntN(len(ids))]
}

// insert builds an INSERT or REPLACE of one to three rows of traffic tr into a table of group.
func (w *genWorker) insert(tr traffic, group int, inTx bool) genStmt {
	tb := w.table(group)
	physical := tb.name
	var cols, timeCol string
	mi := -1
	if tb.name == "orders" {
		mi = w.month(group)
		physical = "orders_" + orderMonths[mi].suffix
		cols, timeCol = " (id, order_time, note)", "'"+orderMonths[mi].min+" 10:00:00'"
	}
	tag := w.newTag()
	note := fmt.Sprintf("g%d", tag)
	ctx, prefix := w.decorate(tr, !tb.value, inTx)
	verb, family := "INSERT", "insert"
	if tb.name != "orders" && w.rng.IntN(5) == 0 {
		verb, family = "REPLACE", "replace"
	}
	nrows := 1
	if w.rng.IntN(4) == 0 {
		nrows = 2 + w.rng.IntN(2)
	}
	type rowIn struct {
		id   int
		user *int64
		text string
	}
	var rows []rowIn
	var args []any
	for range nrows {
		id := w.newID()
		text, user := fmt.Sprintf("%d", id), (*int64)(nil)
		if tb.name == "orders" {
			text += ", " + timeCol
		} else {
			// A shadow table's rows have the value of their traffic; the others any value.
			v := genProdSpellings[w.rng.IntN(len(genProdSpellings))]
			if tb.value {
				v = w.value(tr)
			}
			user = v.user
			if tb.value && tr == trafficShadow {
				user = i64(0)
			}
			text += ", " + v.text
			if v.text == "?" {
				args = append(args, v.arg)
			}
		}
		rows = append(rows, rowIn{id: id, user: user, text: text + ", '" + note + "'"})
	}
	if cols == "" && w.rng.IntN(2) == 0 {
		cols = " (id, user_id, note)"
	} else if cols == "" {
		family += " without columns"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s INTO %s%s ", prefix, verb, tb.name, cols)
	if tb.name != "orders" && nrows == 1 && w.rng.IntN(4) == 0 {
		family += " … select"
		for i, r := range rows {
			if i > 0 {
				b.WriteString(" UNION ALL ")
			}
			b.WriteString("SELECT " + r.text)
		}
	} else {
		b.WriteString("VALUES ")
		for i, r := range rows {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(" + r.text + ")")
		}
	}
	if nrows > 1 {
		family += ", several rows"
	}
	fmt.Fprintf(&b, " /* %s */", note)
	return genStmt{ctx: ctx, sql: b.String(), args: args, tr: tr, kind: family + " " + tb.name, apply: func() {
		for _, r := range rows {
			w.put(tr, physical, r.id, genRow{user: r.user, note: note})
		}
	}}
}

// table draws a table of group (-1: any).
func (w *genWorker) table(group int) struct {
	name  string
	group int
	value bool
	hint  bool
} {
	for {
		tb := genTables[w.rng.IntN(len(genTables))]
		if group < 0 || tb.group == group || tb.group < 0 {
			return tb
		}
	}
}

// change builds an UPDATE or DELETE of one row the worker holds on tr's side, or a SELECT of
// its rows (nil when it holds none there).
func (w *genWorker) change(tr traffic, group int, inTx bool) *genStmt {
	tb := w.table(group)
	physical, timeCond := tb.name, ""
	if tb.name == "orders" {
		mi := w.month(group)
		physical = "orders_" + orderMonths[mi].suffix
		next := "2025-04-01"
		if mi+1 < len(orderMonths) {
			next = orderMonths[mi+1].min
		}
		timeCond = fmt.Sprintf(" AND order_time >= '%s' AND order_time < '%s'", orderMonths[mi].min, next)
	}
	id := w.existing(tr, physical)
	if id < 0 {
		return nil
	}
	row := w.rows[side(tr)][physical][id]
	tag := w.newTag()
	note := fmt.Sprintf("g%d", tag)
	ctx, prefix := w.decorate(tr, !tb.value, inTx)
	cond := fmt.Sprintf("id = %d%s", id, timeCond)
	var args []any
	valueCond := ""
	if tb.value && tr == trafficShadow {
		v := genShadowCompared[w.rng.IntN(len(genShadowCompared))]
		valueCond = fmt.Sprintf(genShadowWheres[w.rng.IntN(len(genShadowWheres))], v.text)
		if v.text == "?" {
			args = append(args, v.arg)
		}
	}
	// A shadow SELECT may decide user_id in its HAVING, on the grouped column, as the server reads it.
	having := valueCond != "" && w.rng.IntN(3) == 0
	if valueCond != "" && !having {
		cond += " AND " + valueCond
	}
	if tb.value && tr == trafficProduction && row.user != nil && *row.user != 0 && w.rng.IntN(2) == 0 {
		cond += []string{" AND user_id <> 0", fmt.Sprintf(" AND user_id = %d", *row.user), " AND NOT (user_id = 0)", fmt.Sprintf(" AND user_id IN (%d, 99)", *row.user)}[w.rng.IntN(4)]
	}
	s := &genStmt{ctx: ctx, tr: tr, args: args}
	switch n := w.rng.IntN(3); {
	case having:
		s.sql = fmt.Sprintf("%sSELECT note FROM %s WHERE %s GROUP BY user_id, note HAVING %s /* %s */", prefix, tb.name, cond, valueCond, note)
		s.kind, s.query = "select … having "+tb.name, true
		s.apply = func() {}
	case n == 0:
		s.sql = fmt.Sprintf("%sUPDATE %s SET note = '%s' WHERE %s /* %s */", prefix, tb.name, note, cond, note)
		s.kind = "update " + tb.name
		s.apply = func() { w.put(tr, physical, id, genRow{user: row.user, note: note}) }
	case n == 1:
		s.sql = fmt.Sprintf("%sDELETE FROM %s WHERE %s /* %s */", prefix, tb.name, cond, note)
		s.kind = "delete " + tb.name
		s.apply = func() { delete(w.rows[side(tr)][physical], id) }
	default:
		s.sql = fmt.Sprintf("%sSELECT note FROM %s WHERE %s /* %s */", prefix, tb.name, cond, note)
		s.kind, s.query = "select "+tb.name, true
		s.apply = func() {}
	}
	return s
}

// refused builds a statement obroute must refuse.
func (w *genWorker) refused() genStmt {
	tag := w.newTag()
	note := fmt.Sprintf("g%d", tag)
	id := w.newID()
	bg := context.Background()
	s := genStmt{ctx: bg, tr: trafficRefused, apply: func() {}}
	switch n := w.rng.IntN(12); n {
	case 0, 1:
		f := refusedHintForms[w.rng.IntN(len(refusedHintForms))]
		s.sql = fmt.Sprintf("%sINSERT %s INTO items (id, user_id, note) VALUES (%d, 1, '%s') /* %s */", f.prefix, f.insertAfterKeyword, id, note, note)
		s.kind, s.want = "refused hint form", f.err
	case 2:
		s.sql = fmt.Sprintf("INSERT INTO t_order (id, user_id, note) VALUES (%d, 0, '%s'), (%d, 7, '%s') /* %s */", id, note, w.newID(), note, note)
		s.kind, s.want = "refused mixed rows", connector.ErrMixedShadow
	case 3:
		s.sql = fmt.Sprintf("UPDATE t_order SET note = '%s' WHERE user_id = 0 OR id = %d /* %s */", note, id, note)
		s.kind, s.want = "refused mixed where", connector.ErrMixedShadow
	case 4:
		s.sql = fmt.Sprintf("/* shadow */ INSERT INTO t_order (id, user_id, note) VALUES (%d, 7, '%s') /* %s */", id, note, note)
		s.kind, s.want = "refused shadow hint on production values", connector.ErrNoShadowBackend
	case 5:
		s.sql = fmt.Sprintf("INSERT INTO t_route (id, user_id, note) VALUES (%d, ABS(0), '%s') /* %s */", id, note, note)
		s.kind, s.want = "refused unreadable value", connector.ErrUnreadable
	case 6:
		s.sql = []string{
			"SELECT user_id AS u, note FROM t_order GROUP BY u, note HAVING u = 0 /* %s */",
			"SELECT COUNT(*) FROM t_order HAVING MAX(user_id) = 0 /* %s */",
			"SELECT o.note FROM t_order o JOIN items i USING (user_id) WHERE i.user_id = 0 /* %s */",
			"SELECT d.note FROM (SELECT * FROM t_order WHERE user_id = 0) d /* %s */",
		}[w.rng.IntN(4)]
		s.sql = fmt.Sprintf(s.sql, note)
		s.kind, s.want, s.query = "refused unreadable clause", connector.ErrUnreadable, true
	case 7:
		s.sql = fmt.Sprintf("INSERT INTO v_prod (id, user_id, note) VALUES (%d, 0, '%s') /* %s */", id, note, note)
		s.kind, s.want = "refused view of production", connector.ErrUnreadable
	case 8:
		s.sql = fmt.Sprintf("UPDATE v_shadow SET note = '%s' WHERE user_id = 0 AND id = %d /* %s */", note, id, note)
		s.kind, s.want = "refused unhinted view of shadow", connector.ErrUnreadable
	case 10:
		// A stored program whose body writes t_order (its rule reads user_id), or a trigger on it.
		s.sql = fmt.Sprintf([]string{
			"CREATE PROCEDURE %[3]s() INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, 0, '%[2]s') /* %[2]s */",
			"/* shadow */ CREATE PROCEDURE %[3]s() INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, 7, '%[2]s') /* %[2]s */",
			"CREATE TRIGGER %[3]s BEFORE INSERT ON t_order FOR EACH ROW SET NEW.user_id = 0, NEW.note = '%[2]s' /* %[2]s */",
			"CREATE EVENT %[3]s ON SCHEDULE EVERY 1 DAY DO INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, 0, '%[2]s') /* %[2]s */",
			"CREATE PROCEDURE %[3]s() EXECUTE IMMEDIATE CONCAT('INSERT INTO items (id, user_id, note) ', 'VALUES (%[1]d, 0, ''%[2]s'')') /* %[2]s */",
		}[w.rng.IntN(5)], id, note, "p"+note)
		s.kind, s.want = "refused stored program", connector.ErrUnreadable
	case 11:
		// A prepared text obroute cannot read, or one the server refuses inside another.
		s.sql = fmt.Sprintf([]string{
			"EXECUTE IMMEDIATE 'EXECUTE IMMEDIATE ''INSERT INTO t_order (id, user_id, note) VALUES (%[1]d, 0, ''''%[2]s'''')''' /* %[2]s */",
			"/* shadow */ PREPARE %[3]s FROM 'EXECUTE IMMEDIATE ''INSERT INTO items (id, user_id, note) VALUES (%[1]d, 0, ''''%[2]s'''')''' /* %[2]s */",
			"EXECUTE IMMEDIATE CONCAT('/* shadow */ INSERT INTO items (id, user_id, note) ', 'VALUES (%[1]d, 0, ''%[2]s'')') /* %[2]s */",
		}[w.rng.IntN(3)], id, note, "s"+note)
		s.kind, s.want = "refused unreadable prepared text", connector.ErrSessionState
	default:
		f := genRefusedComments[w.rng.IntN(len(genRefusedComments))]
		s.sql = fmt.Sprintf("%sINSERT INTO items (id, user_id, note) VALUES (%d, 1, '%s') /* %s */", f, id, note, note)
		s.kind, s.want = "refused misread comment", hint.ErrMalformedHint
	}
	return s
}

// genRefusedComments lead a statement with a shadow hint in, or after, a comment form the hint
// reader once misread, or a hint word after another word or spelled with letters only Unicode
// case folding takes to ASCII: each is refused.
var genRefusedComments = []string{"--\x01/* shadow */\n", "/** shadow */ ", "/**shadow*/", "/*\x01shadow*/ ", "-- note /* shadow */\n", "#\x01shadow\n", "-- note\x00/* shadow */\n",
	"/* note: shadow */ ", "/* \u017fhadow */ ", "/* \u017fHARDINGSPHERE_HINT: SHADOW=true */ ", "/* Shard\u0131ngSphere h\u0131nt: shadow=true */ "}

// viewInsert builds a shadow-hinted INSERT into v_shadow, a view of the shadow backends over
// t_order: its row is a shadow row of t_order on shadow_hot.
func (w *genWorker) viewInsert() genStmt {
	tag := w.newTag()
	note := fmt.Sprintf("g%d", tag)
	id := w.newID()
	ctx, prefix := context.Background(), genShadowComments[w.rng.IntN(len(genShadowComments))]
	if w.rng.IntN(3) == 0 {
		ctx, prefix = hint.WithShadow(ctx), ""
	}
	return genStmt{ctx: ctx, tr: trafficShadow, kind: "insert into a view v_shadow",
		sql:   fmt.Sprintf("%sINSERT INTO v_shadow (id, user_id, note) VALUES (%d, 0, '%s') /* %s */", prefix, id, note, note),
		apply: func() { w.put(trafficShadow, "t_order", id, genRow{user: i64(0), note: note}) }}
}

// run executes s on q and checks its outcome.
func (w *genWorker) run(q interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, s genStmt) error {
	tag, _ := strconv.Atoi(genTag.FindStringSubmatch(s.sql)[1])
	w.st.record(tag, s.tr, s.kind)
	w.st.sent.Add(1)
	var err error
	if s.query {
		var rows *sql.Rows
		if rows, err = q.QueryContext(s.ctx, s.sql, s.args...); err == nil {
			for rows.Next() {
			}
			err = rows.Close()
		}
	} else {
		_, err = q.ExecContext(s.ctx, s.sql, s.args...)
	}
	switch {
	case s.tr == trafficRefused && err == nil:
		return fmt.Errorf("%s %v: ran, want it refused", s.sql, s.args)
	case s.tr == trafficRefused && s.want != nil && !errors.Is(err, s.want):
		return fmt.Errorf("%s %v: %v, want %v", s.sql, s.args, err, s.want)
	case s.tr != trafficRefused && err != nil:
		return fmt.Errorf("%s %v: %w", s.sql, s.args, err)
	}
	s.apply()
	return nil
}

var genTag = regexp.MustCompile(`/\* g(\d+) \*/`)

// one sends one statement, prepared statement or transaction.
func (w *genWorker) one() error {
	tr := w.traffic()
	switch n := w.rng.IntN(10); {
	case tr == trafficRefused:
		return w.run(w.db, w.refused())
	case n < 4 && tr == trafficShadow && w.rng.IntN(10) == 0:
		return w.run(w.db, w.viewInsert())
	case n < 4:
		return w.run(w.db, w.insert(tr, -1, false))
	case n < 6:
		if s := w.change(tr, -1, false); s != nil {
			return w.run(w.db, *s)
		}
		return w.run(w.db, w.insert(tr, -1, false))
	case n < 7:
		return w.prepared(tr)
	case n < 8:
		return w.sqlPrepared(tr)
	default:
		return w.transaction(tr)
	}
}

// prepared runs an INSERT as a prepared statement of database/sql, its user_id an argument.
func (w *genWorker) prepared(tr traffic) error {
	tb := genTables[w.rng.IntN(4)] // not orders: one backend per table
	tag := w.newTag()
	note := fmt.Sprintf("g%d", tag)
	ctx := context.Background()
	if tr == trafficShadow && (!tb.value || w.rng.IntN(2) == 0) {
		ctx = hint.WithShadow(ctx)
	}
	v := w.value(tr)
	arg, user := v.arg, v.user
	if v.text != "?" {
		arg = map[bool]any{true: int64(0), false: int64(7)}[tr == trafficShadow]
		user = i64(map[bool]int64{true: 0, false: 7}[tr == trafficShadow])
	}
	if tr == trafficShadow {
		user = i64(0)
	}
	if !tb.value && tr == trafficShadow {
		arg, user = int64(5), i64(5)
	}
	stmt, err := w.db.PrepareContext(ctx, fmt.Sprintf("INSERT INTO %s VALUES (?, ?, ?) /* %s */", tb.name, note))
	if err != nil {
		return err
	}
	defer stmt.Close()
	id := w.newID()
	w.st.record(tag, tr, "prepared insert "+tb.name)
	w.st.sent.Add(1)
	if _, err := stmt.ExecContext(ctx, id, arg, note); err != nil {
		return fmt.Errorf("prepared INSERT INTO %s (%d, %#v): %w", tb.name, id, arg, err)
	}
	w.put(tr, tb.name, id, genRow{user: user, note: note})
	return nil
}

// sqlPrepared runs an INSERT or REPLACE as an SQL-level prepared statement: EXECUTE IMMEDIATE of
// its text, or PREPARE, EXECUTE and DEALLOCATE PREPARE on one connection, the hint (if any) on
// EXECUTE IMMEDIATE and PREPARE, and the context's on every statement.
func (w *genWorker) sqlPrepared(tr traffic) error {
	var s genStmt
	for {
		s = w.insert(tr, w.rng.IntN(2), false)
		if len(s.args) == 0 && !strings.Contains(s.sql, "INTO orders") {
			break
		}
	}
	at := strings.Index(s.sql, "INSERT INTO ")
	if at < 0 {
		at = strings.Index(s.sql, "REPLACE INTO ")
	}
	prefix, inner := s.sql[:at], strings.ReplaceAll(s.sql[at:], "'", "''")
	tag := genTag.FindString(s.sql)
	if w.rng.IntN(2) == 0 {
		s.sql = prefix + "EXECUTE IMMEDIATE '" + inner + "' " + tag
		s.kind = "execute immediate: " + s.kind
		return w.run(w.db, s)
	}
	ctx := context.Background()
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	name := fmt.Sprintf("gp%d", w.newID())
	apply := s.apply
	prep := s
	prep.sql, prep.kind, prep.apply = prefix+"PREPARE "+name+" FROM '"+inner+"' "+tag, "prepare: "+s.kind, func() {}
	if err := w.run(conn, prep); err != nil {
		return err
	}
	exec := s
	exec.sql, exec.kind, exec.apply = "EXECUTE "+name+" "+tag, "execute: "+s.kind, apply
	if err := w.run(conn, exec); err != nil {
		return err
	}
	dealloc := s
	dealloc.sql, dealloc.kind, dealloc.apply = "DEALLOCATE PREPARE "+name+" "+tag, "deallocate prepare", func() {}
	return w.run(conn, dealloc)
}

// transaction runs two or three statements of one traffic on one backend in a transaction
// begun by BeginTx or a text BEGIN, committed or rolled back.
func (w *genWorker) transaction(tr traffic) error {
	ctx := context.Background()
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	group := w.rng.IntN(2)
	saved := [2]map[string]map[int]genRow{}
	for s := range w.rows {
		saved[s] = map[string]map[int]genRow{}
		for tb, rows := range w.rows[s] {
			saved[s][tb] = map[int]genRow{}
			for id, r := range rows {
				saved[s][tb][id] = r
			}
		}
	}
	begin := ctx
	text := w.rng.IntN(2) == 0
	var tx *sql.Tx
	if tr == trafficShadow {
		begin = hint.WithShadow(ctx)
	}
	if text {
		q := "BEGIN"
		if tr == trafficShadow {
			q = genShadowComments[w.rng.IntN(len(genShadowComments))] + "BEGIN"
			begin = ctx
		}
		if _, err := conn.ExecContext(begin, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	} else if tx, err = conn.BeginTx(begin, nil); err != nil {
		return err
	}
	w.st.sent.Add(1)
	var q interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	} = conn
	if tx != nil {
		q = tx
	}
	for range 2 + w.rng.IntN(2) {
		s := w.change(tr, group, true)
		if s == nil || w.rng.IntN(2) == 0 {
			st := w.insert(tr, group, true)
			s = &st
		}
		s.kind = "in a transaction: " + s.kind
		if err := w.run(q, *s); err != nil {
			if tx != nil {
				tx.Rollback()
			} else {
				conn.ExecContext(ctx, "ROLLBACK")
			}
			return err
		}
	}
	w.st.sent.Add(1)
	if w.rng.IntN(5) == 0 {
		w.rows = saved
		if tx != nil {
			return tx.Rollback()
		}
		_, err := conn.ExecContext(ctx, "ROLLBACK")
		return err
	}
	if tx != nil {
		return tx.Commit()
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return err
}

// A generator of shadow and production statements — the shadow hint in every form (the
// context, bare comments, OBROUTE among the server's optimizer hints over several lines,
// ShardingSphere's), user_id written every way MariaDB reads as 0 and as other numbers, INSERT
// with and without a column list, several rows, INSERT … SELECT, REPLACE, UPDATE, DELETE,
// SELECT, database/sql prepared statements, SQL-level prepared statements (EXECUTE IMMEDIATE,
// PREPARE and EXECUTE), transactions begun both ways and committed or
// rolled back, on a plain, a statically routed, two shadow and a time-sharded table — from
// several goroutines under one pool. Shadow-only traffic first, on a connector of its own:
// the production servers' general logs stay empty. Then both traffics: no production
// general-log line carries a statement of shadow or refused traffic, no shadow log line one
// of production, and at the end both sides hold exactly the rows the generator sent there.
// OBROUTE_SHADOW_STATEMENTS sets the count (CI sends 2 500; the full run 10 000 and more).
func TestShadowGeneratorNeverReachesProduction(t *testing.T) {
	total := genDefaultStatements
	if s := os.Getenv(EnvShadowStatements); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("%s=%q is not a positive count", EnvShadowStatements, s)
		}
		total = n
	}
	seed := uint64(23)
	if s := os.Getenv("OBROUTE_DIFF_SEED"); s != "" {
		if v, err := strconv.ParseUint(s, 10, 64); err == nil {
			seed = v
		}
	}
	t.Logf("seed %d, %d statements", seed, total)
	w := newShadowWorld(t)
	// Views of one side only: v_prod over t_order on production, v_shadow on the shadow backends.
	for _, b := range w.prod {
		b.Exec(t, "CREATE VIEW v_prod AS SELECT * FROM t_order")
	}
	for _, b := range w.shadows {
		b.Exec(t, "CREATE VIEW v_shadow AS SELECT * FROM t_order")
	}
	w.truncateLogs(t)
	st := &genState{tags: map[int]traffic{}, kinds: map[string]int{}}
	for s := range st.rows {
		st.rows[s] = map[string]map[int]genRow{}
	}
	const workers = 8
	runPhase := func(db *sql.DB, only, statements int, phase uint64) []*genWorker {
		ws := make([]*genWorker, workers)
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		start := st.sent.Load()
		for i := range ws {
			gw := &genWorker{t: t, db: db, rng: rand.New(rand.NewPCG(seed, phase*100+uint64(i))), st: st, id: int(phase)*100_000_000 + i*1_000_000, only: only}
			for s := range gw.rows {
				gw.rows[s] = map[string]map[int]genRow{}
			}
			ws[i] = gw
			wg.Add(1)
			go func() {
				defer wg.Done()
				for st.sent.Load()-start < int64(statements) {
					if err := gw.one(); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		return ws
	}
	merge := func(ws []*genWorker) {
		for _, gw := range ws {
			for s := range gw.rows {
				for tb, rows := range gw.rows[s] {
					if st.rows[s][tb] == nil {
						st.rows[s][tb] = map[int]genRow{}
					}
					for id, r := range rows {
						st.rows[s][tb][id] = r
					}
				}
			}
		}
	}
	// Shadow traffic alone reads nothing of production.
	began := time.Now()
	shadowOnly := total / 10
	merge(runPhase(w.open(t), int(trafficShadow), shadowOnly, 1))
	if lines := w.productionLines(t, ""); len(lines) != 0 {
		t.Fatalf("%d statements of shadow traffic alone left %d lines in the production general logs, first: %v", st.sent.Load(), len(lines), lines[:min(5, len(lines))])
	}
	merge(runPhase(w.open(t), -1, total-int(st.sent.Load()), 2))
	if t.Failed() {
		return
	}
	elapsed := time.Since(began)
	// The general logs: a tagged line of the other traffic, or of a refused statement, is a leak.
	prodLines, shadowLines, leaks := 0, 0, 0
	check := func(logSide int, name, text string) {
		m := genTag.FindStringSubmatch(text)
		if m == nil {
			return
		}
		tag, _ := strconv.Atoi(m[1])
		tr, ok := st.tags[tag]
		if !ok || tr == trafficRefused || side(tr) != logSide {
			leaks++
			if leaks <= 10 {
				t.Errorf("%s received %q, a statement of %s traffic", name, text, map[traffic]string{trafficProduction: "production", trafficShadow: "shadow", trafficRefused: "refused"}[tr])
			}
		}
	}
	for i, b := range w.prod {
		for _, e := range b.GeneralLog(t) {
			prodLines++
			check(0, b.Name, e.Text)
		}
		for _, e := range w.shadows[i].GeneralLog(t) {
			shadowLines++
			check(1, w.shadows[i].Name, e.Text)
		}
	}
	// The rows: each side holds exactly what the generator sent there.
	checked := 0
	for s, backends := range [][]int{{0, 1}, {0, 1}} {
		sideBackends := w.prod
		if s == 1 {
			sideBackends = w.shadows
		}
		for _, bi := range backends {
			b := sideBackends[bi]
			tables := []string{}
			for _, tb := range genTables {
				if tb.name != "orders" && tb.group == bi {
					tables = append(tables, tb.name)
				}
			}
			for _, m := range orderMonths {
				if m.hot == (bi == 0) {
					tables = append(tables, "orders_"+m.suffix)
				}
			}
			for _, tb := range tables {
				var want []string
				for id, r := range st.rows[s][tb] {
					if strings.HasPrefix(tb, "orders_") {
						r.user = nil
					}
					want = append(want, fmt.Sprintf("%d:%s", id, r))
				}
				var got []string
				if strings.HasPrefix(tb, "orders_") {
					got = ordersRows(t, b, tb)
				} else {
					got = shadowRows(t, b, tb)
				}
				slices.Sort(want)
				slices.Sort(got)
				checked += len(got)
				if !slices.Equal(got, want) {
					t.Errorf("%s %s holds %d rows, the generator sent %d there; first differences: %v", b.Name, tb, len(got), len(want), firstDiff(got, want))
				}
			}
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	counts := map[traffic]int{}
	for _, tr := range st.tags {
		counts[tr]++
	}
	t.Logf("%d statements (%d shadow, %d production, %d refused, the rest BEGIN/COMMIT/ROLLBACK) from %d goroutines in %s; %d of shadow traffic alone left 0 production general-log lines; "+
		"%d production and %d shadow general-log lines read, %d carry the other traffic's statement; %d rows read back on both sides, as sent",
		st.sent.Load(), counts[trafficShadow], counts[trafficProduction], counts[trafficRefused], workers, elapsed.Round(time.Second), shadowOnly, prodLines, shadowLines, leaks, checked)
	var kinds []string
	for k, n := range st.kinds {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	slices.Sort(kinds)
	t.Logf("families: %s", strings.Join(kinds, "; "))
}

// ordersRows returns "id:-1:note" of the rows of an orders table, as shadowRows writes rows.
func ordersRows(t *testing.T, b *sqltest.Backend, table string) []string {
	t.Helper()
	rows, err := b.DB.Query("SELECT id, note FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id int
		var note string
		if err := rows.Scan(&id, &note); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d:-1:%s", id, note))
	}
	return out
}

// firstDiff returns a few elements of got not in want and of want not in got.
func firstDiff(got, want []string) []string {
	var out []string
	for _, g := range got {
		if !slices.Contains(want, g) && len(out) < 3 {
			out = append(out, "extra "+g)
		}
	}
	for _, x := range want {
		if !slices.Contains(got, x) && len(out) < 6 {
			out = append(out, "missing "+x)
		}
	}
	return out
}
