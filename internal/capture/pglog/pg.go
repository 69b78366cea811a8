// Package pglog reads PostgreSQL server logs into capture records: the
// csvlog (log_destination=csvlog) and the stderr log with a
// log_line_prefix that names the session.
//
// The server must log every statement: log_statement=all (or
// log_min_duration_statement=0, which adds durations). Session boundaries
// come from log_connections=on and log_disconnections=on; a log without
// them (a statement log configured for pgBadger) is read with each line's
// session (%c, csvlog's session_id, or %p): see Sessions. Simple-protocol
// statements ("statement: ...") become query records; extended-protocol
// executions ("execute NAME: ..." with "DETAIL:  parameters: $1 = '...'")
// become execute records with SQL, Name (empty for <unnamed>) and Params,
// so a replay need not track prepares; "parse" and "bind" lines
// (log_min_duration_statement=0) are counted in Stats.Ignored.
package pglog

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/capture"
)

// message is one log message, whatever the log's form.
type message struct {
	line     int64
	at       int64 // Unix µs
	session  string
	user, db string
	severity string
	text     string
	detail   string
}

type pgSession struct {
	user, db string
	pending  capture.Record
	has      bool
	// dropped: the session's last statement was left out (COPY FROM
	// STDIN): a lone duration line after it is its.
	dropped bool
}

// Sessions says where a PostgreSQL log's sessions come from.
type Sessions string

// The ways sessions are found (--pg-sessions).
const (
	// SessionsAuto reads connection lines when the log has them; a log
	// with none (log_connections off) is read as SessionsLine, with a
	// warning.
	SessionsAuto Sessions = "auto"
	// SessionsConnections requires "connection authorized" and
	// "disconnection" lines (an error names the setting to turn on).
	SessionsConnections Sessions = "connections"
	// SessionsLine takes each line's session (%c, csvlog's session_id,
	// or %p: a process id reused by a later backend without a
	// "connection received" line between continues the same session).
	// Connection lines are still read when present.
	SessionsLine Sessions = "line"
)

// SessionModes lists the Sessions values.
var SessionModes = []Sessions{SessionsAuto, SessionsConnections, SessionsLine}

// handler turns messages into records; it holds each session's last
// record until the session's next message, which may be its duration.
type handler struct {
	in       *capture.Input
	emit     func(*capture.Record) error
	sessions map[string]*pgSession
	// counts for the missing-settings check
	statements, connections, disconnections int64
	// noCheck skips finish's missing-settings check (live capture).
	noCheck bool
	mode    Sessions
	// byPid: sessions are process ids (a prefix with %p and no %c).
	byPid bool
}

func newHandler(in *capture.Input, emit func(*capture.Record) error) *handler {
	return &handler{in: in, emit: emit, sessions: map[string]*pgSession{}}
}

func (h *handler) session(m *message) *pgSession {
	s := h.sessions[m.session]
	if s == nil {
		s = &pgSession{}
		h.sessions[m.session] = s
	}
	if m.user != "" && m.user != "[unknown]" {
		s.user = m.user
	}
	if m.db != "" && m.db != "[unknown]" {
		s.db = m.db
	}
	return s
}

// IgnoredCopy is how COPY ... FROM STDIN statements are counted in
// Stats.Ignored.
const IgnoredCopy = "pg COPY FROM STDIN (its rows are not in the log)"

// put holds r as the session's pending record, emitting the one before.
func (h *handler) put(s *pgSession, r capture.Record) error {
	s.dropped = false
	if s.has {
		if err := h.emit(&s.pending); err != nil {
			return err
		}
	}
	s.pending, s.has = r, true
	return nil
}

