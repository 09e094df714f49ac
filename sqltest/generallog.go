package sqltest

import (
	"database/sql"
	"testing"
)

// GeneralLogEntry is one statement from a backend's general log.
type GeneralLogEntry struct {
	ConnID  int64  // the server connection (CONNECTION_ID()) that sent it
	Command string // "Query", "Connect", "Init DB", "Prepare", "Execute"…
	Text    string // the statement text
}

// GeneralLog returns the general log of a MariaDB backend started with
// MariaDBOptions{GeneralLog: true} since it last started, oldest first,
// without the admin handle's own statements (nor sqltest's startup checks).
func (b *Backend) GeneralLog(tb testing.TB) []GeneralLogEntry {
	tb.Helper()
	if b.kind != "mariadb" {
		tb.Fatalf("backend %s: GeneralLog needs a MariaDB backend started with MariaDBOptions{GeneralLog: true}", b.Name)
	}
	var out []GeneralLogEntry
	b.readRows(tb, "read general log", "SELECT thread_id, command_type, CONVERT(argument USING utf8mb4) FROM mysql.general_log ORDER BY event_time", func(rows *sql.Rows) error {
		for rows.Next() {
			var e GeneralLogEntry
			if err := rows.Scan(&e.ConnID, &e.Command, &e.Text); err != nil {
				return err
			}
			if !b.admin.was(uint32(e.ConnID)) {
				out = append(out, e)
			}
		}
		return nil
	})
	return out
}
