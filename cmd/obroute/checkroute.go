package main

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/obroute/obroute/connector"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/routing"
)

// `obroute check` routes each statement of a workload on a client session of a connector in
// dry run (connector.WithDryRun): the connector's own analysis, routing and session bookkeeping,
// with nothing sent to any backend. Each client session of the workload (a connection id of the
// log) is one client session of the connector, fed its statements in their order, so that
// transactions, SET, USE and temporary tables are followed as obroute would follow them. The
// sessions are spread over a few workers, each session always on the same one.

// Classes of `obroute check` besides the connector's route classes (connector.Plan.Class):
// static (a static table route, counted as default by Stats), session (a statement obroute
// keeps in the client session without routing it: BEGIN, COMMIT, ROLLBACK, a SET TRANSACTION
// for the next transaction), refused, server_error (the workload's server answered it with an
// error, as the log says: it did not run, so it is not routed and changes no session state),
// unknown (a statement of a client session whose state
// depends on a value only a server computes: connector.ErrDryRunUnknown), and for digests,
// needs_values (the route depends on the values performance_schema replaced by ?) and
// truncated (a digest text cut short); arg_types (a prepared statement of a general log
// whose route depends on its arguments' types, which the log's Execute line does not keep:
// a bool is written 1, a float 0.5, a []byte as a string).
const (
	classStatic      = "static"
	classSession     = "session"
	classRefused     = "refused"
	classNeedsValues = "needs_values"
	classTruncated   = "truncated"
	classUnknown     = "unknown"
	classServerError = "server_error"
	classArgTypes    = "arg_types"
)

// errDeadlock is InnoDB's ER_LOCK_DEADLOCK, with which the server rolls back the whole
// transaction of the statement.
const errDeadlock = 1213

// outcome is how one statement was routed: the fields a template's statements are counted by.
type outcome struct {
	class    string
	rule     string // route_info_type, "" when not routed
	backends string // comma-separated
	level    string // "" for none
	reason   string // the refusal's reason
	routed   string // for a refusal after routing: the class Stats counts the statement in
}

// outcomeStats are the statements of one template with one outcome.
type outcomeStats struct {
	outcome
	count int64
	// seq is the earliest statement's position in the input; err its refusal.
	seq uint64
	err string
}

// templateStats are the statements of one template.
type templateStats struct {
	count    int64
	outcomes []*outcomeStats
}

// add counts n statements of o, the one at seq refused with err ("" if not refused).
func (t *templateStats) add(o outcome, n int64, seq uint64, err string) {
	t.count += n
	for _, s := range t.outcomes {
		if s.outcome == o {
			s.count += n
			if seq < s.seq {
				s.seq, s.err = seq, err
			}
			return
		}
	}
	t.outcomes = append(t.outcomes, &outcomeStats{outcome: o, count: n, seq: seq, err: err})
}

// recorder receives, through the context of the statement being routed, the route event the
// connector reports for it.
type recorder struct {
	ev  connector.RouteEvent
	got bool
}

type recorderKey struct{}

// checkObserver hands each route event to the recorder of its statement's context.
type checkObserver struct{}

func (checkObserver) OnRoute(ctx context.Context, ev connector.RouteEvent) {
	if r, ok := ctx.Value(recorderKey{}).(*recorder); ok {
		r.ev, r.got = ev, true
	}
}

func (checkObserver) OnStateChange(connector.StateEvent) {}

// checkSession is one client session of the workload.
type checkSession struct {
	conn  driver.Conn // opened at its first statement
	user  string
	known bool // user is known (a Connect line, or the slow log's header)
	// connected is set when the session's Connect line was read (a general log).
	connected bool
	// flagged is set once the session is counted as begun before the log.
	flagged bool
	// started is set at its first statement that is not written as a driver's session
	// parameter (driverSet).
	started bool
	last    uint64
	// userVars are the user variables the session set to a string literal (SET @q = '…'), by
	// lower-case name: the literal as written. A later statement naming one forgets it.
	userVars map[string]string
	// unknown is the error of the statement after which the session's state is unknown
	// (connector.ErrDryRunUnknown): its statements are not routed from then on.
	unknown string
}

