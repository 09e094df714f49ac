package connector

import (
	"context"
	"log/slog"
	"time"

	"github.com/obroute/obroute/routing"
)

// Observer receives obroute's route decisions and state changes, so that metrics and tracing
// adapters (OpenTelemetry, Prometheus, expvar…) can be attached without obroute importing them.
// Attach one with WithObserver.
//
// Both methods are called synchronously: OnRoute on the goroutine of the statement, once per
// statement after its result (or its first rows) is back; OnStateChange on whichever goroutine
// noticed the change (a statement's, or a backend's background probe). Keep them fast, never
// block, and never call back into the client session. They may be called concurrently.
type Observer interface {
	// OnRoute reports one statement: its plan, or why the router refused it.
	OnRoute(ctx context.Context, ev RouteEvent)
	// OnStateChange reports one change of a backend, a server session or the shard metadata.
	OnStateChange(ev StateEvent)
}

// RouteEvent is one statement as the router and the connector handled it.
type RouteEvent struct {
	// SQL is the statement text as the application sent it.
	SQL string
	// Plan is the route; nil when the router refused the statement.
	Plan *routing.Plan
	// Refusal names why the router refused the statement (routing.RefusalReason); "" when it
	// was routed.
	Refusal string
	// Err is the refusal, or the error of running the statement; nil on success.
	Err error
	// Duration runs from the routing decision to the statement's result (for a query, its first
	// rows: reading the rest is the application's time).
	Duration time.Duration
}

// StateKind names a state change.
type StateKind string

// State changes. Each is also logged (level in parentheses) with the message in the comment.
const (
	StateBackendDown           StateKind = "backend_down"            // "backend down" (warn)
	StateBackendUp             StateKind = "backend_up"              // "backend up" (info)
	StateServerSessionReplaced StateKind = "server_session_replaced" // "server session replaced" (info)
	StateServerSessionLost     StateKind = "server_session_lost"     // "server session lost in transaction" (warn)
	StatePrimaryChanged        StateKind = "primary_changed"         // "primary changed" (info)
	StateQueryKilled           StateKind = "query_killed"            // "query killed" (info)
	StateKillFailed            StateKind = "kill_failed"             // "KILL QUERY failed" (warn)
	StateMetadataRefreshFailed StateKind = "metadata_refresh_failed" // "shard metadata refresh failed" (warn)
)

// stateMessages maps the log message of each state change to its kind: a state change is
// logged once, at info or warn, and the observer sees that same record.
var stateMessages = map[string]StateKind{
	"backend down":                       StateBackendDown,
	"backend up":                         StateBackendUp,
	"server session replaced":            StateServerSessionReplaced,
	"server session lost in transaction": StateServerSessionLost,
	"primary changed":                    StatePrimaryChanged,
	"query killed":                       StateQueryKilled,
	"KILL QUERY failed":                  StateKillFailed,
	"shard metadata refresh failed":      StateMetadataRefreshFailed,
}

// StateEvent is one state change, with the attributes of its log record.
type StateEvent struct {
	// Kind says what changed.
	Kind StateKind
	// Time is when it was logged.
	Time time.Time
	// Level is the log level: slog.LevelInfo or slog.LevelWarn.
	Level slog.Level
	// Message is the log message.
	Message string
	// Backend is the backend's name (the "backend" attribute), "" when none applies.
	Backend string
	// Addr is the backend's address (the "addr" attribute), never credentials; "" when absent.
	Addr string
	// Attrs are all the record's attributes: reason, error, failures, down_for, service, from,
	// to, connection_id, cause, as the change has them.
	Attrs []slog.Attr
}

// WithObserver attaches obs to the connector's route decisions and state changes.
//
// State changes reach obs through the connector's logger, so WithObserver wraps the logger
// given before it: pass WithLogger (if any) first.
func WithObserver(obs Observer) Option {
	return func(o *options) {
		next := slog.DiscardHandler
		if o.logger != nil {
			next = o.logger.Handler()
		}
		o.logger = slog.New(&observerHandler{next: next, obs: obs})
	}
}

