// Package sqltest gives obroute's tests MySQL-protocol backends they can
// populate, count on, stop, kill, pause and restart.
//
// Every helper takes a testing.TB and registers its cleanup with tb.Cleanup:
// servers are killed (even paused ones), data directories removed and
// temporary databases dropped when the test ends.
//
// # Choosing a backend
//
//   - [Embedded] — in-process go-mysql-server (package embedded). Always
//     available and fast; use it for routing logic that needs a real wire
//     protocol but not MySQL's exact behaviour. No temporary tables, and
//     Pause is not possible.
//   - [MariaDB] / [MariaDBWith] — one real mariadbd process per name, on its
//     own free port and throwaway data directory, with an empty database
//     `test` and root without password. Use it for failure injection
//     (Stop, Kill, Pause, Restart), KILL QUERY, processlist and status
//     counters, and the general log ([MariaDBOptions.GeneralLog]). The first
//     call in a process initialises a template data directory with
//     mariadb-install-db (cached in os.TempDir() across runs); each instance
//     copies it, so an instance starts in well under a second.
//   - [Shared] — a fresh, uniquely named database on an existing server,
//     dropped at cleanup. Cheapest for plain SQL against real MariaDB/MySQL
//     behaviour; nothing that affects the whole server is allowed.
//
// # Environment
//
//   - OBROUTE_TEST_DSN: the server [Shared] uses; default
//     root@tcp(127.0.0.1:3306)/. .ci/mariadb.sh finds or starts one and prints its DSN.
//   - OBROUTE_REQUIRE_SERVERS=1: see below. CI sets it.
//
// # Skip or fail
//
// When what a test asks for is missing — no mariadbd binary (install it with
// `apt-get install mariadb-server`), or nothing reachable at
// OBROUTE_TEST_DSN — the test is skipped with a message saying how to
// provide it. With OBROUTE_REQUIRE_SERVERS=1 ([RequireServers]) the same
// situation fails the test instead, so CI cannot pass by skipping. A backend
// that exists but misbehaves (startup error, failed statement) always fails.
//
// mariadbd processes are started with the parent-death signal set to
// SIGKILL, so even a test binary that dies without running its cleanups
// (timeout, crash) leaves no server behind.
package sqltest
