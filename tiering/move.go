package tiering

import (
	"context"
	"database/sql"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"time"

	"github.com/obroute/obroute/metadata"
)

// Defaults of MoveOptions.
const (
	// DefaultChunkRows is the rows per chunk of the copy and the delete.
	DefaultChunkRows = 1000
	// DefaultRowsPerSecond is the rate limit of the copy and the delete.
	DefaultRowsPerSecond = 10000
)

// MoveOptions adjusts a move. The zero value moves to the first backend of role cold with
// the defaults.
type MoveOptions struct {
	// To is the target backend; "" means the first backend of role cold.
	To string
	// ChunkRows is the rows per chunk; DefaultChunkRows if zero.
	ChunkRows int
	// RowsPerSecond limits the copy and the delete; DefaultRowsPerSecond if zero, no limit if
	// negative.
	RowsPerSecond int
	// Settle is the wait between the switch of the shard metadata and the fence; Store.Settle
	// if zero.
	Settle time.Duration
	// Now is the clock of the hot-window check, as the wall clock of the shard-key times;
	// time.Now().UTC() if zero.
	Now time.Time
	// Observer, if set, receives the progress of every step.
	Observer func(MoveEvent)
}

func (o *MoveOptions) defaults(s *Store) {
	if o.ChunkRows <= 0 {
		o.ChunkRows = DefaultChunkRows
	}
	if o.RowsPerSecond == 0 {
		o.RowsPerSecond = DefaultRowsPerSecond
	}
	if o.Settle <= 0 {
		o.Settle = s.settle
	}
	if o.Now.IsZero() {
		o.Now = time.Now().UTC()
	}
	if o.Observer == nil {
		o.Observer = func(MoveEvent) {}
	}
}

// MoveEvent is the progress of one step of a move.
type MoveEvent struct {
	// Table is the table moved; Step the step.
	Table string
	Step  Step
	// Text describes the step; set on its first event.
	Text string
	// Done and Total count the step's work in Unit ("rows", or "s" for the wait); Total is 0
	// when the step has no count.
	Done, Total int64
	Unit        string
	// Finished is set on the step's last event.
	Finished bool
}

// MovePlan is what a move does, or did.
type MovePlan struct {
	// Table is the shard metadata row of the table; Logical its configured time table.
	Table   metadata.Table
	Logical string
	// Source and Target are the backends, SourceAddr and TargetAddr their addresses.
	Source, Target         string
	SourceAddr, TargetAddr string
	// Columns and Key are the columns copied and the primary key.
	Columns, Key []string
	// Rows is the number of rows: exact once the move counted them, else the server's estimate.
	Rows  int64
	Exact bool
	// ChunkRows, RowsPerSecond and Settle are the options in effect.
	ChunkRows, RowsPerSecond int
	Settle                   time.Duration
	// Fence is the name the source table gets before its rows are deleted.
	Fence string
	// Resume is the step a recorded move resumes at; "" for a new move.
	Resume Step
	// Copied and Deleted are the rows copied and deleted so far.
	Copied, Deleted int64
	// StateTable is where the move records its progress, on the metadata backend.
	StateTable string
}

// PlanMove returns what Move would do, changing nothing.
func (s *Store) PlanMove(ctx context.Context, table string, opts MoveOptions) (*MovePlan, error) {
	opts.defaults(s)
	p, _, err := s.planMove(ctx, table, &opts)
	return p, err
}

