package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"

	"github.com/obroute/obroute/config"
	"github.com/obroute/obroute/hint"
	"github.com/obroute/obroute/internal/routing"
)

// The workloads `obroute check` reads, each turned into entries in the order of its client
// sessions: a general query log (every command of every connection, as the server received
// it), a slow query log (with long_query_time=0: every statement, as it finished), a file of
// statements, and a server's performance_schema statement digests.

// entryKind is what one entry of a workload is.
type entryKind uint8

const (
	entryStatement entryKind = iota // a statement of a client session
	entryConnect                    // a client session starts
	entryQuit                       // a client session ends
)

// entry is one event of a workload.
type entry struct {
	kind entryKind
	// session is the connection id the log gives (0 for inputs without one).
	session uint64
	// user is the connecting user, on entryConnect and, in a slow log, on every statement.
	user string
	text string
	// count is the number of statements the entry stands for: 1, or a digest's COUNT_STAR.
	count int64
	// seq is the entry's position in the input.
	seq uint64
	// truncated marks a digest whose text performance_schema cut short.
	truncated bool
	// errno is the error the server answered the statement with, when the log says (MySQL's
	// slow log with log_slow_extra: "Errno:"); 0 when it ran or the log does not say.
	errno uint64
	// args are the values of a prepared statement's placeholders (text holds the ?), read from
	// a general log's Execute line.
	args []driver.NamedValue
	// unclear says why the log does not fix where the statement's text ends, "" when it
	// does: a string or comment left open in it (an unbalanced quote) would have made the
	// log's next entries its text, or a sql_mode check does not know would have made its
	// text go on past the entry line that ended it.
	unclear string
}

// inputStats are what a reader saw besides its entries.
type inputStats struct {
	// ignored counts the commands of a general log that are not statements (Prepare, Close
	// stmt, Ping …), by command.
	ignored map[string]int64
}

func (s *inputStats) ignore(cmd string) {
	if s.ignored == nil {
		s.ignored = map[string]int64{}
	}
	s.ignored[cmd]++
}

// sink receives a reader's entries in input order.
type sink func(entry) error

// countingReader counts the bytes read through it, for the progress line.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// lineReader reads lines of any length, without their '\n'. A '\r' before it is the line's:
// the server writes a statement's text as it received it, a "\r\n" inside a string included.
type lineReader struct {
	r    *bufio.Reader
	long []byte // a line longer than r's buffer
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 1<<20)}
}

// next returns the next line, valid until the following call; io.EOF after the last.
func (l *lineReader) next() ([]byte, error) {
	line, err := l.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		l.long = append(l.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = l.r.ReadSlice('\n')
			l.long = append(l.long, line...)
		}
		line = l.long
	}
	if err != nil && (err != io.EOF || len(line) == 0) {
		return nil, err
	}
	return bytes.TrimSuffix(line, []byte{'\n'}), nil
}

// trimCR removes the '\r' that ends a line written with "\r\n" line ends: for the lines a
// server writes itself (headers, commands), not for a statement's text.
func trimCR(line []byte) []byte { return bytes.TrimSuffix(line, []byte{'\r'}) }

// serverHeader reports whether line starts the header a server writes at the top of its log
// file, at each start and each FLUSH LOGS ("/usr/sbin/mariadbd, Version: … started with:"),
// which two lines follow ("Tcp port: … Unix socket: …" and the column names).
func serverHeader(line []byte) bool { return bytes.HasSuffix(line, []byte("started with:")) }

// headerTail reports whether line is one of the two lines after serverHeader's.
func headerTail(line []byte) bool {
	return bytes.HasPrefix(line, []byte("Tcp port:")) || bytes.HasPrefix(line, []byte("TCP Port:")) || bytes.HasPrefix(line, []byte("Time "))
}

// logLines reads the lines of a server's log file, each server header reported once instead
// of its lines.
type logLines struct {
	lines      *lineReader
	headerLeft int // lines of the header still to come
}

// next returns the next line, or header set for a server header (the entry before it ends).
func (l *logLines) next() (line []byte, header bool, err error) {
	for {
		if line, err = l.lines.next(); err != nil {
			return nil, false, err
		}
		if l.headerLeft > 0 {
			l.headerLeft--
			if headerTail(line) {
				continue
			}
			l.headerLeft = 0
		}
		if serverHeader(trimCR(line)) {
			l.headerLeft = 2
			return nil, true, nil
		}
		return line, false, nil
	}
}

