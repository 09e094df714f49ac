// Package embedded runs in-process MySQL-protocol backends for obroute's demo
// and tests, so that neither needs a database server on the machine.
//
// Each [Server] is a go-mysql-server engine over in-memory databases, listening
// on 127.0.0.1 on a free port and speaking the MySQL wire protocol, so obroute
// reaches it through go-sql-driver/mysql exactly as it reaches a real backend.
// Data lives only as long as the Server: [Server.Close] discards it.
//
//	srv, err := embedded.Start(embedded.Options{Name: "hot"})
//	if err != nil { ... }
//	defer srv.Close()
//	db, err := sql.Open("mysql", srv.DSN("test"))
//
// # What go-mysql-server supports
//
// The package tests check, through go-sql-driver/mysql, that these work as on
// MySQL: CREATE TABLE, INSERT, SELECT with ORDER BY and LIMIT, the parenthesised
// union `(SELECT …) UNION ALL (SELECT …) ORDER BY 1 LIMIT n`, SET time_zone and
// SELECT @@time_zone (named zones such as 'Asia/Shanghai' and offsets such as
// '+08:00', which NOW() follows), CONNECTION_ID() (stable on a connection,
// distinct between connections), and BEGIN / COMMIT / ROLLBACK, including
// that other connections do not see uncommitted rows.
//
// Known differences from MySQL that the demo must avoid:
//
//   - Temporary tables are not supported: CREATE TEMPORARY TABLE fails with
//     "database does not support temporary tables". Demonstrate temporary
//     table routing on a real backend only.
//   - TIMESTAMP columns are returned as stored, not converted to the session
//     time_zone as MySQL does; keep times in UTC.
//   - System variables set with SET GLOBAL and the SHOW GLOBAL STATUS
//     counters are process-wide, shared by every Server in the process
//     (go-mysql-server keeps them in global tables). There is no general log;
//     count statements on a real MariaDB backend (package sqltest) instead.
//
// # Logging
//
// go-mysql-server and its vitess fork log through process-wide loggers (logrus
// and the standard library's log package). The first [Start] routes both to
// this package: output is dropped unless a Server was started with
// [Options.Logger], in which case messages go to that slog.Logger. Because the
// underlying loggers are global, when several Servers with Loggers run at once
// each Logger receives every Server's messages.
package embedded
