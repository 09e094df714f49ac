package routing

import (
	"database/sql/driver"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/shadow"
)

// Config is what a Router applies: the user's configuration, and what is built from it when
// the connector starts.
type Config struct {
	// Settings is the configuration, as config.Config.Validate leaves it: the backends and
	// their roles, the default backend, the static routes (table names in lower case),
	// enable_cached_server and the size of the statement-analysis cache (ParseCacheSize; the
	// cache also keeps at most 32 MiB of analyses, and none of more than 512 KiB). New copies
	// what it reads of Settings, so changing it afterwards changes no route; Shadow and Time are
	// used as given. Required.
	Settings *config.Config
	// Shadow is the shadow rule built from Settings.Shadow; nil when shadow routing is not
	// configured.
	Shadow *shadow.Rule
	// Time holds what hot/cold time routing reads besides the configuration; nil when no table
	// is time-sharded.
	Time *TimeConfig
}

// SessionState is the client session's state the router needs, passed as data.
type SessionState struct {
	// InTransaction is set between BEGIN (or the first statement under autocommit=0) and
	// COMMIT/ROLLBACK.
	InTransaction bool
	// TxBackend is the backend the transaction is bound to; empty until its first statement.
	TxBackend string
	// TxShadow is the shadow decision the transaction was bound with.
	TxShadow bool
	// LastBackend is the backend of the previous statement; empty before the first.
	LastBackend string
	// TempTables maps each session temporary table (lower case) to the backend holding it.
	TempTables map[string]string
	// TimeZone is the time_zone the client session set (SessionVar.Literal of its last
	// SET time_zone), "" when it set none. NOW() and CURDATE() are read in it.
	TimeZone string
	// Timestamp is the client session's SET timestamp, nil when it set none: NOW() and
	// CURDATE() are read at that instant, as the server reads them.
	Timestamp *SessionVar
	// SQLMode is the sql_mode the client session set: with a shard-key column's precision, it
	// tells how a fraction of a second in an INSERT is stored.
	SQLMode SessionSQLMode
	// SQLModes are the sql_mode production traffic (0) and shadow traffic (1) set, as SQLMode
	// is: a shadow table's values are read as a server session of the side reads them.
	SQLModes [2]SessionSQLMode
	// Databases are the current databases of production traffic (0) and of shadow traffic (1)
	// as the client session set them with USE; "" for the backend DSN's own. The definitions
	// of shadow tables are read in them.
	Databases [2]string
	// Prepared maps each SQL-level prepared statement (lower case) to the backend holding it:
	// the traffic's own, and the other traffic's under names the traffic has none of (EXECUTE of
	// a statement prepared as shadow traffic is shadow traffic).
	Prepared map[string]string
	// SessionBackend is the backend whose server session holds what a session-dependent
	// statement reads (FOUND_ROWS() of the last SELECT …), "" for LastBackend.
	SessionBackend string
	// Pin is the backend every statement goes to while the client session holds table locks
	// there or ran a statement there whose effect obroute cannot see; PinWhy says which, for
	// refusals. "" when the client session is not pinned.
	Pin, PinWhy string
	// PinByLocks is set when only table locks pin the client session (UNLOCK TABLES ends it).
	PinByLocks bool
}

// Input is one statement to route.
type Input struct {
	Statement *Statement
	// Hints are the hints of the call's context; comment hints come with the Statement.
	Hints hint.Set
	// Args are the statement's bound arguments.
	Args []driver.NamedValue
	// Session is the client session's state.
	Session *SessionState
	// Explain asks for Plan.Prompts, the decision in plain words (EXPLAIN ROUTE, debug logs).
	// Routing skips building them otherwise: they are not free.
	Explain bool
}