// checkOptions are what the workers need besides the connector.
type checkOptions struct {
	user        string // keep the client sessions of this user only
	digests     bool   // the statements are digests: ? stands for literals
	maxSessions int    // open client sessions per worker, at most
	maxTemplate int    // distinct templates kept in the table, at most
	timeZone    string // -time-zone: each client session starts with SET time_zone to it
	connects    bool   // the input writes each connection's start (a general log's Connect)
}

// maxListedSessions bounds the connection ids the report lists.
const maxListedSessions = 20

// worker routes the statements of its client sessions.
type worker struct {
	c    *connector.Connector
	opts checkOptions
	ctx  context.Context
	rec  *recorder
	in   chan []entry
	done chan struct{}

	sessions  map[uint64]*checkSession
	templates map[string]*templateStats
	buf       []byte

	statements atomic.Int64 // routed, for the progress line
	skipped    int64        // statements of other users' sessions (-user)
	evicted    int64        // client sessions closed to stay within maxSessions
	clients    int64        // client sessions opened
	// beforeLog counts the client sessions whose Connect is not in the log (the first
	// maxListedSessions ids in beforeLogIDs).
	beforeLog    int64
	beforeLogIDs []uint64
	// unclear counts the statements whose end the log does not fix (entry.unclear), the
	// first maxListedSessions in unclearRows.
	unclear     int64
	unclearRows []unclearRow
	driverSets  int64       // statements counted in checkInput.DriverSets
	err         error       // the error that stopped the worker
	failed      atomic.Bool // err is set
}

func newWorker(ctx context.Context, c *connector.Connector, opts checkOptions) *worker {
	w := &worker{c: c, opts: opts, rec: &recorder{}, in: make(chan []entry, 4), done: make(chan struct{}),
		sessions: map[uint64]*checkSession{}, templates: map[string]*templateStats{}}
	w.ctx = context.WithValue(ctx, recorderKey{}, w.rec)
	return w
}

func (w *worker) run(free chan<- []entry) {
	defer close(w.done)
	for batch := range w.in {
		if w.err == nil {
			for i := range batch {
				if w.err = w.process(&batch[i]); w.err != nil {
					w.failed.Store(true)
					break
				}
			}
		}
		clear(batch)
		select {
		case free <- batch[:0]:
		default:
		}
	}
	for id := range w.sessions {
		w.close(id)
	}
}

func (w *worker) process(e *entry) error {
	switch e.kind {
	case entryConnect:
		w.close(e.session)
		w.sessions[e.session] = &checkSession{user: e.user, known: true, connected: true, last: e.seq}
		w.bound()
		return nil
	case entryQuit:
		w.close(e.session)
		return nil
	}
	if e.unclear != "" {
		// Whatever its user: the statements it may hold are any user's.
		w.unclear++
		if len(w.unclearRows) < maxListedSessions {
			w.unclearRows = append(w.unclearRows, unclearRow{Seq: e.seq, Connection: e.session, Statement: shortText(e.text), Why: e.unclear})
		}
	}
	s := w.sessions[e.session]
	if s == nil {
		s = &checkSession{}
		w.sessions[e.session] = s
		w.bound()
	}
	if e.user != "" {
		s.user, s.known = e.user, true
	}
	s.last = e.seq
	if w.opts.user != "" && (!s.known || s.user != w.opts.user) {
		w.skipped += e.count
		return nil
	}
	if w.opts.connects && !s.connected && !s.flagged {
		// A connection whose Connect line is not in the log began before it: what it did
		// then (a transaction, SET, a temporary table) is not known.
		s.flagged = true
		w.beforeLog++
		if len(w.beforeLogIDs) < maxListedSessions {
			w.beforeLogIDs = append(w.beforeLogIDs, e.session)
		}
	}
	if !s.started {
		if s.connected && driverSet.MatchString(e.text) {
			w.driverSets += e.count
		} else {
			s.started = true
		}
	}
	if e.errno != 0 {
		w.count(e.text, outcome{class: classServerError, reason: "errno_" + strconv.FormatUint(e.errno, 10)}, e, "")
		if e.errno == errDeadlock && s.conn != nil {
			// The server rolled the whole transaction back (a lock wait timeout, 1205, rolls
			// back the statement only, by default): the client session's next statement runs
			// outside it, as obroute's does (connector: isDeadlock). Not a statement of the
			// workload, so neither counted nor recorded.
			if _, err := s.conn.(driver.ExecerContext).ExecContext(w.ctx, "ROLLBACK", nil); err != nil {
				return fmt.Errorf("following the rollback of a deadlock victim's transaction: %w", err)
			}
		}
		return nil
	}
	if s.unknown != "" {
		w.count(e.text, outcome{class: classUnknown}, e, "after a statement whose effect only a server knows ("+s.unknown+")")
		return nil
	}
	if s.conn == nil {
		conn, err := w.c.Connect(w.ctx)
		if err != nil {
			return err
		}
		s.conn = conn
		w.clients++
		if w.opts.timeZone != "" {
			// The zone the workload's server sessions started in: not a statement of the
			// workload, so neither counted nor recorded.
			set := "SET time_zone = '" + w.opts.timeZone + "'"
			if _, err := conn.(driver.ExecerContext).ExecContext(w.ctx, set, nil); err != nil {
				return fmt.Errorf("-time-zone: %s: %w", set, err)
			}
		}
	}
	return w.route(s, e)
}

