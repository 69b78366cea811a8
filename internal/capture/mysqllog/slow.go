package mysqllog

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/capture"
)

// ParseSlow reads a slow query log of every MySQL-family version: MySQL
// 5.0 to 8, Percona Server's and MariaDB's extended fields, written with
// long_query_time=0 to hold every statement. Every statement becomes a
// query record with dur_us (Query_time) and rows (Rows_affected when
// positive, else Rows_sent).
//
// "# Time:" is when a statement ended; servers write it only when the
// second changes (MySQL <= 5.6, MariaDB), so an entry without one ended in
// the second of the last one; entries before the first "# Time:" take the
// first that follows (or their SET timestamp, the start in seconds); a log
// with none has them at Unix time 0, with a warning. The record starts at
// that end minus Query_time. "# Time: ... # User@Host: ..." on one line
// (MySQL 5.0 replication threads) is read as the two. The pseudo-statements
// "use db;" and "SET timestamp=N;" (also with last_insert_id / insert_id),
// once each before the statement, are not statements; an entry with only
// a "use db;" (COM_INIT_DB) is the query "USE `db`".
//
// Sessions: the thread id (Thread_id: or Id:, MySQL >= 5.6, Percona,
// MariaDB); logs without one (stock MySQL <= 5.5) give a session per client:
// "# Client: host:port" when written, else "user@host" (its statements
// replay in order on one connection). A session gets a connect record at its
// first statement and a query "USE `db`" when its database changes (the slow
// log logs no connects); "# administrator command: Quit;" is its quit.
// Records come out in end order: the caller sorts them.
func ParseSlow(r io.Reader, in *capture.Input, emit func(*capture.Record) error) error {
	p := slowParser{in: in, emit: emit, sessions: map[string]*slowSession{}}
	lr := capture.NewLineReader(r)
	banner := 0
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
		if len(line) > 1 && line[0] == '#' && line[1] == ' ' {
			if err := p.comment(line, lr.N); err != nil {
				return err
			}
			continue
		}
		if bytes.HasSuffix(line, []byte("started with:")) && bytes.Contains(line, []byte(", Version: ")) {
			if err := p.flush(); err != nil {
				return err
			}
			banner = 2
			continue
		}
		if !p.open {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			if err := in.Bad(lr.N, "statement outside a slow log entry (no # User@Host: before it): %q", truncate(line)); err != nil {
				return err
			}
			continue
		}
		if p.body.Len() == 0 && p.pseudo(line) {
			continue
		}
		if p.body.Len() > 0 {
			p.body.WriteByte('\n')
		}
		p.body.Write(line)
	}
	if lr.Partial && p.open && len(bytes.TrimSpace(lastLine)) > 0 {
		// The last line was cut off: the entry it belongs to is
		// incomplete (a statement cut short, or its header).
		in.CutOff(lr.N, p.e.line)
		p.open = false
		p.body.Reset()
	}
	if err := p.flush(); err != nil {
		return err
	}
	if len(p.early) > 0 {
		p.in.Warn(p.early[0].line, "no # Time: in the slow log: its %d entries are at Unix time 0, in log order", len(p.early))
		return p.drain(0)
	}
	return nil
}

type slowSession struct {
	key string
	// last is the start of the session's last statement: a session's
	// statements are sequential, so a start computed from a whole-second
	// # Time (MariaDB) is raised to it.
	last int64
	db   string
	gen  int
	quit bool
}

// slowEntry is one entry's header and statement.
type slowEntry struct {
	line       int64
	user, host string
	client     string
	id         string
	schema     string
	use        string // the entry's "use db;"
	hasUse     bool
	setTS      int64 // SET timestamp=N, Unix µs
	hasSetTS   bool
	durUS      int64
	hasDur     bool
	sent, aff  int64
	admin      string
	sql        string
}

type slowParser struct {
	in       *capture.Input
	emit     func(*capture.Record) error
	sessions map[string]*slowSession
	ts       timeCache
	rec      capture.Record
	arena    capture.Arena

	end     int64 // last "# Time:", Unix µs
	hasTime bool
	lastUse string // the last "use db;" in the file

	open  bool // an entry is being read
	e     slowEntry
	body  bytes.Buffer
	early []slowEntry // entries before any time is known
}

