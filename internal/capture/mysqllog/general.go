// Package mysqllog reads the logs of MySQL-family servers (MySQL,
// Percona Server, MariaDB) into capture records: the general query log
// (file or table) and the slow query log.
package mysqllog

import (
	"bytes"

	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
)

// commands are the general log's command names (COM_* as the server
// names them); a line is an entry only if its command is one of them.
var commands = map[string]bool{
	"Sleep": true, "Quit": true, "Init DB": true, "Query": true, "Field List": true, "Create DB": true,
	"Drop DB": true, "Refresh": true, "Shutdown": true, "Statistics": true, "Processlist": true,
	"Connect": true, "Kill": true, "Debug": true, "Ping": true, "Time": true, "Delayed insert": true,
	"Change user": true, "Binlog Dump": true, "Table Dump": true, "Connect Out": true,
	"Register Slave": true, "Prepare": true, "Execute": true, "Long Data": true, "Close stmt": true,
	"Reset stmt": true, "Set option": true, "Fetch": true, "Daemon": true, "Reset connection": true,
	"Error": true, "Bulk_execute": true, "Com_multi": true, "Binlog Dump GTID": true,
	"Clone": true, "Group Replication Data Stream": true, "Unimpl get tid": true,
}

// General turns general log entries into records; ParseGeneral feeds it
// from a file, ReadGeneralTable from mysql.general_log. After the last
// entry, End emits what is still held.
//
// Mapping: Connect -> connect (user, db from "user@host on db using ..."; an
// "Access denied" Connect -> quit), Init DB -> query "USE `db`", Query ->
// query, Prepare -> prepare (SQL with ?), Execute -> execute with SQL = the
// text the server ran (parameters substituted; the log has no statement id,
// so Name is empty: a replay runs the text), Quit -> quit. Close stmt has no
// statement id in the log and other commands (Ping, Statistics, ...) are
// not SQL: they are counted in Stats.Ignored. A thread id seen again after
// its Quit, or in a new Connect, starts a new session "ID.N".
//
// SQL-level prepared statements: the server logs a Query "PREPARE s FROM
// ..." and then its own Prepare line, a Query "EXECUTE s [USING ...]" and
// then its own Execute line with the parameters substituted (EXECUTE
// IMMEDIATE: Query, Prepare, Execute). Each execution is kept once: the
// PREPARE query (the statement exists on the replaying connection, as
// DEALLOCATE expects), not its Prepare echo; the Execute line (the SQL that
// ran, as text: it needs neither the statement nor the user variables, and
// a replay can check it, where it skips an EXECUTE IMMEDIATE of text it
// cannot see), not the EXECUTE query. An EXECUTE query with no Execute line
// after it in its session (it failed: unknown statement) is kept.
type General struct {
	in       *capture.Input
	emit     func(*capture.Record) error
	sessions map[string]*session
	rec      capture.Record
	line     int64 // of the entry Entry is given, when known
	holding  []*session
}

type session struct {
	key      string
	db, user string
	gen      int
	quit     bool
	seen     bool
	// echo is what the server logs next for the SQL-level PREPARE or
	// EXECUTE the session just sent: echoPrepare and/or echoExecute.
	echo uint8
	// held is the session's SQL-level EXECUTE query, kept back until its
	// next entry says whether the server logged its Execute line.
	held   *capture.Record
	listed bool // in General.holding
}

const (
	echoPrepare uint8 = 1 << iota
	echoExecute
)

// NewGeneral returns a General writing records to emit.
func NewGeneral(in *capture.Input, emit func(*capture.Record) error) *General {
	return &General{in: in, emit: emit, sessions: map[string]*session{}}
}

// End emits the SQL-level EXECUTE queries still held (their session logged
// nothing after them); call it after the last Entry.
func (g *General) End() error {
	for _, s := range g.holding {
		if err := g.release(s); err != nil {
			return err
		}
	}
	g.holding = g.holding[:0]
	return nil
}

// release emits s's held record, if any.
func (g *General) release(s *session) error {
	if s.held == nil {
		return nil
	}
	h := s.held
	s.held = nil
	return g.emit(h)
}

