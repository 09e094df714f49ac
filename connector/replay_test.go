package connector_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// The assignments of variables that act on one another, from MariaDB's manual: SET NAMES, SET
// CHARACTER SET and the character_set_* and collation_* variables they set; tx_isolation,
// tx_read_only and SET SESSION TRANSACTION; sql_mode, whose modes change how later text is read;
// max_join_size, which sets sql_big_selects; optimizer_switch, set flag by flag; the variables of
// two names (storage_engine, tmp_memory_table_size); a user variable's string, which takes the
// connection's character set; and writes of a non-ASCII string, stored as character_set_client
// says it was sent.
var replayStatements = []string{
	"SET NAMES utf8mb4", "SET NAMES latin1", "SET NAMES utf8mb4 COLLATE utf8mb4_bin", "SET CHARACTER SET latin1",
	"SET CHARSET utf8mb4", "SET character_set_client = latin1", "SET character_set_client = utf8mb4",
	"SET character_set_connection = latin1", "SET collation_connection = utf8mb4_unicode_ci", "SET character_set_results = NULL",
	"SET character_set_results = latin1", "SET character_set_database = latin1", "SET collation_server = latin1_swedish_ci",
	"SET tx_isolation = 'READ-COMMITTED'", "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE",
	"SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED, READ ONLY", "SET SESSION TRANSACTION READ WRITE",
	"SET tx_read_only = 1", "SET @@session.tx_read_only = OFF", "SET sql_mode = 'ANSI'", "SET sql_mode = 'TRADITIONAL'",
	"SET sql_mode = ''", "SET sql_mode = 'NO_BACKSLASH_ESCAPES'", "SET sql_mode = 'ANSI_QUOTES'", "SET max_join_size = 1000",
	"SET sql_big_selects = 1", "SET max_join_size = DEFAULT", "SET optimizer_switch = 'index_merge=off'",
	"SET optimizer_switch = 'mrr=on'", "SET optimizer_switch = DEFAULT", "SET storage_engine = MyISAM",
	"SET default_storage_engine = InnoDB", "SET tmp_memory_table_size = 1048576", "SET tmp_table_size = 2097152",
	"SET @x = 'é'", `SET @x = 'a\\b'`, `SET @x = "q"`, "SET @y = CONCAT(@x, 'z')", "SET time_zone = '+01:00'",
	`SET time_zone = "+02:00"`, "SET completion_type = 'CHAIN'", "SET completion_type = DEFAULT",
	"SET NAMES utf8mb4, character_set_client = latin1", "SET character_set_client = latin1, NAMES utf8mb4",
	"INSERT INTO audit_log VALUES (%d, 'é')", "INSERT INTO items VALUES (%d, 'é')",
}

// replayProbe reads what the replayed state decides, on the backend of table.
const replayProbe = "SELECT @@character_set_client, @@character_set_connection, @@collation_connection, @@character_set_results, " +
	"@@character_set_database, @@collation_server, @@tx_isolation, @@tx_read_only, @@sql_mode, @@max_join_size, @@sql_big_selects, " +
	"@@optimizer_switch, @@default_storage_engine, @@tmp_table_size, @@time_zone, @@completion_type, " +
	"HEX(@x), CHARSET(@x), COLLATION(@x), HEX(@y), CHARSET(@y), COLLATION(@y) FROM %s WHERE id = 0"

// A backend brought up to date ends in the client session's state, whatever order the
// application set it in: random sequences of the assignments above, each followed by the state
// read on both backends and compared with one server's, and every row's bytes compared at the
// end. OBROUTE_REPLAY_STEPS sets the number of statements (default 150; the seed is
// OBROUTE_DIFF_SEED's, logged).
func TestReplayGivesTheClientSessionsState(t *testing.T) {
	steps := 150
	if s := os.Getenv("OBROUTE_REPLAY_STEPS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("OBROUTE_REPLAY_STEPS=%q: %v", s, err)
		}
		steps = n
	}
	seed := uint64(time.Now().UnixNano()%1_000_000_000 + 1)
	if s := os.Getenv("OBROUTE_DIFF_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = v
	}
	t.Logf("seed %d (OBROUTE_DIFF_SEED=%d replays it), %d statements", seed, seed, steps)
	o := newOneServer(t, false, "")
	for _, table := range []string{"items", "audit_log"} {
		o.one.Exec(t, "INSERT INTO "+table+" VALUES (0, 'probe')")
	}
	o.hot.Exec(t, "INSERT INTO items VALUES (0, 'probe')")
	o.cold.Exec(t, "INSERT INTO audit_log VALUES (0, 'probe')")
	t.Run("the issue's sequences", func(t *testing.T) {
		p := o.pair(t)
		// The client session ends in utf8mb4: the write on cold, which was behind, stores é as
		// the one server does.
		p.steps(`
			SELECT 1 FROM items WHERE id = 0
			SET NAMES utf8mb4
			SET character_set_client = latin1
			SET NAMES utf8mb4
			INSERT INTO audit_log VALUES (1, 'é')
			SET tx_isolation = 'READ-COMMITTED'
			SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE
			SET tx_isolation = 'REPEATABLE-READ'`, nil)
		p.both(fmt.Sprintf(replayProbe, "audit_log"))
		p.both(fmt.Sprintf(replayProbe, "items"))
		o.samePlacement(t)
	})
	t.Run("random", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(seed, 28))
		p := o.pair(t)
		for i := range steps {
			q := replayStatements[rng.IntN(len(replayStatements))]
			if q[0] == 'I' {
				q = fmt.Sprintf(q, 100+i)
			}
			p.both(q)
			// Read on one backend, then the other: each is brought up to date in turn.
			tables := []string{"items", "audit_log"}
			rng.Shuffle(2, func(a, b int) { tables[a], tables[b] = tables[b], tables[a] })
			for _, table := range tables[:1+rng.IntN(2)] {
				p.both(fmt.Sprintf(replayProbe, table))
			}
		}
		o.samePlacement(t)
	})
}
