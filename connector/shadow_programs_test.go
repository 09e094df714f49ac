// Forms of statement a third attack on shadow routing found reaching production (2026-12-04):
// stored programs whose body writes a shadow table, SQL-level prepared texts obroute cannot
// read, hint comments with a word before the hint word or spelled with letters that only
// Unicode case folding takes to the hint's, and a shadow backend sharing production's server.
// Each comment says what obroute did before the fix; now each is refused or routed to shadow.
package connector_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/sqltest"
)

// refusedOnShadowWorld runs each statement on a client session of its own of one shadow world
// and wants it refused with want (or with also, another refusal that keeps it from every
// backend); then no production general-log line carries marker and no
// production table holds a shadow row.
func refusedOnShadowWorld(t *testing.T, marker string, want, also error, then []string, stmts ...string) {
	t.Helper()
	w := newShadowWorld(t)
	db := w.open(t)
	ctx := context.Background()
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); !errors.Is(err, want) && (also == nil || !errors.Is(err, also)) {
			t.Errorf("%q: err = %v, want %v", s, err, want)
		}
	}
	for _, s := range then {
		_, err := db.ExecContext(ctx, s)
		t.Logf("%q: err = %v", s, err)
	}
	if lines := w.productionLines(t, marker); len(lines) != 0 {
		t.Errorf("%d production general-log lines carry the shadow statement, first: %q", len(lines), lines[0])
	}
	for _, b := range w.prod {
		for _, tb := range []string{"t_order", "items"} {
			for _, r := range shadowRows(t, b, tb) {
				if strings.Split(r, ":")[1] == "0" {
					t.Errorf("production %s holds the shadow row %s of %s", b.Name, r, tb)
				}
			}
		}
	}
}

// storedProgramDefinitions name t_order (value_match: user_id = 0 is shadow) in their body, or
// are a trigger on it, or run dynamic SQL: before, each was created on production hot, and its
// CALL, its trigger or its schedule wrote shadow rows there.
var storedProgramDefinitions = []string{
	"CREATE PROCEDURE x23p() INSERT INTO t_order (id, user_id, note) VALUES (1, 0, 'x23prog')",
	"CREATE OR REPLACE DEFINER = CURRENT_USER PROCEDURE x23p() BEGIN INSERT INTO `t_order` (id, user_id, note) VALUES (1, 0, 'x23prog'); END",
	"CREATE TRIGGER x23tr AFTER INSERT ON items FOR EACH ROW INSERT INTO t_order (id, user_id, note) VALUES (NEW.id, 0, 'x23prog')",
	"CREATE TRIGGER x23tr BEFORE INSERT ON t_order FOR EACH ROW SET NEW.user_id = 0, NEW.note = 'x23prog'",
	"CREATE FUNCTION x23f() RETURNS INT MODIFIES SQL DATA BEGIN INSERT INTO t_order (id, user_id, note) VALUES (3, 0, 'x23prog'); RETURN 1; END",
	"CREATE EVENT x23e ON SCHEDULE EVERY 1 DAY DO INSERT INTO t_order (id, user_id, note) VALUES (4, 0, 'x23prog')",
	"ALTER EVENT x23e DO INSERT INTO test.t_order (id, user_id, note) VALUES (4, 0, 'x23prog')",
	"CREATE PROCEDURE x23p() EXECUTE IMMEDIATE CONCAT('INSERT INTO t_', 'order (id, user_id, note) VALUES (5, 0, ''x23prog'')')",
	"CREATE PROCEDURE x23p() BEGIN PREPARE s FROM 'INSERT INTO items (id, user_id, note) VALUES (6, 0, ''x23prog'')'; EXECUTE s; END",
	"/* shadow */ CREATE PROCEDURE x23p() INSERT INTO t_order (id, user_id, note) VALUES (7, 7, 'x23prog')",
	"/*+ OBROUTE(shadow=true) */ CREATE TRIGGER x23tr BEFORE INSERT ON t_order FOR EACH ROW SET NEW.user_id = 7, NEW.note = 'x23prog'",
}