// planMove checks that the table can be moved (or its recorded move resumed) and returns the
// plan and the recorded state (nil for a new move).
func (s *Store) planMove(ctx context.Context, table string, opts *MoveOptions) (*MovePlan, *moveState, error) {
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("tiering: move %s: %w", table, err)
	}
	t, ok := snap.Lookup(table)
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s is not in the shard metadata (%s)", ErrNotMovable, table, s.metaTable)
	}
	tt := s.ownerOf(table)
	if tt == nil {
		return nil, nil, fmt.Errorf("%w: %s is not a table of a configured time table", ErrNotMovable, table)
	}
	st, err := s.loadState(ctx, table)
	if err != nil {
		return nil, nil, fmt.Errorf("tiering: move %s: %w", table, err)
	}
	loc, err := s.locate(t)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrNotMovable, err)
	}
	if st.finishedElsewhere(loc) {
		st = nil // moved, then placed elsewhere by hand since: a new move
	}
	p := &MovePlan{Table: t, Logical: tt.Table, ChunkRows: opts.ChunkRows, RowsPerSecond: opts.RowsPerSecond, Settle: opts.Settle,
		Fence: fenceName(table), StateTable: s.stateName}
	p.Target = opts.To
	if st != nil {
		if p.Target != "" && p.Target != st.target {
			return nil, nil, fmt.Errorf("%w: the recorded move of %s goes to %s, not %s: finish it, or abort it with obroute migrate -abort %s", ErrNotMovable, table, st.target, p.Target, table)
		}
		p.Target, p.Resume, p.Copied, p.Deleted, p.Fence = st.target, st.step, st.rowsCopied, st.rowsDeleted, st.fence
	}
	if p.Target == "" {
		p.Target = s.cold
	}
	target := s.Backend(p.Target)
	if target == nil {
		return nil, nil, fmt.Errorf("%w: no target: %q is not a configured backend (give -to, or configure a backend of role cold)", ErrNotMovable, p.Target)
	}
	if st != nil && st.step == StepDone {
		p.Source = st.source
	} else if st != nil && st.step.flipped() {
		p.Source = st.source
		if loc != target {
			return nil, nil, fmt.Errorf("%w: the move of %s switched it to %s, but the shard metadata now places it on %s; put its location back to '%s' before resuming",
				ErrNotMovable, table, target.Name, loc.Name, target.Name)
		}
	} else {
		p.Source = loc.Name
		if st != nil && st.source != loc.Name {
			return nil, nil, fmt.Errorf("%w: the recorded move of %s started from %s, but the shard metadata now places it on %s; abort it with obroute migrate -abort %s",
				ErrNotMovable, table, st.source, loc.Name, table)
		}
		if loc == target {
			return nil, nil, fmt.Errorf("%w: the shard metadata already places %s on %s", ErrNotMovable, table, target.Name)
		}
		snap, err := s.Snapshot(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("tiering: move %s: %w", table, err)
		}
		clock, err := s.clockOf(ctx, tt, snap, opts.Now)
		if err != nil {
			return nil, nil, fmt.Errorf("tiering: move %s: %w", table, err)
		}
		if boundary := metadata.HotWindow(tt.HotWindow).Boundary(clock); end(t).After(boundary) {
			return nil, nil, fmt.Errorf("%w: %s is in the hot window of %s (its max_time %s is not before the window's start %s); only tables that left the window are moved, so no write can reach them",
				ErrNotMovable, table, tt.Table, formatTime(t.Max), formatTime(boundary))
		}
		if !s.canFlip(ctx, target) {
			return nil, nil, fmt.Errorf("%w: %s has no location column, so a table is placed by is_hot alone and can only move to the first backend of role cold (%s); add the column: ALTER TABLE %s ADD COLUMN location VARCHAR(64) NULL",
				ErrNotMovable, s.metaTable, s.cold, s.metaTable)
		}
	}
	source := s.Backend(p.Source)
	if source == nil {
		return nil, nil, fmt.Errorf("%w: the recorded move of %s comes from %s, which is not configured", ErrNotMovable, table, p.Source)
	}
	p.SourceAddr, p.TargetAddr = source.Addr, target.Addr
	if st != nil && st.step == StepDone {
		p.Rows, p.Exact = st.rowsTotal, true
		return p, st, nil
	}
	// The schema: from the source until the target has the table.
	from, name := source, table
	switch {
	case st != nil && st.step.index() > StepCreate.index():
		from = target
	case st == nil || st.step.index() <= StepCreate.index():
		if ok, err := tableExists(ctx, source.DB, table); err != nil {
			return nil, nil, fmt.Errorf("tiering: move %s: %w", table, err)
		} else if !ok {
			return nil, nil, fmt.Errorf("%w: %s is not on %s, where the shard metadata places it (run obroute metadata verify)", ErrNotMovable, table, source.Name)
		}
	}
	sh, err := readShape(ctx, from, name)
	if err != nil {
		return nil, nil, fmt.Errorf("tiering: move %s: %w", table, err)
	}
	if len(sh.key) == 0 {
		return nil, nil, fmt.Errorf("%w: %s has no primary key; the copy is chunked and resumed by primary key: add one", ErrNotMovable, table)
	}
	p.Columns, p.Key = sh.columns, sh.key
	if st != nil && st.rowsTotal > 0 {
		p.Rows, p.Exact = st.rowsTotal, true
	} else {
		var est sql.NullInt64
		_ = source.DB.QueryRowContext(ctx, "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", table).Scan(&est)
		p.Rows = est.Int64
	}
	return p, st, nil
}

// DueMoves returns the physical tables of the configured time table logical that Move
// would move now, oldest first: those whose recorded move is not done (to finish it), and
// those that left the hot window at opts.Now and are not on the target (opts.To, or the first
// backend of role cold).
func (s *Store) DueMoves(ctx context.Context, logical string, opts MoveOptions) ([]string, error) {
	opts.defaults(s)
	tt, ok := s.timeTable(logical)
	if !ok {
		return nil, fmt.Errorf("tiering: %s is not a configured time table", logical)
	}
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("tiering: moves due in %s: %w", logical, err)
	}
	target := opts.To
	if target == "" {
		target = s.cold
	}
	clock, err := s.clockOf(ctx, tt, snap, opts.Now)
	if err != nil {
		return nil, fmt.Errorf("tiering: moves due in %s: %w", logical, err)
	}
	boundary := metadata.HotWindow(tt.HotWindow).Boundary(clock)
	var due []string
	for _, t := range s.tablesOf(snap, tt) {
		st, err := s.loadState(ctx, t.Name)
		if err != nil {
			return nil, fmt.Errorf("tiering: moves due in %s: %w", logical, err)
		}
		loc, err := s.locate(t)
		switch {
		case st != nil && !st.finishedElsewhere(loc):
			if st.step != StepDone {
				due = append(due, t.Name)
			}
		case err == nil && loc.Name != target && !end(t).After(boundary):
			due = append(due, t.Name)
		}
	}
	return due, nil
}