// generalCommands are the command names of general log lines (MariaDB's and MySQL's).
var generalCommands = map[string]bool{
	"Sleep": true, "Quit": true, "Init DB": true, "Query": true, "Field List": true, "Create DB": true,
	"Drop DB": true, "Refresh": true, "Shutdown": true, "Statistics": true, "Processlist": true,
	"Connect": true, "Kill": true, "Debug": true, "Ping": true, "Time": true, "Delayed insert": true,
	"Change user": true, "Binlog Dump": true, "Table Dump": true, "Connect Out": true,
	"Register Slave": true, "Prepare": true, "Execute": true, "Long Data": true, "Close stmt": true,
	"Reset stmt": true, "Set option": true, "Fetch": true, "Daemon": true, "Error": true,
	"Reset connection": true, "Bulk_execute": true, "Slave_worker": true, "Slave_IO": true,
	"Slave_SQL": true, "Com_multi": true, "Binlog Dump GTID": true, "Clone": true,
}

// generalEntry reads a general log line that starts an entry: an optional time (MariaDB's
// "261201 20:26:00", MySQL's "2026-12-01T20:26:00.123456Z"; MariaDB leaves it out, starting
// the line with tabs, while the second does not change), the connection id, the command and
// its argument. ok is false for a line that continues the previous entry's argument.
func generalEntry(line []byte) (id uint64, cmd string, arg []byte, ok bool) {
	i := 0
	switch {
	case len(line) > 0 && isDigitByte(line[0]):
		tab := bytes.IndexByte(line, '\t')
		if tab < 0 || tab > 40 || !isLogTime(line[:tab]) {
			return 0, "", nil, false
		}
		i = tab + 1
	case len(line) > 0 && line[0] == '\t':
	default:
		return 0, "", nil, false
	}
	for i < len(line) && (line[i] == '\t' || line[i] == ' ') {
		i++
	}
	start := i
	for i < len(line) && isDigitByte(line[i]) {
		i++
	}
	if i == start || i-start > 20 || i >= len(line) || line[i] != ' ' {
		return 0, "", nil, false
	}
	id, err := strconv.ParseUint(string(line[start:i]), 10, 64)
	if err != nil {
		return 0, "", nil, false
	}
	rest := line[i+1:]
	c := rest
	if tab := bytes.IndexByte(rest, '\t'); tab >= 0 {
		c, arg = rest[:tab], rest[tab+1:]
	}
	if arg == nil {
		c = trimCR(c)
	}
	if !generalCommands[string(c)] {
		return 0, "", nil, false
	}
	return id, string(c), arg, true
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }

// isLogTime reports whether s is written like a log line's time.
func isLogTime(s []byte) bool {
	colon := false
	for _, c := range s {
		switch {
		case isDigitByte(c), c == '-', c == '.', c == 'T', c == 'Z', c == '+', c == ' ':
		case c == ':':
			colon = true
		default:
			return false
		}
	}
	return colon
}

// connectUser reads the user of a Connect or Change user argument ("app@10.0.0.5 on shop using
// TCP/IP"); "" when the line says something else (Access denied …).
func connectUser(arg []byte) string {
	// The user name may hold "@" (jane@corp, as PAM and LDAP users have); the host does not:
	// the user ends at the last "@" of the first word.
	word := arg
	if sp := bytes.IndexByte(arg, ' '); sp >= 0 {
		word = arg[:sp]
	}
	at := bytes.LastIndexByte(word, '@')
	if at <= 0 {
		return ""
	}
	return string(word[:at])
}