// Router routes statements. It is safe for concurrent use; build one per connector.
type Router struct {
	cfg   Config
	cache *statementCache
	// routed names the rule of every table that has one (lower case): static route,
	// time-sharded table, shadow table.
	routed   map[string]string
	roles    map[string]string // backend name → role
	shadowOf map[string]bool   // backends that are the shadow side of a mapping
	// shadowColumnTables are the shadow tables with an algorithm that reads column values.
	shadowColumnTables map[string]bool
	defs               tableDefs   // definitions of those tables, per backend (see shadow.go)
	views              shadowViews // the views of the shadow backends (see SetShadowViews)
	// productionDBs are the databases of the production backends' DSNs that no shadow
	// backend's DSN names, lower case; nil when there are none (see shadowNamesProduction).
	productionDBs map[string]bool
	// shadowDBs are the databases of the shadow backends' DSNs, lower case (see
	// otherDatabaseRefusal).
	shadowDBs map[string]bool
	// dsnDBs are the databases the backends' DSNs name, by backend ("" for none) (see
	// qualifiedElsewhere).
	dsnDBs map[string]string
	// dsnQuotes is a sql_mode a backend DSN starts its server sessions with that reads a
	// "double-quoted" text as a name, "" when none (see quotes.go).
	dsnQuotes string
	time      *timeRouter
}

// New validates cfg and builds a Router.
func New(cfg Config) (*Router, error) {
	if cfg.Settings == nil {
		return nil, errorf("obroute: routing.Config.Settings is nil: the router needs the configuration")
	}
	// The router keeps its own copy of what it reads of the settings: a later change to the
	// caller's configuration does not reach statements being routed.
	settings := *cfg.Settings
	settings.Backends = slices.Clone(settings.Backends)
	settings.Routes = maps.Clone(settings.Routes)
	cfg.Settings = &settings
	r := &Router{cfg: cfg, roles: map[string]string{}, shadowOf: map[string]bool{}, routed: map[string]string{}}
	for _, b := range cfg.Settings.Backends {
		r.roles[b.Name] = b.Role
	}
	if _, ok := r.roles[cfg.Settings.Default]; !ok {
		return nil, errorf("%w %q as default backend: configure it or pick one of %s", ErrUnknownBackend, cfg.Settings.Default, r.backendNames())
	}
	for table, b := range cfg.Settings.Routes {
		if _, ok := r.roles[b]; !ok {
			return nil, errorf("%w %q in the route of table %q: configure it or pick one of %s", ErrUnknownBackend, b, table, r.backendNames())
		}
	}
	if cfg.Shadow != nil {
		if err := cfg.Shadow.Validate(r.isBackend); err != nil {
			return nil, err
		}
		for _, m := range cfg.Shadow.Mappings {
			r.shadowOf[m.Shadow] = true
		}
		for _, t := range cfg.Shadow.Tables {
			name := strings.ToLower(t.Name)
			r.routed[name] = "shadow rule"
			if cfg.Shadow.ReadsColumns(name) {
				if r.shadowColumnTables == nil {
					r.shadowColumnTables = map[string]bool{}
				}
				r.shadowColumnTables[name] = true
			}
		}
	}
	if cfg.Shadow != nil {
		r.productionDBs = productionDatabases(cfg.Settings.Backends, r.shadowOf)
		r.shadowDBs = shadowDatabases(cfg.Settings.Backends, r.shadowOf)
	}
	r.dsnQuotes = dsnQuoteMode(cfg.Settings.Backends)
	r.dsnDBs = map[string]string{}
	for _, b := range cfg.Settings.Backends {
		if b.MySQL != nil {
			r.dsnDBs[b.Name] = b.MySQL.DBName
		}
	}
	for table := range cfg.Settings.Routes {
		r.routed[strings.ToLower(table)] = "static route"
	}
	if cfg.Time != nil {
		var err error
		if r.time, err = newTimeRouter(cfg.Time, r); err != nil {
			return nil, err
		}
		for name := range r.time.tables {
			if r.shadowColumnTables[name] {
				return nil, errorf("%w: the time-sharded table %s is a shadow table with a value_match or regex_match algorithm; a statement on it is routed by the shard metadata of the side it goes to, which its column values cannot choose before it is routed: give the table a hint algorithm", ErrTimeConfig, name)
			}
			r.routed[name] = "time-sharded table"
		}
	}
	size := cfg.Settings.ParseCacheSize
	if size <= 0 {
		size = config.DefaultParseCacheSize
	}
	r.cache = newStatementCache(size, cacheBytes)
	return r, nil
}