// Entry handles one entry: at in Unix microseconds, the thread id, the
// command name and its argument.
func (g *General) Entry(at int64, id, command, arg string) error {
	s := g.sessions[id]
	if s == nil {
		s = &session{key: id}
		g.sessions[id] = s
	} else if (command == "Connect" && s.seen && !strings.HasPrefix(arg, "Access denied")) || s.quit {
		if err := g.release(s); err != nil {
			return err
		}
		s.gen++
		*s = session{key: id + "." + strconv.Itoa(s.gen+1), gen: s.gen, listed: s.listed}
	}
	s.seen = true
	echo := s.echo
	s.echo = 0
	if command == "Prepare" && echo&echoPrepare != 0 {
		s.echo = echo &^ echoPrepare
		g.in.Ignore("general log Prepare line of a SQL-level PREPARE")
		return nil
	}
	if s.held != nil {
		if command == "Execute" && echo&echoExecute != 0 {
			s.held = nil
			g.in.Ignore("general log SQL-level EXECUTE query (its Execute line is kept)")
		} else if err := g.release(s); err != nil {
			return err
		}
	}
	hold := false
	if command == "Query" {
		s.echo = sqlPrepared(arg)
		hold = s.echo&echoExecute != 0
	}
	r := &g.rec
	*r = capture.Record{At: at, Line: g.line}
	switch command {
	case "Connect":
		if strings.HasPrefix(arg, "Access denied") {
			r.Kind = capture.KindQuit
			s.quit = true
			break
		}
		s.user, s.db = parseConnect(arg)
		r.Kind = capture.KindConnect
	case "Init DB":
		s.db = arg
		r.Kind, r.SQL = capture.KindQuery, "USE `"+strings.ReplaceAll(arg, "`", "``")+"`"
	case "Query":
		r.Kind, r.SQL = capture.KindQuery, arg
		if db, ok := useDB(arg); ok {
			s.db = db
		}
	case "Prepare":
		r.Kind, r.SQL = capture.KindPrepare, arg
	case "Execute":
		r.Kind, r.SQL = capture.KindExecute, arg
	case "Quit":
		r.Kind = capture.KindQuit
		s.quit = true
	default:
		g.in.Ignore("general log " + command)
		return nil
	}
	if (r.Kind == capture.KindQuery || r.Kind == capture.KindPrepare || r.Kind == capture.KindExecute) && r.SQL == "" {
		g.in.Ignore("general log empty " + command)
		return nil
	}
	r.Session, r.DB, r.User = s.key, s.db, s.user
	if hold {
		h := *r
		s.held = &h
		if !s.listed {
			s.listed = true
			g.holding = append(g.holding, s)
		}
		return nil
	}
	return g.emit(r)
}

// sqlPrepared says which lines the server logs after a Query line that is
// a SQL-level PREPARE (Prepare), EXECUTE (Execute) or EXECUTE IMMEDIATE
// (both).
func sqlPrepared(sql string) uint8 {
	w1, rest := firstWord(sql)
	switch {
	case strings.EqualFold(w1, "PREPARE"):
		return echoPrepare
	case strings.EqualFold(w1, "EXECUTE"):
		if w2, _ := firstWord(rest); strings.EqualFold(w2, "IMMEDIATE") {
			return echoPrepare | echoExecute
		}
		return echoExecute
	}
	return 0
}

// firstWord returns the first word of sql after blanks and comments, and
// what follows it.
func firstWord(sql string) (string, string) {
	for {
		sql = strings.TrimLeft(sql, " \t\r\n")
		switch {
		case strings.HasPrefix(sql, "/*") && !strings.HasPrefix(sql, "/*!"):
			i := strings.Index(sql[2:], "*/")
			if i < 0 {
				return "", ""
			}
			sql = sql[i+4:]
			continue
		case strings.HasPrefix(sql, "#") || strings.HasPrefix(sql, "-- "):
			i := strings.IndexByte(sql, '\n')
			if i < 0 {
				return "", ""
			}
			sql = sql[i+1:]
			continue
		}
		i := 0
		for i < len(sql) && (sql[i] == '_' || sql[i] >= 'A' && sql[i] <= 'Z' || sql[i] >= 'a' && sql[i] <= 'z') {
			i++
		}
		return sql[:i], sql[i:]
	}
}

// parseConnect reads "user@host on db using Socket" (also "user@host as
// anon on db ...").
func parseConnect(arg string) (user, db string) {
	if i := strings.IndexByte(arg, '@'); i >= 0 {
		user = arg[:i]
	}
	if i := strings.Index(arg, " on "); i >= 0 {
		db = arg[i+4:]
		if j := strings.Index(db, " using "); j >= 0 {
			db = db[:j]
		}
		db = strings.TrimSpace(db)
	}
	return user, db
}