func (h *handler) handle(m *message) error {
	if m.severity != "LOG" {
		h.in.Ignore("pg " + m.severity)
		return nil
	}
	if m.session == "" {
		h.in.Ignore("pg message without a session")
		return nil
	}
	t := m.text
	var dur *int64
	if rest, ok := strings.CutPrefix(t, "duration: "); ok {
		ms, after, _ := strings.Cut(rest, " ms")
		d, ok := millis(ms)
		if !ok {
			return h.in.Bad(m.line, "bad duration %q", ms)
		}
		if d < 0 || d > capture.MaxTUS {
			return h.in.Bad(m.line, "duration %s ms out of range (at most %d ms)", ms, int64(capture.MaxTUS/1e3))
		}
		after = strings.TrimLeft(after, " ")
		if after == "" {
			// log_duration: the duration of the session's last statement.
			if s := h.sessions[m.session]; s != nil && !s.dropped && s.has && s.pending.DurUS == nil && s.pending.Kind != capture.KindConnect {
				s.pending.DurUS = &d
			}
			return nil
		}
		dur, t = &d, after
	}
	s := h.session(m)
	r := capture.Record{At: m.at, Line: m.line, Event: capture.Event{Session: m.session}}
	switch {
	case strings.HasPrefix(t, "statement: "):
		r.Kind, r.SQL = capture.KindQuery, t[len("statement: "):]
		if strings.TrimSpace(r.SQL) == "" {
			h.in.Ignore("pg empty statement")
			return nil
		}
		h.statements++
		if capture.CopyFromStdin(r.SQL) {
			// The rows a client sends after COPY ... FROM STDIN are not
			// logged: replayed, the statement would wait for them.
			h.in.Ignore(IgnoredCopy)
			s.dropped = true
			return nil
		}
	case strings.HasPrefix(t, "execute "):
		name, sql, ok := strings.Cut(t[len("execute "):], ": ")
		if !ok {
			return h.in.Bad(m.line, "execute message without \": \": %q", short(t))
		}
		if i := strings.IndexByte(name, '/'); i >= 0 {
			name = name[:i] // NAME/PORTAL
		}
		if name == "<unnamed>" {
			name = ""
		}
		if strings.TrimSpace(sql) == "" {
			return h.in.Bad(m.line, "execute message without its statement: %q", short(t))
		}
		r.Kind, r.Name, r.SQL = capture.KindExecute, name, sql
		h.statements++
		if capture.CopyFromStdin(sql) {
			h.in.Ignore(IgnoredCopy)
			s.dropped = true
			return nil
		}
		// "parameters: " to PostgreSQL 16, "Parameters: " from 17.
		if d, ok := cutParameters(m.detail); ok {
			ps, err := parseParams(d)
			if err != nil {
				return h.in.Bad(m.line, "%v", err)
			}
			r.Params = ps
		}
	case strings.HasPrefix(t, "parse "), strings.HasPrefix(t, "bind "):
		h.in.Ignore("pg " + t[:strings.IndexByte(t, ' ')])
		return nil
	case strings.HasPrefix(t, "connection authorized: "):
		rest := t[len("connection authorized: "):]
		if u := field(rest, "user="); u != "" {
			s.user = u
		}
		if d := field(rest, "database="); d != "" {
			s.db = d
		}
		r.Kind = capture.KindConnect
		h.connections++
	case strings.HasPrefix(t, "disconnection: "):
		r.Kind = capture.KindQuit
		h.disconnections++
		delete(h.sessions, m.session)
		r.User, r.DB = s.user, s.db
		if err := h.put(s, r); err != nil {
			return err
		}
		return h.emit(&s.pending)
	default:
		w := t
		if i := strings.IndexAny(w, " :"); i >= 0 {
			w = w[:i]
		}
		h.in.Ignore("pg LOG " + w)
		return nil
	}
	if dur != nil {
		r.DurUS = dur
		r.At -= *dur // the message is written when the statement ends
	}
	r.User, r.DB = s.user, s.db
	return h.put(s, r)
}