// observer returns the connector's observer, nil when none is attached.
func (c *Connector) observer() Observer {
	if h, ok := c.logger.Handler().(*observerHandler); ok {
		return h.obs
	}
	return nil
}

// observerHandler passes every record to the next handler and turns state-change records into
// StateEvents.
type observerHandler struct {
	next  slog.Handler
	obs   Observer
	attrs []slog.Attr // from WithAttrs
}

// Enabled implements slog.Handler: state changes (info and warn) are always wanted.
func (h *observerHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.next.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (h *observerHandler) Handle(ctx context.Context, r slog.Record) error {
	if kind, ok := stateMessages[r.Message]; ok {
		ev := StateEvent{Kind: kind, Time: r.Time, Level: r.Level, Message: r.Message}
		ev.Attrs = append(ev.Attrs, h.attrs...)
		r.Attrs(func(a slog.Attr) bool {
			ev.Attrs = append(ev.Attrs, a)
			return true
		})
		for _, a := range ev.Attrs {
			switch a.Key {
			case "backend":
				ev.Backend = a.Value.String()
			case "addr":
				ev.Addr = a.Value.String()
			}
		}
		h.obs.OnStateChange(ev)
	}
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

// WithAttrs implements slog.Handler.
func (h *observerHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &observerHandler{next: h.next.WithAttrs(attrs), obs: h.obs, attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

// WithGroup implements slog.Handler. Attributes under a group are not read for Backend and
// Addr; obroute's own records use none.
func (h *observerHandler) WithGroup(name string) slog.Handler {
	return &observerHandler{next: h.next.WithGroup(name), obs: h.obs, attrs: h.attrs}
}

// routeRefused counts, logs (debug) and reports a statement the router refused.
func (c *Connector) routeRefused(ctx context.Context, st *routing.Statement, err error, start time.Time) {
	i := routing.RefusalIndex(err)
	c.stats.rejected.Add(1)
	c.stats.refusals[i].Add(1)
	if c.logger.Enabled(ctx, slog.LevelDebug) {
		c.logger.LogAttrs(ctx, slog.LevelDebug, "route refused", slog.String("sql", st.SQL),
			slog.String("reason", refusalNames[i]), slog.String("error", err.Error()))
	}
	if obs := c.observer(); obs != nil {
		obs.OnRoute(ctx, RouteEvent{SQL: st.SQL, Refusal: refusalNames[i], Err: err, Duration: time.Since(start)})
	}
}

// routeDone logs (debug) and reports a routed statement once its result is back; err is the
// error of running it.
func (c *Connector) routeDone(ctx context.Context, plan *routing.Plan, err error, start time.Time) {
	obs := c.observer()
	debug := c.logger.Enabled(ctx, slog.LevelDebug)
	if obs == nil && !debug {
		return
	}
	d := time.Since(start)
	if debug {
		attrs := []slog.Attr{
			slog.String("type", string(plan.Type)), slog.String("class", plan.Class.String()),
			slog.Any("backends", plan.Backends()), slog.String("level", plan.Level.String()),
			slog.Bool("shadow", plan.Shadow), slog.Bool("in_transaction", plan.InTransaction),
			slog.Duration("duration", d), slog.String("sql", plan.Statement.SQL), slog.Any("prompts", plan.Prompts),
		}
		if err != nil {
			attrs = append(attrs, slog.String("error", err.Error()))
		}
		c.logger.LogAttrs(ctx, slog.LevelDebug, "route", attrs...)
	}
	if obs != nil {
		obs.OnRoute(ctx, RouteEvent{SQL: plan.Statement.SQL, Plan: plan, Err: err, Duration: d})
	}
}

// refusalNames are routing.RefusalReasons, indexed like Stats.refusals.
var refusalNames = routing.RefusalReasons()
