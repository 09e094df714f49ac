package connector

import (
	"context"
	"log/slog"
	"time"

	"github.com/obroute/obroute/internal/routing"
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
	// SQL is the statement text as the application sent it, with its string literals masked
	// when it may carry a password (SET PASSWORD, CREATE USER … IDENTIFIED BY and the like).
	SQL  string
	plan *routing.Plan // the route; nil when the router refused the statement
	// Refusal names why the router refused the statement, as StatsSnapshot.Rejections counts it; ""
	// when it was routed.
	Refusal string
	// Err is the refusal, or the error of running the statement; nil on success.
	Err error
	// Duration runs from the routing decision to the statement's result (for a query, its first
	// rows: reading the rest is the application's time).
	Duration time.Duration
}

// Plan returns the route; nil when the router refused the statement. It is built at each call,
// so that an Observer that does not look at it costs nothing.
func (e RouteEvent) Plan() *Plan {
	if e.plan == nil {
		return nil
	}
	return newPlan(e.plan)
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
	// StateServerChanged: with time-sharded tables, a server session opened on a backend whose
	// server restarted (or a service's new primary): what routing read of it is read again.
	StateServerChanged StateKind = "server_changed" // "backend's server changed" (info)
)

// StateEvent is one state change, with the attributes of its log record.
type StateEvent struct {
	// Kind says what changed.
	Kind StateKind
	// Time is when it happened.
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
func WithObserver(obs Observer) Option { return func(o *options) { o.observer = obs } }

// observer returns the connector's observer, nil when none is attached.
func (c *Connector) observer() Observer { return c.events.obs }

// events is where state changes go: each is logged once (info or warn) and reported to the
// observer. The connector and its backends share one.
type events struct {
	logger  *logger
	obs     Observer
	secrets []string // scrubbed from what the observer gets, as the logger does
}

// state logs a state change and reports it to the observer. attrs use the keys backend, addr,
// reason, error, failures, down_for, service, from, to, connection_id, cause.
func (e *events) state(ctx context.Context, kind StateKind, level slog.Level, msg string, attrs ...slog.Attr) {
	e.logger.LogAttrs(ctx, level, msg, attrs...)
	if e.obs == nil {
		return
	}
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = scrubAttr(a, e.secrets)
	}
	ev := StateEvent{Kind: kind, Time: time.Now(), Level: level, Message: msg, Attrs: clean}
	for _, a := range clean {
		switch a.Key {
		case "backend":
			ev.Backend = a.Value.String()
		case "addr":
			ev.Addr = a.Value.String()
		}
	}
	e.obs.OnStateChange(ev)
}

// routeRefused counts, logs (debug) and reports a statement the router refused.
func (c *Connector) routeRefused(ctx context.Context, st *routing.Statement, err error, start time.Time) {
	i := routing.RefusalIndex(err)
	c.stats.rejected.Add(1)
	c.stats.refusals[i].Add(1)
	if c.logger.Enabled(ctx, slog.LevelDebug) {
		c.logger.LogAttrs(ctx, slog.LevelDebug, "route refused", slog.String("sql", st.LogText()),
			slog.String("reason", refusalNames[i]), slog.String("error", err.Error()))
	}
	if obs := c.observer(); obs != nil {
		obs.OnRoute(ctx, RouteEvent{SQL: st.LogText(), Refusal: refusalNames[i], Err: err, Duration: time.Since(start)})
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
			slog.Duration("duration", d), slog.String("sql", plan.Statement.LogText()), slog.Any("prompts", plan.Prompts),
		}
		if err != nil {
			attrs = append(attrs, slog.String("error", err.Error()))
		}
		c.logger.LogAttrs(ctx, slog.LevelDebug, "route", attrs...)
	}
	if obs != nil {
		obs.OnRoute(ctx, RouteEvent{SQL: plan.Statement.LogText(), plan: plan, Err: err, Duration: d})
	}
}

// refusalNames are routing.RefusalReasons, indexed like counters.refusals.
var refusalNames = routing.RefusalReasons()