// route runs e's statement on s's client session and counts its outcome under its template.
func (w *worker) route(s *checkSession, e *entry) error {
	typed := len(e.args) > 0 && w.typesMatter(e)
	run := s.withUserVars(e.text)
	w.rec.got = false
	var err error
	if returnsNoRows(run) {
		_, err = s.conn.(driver.ExecerContext).ExecContext(w.ctx, run, e.args)
	} else {
		var rows driver.Rows
		if rows, err = s.conn.(driver.QueryerContext).QueryContext(w.ctx, run, e.args); err == nil {
			rows.Close()
		}
	}
	if errors.Is(err, connector.ErrMetadataUnavailable) {
		return err // the configuration's metadata cannot be read: nothing can be checked
	}
	if errors.Is(err, driver.ErrBadConn) {
		// The client session is no longer usable (database/sql would take another).
		s.conn.Close()
		s.conn = nil
	}
	text, o, msg := e.text, outcome{}, ""
	switch ev := &w.rec.ev; {
	case errors.Is(err, connector.ErrDryRunUnknown):
		o.class, msg = classUnknown, err.Error()
		s.unknown = err.Error()
	case w.rec.got && ev.Refusal != "":
		text, o.class, o.reason, msg = ev.SQL, classRefused, ev.Refusal, ev.Err.Error()
	case w.rec.got:
		p := ev.Plan()
		text, o.class, o.rule, o.backends = ev.SQL, p.Class, p.Rule, strings.Join(p.Backends, ",")
		if p.Static && p.Class == "default" {
			o.class = classStatic
		}
		if p.Level != hint.LevelNone {
			o.level = p.Level.String()
		}
		if ev.Err != nil {
			o.routed, o.class, o.reason, msg = o.class, classRefused, routing.RefusalReason(ev.Err), ev.Err.Error()
		}
	case err != nil:
		o.class, o.reason, msg = classRefused, routing.RefusalReason(err), err.Error()
	default:
		o.class = classSession
	}
	if run != e.text && text == run {
		// The statement as the application sent it, as obroute sees it (an EXECUTE
		// IMMEDIATE's route is that of the statement it runs, named in the event).
		text = e.text
	}
	if typed && o.class != classUnknown {
		o, msg = outcome{class: classArgTypes}, "the route depends on the types of the arguments, which the log's Execute line does not keep (a bool is written 1 or 0, a float64 0.5, a []byte '…'): obroute may route it otherwise or refuse it"
	}
	if w.opts.digests {
		switch {
		case e.truncated:
			o, msg = outcome{class: classTruncated}, ""
		case o.class == classRefused && o.reason == "bad_time_value" && strings.Contains(e.text, "?"):
			o, msg = outcome{class: classNeedsValues}, ""
		}
	}
	w.count(text, o, e, msg)
	return nil
}