// A stored program whose definition names a shadow table whose rule reads column values, or
// runs SQL-level prepared statements, is refused in either traffic (its body runs without
// obroute); nothing of it reaches production, and the CALL, trigger and function after it
// write no shadow row there.
func TestShadowStoredProgramsNeverReachProduction(t *testing.T) {
	refusedOnShadowWorld(t, "x23prog", connector.ErrUnreadable, connector.ErrSessionState,
		[]string{"CALL x23p()", "INSERT INTO items (id, user_id, note) VALUES (8, 7, 'p')", "SELECT x23f()"},
		storedProgramDefinitions...)
}

// A stored program on tables without column algorithms is created where its traffic goes: on
// production unhinted (its rows are production rows), on shadow hinted; a shadow-hinted CALL
// runs the shadow backend's procedure, an unhinted one production's. A body that carries a
// shadow hint is refused (a hint after the first word).
func TestShadowStoredProgramsOfHintTablesRunOnTheirSide(t *testing.T) {
	w := newShadowWorld(t)
	db := w.open(t)
	ctx := context.Background()
	for _, q := range []string{
		"CREATE PROCEDURE x23p() INSERT INTO items (id, user_id, note) VALUES (1, 7, 'prod')",
		"/* shadow */ CREATE PROCEDURE x23p() INSERT INTO items (id, user_id, note) VALUES (2, 0, 'shadow')",
		"CALL x23p()",
		"/* shadow */ CALL x23p()",
		"/*+ OBROUTE(shadow=false) */ CREATE TRIGGER x23tr BEFORE INSERT ON t_order FOR EACH ROW SET NEW.note = 'declared'",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := db.ExecContext(ctx, "CREATE PROCEDURE x23q() /* shadow */ INSERT INTO items (id, user_id, note) VALUES (3, 0, 'x23hinted')"); !errors.Is(err, hint.ErrMalformedHint) {
		t.Errorf("a body carrying a shadow hint: err = %v, want ErrMalformedHint", err)
	}
	if got := shadowRows(t, w.prod[0], "items"); !slices.Equal(got, []string{"1:7:prod"}) {
		t.Errorf("production's items holds %v, want only the production procedure's row", got)
	}
	if got := shadowRows(t, w.shadows[0], "items"); !slices.Equal(got, []string{"2:0:shadow"}) {
		t.Errorf("shadow's items holds %v, want only the shadow procedure's row", got)
	}
	if lines := w.productionLines(t, "x23hinted"); len(lines) != 0 {
		t.Errorf("production's general log holds %q", lines[0])
	}
}

// EXECUTE IMMEDIATE or PREPARE of a text obroute cannot read, or of a text holding another
// prepared-statement command, while a shadow rule is configured, is refused: before, the
// nested EXECUTE IMMEDIATE (which the server refuses) reached production hot with the shadow
// statement in it, and under a rule with no shadow table (r.routed empty) a CONCAT text with a
// shadow hint in it ran on production.
func TestShadowUnreadablePreparedTextsNeverReachProduction(t *testing.T) {
	refusedOnShadowWorld(t, "x23nest", connector.ErrSessionState, connector.ErrMultiStatement, nil,
		"EXECUTE IMMEDIATE 'EXECUTE IMMEDIATE ''INSERT INTO t_order (id, user_id, note) VALUES (1, 0, ''''x23nest'''')'''",
		"/* shadow */ EXECUTE IMMEDIATE 'EXECUTE IMMEDIATE ''INSERT INTO items (id, user_id, note) VALUES (2, 0, ''''x23nest'''')'''",
		"PREPARE s FROM 'EXECUTE IMMEDIATE CONCAT(''INSERT INTO t_order (id, user_id, note) '', ''VALUES (3, 0, ''''x23nest'''')'')'",
		"EXECUTE IMMEDIATE 'INSERT INTO t_order (id, user_id, note) VALUES (4, 0, ''x23nest''); SELECT 1'",
	)
	// A rule of hints only, no shadow table: a text obroute cannot read may hold a hint.
	all := sqltest.MariaDBWith(t, sqltest.MariaDBOptions{GeneralLog: true}, "hot", "shadow_hot")
	for _, b := range all {
		b.Exec(t, "CREATE TABLE items (id INT PRIMARY KEY, user_id INT, note VARCHAR(64))")
		b.Exec(t, "TRUNCATE TABLE mysql.general_log")
	}
	db, err := sql.Open("obroute", "obroute:backends.hot.dsn="+all[0].DSN+";backends.shadow_hot.dsn="+all[1].DSN+";backends.shadow_hot.role=shadow;"+
		"shadow.mappings.hot.shadow=shadow_hot;shadow.algorithms.h.kind=hint;shadow.default_algorithm=h")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{
		"EXECUTE IMMEDIATE CONCAT('/* shadow */ INSERT INTO items (id, user_id, note) ', 'VALUES (1, 0, ''x23cat'')')",
		"PREPARE s FROM CONCAT('/* shadow */ INSERT INTO items (id, user_id, note) ', 'VALUES (2, 0, ''x23cat'')')",
	} {
		if _, err := conn.ExecContext(ctx, q); !errors.Is(err, connector.ErrSessionState) {
			t.Errorf("%s: err = %v, want ErrSessionState", q, err)
		}
	}
	// Hinted, it is shadow traffic as a whole: it runs on shadow.
	if _, err := conn.ExecContext(ctx, "/* shadow */ EXECUTE IMMEDIATE CONCAT('INSERT INTO items (id, user_id, note) ', 'VALUES (3, 0, ''x23cat'')')"); err != nil {
		t.Errorf("hinted EXECUTE IMMEDIATE CONCAT(…): %v", err)
	}
	for _, e := range all[0].GeneralLog(t) {
		if strings.Contains(e.Text, "x23cat") {
			t.Errorf("production's general log holds %q", e.Text)
		}
	}
	if got := shadowRows(t, all[1], "items"); !slices.Equal(got, []string{"3:0:x23cat"}) {
		t.Errorf("shadow's items holds %v, want the hinted row", got)
	}
}

// A leading comment holding the word shadow after another word (/* note: shadow */), and hint
// words spelled with letters only Unicode case folding takes to ASCII (ſ, the Kelvin sign, ı),
// are refused: before, /* note: shadow */, /* ſHARDINGSPHERE_HINT: SHADOW=true */ and a
// trailing /* ſhadow */ ran on production hot, and /* ſhadow */ was read as the shadow hint.
func TestShadowHintWordsOutsideTheRuleAreRefused(t *testing.T) {
	refusedOnShadowWorld(t, "x23word", hint.ErrMalformedHint, nil, nil,
		"/* note: shadow */ INSERT INTO items (id, user_id, note) VALUES (1, 0, 'x23word')",
		"/* load test, shadow */ INSERT INTO items (id, user_id, note) VALUES (2, 0, 'x23word')",
		"/* ſhadow */ INSERT INTO items (id, user_id, note) VALUES (3, 0, 'x23word')",
		"/* ſHARDINGSPHERE_HINT: SHADOW=true */ INSERT INTO items (id, user_id, note) VALUES (4, 0, 'x23word')",
		"/* ſHARDINGSPHERE_HINT: DATA_SOURCE_NAME=hot */ INSERT INTO items (id, user_id, note) VALUES (5, 0, 'x23word')",
		"/* ShardıngSphere hınt: shadow=true */ INSERT INTO items (id, user_id, note) VALUES (6, 0, 'x23word')",
		"INSERT INTO items (id, user_id, note) VALUES (7, 0, 'x23word') /* ſhadow */",
		"INSERT INTO items (id, user_id, note) VALUES (8, 0, 'x23word') /* note: shadow */",
	)
}

// A shadow backend sharing production's server, in another database: shadow traffic that may
// leave the shadow database — a third database's view over production's table, USE of it, the
// current database production's USE set, a CALL — is refused, and production traffic naming
// the shadow database too. Before, the first three wrote shadow rows into production's
// test.t_order and production's INSERT INTO shadowdb.t_order a production row on shadow.
func TestShadowOnASharedServerStaysInTheShadowDatabase(t *testing.T) {
	b, shadowDSN := newSharedShadowServer(t)
	b.Exec(t, "CREATE DATABASE other")
	for _, db := range []string{"test", "shadowdb", "other"} {
		b.Exec(t, "CREATE TABLE "+db+".t_order (id INT PRIMARY KEY, user_id INT, note VARCHAR(64))")
	}
	b.Exec(t, "CREATE VIEW other.v AS SELECT * FROM test.t_order")
	b.Exec(t, "CREATE PROCEDURE shadowdb.p() INSERT INTO test.t_order (id, user_id, note) VALUES (9, 0, 'leak-call')")
	db := openSharedShadow(t, b, shadowDSN)
	ctx := context.Background()
	for _, seq := range [][]string{
		{"/* shadow */ INSERT INTO other.v (id, user_id, note) VALUES (1, 0, 'leak-view')"},
		{"/* shadow */ INSERT INTO OTHER.t_order (id, user_id, note) VALUES (2, 0, 'leak-other')"},
		{"/* shadow */ USE other"},
		{"USE test", "/* shadow */ INSERT INTO t_order (id, user_id, note) VALUES (4, 0, 'leak-produse')"},
		{"/* shadow */ CALL p()"},
		{"/* shadow */ SELECT other.t_order.note FROM t_order JOIN other.t_order USING (id)"},
		{"INSERT INTO shadowdb.t_order (id, user_id, note) VALUES (5, 7, 'prod-on-shadow')"},
		{"USE shadowdb"},
	} {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i, q := range seq {
			_, err := conn.ExecContext(ctx, q)
			if i < len(seq)-1 {
				if err != nil {
					t.Errorf("%s: %v", q, err)
				}
				continue
			}
			if !errors.Is(err, connector.ErrUnreadable) {
				t.Errorf("%s: err = %v, want ErrUnreadable", q, err)
			}
		}
		conn.Close()
	}
	db = openSharedShadow(t, b, shadowDSN) // the first one's client sessions are in database test now
	for _, q := range []string{
		"/* shadow */ INSERT INTO t_order (id, user_id, note) VALUES (20, 0, 'own')",
		"/* shadow */ INSERT INTO shadowdb.t_order (id, user_id, note) SELECT 21, 0, 'own' FROM information_schema.tables LIMIT 1",
		"INSERT INTO t_order (id, user_id, note) VALUES (22, 7, 'prod')",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	sharedShadowRows(t, b, []string{"22:7:prod"}, []string{"20:0:own", "21:0:own"})
}

// Column names are compared as MariaDB compares them: uſer_id (U+017F) is a column of its own,
// not user_id, though strings.EqualFold folds ſ to s. Before, an INSERT giving uſer_id = 0 was
// read as a shadow row and stored on shadow_hot with user_id NULL, a production row there.
func TestShadowColumnNamesFoldAsTheServerFolds(t *testing.T) {
	w := newShadowWorld(t)
	for _, b := range append(append([]*sqltest.Backend{}, w.prod...), w.shadows...) {
		b.Exec(t, "ALTER TABLE t_order ADD COLUMN `uſer_id` INT")
	}
	db := w.open(t)
	ctx := context.Background()
	for _, q := range []string{
		"INSERT INTO t_order (id, `uſer_id`, note) VALUES (1, 0, 'prod')",
		"INSERT INTO t_order (id, USER_ID, `uſer_id`, note) VALUES (2, 0, 7, 'shadow')",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if got := shadowRows(t, w.prod[0], "t_order"); !slices.Equal(got, []string{"1:-1:prod"}) {
		t.Errorf("production's t_order holds %v, want the row without user_id", got)
	}
	if got := shadowRows(t, w.shadows[0], "t_order"); !slices.Equal(got, []string{"2:0:shadow"}) {
		t.Errorf("shadow's t_order holds %v, want only the row with user_id 0", got)
	}
}