func (r *Router) isBackend(name string) bool { _, ok := r.roles[name]; return ok }

func (r *Router) backendNames() string {
	names := make([]string, 0, len(r.cfg.Settings.Backends))
	for _, b := range r.cfg.Settings.Backends {
		names = append(names, b.Name)
	}
	return strings.Join(names, ", ")
}

// Role returns the role of the named backend, "" when it is not configured.
func (r *Router) Role(backend string) string { return r.roles[backend] }

// CacheStats returns the statement-analysis cache's counters.
func (r *Router) CacheStats() CacheStats { return r.cache.stats() }

// Now returns the router's clock reading (the time configuration's clock, else time.Now).
func (r *Router) Now() time.Time {
	if r.time != nil {
		return r.time.now()
	}
	return time.Now()
}

// Route decides where the statement of in goes.
func (r *Router) Route(in Input) (*Plan, error) {
	p, err := r.route(in)
	if st := in.Statement; st.lits != nil && (err != nil || in.Explain) {
		// The analysis shared by the statement's literal values prints its literals as ?
		// placeholders: the words of a refusal and of EXPLAIN come from the text's own.
		own := in
		own.Statement = r.analyze(st.SQL, nil)
		op, oerr := r.route(own)
		if err != nil || oerr != nil {
			return op, oerr
		}
		p.Prompts = op.Prompts
	}
	return p, err
}

// route decides where the statement of in goes, by its analysis.
func (r *Router) route(in Input) (*Plan, error) {
	st := in.Statement
	if st.CommentErr != nil {
		return nil, st.CommentErr
	}
	if st.HintErr != nil {
		return nil, st.HintErr
	}
	hints, err := hint.Combine(in.Hints, st.Hints)
	if err != nil {
		return nil, err
	}
	sess := in.Session
	if sess == nil {
		sess = &SessionState{}
	}
	if err := r.quotesRefusal(st, sess); err != nil {
		return nil, err
	}
	if st.pieces != nil {
		return r.routeMulti(in, hints, sess)
	}
	if st.Kind == KindPrepare || st.Kind == KindExecute && st.Control.Immediate {
		return r.routePrepared(in, hints, sess)
	}
	p := &Plan{Statement: st, Hints: hints, Level: hints.Level, InTransaction: sess.InTransaction, explain: in.Explain}
	if r.time != nil && r.cfg.Shadow != nil && r.time.names(st) {
		r.shadowTimeSide(p, st, hints, sess)
	}
	// pinned: the route names where the data is, so a transaction cannot override it.
	// The statement's literals replaced in its cache key are read as arguments; the targets
	// keep the application's arguments.
	rargs := st.readArgs(in.Args)
	pinned, err := r.baseRoute(p, in, rargs, sess)
	if err != nil {
		return nil, err
	}
	if err := r.applySession(p, st, hints, rargs, sess, pinned); err != nil {
		return nil, err
	}
	if err := r.qualifiedElsewhere(p, sess); err != nil {
		return nil, err
	}
	return p, nil
}

// applySession applies what the client session's state decides to p's route: shadow traffic,
// then the transaction's backend, or the server session the client session is pinned to.
func (r *Router) applySession(p *Plan, st *Statement, hints hint.Set, args []driver.NamedValue, sess *SessionState, pinned bool) error {
	if err := r.applyShadow(p, st, hints, args, sess); err != nil {
		return err
	}
	switch {
	case p.OutsideTx:
	case sess.InTransaction && sess.TxBackend != "":
		return r.applyTransaction(p, sess, pinned)
	case sess.Pin != "":
		return r.applyPin(p, sess, pinned)
	}
	return nil
}