// useDB recognises "USE db" (the default database change a replay must
// follow).
func useDB(sql string) (string, bool) {
	if len(sql) < 5 || !strings.EqualFold(sql[:4], "use ") {
		return "", false
	}
	db := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(sql[4:]), ";"))
	db = strings.Trim(db, "`")
	return db, db != ""
}

// ParseGeneral reads a general query log file (log_output=FILE) of MySQL
// 5.7+/8 (ISO-8601 timestamps on every line) or MariaDB / MySQL 5.6 and
// older (YYMMDD HH:MM:SS, only when the second changes; MySQL 5.0/5.1
// padded the time, id and command with spaces instead of tabs). Lines that
// do not start an entry continue the previous entry's argument (multi-line
// statements); the server's start-up banner (written at every log open) is
// skipped. Entries before the first timestamp (a file that starts within a
// second) take the first timestamp that follows; a log with no timestamp
// at all has its entries at Unix time 0, in order, with a warning.
func ParseGeneral(r io.Reader, in *capture.Input, emit func(*capture.Record) error) error {
	g := NewGeneral(in, emit)
	lr := capture.NewLineReader(r)
	var arena capture.Arena
	type early struct {
		line         int64
		id, cmd, arg string
	}
	var (
		ts      timeCache
		last    int64 // time of the last timestamped entry
		haveT   bool
		pend    bool
		pLine   int64
		pAt     int64
		pID     string
		pCmd    string
		pArg    []byte
		banner  int
		lastIDb []byte
		before  []early // entries before the first timestamp
	)
	flush := func() error {
		if !pend {
			return nil
		}
		pend = false
		if !haveT {
			before = append(before, early{pLine, pID, pCmd, arena.String(pArg)})
			return nil
		}
		g.line = pLine
		return g.Entry(pAt, pID, pCmd, arena.String(pArg))
	}
	drain := func(at int64) error {
		for _, e := range before {
			g.line = e.line
			if err := g.Entry(at, e.id, e.cmd, e.arg); err != nil {
				return err
			}
		}
		before = nil
		return nil
	}
	var lastLine []byte
	for {
		line, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", in.Name, err)
		}
		lastLine = line
		if in.Stats != nil {
			in.Stats.Lines++
		}
		if banner > 0 {
			banner--
			if bannerLine(line) {
				continue
			}
		}
		if bytes.HasSuffix(line, []byte("started with:")) && bytes.Contains(line, []byte(", Version: ")) {
			if err := flush(); err != nil {
				return err
			}
			banner = 2
			continue
		}
		at, id, cmd, arg, kind := splitGeneral(line, &ts, in.Location())
		switch kind {
		case lineEntry, lineEntryNoTime:
			if err := flush(); err != nil {
				return err
			}
			if kind == lineEntryNoTime {
				at = last
			} else {
				last = at
				if !haveT {
					haveT = true
					if err := drain(at); err != nil {
						return err
					}
				}
			}
			pend, pLine, pAt, pCmd = true, lr.N, at, cmd
			if !bytes.Equal(id, lastIDb) {
				lastIDb = append(lastIDb[:0], id...)
				pID = string(id)
			}
			pArg = append(pArg[:0], arg...)
		case lineBadTime:
			if err := in.Bad(lr.N, "bad timestamp in general log entry %q", truncate(line)); err != nil {
				return err
			}
			if err := flush(); err != nil {
				return err
			}
		default:
			if !pend {
				if len(bytes.TrimSpace(line)) == 0 {
					continue
				}
				if err := in.Bad(lr.N, "not a general log entry: %q", truncate(line)); err != nil {
					return err
				}
				continue
			}
			pArg = append(pArg, '\n')
			pArg = append(pArg, line...)
		}
	}
	if lr.Partial && pend && len(bytes.TrimSpace(lastLine)) > 0 {
		// The last line was cut off: the entry it starts or continues
		// is incomplete, not one to glue to what came before.
		in.CutOff(lr.N, pLine)
		pend = false
	}
	if err := flush(); err != nil {
		return err
	}
	if len(before) > 0 {
		in.Warn(before[0].line, "no timestamp in the log: its %d entries are at Unix time 0, in log order", len(before))
		if err := drain(0); err != nil {
			return err
		}
	}
	return g.End()
}

// bannerLine says whether line is the second or third line of a server's
// start-up banner ("Tcp port: ...", Windows' "TCP Port: 3306, Named Pipe:
// ...", "Time  Id Command  Argument").
func bannerLine(line []byte) bool {
	return bytes.HasPrefix(line, []byte("Tcp port:")) || bytes.HasPrefix(line, []byte("TCP Port:")) ||
		bytes.HasPrefix(line, []byte("Time ")) || bytes.HasPrefix(line, []byte("Time\t"))
}