// comment handles a "# " line: a new entry's header or an attribute.
func (p *slowParser) comment(line []byte, n int64) error {
	s := string(line[2:])
	switch {
	case strings.HasPrefix(s, "Time: "):
		if err := p.flush(); err != nil {
			return err
		}
		t := strings.TrimSpace(s[6:])
		user := ""
		if i := strings.Index(t, " # User@Host: "); i >= 0 {
			t, user = strings.TrimSpace(t[:i]), t[i+3:]
		}
		if at, ok := p.ts.parse([]byte(t), p.in.Location()); ok {
			p.end, p.hasTime = at, true
			if err := p.drain(at); err != nil {
				return err
			}
		} else if err := p.in.Bad(n, "bad slow log time %q", t); err != nil {
			return err // with --skip-bad the entry keeps the time before
		}
		if user != "" {
			p.userHost(user, n)
		}
		return nil
	case strings.HasPrefix(s, "User@Host: "):
		if err := p.flush(); err != nil {
			return err
		}
		p.userHost(s, n)
		return nil
	case (!p.open || bytes.HasSuffix(bytes.TrimRight(p.body.Bytes(), " \t"), []byte(";"))) && headerLine(s):
		// An entry without # User@Host: (# Client: ...), or one after a
		// statement's end (";") without it.
		if err := p.flush(); err != nil {
			return err
		}
		p.start(n)
	case !p.open || p.body.Len() > 0:
		// A "# " line inside a statement is SQL (a comment).
		if p.open {
			p.body.WriteByte('\n')
			p.body.Write(line)
			return nil
		}
		return p.in.Bad(n, "slow log attribute line outside an entry: %q", truncate(line))
	case strings.HasPrefix(s, "administrator command: "):
		p.e.admin = strings.TrimSuffix(strings.TrimSpace(s[len("administrator command: "):]), ";")
		return nil
	}
	p.attrs(s)
	return nil
}

// headerLine says whether s (a "# " line without "# ") is one of the
// header lines an entry can start with when it has no "# User@Host:".
func headerLine(s string) bool {
	for _, k := range [...]string{"Client: ", "Thread_id: ", "Query_time: ", "Schema: ", "Id: "} {
		if strings.HasPrefix(s, k) {
			return true
		}
	}
	return false
}

// start opens an entry at line n.
func (p *slowParser) start(n int64) {
	p.open = true
	p.e = slowEntry{line: n}
	p.body.Reset()
}

// userHost opens an entry at "User@Host: priv_user[user] @ host [ip]  Id: N".
func (p *slowParser) userHost(s string, n int64) {
	p.start(n)
	u := strings.TrimPrefix(s, "User@Host: ")
	at := strings.Index(u, " @ ")
	if at < 0 {
		at = len(u)
	}
	who := strings.TrimSpace(u[:at])
	name, real, _ := strings.Cut(who, "[")
	if name == "" { // no privilege user: the connection's (replication threads: [SQL_SLAVE])
		name = strings.TrimSuffix(real, "]")
	}
	p.e.user = name
	if at < len(u) {
		host := strings.TrimLeft(u[at+3:], " ")
		h, rest, _ := strings.Cut(host, "[")
		p.e.host = strings.TrimSpace(h)
		if p.e.host == "" {
			ip, _, _ := strings.Cut(rest, "]")
			p.e.host = ip
		}
	}
	p.attrs(u)
}

// attrs reads "Key: value" pairs separated by spaces; a key followed by
// another key (Percona's "Schema:   Last_errno: 0") or by nothing has an
// empty value.
func (p *slowParser) attrs(s string) {
	next := func() string { // the next space-separated field, without allocating
		s = strings.TrimLeft(s, " \t")
		i := strings.IndexAny(s, " \t")
		if i < 0 {
			i = len(s)
		}
		f := s[:i]
		s = s[i:]
		return f
	}
	f := next()
	for f != "" {
		if len(f) < 2 || f[len(f)-1] != ':' {
			f = next()
			continue
		}
		k := f[:len(f)-1]
		val := next()
		if isKey(val) {
			f, val = val, ""
		} else {
			f = next()
		}
		switch k {
		case "Id", "Thread_id":
			p.e.id = val
		case "Schema":
			p.e.schema = val
		case "Client":
			p.e.client = val
		case "Query_time":
			p.e.durUS, p.e.hasDur = seconds(val)
		case "Rows_sent":
			p.e.sent, _ = strconv.ParseInt(val, 10, 64)
		case "Rows_affected":
			p.e.aff, _ = strconv.ParseInt(val, 10, 64)
		}
	}
}

// isKey says whether a field is an attribute name ("Name:").
func isKey(f string) bool {
	if len(f) < 2 || f[len(f)-1] != ':' {
		return false
	}
	for _, c := range f[:len(f)-1] {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// seconds parses "0.000123" into microseconds.
func seconds(v string) (int64, bool) {
	var us, frac int64
	scale := int64(1e6)
	dot := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '.' && !dot:
			dot = true
		case isDigit(c) && !dot:
			us = min(us*10+int64(c-'0'), capture.MaxTUS/1e6+1) // out of range, and no overflow below
		case isDigit(c):
			if scale > 1 {
				scale /= 10
				frac += int64(c-'0') * scale
			}
		default:
			return 0, false
		}
	}
	return us*1e6 + frac, v != ""
}