// baseRoute fills p's targets with production backends for p's statement under p's hints, and
// reports whether the route is pinned to where data lives (time-sharded tables, static routes,
// temporary tables, backend hints). rargs are the arguments routing reads (see
// Statement.routeArgs).
func (r *Router) baseRoute(p *Plan, in Input, rargs []driver.NamedValue, sess *SessionState) (pinned bool, err error) {
	st, hints := p.Statement, p.Hints
	if st.Kind == KindSet && len(r.roles) > 1 {
		if err := spentVariable(st); err != nil {
			return false, err
		}
	}
	if hints.Backend == "" {
		if err := r.hiddenTables(p, st, sess); err != nil {
			return true, err
		}
	}
	if c := st.Control; c != nil && c.Lock != 0 && hints.Backend == "" {
		if err := r.lockTables(st, sess); err != nil {
			return false, err
		}
	}
	if err := r.tempTableDDL(st, sess, in); err != nil {
		return false, err
	}
	for _, t := range st.Tables {
		if b, ok := sess.TempTables[t]; ok {
			p.single(UseTempTableSession, ClassForced, b, st.SQL, in.Args)
			if in.Explain {
				p.Prompts = append(p.Prompts, fmt.Sprintf("Will route to the server session of temporary table %s", t))
			}
			return true, nil
		}
	}
	if b := sess.SessionBackend; st.SessionDependent && (b != "" || sess.LastBackend != "") && st.userTable() == "" {
		// (One naming tables is routed by them: the connector writes in the values when they
		// are on another server session.)
		if b == "" {
			b = sess.LastBackend
		}
		p.single(UseLastSession, ClassForced, b, st.SQL, in.Args)
		if in.Explain {
			p.Prompts = append(p.Prompts, "Will route to last connected server since the statement reads the previous statement's session")
		}
		return false, nil
	}
	if hints.Backend != "" {
		if !r.isBackend(hints.Backend) {
			return false, errorf("%w %q in the backend hint: use one of %s", ErrUnknownBackend, hints.Backend, r.backendNames())
		}
		p.single(UseCommentTargetDB, ClassForced, hints.Backend, st.SQL, in.Args)
		if in.Explain {
			p.Prompts = append(p.Prompts, fmt.Sprintf("Will route to backend %s named by the backend hint", hints.Backend))
		}
		return true, nil
	}
	if st.UserLocks {
		return r.userLockRoute(p, st, in)
	}
	if st.catalogErr != nil {
		return false, st.catalogErr // before SET's route: SET @x = (SELECT … information_schema …)
	}
	switch st.Kind {
	case KindExecute, KindDeallocate:
		if b, ok := sess.Prepared[st.Control.Name]; ok {
			p.single(UsePreparedSession, ClassForced, b, st.SQL, in.Args)
			if r.shadowOf[b] {
				p.Shadow, p.Class = true, ClassShadow // prepared as shadow traffic: it stays that
			}
			if in.Explain {
				p.Prompts = append(p.Prompts, fmt.Sprintf("Will route to the server session that prepared %s", st.Control.Name))
			}
			return true, nil
		}
		fallthrough // a name obroute did not see prepared: the server answers
	case KindSet, KindUse, KindBegin, KindCommit, KindRollback, KindSavepoint, KindXA:
		if st.scanned && (len(st.Tables) > 0 || len(st.mentions) > 0) {
			return r.setRoute(p, st, in) // a SET reading tables
		}
		b := sess.LastBackend
		if b == "" {
			b = r.cfg.Settings.Default
		}
		p.single(UseSessionState, ClassForced, b, st.SQL, in.Args)
		if in.Explain {
			p.Prompts = append(p.Prompts, "Session state: applied here and replayed to the other server sessions before their next use")
		}
		return false, nil
	}
	if st.catalogErr != nil {
		return false, st.catalogErr
	}
	if done, err := r.elsewhereRoute(p, st, in, sess); done || err != nil {
		return done, err
	}
	if done, err := r.objectRoute(p, st, in); done || err != nil {
		return done, err
	}
	if st.explainOf != nil {
		return r.explainPlainRoute(p, in, sess)
	}
	if st.catalog != nil {
		if pinned, done, err := r.catalogRoute(p, st, in); done || err != nil {
			return pinned, err
		}
	}
	if st.ddl != nil && r.time != nil && !st.ddl.temporary {
		db := r.currentDB(in)
		for _, ref := range st.ddl.refs() {
			tt, err := r.time.forPlan(p).nameCheck(r.time, ref, st.ddl.verb, db)
			if err != nil {
				return true, err
			}
			if tt != nil {
				t := r.time.forPlan(p)
				if t == nil {
					return true, noShadowSide(tt.Table)
				}
				if done, err := t.routeDDL(p, st, in, tt, db); done || err != nil {
					return true, err
				}
			}
		}
	}
	if st.RouteErr != nil {
		return false, st.RouteErr
	}
	if st.ParseErr != nil || st.scanned {
		return r.unreadRoute(p, st, in, sess)
	}
	if st.time != nil {
		tin := in
		tin.Args = rargs
		t := r.time.forPlan(p)
		if t == nil {
			return true, noShadowSide(st.time.table.Table)
		}
		if err := t.route(p, st, hints, tin); err != nil {
			return true, err
		}
		if st.time.returning && len(p.Targets) > 1 {
			return true, errorf("%w: the %s … RETURNING on %s would run as %d statements, one per physical table; run one statement per table (by %s range), or drop RETURNING and SELECT the rows",
				ErrNotMergeable, st.Kind, st.time.table.Table, len(p.Targets), st.time.table.ShardKey)
		}
		return true, nil
	}
	if pinned, err := r.staticRoute(p, st, in); pinned || err != nil {
		return pinned, err
	}
	r.defaultRoute(p, st, in)
	return false, nil
}