// readGeneralLog reads a general query log: each connection's Connect, Query, Execute (the
// statement a prepared statement ran: the text of its Prepare line, with the values the
// Execute line gives), Init DB (a USE) and Quit, a statement of several lines included (a line
// inside one of its strings or comments is its text, whatever it looks like). Other commands
// (Prepare, Close stmt, Ping …) are counted in st, and so is the Execute line the server writes
// after an SQL EXECUTE or EXECUTE IMMEDIATE (the Query line, which obroute routes).
func readGeneralLog(r io.Reader, st *inputStats, out sink) error {
	lines := &logLines{lines: newLineReader(r)}
	var (
		pending entry
		cmd     string // pending's command: Query, Execute or Prepare
		text    []byte
		have    bool // pending holds a statement whose text may go on
		seq     uint64
		conns   = map[uint64]*preparedConn{}
		lex     lexState // of text
		entries int      // lines of text that look like entries
	)
	conn := func(id uint64) *preparedConn {
		p := conns[id]
		if p == nil {
			p = &preparedConn{}
			conns[id] = p
		}
		return p
	}
	flush := func() error {
		if !have {
			return nil
		}
		have = false
		pending.text = strings.TrimSpace(string(text))
		if entries > 0 {
			pending.unclear = fmt.Sprintf("its text holds %d line(s) that look like log entries, read as its text because a string or comment is open before them: if the application left a quote unbalanced, they are other statements", entries)
		}
		p := conn(pending.session)
		switch cmd {
		case "Prepare":
			p.prepare(pending.text)
			st.ignore("Prepare")
			return nil
		case "Execute":
			sqlExecute, prepared, args := p.execute(pending.text)
			if sqlExecute {
				st.ignore("Execute of an SQL EXECUTE")
				return nil
			}
			if prepared != "" {
				pending.text, pending.args = prepared, args
			}
		default:
			p.query(text)
			if m := setSQLMode.FindSubmatch(text); m != nil {
				p.backslash = 1
				if bytes.Contains(bytes.ToUpper(m[1]), []byte("NO_BACKSLASH_ESCAPES")) {
					p.backslash = 2
				}
			}
		}
		if pending.text == "" {
			return nil
		}
		return out(pending)
	}
	send := func(e entry) error {
		if err := flush(); err != nil {
			return err
		}
		seq++
		e.seq, e.count = seq, 1
		return out(e)
	}
	for {
		line, header, err := lines.next()
		if err == io.EOF {
			return flush()
		}
		if err != nil {
			return err
		}
		if header {
			if err := flush(); err != nil {
				return err
			}
			continue
		}
		id, command, arg, ok := generalEntry(line)
		if !ok || have && lex.open() {
			// A line of the statement's text, even one that looks like an entry line: the
			// server writes the next entry after the whole text, which ends outside strings
			// and comments.
			if have {
				if ok {
					entries++
				}
				text = append(append(text, '\n'), line...)
				lex.feed([]byte{'\n'})
				lex.feed(line)
				if len(text) > maxLogStatement {
					return errOpenStatement(pending.seq)
				}
			}
			continue
		}
		if have && lex.openByDefault() {
			pending.unclear = "it ends at an entry line while a string or comment is open in it " + openByDefault + ": read so, the line is its text"
		}
		if err := flush(); err != nil {
			return err
		}
		switch command {
		case "Query", "Execute", "Prepare":
			seq++
			pending, cmd = entry{kind: entryStatement, session: id, count: 1, seq: seq}, command
			text, have, entries = append(text[:0], arg...), true, 0
			lex = newLexStateFor(conn(id).backslash)
			lex.feed(arg)
		case "Init DB":
			conn(id).other()
			if err := send(entry{kind: entryStatement, session: id, text: "USE `" + strings.ReplaceAll(string(arg), "`", "``") + "`"}); err != nil {
				return err
			}
		case "Connect", "Change user", "Reset connection":
			// Change user and Reset connection start the server session anew: a new client
			// session, as the application sees it, which has prepared nothing.
			conns[id] = &preparedConn{fromStart: true}
			if err := send(entry{kind: entryConnect, session: id, user: connectUser(arg)}); err != nil {
				return err
			}
		case "Quit":
			delete(conns, id)
			if err := send(entry{kind: entryQuit, session: id}); err != nil {
				return err
			}
		default:
			conn(id).other()
			st.ignore(command)
		}
	}
}