// canFlip reports whether the shard metadata can place a table on target: with a location
// column, any backend; without, the first backend of role cold only.
func (s *Store) canFlip(ctx context.Context, target *Backend) bool {
	ok, err := s.hasLocation(ctx)
	return err != nil || ok || target.Name == s.cold // an error shows at the flip
}

// fenceName is the name the source table gets before its rows are deleted.
func fenceName(table string) string {
	if n := "obroute_moved_" + table; len(n) <= 64 {
		return n
	}
	return fmt.Sprintf("obroute_moved_%08x", crc32.ChecksumIEEE([]byte(table)))
}

// guardTrigger is the name of the trigger refusing one kind of write (INSERT, UPDATE,
// DELETE) to a table being moved.
func guardTrigger(table, event string) string {
	prefix := "obroute_ro_" + strings.ToLower(event[:1]) + "_"
	if len(prefix)+len(table) <= 64 {
		return prefix + table
	}
	return fmt.Sprintf("%s%08x", prefix, crc32.ChecksumIEEE([]byte(table)))
}

// Write prints the plan: the table, the backends, and the steps with their figures.
func (p *MovePlan) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "move %s (%s, %s … %s) from %s (%s) to %s (%s)\n", p.Table.Name, p.Logical,
		formatTime(p.Table.Min), formatTime(p.Table.Max), p.Source, p.SourceAddr, p.Target, p.TargetAddr)
	rows := fmt.Sprintf("about %d (the server's estimate)", p.Rows)
	if p.Exact {
		rows = fmt.Sprint(p.Rows)
	}
	rate, eta := "no rate limit", ""
	if p.RowsPerSecond > 0 {
		rate = fmt.Sprintf("at most %d rows/s", p.RowsPerSecond)
		eta = fmt.Sprintf(" (about %s)", (time.Duration(p.Rows) * time.Second / time.Duration(p.RowsPerSecond)).Round(time.Second))
	}
	fmt.Fprintf(&b, "  rows: %s; primary key (%s); %d columns\n", rows, strings.Join(p.Key, ", "), len(p.Columns))
	lines := []struct {
		step Step
		text string
	}{
		{StepGuard, fmt.Sprintf("make %s on %s read-only: triggers refuse INSERT, UPDATE and DELETE with a message naming the move", p.Table.Name, p.Source)},
		{StepCreate, fmt.Sprintf("create %s on %s with the same schema (SHOW CREATE TABLE), count the rows", p.Table.Name, p.Target)},
		{StepCopy, fmt.Sprintf("copy in chunks of %d rows by primary key, %s%s; each chunk verified on both servers (row count and BIT_XOR of CRC32 of the columns)", p.ChunkRows, rate, eta)},
		{StepCheck, fmt.Sprintf("compare the whole copy on %s with the rows copied (count and checksum)", p.Target)},
		{StepFlip, fmt.Sprintf("switch %s to %s in the shard metadata (location, is_hot = 0), recorded in the same transaction", p.Table.Name, p.Target)},
		{StepWait, fmt.Sprintf("wait %s for every obroute process to route by it: until then each reads the table whole, from %s or from %s", p.Settle, p.Source, p.Target)},
		{StepFence, fmt.Sprintf("rename %s on %s to %s (a process still on the old metadata gets an error, never a wrong answer); check it is unchanged since the copy", p.Table.Name, p.Source, p.Fence)},
		{StepDelete, fmt.Sprintf("delete its rows in chunks of %d, %s", p.ChunkRows, rate)},
		{StepDrop, fmt.Sprintf("drop the emptied %s on %s", p.Fence, p.Source)},
	}
	for i, l := range lines {
		mark := " "
		if p.Resume != "" && l.step.index() < p.Resume.index() {
			mark = "✓"
		}
		fmt.Fprintf(&b, "  %s %d. %-6s %s\n", mark, i+1, l.step, l.text)
	}
	switch p.Resume {
	case "":
		fmt.Fprintf(&b, "state: a new move, recorded in %s\n", p.StateTable)
	case StepDone:
		fmt.Fprintf(&b, "state: done (recorded in %s)\n", p.StateTable)
	default:
		fmt.Fprintf(&b, "state: resumes at step %s (%d rows copied, %d deleted), recorded in %s\n", p.Resume, p.Copied, p.Deleted, p.StateTable)
	}
	_, err := w.Write([]byte(b.String()))
	return err
}