// staticRoute routes a statement naming tables with a static route to their backend. The route
// says where the data is: pinned, a transaction bound elsewhere cannot take the statement.
func (r *Router) staticRoute(p *Plan, st *Statement, in Input) (pinned bool, err error) {
	backend, table := "", ""
	for _, t := range st.Tables {
		b, ok := r.cfg.Settings.Routes[t]
		if !ok {
			continue
		}
		if backend != "" && b != backend {
			return false, errorf("%w: table %s lives on %s and table %s on %s; query them separately", ErrCrossBackend, table, backend, t, b)
		}
		backend, table = b, t
	}
	if backend == "" {
		return false, nil
	}
	p.single(UseRoutePolicy, ClassDefault, backend, st.SQL, in.Args)
	p.Static = true
	if own, def := r.dsnDBs[backend], r.dsnDBs[r.cfg.Settings.Default]; own != def && own != "" && def != "" && len(st.Tables) == 1 && maintenance(st) {
		// Its rows name the table in the backend's database: the client's is the default's.
		p.Rename = [2]string{own + "." + table, def + "." + table}
	}
	if in.Explain {
		p.Prompts = append(p.Prompts, fmt.Sprintf("Will route to backend %s by the route of table %s", backend, table))
	}
	return true, nil
}

// unreadRoute routes a statement whose tables were read from its words (scanned): refused when
// it names a routed table it cannot be routed by, else by the static routes of its tables,
// else as a statement whose route cannot be computed (the cached server or the default backend).
func (r *Router) unreadRoute(p *Plan, st *Statement, in Input, sess *SessionState) (pinned bool, err error) {
	if err := r.unreadableRoute(st); err != nil {
		return false, err
	}
	if pinned, err := r.staticRoute(p, st, in); pinned || err != nil || st.ParseErr == nil {
		if !pinned && err == nil {
			r.defaultRoute(p, st, in)
		}
		return pinned, err
	}
	if r.cfg.Settings.EnableCachedServer && sess.LastBackend != "" {
		p.single(UseCachedSession, ClassCached, sess.LastBackend, st.SQL, in.Args)
		if in.Explain {
			p.Prompts = append(p.Prompts, "Will route to last connected server since the route cannot be computed: "+st.parseProblem())
		}
		return false, nil
	}
	p.single(UseRoutePolicy, ClassDefault, r.cfg.Settings.Default, st.SQL, in.Args)
	p.byDefault = true
	if in.Explain {
		p.Prompts = append(p.Prompts, "Will route to the default backend since the route cannot be computed: "+st.parseProblem())
	}
	return false, nil
}

