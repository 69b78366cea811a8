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
// from a file, ReadGeneralTable from mysql.general_log.
//
// Mapping: Connect -> connect (user, db from "user@host on db using ..."; an
// "Access denied" Connect -> quit), Init DB -> query "USE `db`", Query ->
// query, Prepare -> prepare (SQL with ?), Execute -> execute with SQL = the
// text the server ran (parameters substituted; the log has no statement id,
// so Name is empty: a replay runs the text), Quit -> quit. Close stmt has no
// statement id in the log and other commands (Ping, Statistics, ...) are
// not SQL: they are counted in Stats.Ignored. A thread id seen again after
// its Quit, or in a new Connect, starts a new session "ID.N".
type General struct {
	in       *capture.Input
	emit     func(*capture.Record) error
	sessions map[string]*session
	rec      capture.Record
	line     int64 // of the entry Entry is given, when known
}

type session struct {
	key      string
	db, user string
	gen      int
	quit     bool
	seen     bool
}

// NewGeneral returns a General writing records to emit.
func NewGeneral(in *capture.Input, emit func(*capture.Record) error) *General {
	return &General{in: in, emit: emit, sessions: map[string]*session{}}
}

// Entry handles one entry: at in Unix microseconds, the thread id, the
// command name and its argument.
func (g *General) Entry(at int64, id, command, arg string) error {
	s := g.sessions[id]
	if s == nil {
		s = &session{key: id}
		g.sessions[id] = s
	} else if (command == "Connect" && s.seen && !strings.HasPrefix(arg, "Access denied")) || s.quit {
		s.gen++
		*s = session{key: id + "." + strconv.Itoa(s.gen+1), gen: s.gen}
	}
	s.seen = true
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
	return g.emit(r)
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
// older (YYMMDD HH:MM:SS, only when the second changes). Lines that do not
// start an entry continue the previous entry's argument (multi-line
// statements); the server's start-up banner (written at every log open) is
// skipped.
func ParseGeneral(r io.Reader, in *capture.Input, emit func(*capture.Record) error) error {
	g := NewGeneral(in, emit)
	lr := capture.NewLineReader(r)
	var arena capture.Arena
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
	)
	flush := func() error {
		if !pend {
			return nil
		}
		pend = false
		g.line = pLine
		return g.Entry(pAt, pID, pCmd, arena.String(pArg))
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
			if bytes.HasPrefix(line, []byte("Tcp port:")) || (bytes.HasPrefix(line, []byte("Time ")) || bytes.HasPrefix(line, []byte("Time\t"))) {
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
			if kind == lineEntryNoTime {
				if !haveT {
					// MariaDB writes a time on the first entry of a file;
					// a file cut mid-second starts without one.
					if err := in.Bad(lr.N, "entry without a timestamp before any timestamped entry"); err != nil {
						return err
					}
					if err := flush(); err != nil {
						return err
					}
					continue
				}
				at = last
			} else {
				last, haveT = at, true
			}
			if err := flush(); err != nil {
				return err
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
	return flush()
}

type lineKind int

const (
	lineOther lineKind = iota
	lineEntry
	lineEntryNoTime
	lineBadTime
)

// splitGeneral splits an entry line "TIME\t  ID Command\tArgument" (TIME
// ISO-8601, YYMMDD HH:MM:SS or empty as "\t").
func splitGeneral(line []byte, ts *timeCache, loc *time.Location) (at int64, id []byte, cmd string, arg []byte, kind lineKind) {
	rest := line
	kind = lineEntry
	switch {
	case len(line) > 0 && line[0] == '\t':
		kind = lineEntryNoTime
		rest = bytes.TrimLeft(line, "\t")
	case len(line) >= 15 && isDigit(line[0]):
		tab := bytes.IndexByte(line, '\t')
		if tab < 0 {
			return 0, nil, "", nil, lineOther
		}
		var ok bool
		at, ok = ts.parse(line[:tab], loc)
		if !ok {
			if looksLikeTime(line[:tab]) {
				return 0, nil, "", nil, lineBadTime
			}
			return 0, nil, "", nil, lineOther
		}
		rest = line[tab+1:]
	default:
		return 0, nil, "", nil, lineOther
	}
	rest = bytes.TrimLeft(rest, " ")
	n := 0
	for n < len(rest) && isDigit(rest[n]) {
		n++
	}
	if n == 0 || n >= len(rest) || rest[n] != ' ' {
		return 0, nil, "", nil, lineOther
	}
	id = rest[:n]
	rest = rest[n+1:]
	tab := bytes.IndexByte(rest, '\t')
	c := rest
	if tab >= 0 {
		c, arg = rest[:tab], rest[tab+1:]
	}
	cmd, ok := commandName(c)
	if !ok {
		return 0, nil, "", nil, lineOther
	}
	return at, id, cmd, arg, kind
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
