package connector

import (
	"context"
	"log/slog"
	"runtime"
	"time"
)

// logger is where the connector's log records go: the application's *slog.Logger given with
// WithLogger (behind scrubHandler), or nowhere. It has the two methods of *slog.Logger the
// connector calls, and does what they do, but hands a record to the handler through handle, a
// function only WithLogger sets: a program that never calls WithLogger then calls no
// slog.Handler's Handle method, and links none of them — not slog's default handler, which
// slog's init installs, with its text and JSON encoding and encoding/json's encoder (0.33 MB of
// a program that opens a handle and pings).
type logger struct {
	h      slog.Handler // nil without WithLogger
	handle func(ctx context.Context, h slog.Handler, level slog.Level, msg string, pc uintptr, attrs []slog.Attr)
}

// handleRecord is logger.handle with WithLogger: it makes the record, as (*slog.Logger).LogAttrs
// does, and h gets it.
func handleRecord(ctx context.Context, h slog.Handler, level slog.Level, msg string, pc uintptr, attrs []slog.Attr) {
	r := slog.NewRecord(time.Now(), level, msg, pc)
	r.AddAttrs(attrs...)
	_ = h.Handle(ctx, r)
}

// Enabled reports whether a record at level would be logged, as (*slog.Logger).Enabled does.
func (l *logger) Enabled(ctx context.Context, level slog.Level) bool {
	return l.h != nil && l.h.Enabled(ctx, level)
}

// LogAttrs logs a record with the caller's PC, the time and attrs, as (*slog.Logger).LogAttrs
// does.
func (l *logger) LogAttrs(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	if !l.Enabled(ctx, level) {
		return
	}
	var pcs [1]uintptr
	runtime.Callers(2, pcs[:]) // skip runtime.Callers and LogAttrs: the PC of the call, as slog records it
	l.handle(ctx, l.h, level, msg, pcs[0], attrs)
}