// defaultRoute sends the statement to the default backend.
func (r *Router) defaultRoute(p *Plan, st *Statement, in Input) {
	p.single(UseRoutePolicy, ClassDefault, r.cfg.Settings.Default, st.SQL, in.Args)
	p.byDefault = true
	if in.Explain {
		p.Prompts = append(p.Prompts, fmt.Sprintf("Will route to the default backend %s", r.cfg.Settings.Default))
	}
}

// single makes p a plan of one target.
//
//go:noinline
func (p *Plan) single(t RouteInfoType, c Class, backend, sql string, args []driver.NamedValue) {
	p.Type, p.Class = t, c
	p.one[0] = Target{Backend: backend, SQL: sql, Args: args}
	p.Targets = p.one[:]
}

// qualifiedElsewhere refuses a statement that qualifies a name by the client session's database
// (the one the default backend's DSN names, which is the database the client sees) and runs on a
// backend whose DSN names a database of another name: there the client session's tables are in
// that database, and the name would reach another database of the backend's server (or none).
// While the client session is in that database, DATABASE() and SCHEMA() there would answer the
// backend's own name, not the one the client sees: refused too. A backend hint, a catalog
// statement (answered on the default backend) and shadow traffic (refused by
// shadowNamesProduction) are left alone. A word before a dot that is the database's name is
// taken for it, even when it is an alias: refused alike.
func (r *Router) qualifiedElsewhere(p *Plan, sess *SessionState) error {
	def := r.dsnDBs[r.cfg.Settings.Default]
	if def == "" || p.Hints.Backend != "" || p.Catalog != nil || p.Shadow {
		return nil
	}
	inDef := sess.Databases[0] == "" || sess.Databases[0] == def
	for _, t := range p.Targets {
		own := r.dsnDBs[t.Backend]
		if own == "" || own == def {
			continue
		}
		// A text holding neither the database's name nor DATABASE/SCHEMA is not lexed: this runs
		// for every statement routed to such a backend.
		if !containsFold(t.SQL, strings.ToLower(def)) && !(inDef && (containsFold(t.SQL, "database") || containsFold(t.SQL, "schema"))) {
			continue
		}
		toks := textTokens(t.SQL)
		for i := 0; i+2 < len(toks); i++ {
			switch {
			case toks[i+1].kind == tokPunct && toks[i+1].text == "." && toks[i+2].kind != tokPunct && identText(toks[i]) == strings.ToLower(def):
				return errorf("%w: the statement qualifies a name by %s, the client session's database, and runs on backend %s, whose tables are in its database %s, where %s names another database; name the tables without the database", ErrSessionState, def, t.Backend, own, def)
			case inDef && toks[i].kind == tokWord && (toks[i].is("database") || toks[i].is("schema")) && toks[i+1].text == "(" && toks[i+2].text == ")" &&
				(i == 0 || toks[i-1].text != "."):
				return errorf("%w: the statement calls %s() and runs on backend %s, where it answers that backend's database %s, not the client session's %s; call it outside the transaction, or in a statement of its own outside it", ErrSessionState, strings.ToUpper(toks[i].text), t.Backend, own, def)
			}
		}
	}
	return nil
}

// maintenance reports whether st is ANALYZE, CHECK, OPTIMIZE, REPAIR or CHECKSUM TABLE, whose
// rows name each table qualified by its database (the Table column).
func maintenance(st *Statement) bool {
	if st.ddl != nil {
		return st.ddl.action == ddlMaintain
	}
	if !containsFold(st.SQL, "checksum") {
		return false // not lexed: most statements are not maintenance
	}
	toks := textTokens(st.SQL)
	return len(toks) > 1 && toks[0].is("checksum") && toks[1].is("table")
}
