package connector

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/obroute/obroute/config"
)

// scrubHandler is the connector's logger handler: every message and attribute passes through
// config.Scrub with the configured passwords before it reaches the application's handler.
type scrubHandler struct {
	inner   slog.Handler
	secrets []string
}

// Enabled implements slog.Handler.
func (h scrubHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

// Handle implements slog.Handler.
func (h scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, config.Scrub(r.Message, h.secrets), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(scrubAttr(a, h.secrets))
		return true
	})
	return h.inner.Handle(ctx, out)
}

// WithAttrs implements slog.Handler.
func (h scrubHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = scrubAttr(a, h.secrets)
	}
	return scrubHandler{inner: h.inner.WithAttrs(clean), secrets: h.secrets}
}

// WithGroup implements slog.Handler.
func (h scrubHandler) WithGroup(name string) slog.Handler {
	return scrubHandler{inner: h.inner.WithGroup(name), secrets: h.secrets}
}

// scrubAttr returns a without the secrets: text values scrubbed, other values kept as they are
// unless their text shows a secret (they are then logged as scrubbed text).
func scrubAttr(a slog.Attr, secrets []string) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, config.Scrub(v.String(), secrets))
	case slog.KindGroup:
		group := v.Group()
		clean := make([]any, len(group))
		for i, g := range group {
			clean[i] = scrubAttr(g, secrets)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		text := fmt.Sprint(v.Any())
		if clean := config.Scrub(text, secrets); clean != text {
			return slog.String(a.Key, clean)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