// readSlowLog reads a slow query log (long_query_time=0 logs every statement): per statement
// a "# User@Host:" header (with the connection id in "# Thread_id:" for MariaDB, in "Id:" for
// MySQL; MySQL's log_slow_extra adds the statement's error, "Errno:", to "# Query_time:"), the
// "use db;" and "SET timestamp=…;" lines the server adds, and the statement. The server writes
// each statement of a text of several (multiStatements) as an entry of its own, the text after
// a semicolon as it was: the line after "SET timestamp=…;" is the statement's, even one that
// looks like a header ("SELECT 1;\n# Time: …\nSELECT 2"), and an entry of comments only (the
// tail of "SELECT 1; -- done") is no statement.
func readSlowLog(r io.Reader, out sink) error {
	lines := &logLines{lines: newLineReader(r)}
	var (
		pending  entry
		body     []byte
		starts   []int // offsets in body of its lines
		have     bool
		inHeader bool
		needText bool // the server's lines are read: the next line is the statement's
		seq      uint64
		lex      lexState // of body
		entries  int      // lines of body that look like headers
		warnings bool     // in the header's warnings (log_slow_verbosity=warnings)
	)
	flush := func() error {
		if !have {
			return nil
		}
		have = false
		skip := 0 // the lines the server added
		switch {
		case len(starts) >= 2 && isSlowUse(slowLine(body, starts, 0)) && isSetTimestamp(slowLine(body, starts, 1)):
			skip = 2
		case len(starts) >= 1 && isSetTimestamp(slowLine(body, starts, 0)):
			skip = 1
		}
		from := len(body)
		if skip < len(starts) {
			from = starts[skip]
		}
		text := strings.TrimSpace(string(body[from:]))
		text = strings.TrimSpace(strings.TrimSuffix(text, ";"))
		if onlyComments([]byte(text)) {
			return nil
		}
		if entries > 0 {
			pending.unclear = fmt.Sprintf("its text holds %d line(s) that look like slow log headers, read as its text because a string or comment is open before them: if the application left a quote unbalanced, they are other statements", entries)
		}
		pending.text = text
		return out(pending)
	}
	for {
		line, header, err := lines.next()
		if err == io.EOF {
			return flush()
		}
		if err != nil {
			return err
		}
		if have && !inHeader && !needText && len(starts) > 0 && isSlowHeader(line) && lex.openByDefault() {
			pending.unclear = "it ends at a header line while a string or comment is open in it " + openByDefault + ": read so, the line is its text"
		}
		switch {
		case header:
			if err := flush(); err != nil {
				return err
			}
			inHeader = false
			continue
		case have && !inHeader && isSlowHeader(line) && (needText && !isAdminCommand(line) || len(starts) > 0 && lex.open()):
			// A line of the statement's text (its first, or inside one of its strings or
			// comments) that looks like a header. (MySQL writes a command that is not a
			// statement where the statement would be.)
			if !needText {
				entries++
			}
		case bytes.HasPrefix(line, []byte("# Time:")):
			if err := flush(); err != nil {
				return err
			}
			inHeader = false
			continue
		case bytes.HasPrefix(line, []byte("# User@Host:")):
			if err := flush(); err != nil {
				return err
			}
			seq++
			pending = entry{kind: entryStatement, user: slowUser(line), count: 1, seq: seq}
			if i := bytes.Index(line, []byte(" Id:")); i >= 0 {
				pending.session = leadingNumber(line[i+4:])
			}
			body, starts, have, inHeader, needText, entries, warnings = body[:0], starts[:0], true, true, false, 0, false
			lex = newLexState()
			continue
		case have && isAdminCommand(line):
			// MySQL's line for a command that is not a statement (log_slow_admin_statements).
			have = false
			if cmd := bytes.TrimPrefix(trimCR(line), []byte("# administrator command: ")); string(bytes.TrimSuffix(cmd, []byte(";"))) == "Quit" {
				if err := out(entry{kind: entryQuit, session: pending.session, seq: pending.seq}); err != nil {
					return err
				}
			}
			continue
		case inHeader && warnings && !bytes.HasPrefix(line, []byte("#")) && !isSlowUse(trimCR(line)) && !isSetTimestamp(trimCR(line)):
			// A warning's text goes on past a line end it quotes ("# Warning 1292 Truncated
			// incorrect DECIMAL value: 'a" then "SELECT 1 FROM x'"): the server writes the
			// statement after "SET timestamp=…;", which always comes first.
			continue
		case inHeader && bytes.HasPrefix(line, []byte("#")):
			if bytes.Equal(trimCR(line), []byte("# Warnings")) {
				warnings = true
			}
			// The header's lines: "# Thread_id:", "# Query_time:" …, and with
			// log_slow_verbosity=query_plan,explain the plan's lines and a lone "#".
			if v, ok := bytes.CutPrefix(line, []byte("# Thread_id:")); ok {
				pending.session = leadingNumber(v)
			}
			if bytes.HasPrefix(line, []byte("# Query_time:")) {
				if i := bytes.Index(line, []byte(" Errno: ")); i >= 0 {
					pending.errno = leadingNumber(line[i+len(" Errno: "):])
				}
			}
			continue
		}
		if !have {
			continue
		}
		inHeader = false
		switch n := len(starts); {
		case needText:
			needText = false
		case n == 0 && isSlowUse(trimCR(line)):
		case n <= 1 && isSetTimestamp(trimCR(line)):
			needText = true
		}
		starts = append(starts, len(body))
		body = append(append(body, line...), '\n')
		lex.feed(line)
		lex.feed([]byte{'\n'})
		if len(body) > maxLogStatement {
			return errOpenStatement(pending.seq)
		}
	}
}