// pseudo recognises "use db;" and "SET timestamp=N;" before a statement
// (each once: a second "use" is the statement).
func (p *slowParser) pseudo(line []byte) bool {
	s := string(line)
	if !p.e.hasUse && len(s) > 5 && strings.EqualFold(s[:4], "use ") && strings.HasSuffix(s, ";") && !strings.ContainsAny(s[4:len(s)-1], " ;") {
		p.e.use, p.e.hasUse = strings.Trim(s[4:len(s)-1], "`"), true
		p.lastUse = p.e.use
		return true
	}
	if !p.e.hasSetTS && len(s) > 4 && strings.EqualFold(s[:4], "SET ") && strings.HasSuffix(s, ";") {
		var ts int64
		has := false
		for _, a := range strings.Split(s[4:len(s)-1], ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(a), "=")
			if !ok || (k != "timestamp" && k != "last_insert_id" && k != "insert_id") || strings.Trim(v, "0123456789.") != "" {
				return false
			}
			if k == "timestamp" {
				secs, _, _ := strings.Cut(v, ".")
				if n, err := strconv.ParseInt(secs, 10, 64); err == nil && n < 1e11 {
					ts, has = n*1e6, true
				}
			}
		}
		p.e.setTS, p.e.hasSetTS = ts, has
		return true
	}
	return false
}

// flush checks the entry read so far and emits it, or holds it until a
// time is known.
func (p *slowParser) flush() error {
	if !p.open {
		return nil
	}
	p.open = false
	e := p.e
	body := p.arena.String(p.body.Bytes())
	p.body.Reset()
	if !e.hasDur {
		return p.in.Bad(e.line, "slow log entry without Query_time")
	}
	if e.durUS > capture.MaxTUS {
		return p.in.Bad(e.line, "Query_time of %d s out of range (at most %d s)", e.durUS/1e6, int64(capture.MaxTUS/1e6))
	}
	if e.admin != "" && e.admin != "Quit" {
		p.in.Ignore("slow log administrator command " + e.admin)
		return nil
	}
	e.sql = strings.TrimSuffix(strings.TrimRight(body, " \n\t"), ";")
	if e.admin == "" && e.sql == "" {
		if !e.hasUse {
			return p.in.Bad(e.line, "slow log entry without a statement")
		}
		e.sql = "USE `" + strings.ReplaceAll(e.use, "`", "``") + "`" // COM_INIT_DB
	}
	if e.id == "" {
		switch {
		case e.client != "":
			e.id = e.client
		case e.user != "" || e.host != "":
			e.id = e.user + "@" + e.host
		default:
			e.id = "unknown"
		}
	}
	switch {
	case p.hasTime:
		return p.process(&e, p.end-e.durUS)
	case e.hasSetTS:
		if err := p.drain(e.setTS); err != nil {
			return err
		}
		return p.process(&e, e.setTS)
	}
	p.early = append(p.early, e)
	return nil
}

// drain emits the entries held before a time was known as ending at end.
func (p *slowParser) drain(end int64) error {
	for i := range p.early {
		e := &p.early[i]
		if err := p.process(e, max(end-e.durUS, 0)); err != nil {
			return err
		}
	}
	p.early = nil
	return nil
}

// process emits the records of entry e starting at at.
func (p *slowParser) process(e *slowEntry, at int64) error {
	db := e.schema
	if e.hasUse {
		db = e.use
	} else if db == "" {
		db = p.lastUse
	}
	s := p.sessions[e.id]
	if s == nil || s.quit {
		gen := 0
		if s != nil {
			gen = s.gen + 1
		}
		key := e.id
		if gen > 0 {
			key += "." + strconv.Itoa(gen+1)
		}
		s = &slowSession{key: key, db: db, gen: gen}
		p.sessions[e.id] = s
		if err := p.put(e.line, capture.Record{At: at, Event: capture.Event{Session: key, DB: db, User: e.user, Kind: capture.KindConnect}}); err != nil {
			return err
		}
	}
	if at < s.last {
		at = s.last
	}
	s.last = at
	if e.admin == "Quit" {
		s.quit = true
		return p.put(e.line, capture.Record{At: at, Event: capture.Event{Session: s.key, DB: s.db, User: e.user, Kind: capture.KindQuit}})
	}
	if db != "" && db != s.db {
		s.db = db
		if _, isUse := useDB(e.sql); !isUse {
			if err := p.put(e.line, capture.Record{At: at, Event: capture.Event{Session: s.key, DB: db, User: e.user, Kind: capture.KindQuery,
				SQL: "USE `" + strings.ReplaceAll(db, "`", "``") + "`"}}); err != nil {
				return err
			}
		}
	}
	dur, rows := e.durUS, e.sent
	if e.aff > 0 {
		rows = e.aff
	}
	return p.put(e.line, capture.Record{At: at, Event: capture.Event{Session: s.key, DB: s.db, User: e.user, Kind: capture.KindQuery,
		SQL: e.sql, DurUS: &dur, Rows: &rows}})
}

func (p *slowParser) put(line int64, r capture.Record) error {
	r.Line = line
	p.rec = r
	return p.emit(&p.rec)
}
