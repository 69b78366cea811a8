package mysqllog

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/capture"
)

// ParseSlow reads a slow query log (MySQL 5.6+/8, Percona Server's and
// MariaDB's extended fields), written with long_query_time=0 to hold every
// statement. Every statement becomes a query record with dur_us
// (Query_time) and rows (Rows_affected when positive, else Rows_sent).
//
// "# Time:" is when a statement ended (MariaDB writes it only when the
// second changes): the record starts at that time minus Query_time. The
// pseudo-statements "use db;" and "SET timestamp=N;" (also with
// last_insert_id / insert_id) are not statements. A session (Thread_id:
// or Id:) gets a connect record at its first statement and a query
// "USE `db`" when its database changes (the slow log logs no connects);
// "# administrator command: Quit;" is its quit. Records come out in end
// order: the caller sorts them.
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
			if bytes.HasPrefix(line, []byte("Tcp port:")) || (bytes.HasPrefix(line, []byte("Time ")) || bytes.HasPrefix(line, []byte("Time\t"))) {
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
		in.CutOff(lr.N, p.line)
		p.open = false
		p.body.Reset()
	}
	return p.flush()
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

	open    bool // an entry is being read
	line    int64
	user    string
	id      string
	schema  string
	durUS   int64
	hasDur  bool
	sent    int64
	aff     int64
	admin   string
	body    bytes.Buffer
	hasBody bool
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
		at, ok := p.ts.parse([]byte(t), p.in.Location())
		if !ok {
			// With --skip-bad the next entry keeps the time before.
			return p.in.Bad(n, "bad slow log time %q", t)
		}
		p.end, p.hasTime = at, true
		return nil
	case strings.HasPrefix(s, "User@Host: "):
		if err := p.flush(); err != nil {
			return err
		}
		p.open, p.line = true, n
		p.user, p.id, p.schema, p.admin = "", "", "", ""
		p.hasDur, p.sent, p.aff = false, 0, 0
		u := s[len("User@Host: "):]
		if i := strings.IndexAny(u, "[ @"); i >= 0 {
			p.user = u[:i]
		}
		p.attrs(u)
		return nil
	case !p.open || p.body.Len() > 0:
		// A "# " line inside a statement is SQL (a comment).
		if p.open {
			p.body.WriteByte('\n')
			p.body.Write(line)
			return nil
		}
		return p.in.Bad(n, "slow log attribute line outside an entry: %q", truncate(line))
	case strings.HasPrefix(s, "administrator command: "):
		p.admin = strings.TrimSuffix(strings.TrimSpace(s[len("administrator command: "):]), ";")
		return nil
	}
	p.attrs(s)
	return nil
}

// attrs reads "Key: value" pairs separated by spaces.
func (p *slowParser) attrs(s string) {
	for s != "" {
		i := strings.Index(s, ": ")
		if i < 0 {
			return
		}
		key := s[strings.LastIndexByte(s[:i], ' ')+1 : i]
		rest := strings.TrimLeft(s[i+2:], " ")
		j := strings.IndexByte(rest, ' ')
		val := rest
		if j >= 0 {
			val, rest = rest[:j], rest[j:]
		} else {
			rest = ""
		}
		switch key {
		case "Id", "Thread_id":
			p.id = val
		case "Schema":
			p.schema = val
		case "Query_time":
			p.durUS, p.hasDur = seconds(val)
		case "Rows_sent":
			p.sent, _ = strconv.ParseInt(val, 10, 64)
		case "Rows_affected":
			p.aff, _ = strconv.ParseInt(val, 10, 64)
		}
		s = rest
	}
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

// pseudo recognises "use db;" and "SET timestamp=N;" before a statement.
func (p *slowParser) pseudo(line []byte) bool {
	s := string(line)
	if len(s) > 5 && strings.EqualFold(s[:4], "use ") && strings.HasSuffix(s, ";") && !strings.ContainsAny(s[4:len(s)-1], " ;") {
		p.lastUse = strings.Trim(s[4:len(s)-1], "`")
		return true
	}
	if len(s) > 4 && strings.EqualFold(s[:4], "SET ") && strings.HasSuffix(s, ";") {
		for _, a := range strings.Split(s[4:len(s)-1], ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(a), "=")
			if !ok || (k != "timestamp" && k != "last_insert_id" && k != "insert_id") || strings.Trim(v, "0123456789.") != "" {
				return false
			}
		}
		return true
	}
	return false
}

// flush emits the entry read so far.
func (p *slowParser) flush() error {
	if !p.open {
		return nil
	}
	p.open = false
	body := p.arena.String(p.body.Bytes())
	p.body.Reset()
	if !p.hasTime {
		return p.in.Bad(p.line, "slow log entry without a # Time: before it")
	}
	if p.id == "" {
		return p.in.Bad(p.line, "slow log entry without a thread id (Id: or Thread_id:)")
	}
	if !p.hasDur {
		return p.in.Bad(p.line, "slow log entry without Query_time")
	}
	if p.durUS > capture.MaxTUS {
		return p.in.Bad(p.line, "Query_time of %d s out of range (at most %d s)", p.durUS/1e6, int64(capture.MaxTUS/1e6))
	}
	if p.admin != "" && p.admin != "Quit" {
		p.in.Ignore("slow log administrator command " + p.admin)
		return nil
	}
	sql := strings.TrimSuffix(strings.TrimRight(body, " \n\t"), ";")
	if p.admin == "" && sql == "" {
		return p.in.Bad(p.line, "slow log entry without a statement")
	}
	at := p.end - p.durUS
	db := p.schema
	if db == "" {
		db = p.lastUse
	}
	s := p.sessions[p.id]
	if s == nil || s.quit {
		gen := 0
		if s != nil {
			gen = s.gen + 1
		}
		key := p.id
		if gen > 0 {
			key += "." + strconv.Itoa(gen+1)
		}
		s = &slowSession{key: key, db: db, gen: gen}
		p.sessions[p.id] = s
		if err := p.put(capture.Record{At: at, Event: capture.Event{Session: key, DB: db, User: p.user, Kind: capture.KindConnect}}); err != nil {
			return err
		}
	}
	if at < s.last {
		at = s.last
	}
	s.last = at
	if p.admin == "Quit" {
		s.quit = true
		return p.put(capture.Record{At: at, Event: capture.Event{Session: s.key, DB: s.db, User: p.user, Kind: capture.KindQuit}})
	}
	if db != "" && db != s.db {
		s.db = db
		if _, isUse := useDB(sql); !isUse {
			if err := p.put(capture.Record{At: at, Event: capture.Event{Session: s.key, DB: db, User: p.user, Kind: capture.KindQuery,
				SQL: "USE `" + strings.ReplaceAll(db, "`", "``") + "`"}}); err != nil {
				return err
			}
		}
	}
	dur, rows := p.durUS, p.sent
	if p.aff > 0 {
		rows = p.aff
	}
	return p.put(capture.Record{At: at, Event: capture.Event{Session: s.key, DB: s.db, User: p.user, Kind: capture.KindQuery,
		SQL: sql, DurUS: &dur, Rows: &rows}})
}

func (p *slowParser) put(r capture.Record) error {
	r.Line = p.line
	p.rec = r
	return p.emit(&p.rec)
}