var (
	// setUserVar matches SET @name = 'a string literal', the only assignment.
	setUserVar = regexp.MustCompile(`(?is)^\s*SET\s+@([a-z0-9_$.]+)\s*:?=\s*('(?:[^'\\]|\\.|'')*')\s*$`)
	// prepareFromVar matches PREPARE name FROM @name and EXECUTE IMMEDIATE @name [USING …].
	prepareFromVar = regexp.MustCompile(`(?is)^(\s*(?:PREPARE\s+\S+\s+FROM|EXECUTE\s+IMMEDIATE)\s+)@([a-z0-9_$.]+)(\s+USING\b.*)?\s*$`)
)

// driverSet matches a SET of session variables, as a driver sends its DSN's session
// parameters at each connection before anything else (go-sql-driver: "SET time_zone =
// '+08:00', …", SET NAMES for its charset); not SET TRANSACTION nor a user variable's.
var driverSet = regexp.MustCompile(`(?i)^SET\s+(?:SESSION\s+|@@SESSION\.|@@)?(?:[a-z_][a-z0-9_]*\s*=|NAMES\s)`)

// withUserVars follows the user variables the session sets to a string literal and returns
// the text to route for text: a PREPARE … FROM @q or EXECUTE IMMEDIATE @q with the literal @q
// holds in its place (obroute reads @q back from the server; a dry run's server has no
// value), else text. Any other statement naming a variable makes the session forget it.
func (s *checkSession) withUserVars(text string) string {
	if m := setUserVar.FindStringSubmatch(text); m != nil {
		if s.userVars == nil {
			s.userVars = map[string]string{}
		}
		s.userVars[strings.ToLower(m[1])] = m[2]
		return text
	}
	if len(s.userVars) == 0 || !strings.Contains(text, "@") {
		return text
	}
	if m := prepareFromVar.FindStringSubmatch(text); m != nil {
		if lit, ok := s.userVars[strings.ToLower(m[2])]; ok {
			return m[1] + lit + m[3]
		}
		return text
	}
	lower := strings.ToLower(text)
	for name := range s.userVars {
		if strings.Contains(lower, "@"+name) {
			delete(s.userVars, name)
		}
	}
	return text
}

// typesMatter reports whether the route of e's prepared statement (as a new client session
// would route it: connector.Explain) changes when its arguments have the other types the
// log writes the same way: a 1 or 0 a bool, an integer a float64, a number that is not an
// integer a float64, a string a []byte.
func (w *worker) typesMatter(e *entry) bool {
	explain := func(args []any) string {
		plan, err := w.c.Explain(w.ctx, e.text, args...)
		if err != nil {
			return "refused:" + routing.RefusalReason(err)
		}
		return plan.Class + "|" + strings.Join(plan.Backends, ",") + "|" + strconv.FormatBool(plan.Static)
	}
	base := make([]any, len(e.args))
	for i, a := range e.args {
		base[i] = a.Value
	}
	want := explain(base)
	for alt := range 3 {
		args, changed := make([]any, len(base)), false
		for i, v := range base {
			args[i] = v
			switch v := v.(type) {
			case int64:
				switch {
				case alt == 0 && (v == 0 || v == 1):
					args[i], changed = v == 1, true
				case alt == 1:
					args[i], changed = float64(v), true
				}
			case string:
				if f, err := strconv.ParseFloat(v, 64); alt == 1 && err == nil && strings.ContainsAny(v, ".eE") {
					args[i], changed = f, true
				} else if alt == 2 {
					args[i], changed = []byte(v), true
				}
			}
		}
		if changed && explain(args) != want {
			return true
		}
	}
	return false
}

// count counts e's statement, of text, under its template with outcome o (msg: its error).
func (w *worker) count(text string, o outcome, e *entry, msg string) {
	w.buf = routing.AppendTemplate(w.buf[:0], text)
	t := w.templates[string(w.buf)]
	if t == nil {
		key := string(w.buf)
		if len(w.templates) >= w.opts.maxTemplate {
			key = otherTemplates
		}
		if t = w.templates[key]; t == nil {
			t = &templateStats{}
			w.templates[key] = t
		}
	}
	t.add(o, e.count, e.seq, msg)
	w.statements.Add(e.count)
}