// maxLogStatement bounds a statement of a log (maxStatement; a variable for the tests).
var maxLogStatement = maxStatement

// errOpenStatement is the error of a log statement longer than maxLogStatement: a string or
// comment its application left open would make the rest of the log its text.
func errOpenStatement(seq uint64) error {
	return fmt.Errorf("statement %d of the log is longer than %d MiB: a string or comment left open in it would hold the log's next entries (give -format if the log is not what was detected)", seq, maxLogStatement>>20)
}

// isSlowHeader reports whether line starts a slow log entry or its time.
func isSlowHeader(line []byte) bool {
	return bytes.HasPrefix(line, []byte("# User@Host:")) || bytes.HasPrefix(line, []byte("# Time:")) || isAdminCommand(line)
}

// isAdminCommand reports whether line is MySQL's slow log line of a command that is not a
// statement.
func isAdminCommand(line []byte) bool {
	return bytes.HasPrefix(line, []byte("# administrator command: "))
}

// lexState follows, byte by byte, whether a statement's text so far ends inside a string, a
// quoted identifier or a comment, both as the server reads it with backslash escapes and
// under NO_BACKSLASH_ESCAPES (a session's sql_mode is not known here).
type lexState struct {
	modes [2]lexMode // with backslash escapes, without
}

type lexMode struct {
	quote      byte // the quote of the string or identifier the text is in, 0 outside
	block      bool // in a /* */ comment
	blockN     int  // bytes of the comment read
	exec       bool // in a /*! */ or /*M! */ comment, whose text the server runs as SQL
	line       bool // in a comment to the line's end
	esc        bool // after a backslash in a string
	backslash  bool // backslashes escape in strings
	prev, prv2 byte
}

func newLexState() lexState {
	return lexState{modes: [2]lexMode{{backslash: true}, {}}}
}

// feed reads more of the text.
func (l *lexState) feed(b []byte) {
	for m := range l.modes {
		l.modes[m].feed(b)
	}
}

func (m *lexMode) feed(b []byte) {
	for _, c := range b {
		switch {
		case m.quote != 0:
			switch {
			case m.esc:
				m.esc = false
			case m.backslash && c == '\\' && m.quote != '`':
				m.esc = true
			case c == m.quote:
				m.quote = 0 // a doubled quote opens it again at once
			}
		case m.block:
			m.blockN++
			switch {
			case m.prev == '*' && c == '/':
				m.block = false
				c = 0 // "*/*" does not open another
			case c == '!' && (m.blockN == 1 || m.blockN == 2 && m.prev == 'M'):
				// /*! and /*M!: the server reads the comment's text as SQL, strings
				// included (a string in it may hold "*/").
				m.block, m.exec = false, true
			}
		case m.line:
			if c == '\n' {
				m.line = false
			}
		case c == '\'' || c == '"' || c == '`':
			m.quote = c
		case m.exec && m.prev == '*' && c == '/':
			m.exec = false
			c = 0
		case c == '*' && m.prev == '/':
			m.block, m.blockN = true, 0
			c = 0
		case c == '#':
			m.line = true
		case c <= ' ' && c != '\n' && m.prev == '-' && m.prv2 == '-':
			// "--" then a space or a control character (MariaDB's my_isspace and
			// my_iscntrl): a comment to the line's end.
			m.line = true
		}
		m.prv2, m.prev = m.prev, c
	}
}

// newLexStateFor is newLexState for a session whose sql_mode is known: backslash 1, strings
// with backslash escapes; 2, under NO_BACKSLASH_ESCAPES; 0, not known (both readings).
func newLexStateFor(backslash int8) lexState {
	l := newLexState()
	switch backslash {
	case 1:
		l.modes[1] = l.modes[0]
	case 2:
		l.modes[0] = l.modes[1]
	}
	return l
}