// finish emits the records still held and checks that the log had what a
// capture needs.
func (h *handler) finish(what string) error {
	for _, s := range h.sessions {
		if s.has {
			if err := h.emit(&s.pending); err != nil {
				return err
			}
			s.has = false
		}
	}
	if h.noCheck {
		return nil
	}
	if h.statements == 0 {
		return fmt.Errorf("%s: no statements in the log: the server needs log_statement=all (or log_min_duration_statement=0)", what)
	}
	if h.mode != SessionsConnections {
		if h.connections == 0 && h.disconnections == 0 && h.mode == SessionsAuto {
			if h.byPid {
				h.in.WarnFile("no connection lines (log_connections is off): sessions are the process ids of the lines (%%p), so a process id a later backend reused continues the earlier session; sessions have no connect or quit events")
			} else {
				h.in.WarnFile("no connection lines (log_connections is off): sessions are the session ids of the lines (%%c, csvlog session_id); sessions have no connect or quit events")
			}
		}
		return nil
	}
	switch {
	case h.connections == 0 && h.disconnections == 0:
		return fmt.Errorf("%s: no connection or disconnection lines in the log: the server needs log_connections=on and log_disconnections=on", what)
	case h.connections == 0:
		return fmt.Errorf("%s: no \"connection authorized\" lines in the log: the server needs log_connections=on", what)
	case h.disconnections == 0:
		return fmt.Errorf("%s: no \"disconnection\" lines in the log: the server needs log_disconnections=on", what)
	}
	return nil
}

// field returns the value of key in "user=x database=y ...".
func field(s, key string) string {
	i := strings.Index(s, key)
	if i < 0 || (i > 0 && s[i-1] != ' ') {
		return ""
	}
	v := s[i+len(key):]
	if j := strings.IndexByte(v, ' '); j >= 0 {
		v = v[:j]
	}
	return v
}

// millis parses "0.123" milliseconds into microseconds.
func millis(s string) (int64, bool) {
	whole, frac, _ := strings.Cut(s, ".")
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w < 0 {
		return 0, false
	}
	w = min(w, capture.MaxTUS/1000+1) // out of range, and no overflow below
	us := w * 1000
	scale := int64(100)
	for i := 0; i < len(frac); i++ {
		c := frac[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		us += int64(c-'0') * scale
		scale /= 10
	}
	return us, true
}

// parseParams reads "$1 = '5', $2 = NULL, $3 = 'it”s'".
func parseParams(s string) ([]*string, error) {
	var out []*string
	for s != "" {
		if s[0] != '$' {
			return nil, fmt.Errorf("bad parameters detail near %q", short(s))
		}
		i := 1
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		n, err := strconv.Atoi(s[1:i])
		if err != nil || n < 1 || n > 65535 || !strings.HasPrefix(s[i:], " = ") {
			return nil, fmt.Errorf("bad parameters detail near %q", short(s))
		}
		s = s[i+3:]
		var v *string
		switch {
		case strings.HasPrefix(s, "NULL"):
			s = s[4:]
		case strings.HasPrefix(s, "'"):
			var b strings.Builder
			j := 1
			for {
				k := strings.IndexByte(s[j:], '\'')
				if k < 0 {
					return nil, fmt.Errorf("unterminated parameter $%d", n)
				}
				b.WriteString(s[j : j+k])
				j += k + 1
				if j < len(s) && s[j] == '\'' {
					b.WriteByte('\'')
					j++
					continue
				}
				break
			}
			str := b.String()
			v = &str
			s = s[j:]
			// log_parameter_max_length truncates with "..." after the quote.
			s = strings.TrimPrefix(s, "...")
		default:
			return nil, fmt.Errorf("bad value of parameter $%d near %q", n, short(s))
		}
		for len(out) < n {
			out = append(out, nil)
		}
		out[n-1] = v
		if s == "" {
			break
		}
		if !strings.HasPrefix(s, ", ") {
			return nil, fmt.Errorf("bad parameters detail near %q", short(s))
		}
		s = s[2:]
	}
	return out, nil
}

// short shortens text quoted in an error, its passwords masked.
func short(s string) string {
	s, _ = capture.MaskPasswords(s)
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// cutParameters returns the parameter list of an execute message's
// DETAIL: "parameters: $1 = '...'" up to PostgreSQL 16, "Parameters: ..."
// from 17.
func cutParameters(detail string) (string, bool) {
	if d, ok := strings.CutPrefix(detail, "parameters: "); ok {
		return d, true
	}
	return strings.CutPrefix(detail, "Parameters: ")
}