// otherTemplates stands for the templates past checkOptions.maxTemplate.
const otherTemplates = "\x00other templates"

// returnsNoRows reports whether the application runs text with Exec rather than Query: a
// write (INSERT, UPDATE, DELETE, REPLACE). The difference matters to a split statement only:
// obroute merges a SELECT's rows and runs a write's parts in one transaction.
func returnsNoRows(text string) bool {
	s := text[hint.StatementStart(text):]
	i := 0
	for i < len(s) && (s[i]|0x20 >= 'a' && s[i]|0x20 <= 'z') {
		i++
	}
	switch strings.ToLower(s[:i]) {
	case "insert", "update", "delete", "replace":
		return true
	}
	return false
}

func (w *worker) close(id uint64) {
	if s := w.sessions[id]; s != nil {
		if s.conn != nil {
			s.conn.Close()
		}
		delete(w.sessions, id)
	}
}

// bound closes the least recently used quarter of the client sessions when there are more than
// maxSessions: a slow log says nothing of a connection's end.
func (w *worker) bound() {
	if len(w.sessions) <= w.opts.maxSessions {
		return
	}
	type idle struct{ id, last uint64 }
	all := make([]idle, 0, len(w.sessions))
	for id, s := range w.sessions {
		all = append(all, idle{id, s.last})
	}
	slices.SortFunc(all, func(a, b idle) int { return cmpUint(a.last, b.last) })
	for _, s := range all[:len(all)/4] {
		w.close(s.id)
		w.evicted++
	}
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// dispatcher hands the entries of a reader to the workers in batches, each client session to
// the same worker.
type dispatcher struct {
	workers []*worker
	batches [][]entry
	free    chan []entry
}

// errWorkerStopped stops a reader when a worker met an error, which finish returns.
var errWorkerStopped = errors.New("a worker stopped")

const batchSize = 256

func newDispatcher(ctx context.Context, c *connector.Connector, n int, opts checkOptions) *dispatcher {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	d := &dispatcher{batches: make([][]entry, n), free: make(chan []entry, 8*n)}
	opts.maxSessions = max(1, opts.maxSessions/n) // each worker its share
	for i := range n {
		w := newWorker(ctx, c, opts)
		d.workers = append(d.workers, w)
		d.batches[i] = make([]entry, 0, batchSize)
		go w.run(d.free)
	}
	return d
}

// add is the reader's sink.
func (d *dispatcher) add(e entry) error {
	i := int((e.session * 0x9E3779B97F4A7C15 >> 32) % uint64(len(d.workers)))
	d.batches[i] = append(d.batches[i], e)
	if len(d.batches[i]) == batchSize {
		if err := d.send(i); err != nil {
			return err
		}
	}
	return nil
}

func (d *dispatcher) send(i int) error {
	w := d.workers[i]
	if w.failed.Load() {
		return errWorkerStopped
	}
	w.in <- d.batches[i]
	select {
	case d.batches[i] = <-d.free:
	default:
		d.batches[i] = make([]entry, 0, batchSize)
	}
	return nil
}

// finish sends what is left, waits for the workers and returns the first error one met.
func (d *dispatcher) finish() error {
	for i, w := range d.workers {
		if len(d.batches[i]) > 0 && !w.failed.Load() {
			w.in <- d.batches[i]
		}
		close(w.in)
	}
	var wg sync.WaitGroup
	for _, w := range d.workers {
		wg.Add(1)
		go func() { defer wg.Done(); <-w.done }()
	}
	wg.Wait()
	for _, w := range d.workers {
		if w.err != nil {
			return w.err
		}
	}
	return nil
}

// routed is the number of statements routed so far.
func (d *dispatcher) routed() int64 {
	var n int64
	for _, w := range d.workers {
		n += w.statements.Load()
	}
	return n
}