// openByDefault reports whether the text so far ends inside a string, quoted identifier or
// comment as the server reads it by default, with backslash escapes, and outside them under
// NO_BACKSLASH_ESCAPES: the next entry line ends the statement (open reads so), though it is
// the statement's text if its session reads backslash escapes, as the default sql_mode does.
// (Open under NO_BACKSLASH_ESCAPES only, as 'it\'s' is, the line is an entry in the default
// reading too.)
func (l *lexState) openByDefault() bool { return l.modes[0].open() && !l.modes[1].open() }

// openByDefault is what the report says of a statement lexState.openByDefault cut.
const openByDefault = "when read with backslash escapes (the default sql_mode) and closed under NO_BACKSLASH_ESCAPES, neither of which the log says of its session"

func (m *lexMode) open() bool { return m.quote != 0 || m.block || m.exec }

// open reports whether the text so far ends inside a string, quoted identifier or comment in
// both readings: then the server has not logged the whole statement yet, and a line after it
// that looks like a log entry is still its text. (Open in one reading only, it ends at the
// next entry line.)
func (l *lexState) open() bool {
	for _, m := range l.modes {
		if !m.open() {
			return false
		}
	}
	return true
}

// setSQLMode matches a SET of the session's sql_mode to a literal (SET sql_mode = '…', SET
// SESSION sql_mode = …, SET @@sql_mode = …), as its only assignment.
var setSQLMode = regexp.MustCompile(`(?i)^\s*SET\s+(?:SESSION\s+|@@(?:SESSION\.)?|LOCAL\s+|@@LOCAL\.)?sql_mode\s*=\s*'([^'\\]*)'\s*$`)

// slowLine returns line i of a slow log entry's body, without its line end.
func slowLine(body []byte, starts []int, i int) []byte {
	end := len(body)
	if i+1 < len(starts) {
		end = starts[i+1]
	}
	return trimCR(bytes.TrimSuffix(body[starts[i]:end], []byte{'\n'}))
}

var (
	slowUseLine      = regexp.MustCompile("^use `?[^`;]*`?;$")
	setTimestampLine = regexp.MustCompile(`^SET (last_insert_id=\d+,)?(insert_id=\d+,)?timestamp=\d+;$`)
)

func isSlowUse(line []byte) bool      { return slowUseLine.Match(line) }
func isSetTimestamp(line []byte) bool { return setTimestampLine.Match(line) }
func leadingNumber(b []byte) uint64 {
	b = bytes.TrimLeft(b, " \t")
	i := 0
	for i < len(b) && isDigitByte(b[i]) {
		i++
	}
	n, _ := strconv.ParseUint(string(b[:i]), 10, 64)
	return n
}

// slowUser reads the user of "# User@Host: app[app] @ host [10.0.0.5]".
func slowUser(line []byte) string {
	rest := bytes.TrimSpace(bytes.TrimPrefix(line, []byte("# User@Host:")))
	if i := bytes.IndexAny(rest, "[ "); i >= 0 {
		rest = rest[:i]
	}
	return string(rest)
}

// maxStatement bounds a statement of a file of statements: past it, a string or comment left
// open is the likelier cause.
const maxStatement = 64 << 20

var delimiterLine = regexp.MustCompile(`(?i)^\s*delimiter\s+(\S+)\s*$`)

// readStatements reads a file of statements as one client session: statements ended by ";"
// (not inside strings, comments or the body of a stored program: routing.SplitScript), with the
// mysql client's DELIMITER lines followed; or, when no line of the file's start ends with ";",
// one statement per line.
func readStatements(r io.Reader, out sink) error {
	br := bufio.NewReaderSize(r, 1<<20)
	head, _ := br.Peek(1 << 20)
	script := hasDelimiterLine(head) || endsALine(head, ';')
	lines := &lineReader{r: br}
	var (
		seq       uint64
		pending   []byte
		delimiter = ";"
	)
	emit := func(text string) error {
		if text = strings.TrimSpace(text); text == "" {
			return nil
		}
		seq++
		return out(entry{kind: entryStatement, session: 1, text: text, count: 1, seq: seq})
	}
	emitAll := func(texts []string) error {
		for _, t := range texts {
			if err := emit(t); err != nil {
				return err
			}
		}
		return nil
	}
	for {
		line, err := lines.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		line = trimCR(line)
		if !script {
			stmts, rest, open := routing.SplitScript(string(line))
			if err := emitAll(stmts); err != nil {
				return err
			}
			if err := emitRest(rest, open, emit); err != nil {
				return err
			}
			continue
		}
		if m := delimiterLine.FindSubmatch(line); m != nil && onlyComments(pending) {
			delimiter, pending = string(m[1]), pending[:0]
			continue
		}
		pending = append(append(pending, line...), '\n')
		if len(pending) > maxStatement {
			return fmt.Errorf("statement %d is longer than %d MiB: is a string or a comment left open?", seq+1, maxStatement>>20)
		}
		if delimiter != ";" {
			if !bytes.Contains(line, []byte(delimiter)) {
				continue
			}
			stmts, rest := splitDelimited(pending, delimiter)
			if err := emitAll(stmts); err != nil {
				return err
			}
			pending = append(pending[:0], rest...)
			continue
		}
		if bytes.IndexByte(line, ';') < 0 {
			continue
		}
		stmts, rest, _ := routing.SplitScript(string(pending))
		if err := emitAll(stmts); err != nil {
			return err
		}
		pending = append(pending[:0], rest...)
	}
	_, _, open := routing.SplitScript(string(pending))
	return emitRest(string(pending), open, emit)
}