type lineKind int

const (
	lineOther lineKind = iota
	lineEntry
	lineEntryNoTime
	lineBadTime
)

// splitGeneral splits an entry line "TIME\t  ID Command\tArgument": TIME is
// ISO-8601, YYMMDD H:MM:SS (any spaces between) or blank; MySQL 5.0/5.1
// separated the fields with spaces ("051007 21:55:24      42 Query
// SELECT 1"; "                 42 Quit").
func splitGeneral(line []byte, ts *timeCache, loc *time.Location) (at int64, id []byte, cmd string, arg []byte, kind lineKind) {
	rest := line
	kind = lineEntry
	switch {
	case len(line) > 0 && (line[0] == '\t' || line[0] == ' '):
		kind = lineEntryNoTime
		rest = bytes.TrimLeft(line, "\t ")
	case len(line) >= 15 && isDigit(line[0]):
		end := timeEnd(line)
		if end < 0 {
			return 0, nil, "", nil, lineOther
		}
		var ok bool
		at, ok = ts.parse(line[:end], loc)
		if !ok {
			if looksLikeTime(line[:end]) {
				return 0, nil, "", nil, lineBadTime
			}
			return 0, nil, "", nil, lineOther
		}
		rest = bytes.TrimLeft(line[end:], "\t ")
	default:
		return 0, nil, "", nil, lineOther
	}
	n := 0
	for n < len(rest) && isDigit(rest[n]) {
		n++
	}
	if n == 0 || n >= len(rest) || rest[n] != ' ' {
		return 0, nil, "", nil, lineOther
	}
	id = rest[:n]
	rest = bytes.TrimLeft(rest[n+1:], " ")
	if tab := bytes.IndexByte(rest, '\t'); tab >= 0 {
		if c, ok := commandName(rest[:tab]); ok {
			return at, id, c, rest[tab+1:], kind
		}
	}
	c, n, ok := paddedCommand(rest)
	if !ok {
		return 0, nil, "", nil, lineOther
	}
	return at, id, c, bytes.TrimLeft(rest[n:], " \t"), kind
}

// timeEnd returns where the timestamp at the start of line ends (a tab or
// a space follows it), or -1.
func timeEnd(line []byte) int {
	if len(line) >= 19 && line[4] == '-' && line[10] == 'T' {
		i := bytes.IndexAny(line, "\t ")
		if i < 0 {
			return -1
		}
		return i
	}
	if line[6] != ' ' {
		i := bytes.IndexByte(line, '\t')
		return i // a corrupt time before a tab is reported as such
	}
	i := 6
	for i < len(line) && line[i] == ' ' {
		i++
	}
	for i < len(line) && (isDigit(line[i]) || line[i] == ':') {
		i++
	}
	if i == len(line) || (line[i] != '\t' && line[i] != ' ') {
		return -1
	}
	return i
}

// paddedCommand reads a command name followed by spaces, a tab or the end
// of the line (MySQL 5.0/5.1 padded "Query       SELECT 1"); names have up
// to four words ("Group Replication Data Stream"). It returns the name
// and its length.
func paddedCommand(rest []byte) (string, int, bool) {
	var ends [4]int
	k, i := 0, 0
	for k < 4 {
		for i < len(rest) && rest[i] != ' ' && rest[i] != '\t' {
			i++
		}
		ends[k] = i
		k++
		if i >= len(rest) || rest[i] != ' ' || i+1 >= len(rest) || rest[i+1] == ' ' || rest[i+1] == '\t' {
			break
		}
		i++
	}
	for j := k - 1; j >= 0; j-- {
		if c, ok := commandName(rest[:ends[j]]); ok {
			return c, ends[j], true
		}
	}
	return "", 0, false
}

// commandName returns the interned command name.
func commandName(c []byte) (string, bool) {
	switch string(c) { // no allocation: the compiler compares in place
	case "Query":
		return "Query", true
	case "Execute":
		return "Execute", true
	case "Prepare":
		return "Prepare", true
	case "Connect":
		return "Connect", true
	case "Quit":
		return "Quit", true
	}
	if len(c) > 32 || !commands[string(c)] {
		return "", false
	}
	return string(c), true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// truncate shortens a line quoted in an error, its passwords masked.
func truncate(b []byte) string {
	s, _ := capture.MaskPasswords(string(b))
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
