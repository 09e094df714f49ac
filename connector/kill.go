package connector

import (
	"context"
	"database/sql/driver"
	"log/slog"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"
)

// killTimeout bounds the side connection that sends KILL QUERY. It runs in the background, so
// nothing waits for it; MariaDB 10.11 answers a KILL QUERY in about 2 s when the statement's own
// connection is being closed at that moment (three statements past their read timeout at once
// do it), so the bound leaves room for that.
const killTimeout = 10 * time.Second

// killConfig is the configuration of the side connections that send KILL QUERY: the backend's,
// without its read and write timeouts. Those bound the statements of server sessions; a KILL is
// bounded by killTimeout alone, so a statement that outlived its read timeout on a server slow
// to answer is still stopped.
func killConfig(mc *mysql.Config) *mysql.Config {
	kc := mc.Clone()
	kc.ReadTimeout, kc.WriteTimeout = 0, 0
	return kc
}

// killQuery tells the server of s to stop the statement s was running when its context ended
// (cause). It runs in the background, on a new short-lived connection to the address s is
// connected to, so the caller gets its context error at once. s has been discarded already:
// go-sql-driver closed its connection, and KILL QUERY could otherwise hit a later statement.
// Nothing is sent without a connection id or while the backend is down.
func (b *backend) killQuery(s *serverSession, cause error) {
	if s.id == 0 || s.via == nil || b.health.isDown() {
		return
	}
	id, via := s.id, s.via
	b.goBackground(func() {
		ctx, cancel := context.WithTimeout(b.ctx, killTimeout)
		defer cancel()
		err := sendKill(ctx, via, id)
		if err != nil {
			b.events.state(ctx, StateKillFailed, slog.LevelWarn, "KILL QUERY failed", slog.String("backend", b.name),
				slog.String("addr", via.addr), slog.Uint64("connection_id", uint64(id)), slog.String("error", errorText(err)))
			return
		}
		b.stats.killed.Add(1)
		b.events.state(ctx, StateQueryKilled, slog.LevelInfo, "query killed", slog.String("backend", b.name),
			slog.String("addr", via.addr), slog.Uint64("connection_id", uint64(id)), slog.String("cause", cause.Error()))
	})
}

func sendKill(ctx context.Context, via *mysqlTarget, id uint32) error {
	conn, err := via.kill.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.(driver.ExecerContext).ExecContext(ctx, "KILL QUERY "+strconv.FormatUint(uint64(id), 10), nil)
	return err
}