// emitRest emits the statement left after a script's last semicolon, if it holds one: all of
// it when a string or comment is left open in it (the server refuses it; the application sent
// it all the same).
func emitRest(rest string, open bool, emit func(string) error) error {
	if open {
		return emit(rest)
	}
	stmts, _, _ := routing.SplitScript(rest + "\n;")
	for _, s := range stmts {
		if err := emit(s); err != nil {
			return err
		}
	}
	return nil
}

// onlyComments reports whether text holds nothing but blanks and comments: a DELIMITER line
// after it is the client's command, not a statement's text.
func onlyComments(text []byte) bool {
	t := strings.TrimRight(string(text), " \t\r\n")
	return hint.StatementStart(t) >= len(t)
}

// hasDelimiterLine reports whether a line of b is a DELIMITER command.
func hasDelimiterLine(b []byte) bool {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if delimiterLine.Match(line) {
			return true
		}
	}
	return false
}

// splitDelimited splits text at each delimiter outside strings, quoted identifiers and
// comments, as the mysql client does under DELIMITER: the statements before each, trimmed,
// and the text after the last.
func splitDelimited(text []byte, delimiter string) (stmts []string, rest []byte) {
	start := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for ; j < len(text) && text[j] != c; j++ {
				if text[j] == '\\' && c != '`' {
					j++
				}
			}
			i = j
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			end := bytes.Index(text[i+2:], []byte("*/"))
			if end < 0 {
				return stmts, text[start:]
			}
			i += 2 + end + 1
		case c == '#' || c == '-' && i+2 < len(text) && text[i+1] == '-' && (text[i+2] == ' ' || text[i+2] == '\t'):
			end := bytes.IndexByte(text[i:], '\n')
			if end < 0 {
				return stmts, text[start:]
			}
			i += end
		case bytes.HasPrefix(text[i:], []byte(delimiter)):
			if s := strings.TrimSpace(string(text[start:i])); s != "" {
				stmts = append(stmts, s)
			}
			start = i + len(delimiter)
			i = start - 1
		}
	}
	if start >= len(text) {
		return stmts, nil
	}
	return stmts, text[start:]
}

// endsALine reports whether a line of b ends with c, blanks after it aside.
func endsALine(b []byte, c byte) bool {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if t := bytes.TrimRight(line, " \t\r"); len(t) > 0 && t[len(t)-1] == c {
			return true
		}
	}
	return false
}

// digestQuery reads the statement digests, the most frequent first.
const digestQuery = `SELECT COALESCE(SCHEMA_NAME, ''), DIGEST_TEXT, COUNT_STAR
FROM performance_schema.events_statements_summary_by_digest
WHERE DIGEST_TEXT IS NOT NULL AND COUNT_STAR > 0 AND (? = '' OR SCHEMA_NAME = ?)
ORDER BY COUNT_STAR DESC, DIGEST_TEXT`

var (
	digestValues  = regexp.MustCompile(`(?i)\bVALUES?\s*\(\s*\.\.\.\s*\)`) // VALUES (...): a row of literals
	digestList    = regexp.MustCompile(`\(\s*\.\.\.\s*\)`)                 // IN (...): a list of literals
	digestMore    = regexp.MustCompile(`,\s*\.\.\.\s*`)                    // ( ?, ... , NOW ( ) ): more of the same
	digestUnit    = regexp.MustCompile(`\bSQL_TSI_([A-Z]+)\b`)             // INTERVAL ? SQL_TSI_DAY: the parser's token name
	digestUserVar = regexp.MustCompile(`@\?`)                              // a user variable's name
)

// digestStatement is a digest's text as a statement template, each ? a value the digest
// replaced: a row of VALUES (...) written with one ? per column of the INSERT's column list
// (one ? without a list), a list IN (...) as (?), interval units by their SQL names, a user
// variable @? named @digest_var (a route never depends on a user variable's name).
// truncated is set when performance_schema cut the text short
// (performance_schema_max_digest_length).
func digestStatement(text string) (stmt string, truncated bool) {
	text = strings.TrimSpace(text)
	if strings.HasSuffix(text, "...") && !strings.HasSuffix(text, "(...)") {
		return text, true
	}
	var b strings.Builder
	last := 0
	for _, m := range digestValues.FindAllStringIndex(text, -1) {
		open := strings.IndexByte(text[m[0]:m[1]], '(') + m[0]
		b.WriteString(text[last:open])
		b.WriteString("(" + strings.Repeat("?, ", columnsBefore(text[:m[0]])-1) + "?)")
		last = m[1]
	}
	text = b.String() + text[last:]
	text = digestList.ReplaceAllString(text, "(?)")
	text = digestMore.ReplaceAllString(text, "")
	text = digestUnit.ReplaceAllString(text, "$1")
	return digestUserVar.ReplaceAllString(text, "@digest_var"), false
}

// columnsBefore counts the columns of the parenthesized list that ends text (an INSERT's column
// list before VALUES); 1 when text does not end with one.
func columnsBefore(text string) int {
	text = strings.TrimRight(text, " ")
	if !strings.HasSuffix(text, ")") {
		return 1
	}
	depth, commas := 0, 0
	for i := len(text) - 1; i >= 0; i-- {
		switch text[i] {
		case ')':
			depth++
		case '(':
			if depth--; depth == 0 {
				return commas + 1
			}
		case ',':
			if depth == 1 {
				commas++
			}
		}
	}
	return 1
}

// readDigests reads performance_schema.events_statements_summary_by_digest on the server of
// dsn (a go-sql-driver DSN), each digest a statement of its own client session weighing its
// COUNT_STAR; schema, when set, keeps that schema's digests only.
func readDigests(ctx context.Context, dsn, schema string, out sink) error {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return fmt.Errorf("-digests: not a go-sql-driver DSN (user:password@tcp(host:3306)/): %w", config.ScrubError(err, secretsOf(dsn, nil)))
	}
	secrets := secretsOf(dsn, cfg)
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return fmt.Errorf("-digests: %w", config.ScrubError(err, secrets))
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	rows, err := db.QueryContext(ctx, digestQuery, schema, schema)
	if err != nil {
		return fmt.Errorf("-digests: reading performance_schema.events_statements_summary_by_digest on %s: %w", cfg.Addr, config.ScrubError(err, secrets))
	}
	defer rows.Close()
	var seq uint64
	for rows.Next() {
		var (
			schemaName, text string
			count            int64
		)
		if err := rows.Scan(&schemaName, &text, &count); err != nil {
			return err
		}
		stmt, truncated := digestStatement(text)
		seq++
		for _, e := range []entry{
			{kind: entryConnect, session: seq, seq: seq},
			{kind: entryStatement, session: seq, text: stmt, count: count, seq: seq, truncated: truncated},
			{kind: entryQuit, session: seq, seq: seq},
		} {
			if err := out(e); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return config.ScrubError(err, secrets)
	}
	if seq == 0 {
		return fmt.Errorf("-digests: performance_schema.events_statements_summary_by_digest on %s has no digest%s: is performance_schema on (SHOW VARIABLES LIKE 'performance_schema')?", cfg.Addr, map[bool]string{true: " of schema " + schema}[schema != ""])
	}
	return nil
}

// secretsOf lists the password of a DSN, for scrubbing errors.
func secretsOf(dsn string, cfg *mysql.Config) []string {
	if cfg != nil && cfg.Passwd != "" {
		return []string{cfg.Passwd}
	}
	if at := strings.LastIndexByte(dsn, '@'); at > 0 {
		if colon := strings.IndexByte(dsn[:at], ':'); colon >= 0 {
			return []string{dsn[colon+1 : at]}
		}
	}
	return nil
}
