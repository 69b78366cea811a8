package pglog

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/capture"
)

// StderrOptions configure ParseStderr.
type StderrOptions struct {
	// Prefix is the server's log_line_prefix; nil detects a common one.
	Prefix *Prefix
	// Lenient counts lines without the prefix as ignored instead of
	// malformed (a live capture reads a log that also holds lines
	// written before its prefix was set), and does not require
	// statements and connection lines.
	Lenient bool
	// Sessions says where sessions come from ("" is SessionsAuto).
	Sessions Sessions
}

// ParseStderr reads a PostgreSQL stderr log (log_destination=stderr,
// also what logging_collector writes to log/*.log). Continuation lines
// (a multi-line statement) start with a tab; a "DETAIL:" line belongs to
// the message before it. Sessions are %c, or %p with a new session at
// each "connection received". Lines without the prefix that are a
// memory-context dump (what a backend writes when it runs out of memory),
// or that follow a message which is not a statement (the rest of a
// multi-line error or a tool's output), are counted as ignored.
func ParseStderr(r io.Reader, in *capture.Input, o StderrOptions, emit func(*capture.Record) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	pfx := o.Prefix
	if pfx == nil {
		head, _ := br.Peek(256 << 10)
		var err error
		if pfx, err = DetectPrefix(head); err != nil {
			return fmt.Errorf("%s: %w", in.Name, err)
		}
		if in.Stats != nil {
			in.Stats.Notes = append(in.Stats.Notes, fmt.Sprintf("%s: log_line_prefix %q (detected; --log-line-prefix to give another)", in.Name, pfx.src))
		}
	}
	h := newHandler(in, emit)
	h.noCheck = o.Lenient
	h.mode = o.Sessions
	if h.mode == "" {
		h.mode = SessionsAuto
	}
	h.byPid = !pfx.hasC
	sr := &stderrReader{in: in, o: o, pfx: pfx, h: h, lr: capture.NewLineReader(br),
		gens: map[string]int{}, keys: map[string]string{}}
	for {
		line, err := sr.lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", in.Name, err)
		}
		if in.Stats != nil {
			in.Stats.Lines++
		}
		if sr.lr.Partial && len(bytes.TrimSpace(line)) > 0 {
			sr.cutOff(line)
			break
		}
		if err := sr.line(line); err != nil {
			return err
		}
	}
	if err := sr.flush(); err != nil {
		return err
	}
	return h.finish(in.Name)
}

// stderrReader is ParseStderr's state: the message being read (a line
// with the prefix, its continuation and DETAIL lines) and the sessions by
// process id.
type stderrReader struct {
	in  *capture.Input
	o   StderrOptions
	pfx *Prefix
	h   *handler
	lr  *capture.LineReader

	ts       timeCache
	f        fields
	cur      message
	have     bool // cur is being read
	inDetail bool // its DETAIL line is being read
	text     []byte
	detail   []byte
	gens     map[string]int    // pid -> sessions seen with it
	keys     map[string]string // pid -> its current session key
	lastUser string
	lastDB   string
	arena    capture.Arena
}

// flush hands the message read to the handler.
func (sr *stderrReader) flush() error {
	if !sr.have {
		return nil
	}
	sr.have = false
	sr.cur.text, sr.cur.detail = sr.arena.String(sr.text), string(sr.detail)
	return sr.h.handle(&sr.cur)
}

// cutOff ends the log at its last line, cut off: a message it continues
// is incomplete, and so is one it starts.
func (sr *stderrReader) cutOff(line []byte) {
	cont := len(line) > 0 && line[0] == '\t'
	if !cont && sr.have && sr.pfx.match(line, &sr.ts, sr.in.Location(), &sr.f) {
		sev, _, _ := severity(line[sr.f.restOffset:])
		cont = sev == "DETAIL" // the parameters of the message before
	}
	if cont && sr.have {
		sr.in.CutOff(sr.lr.N, sr.cur.line)
		sr.have = false
	} else {
		sr.in.CutOff(sr.lr.N, sr.lr.N)
	}
}

// line reads one whole line of the log.
func (sr *stderrReader) line(line []byte) error {
	in, pfx := sr.in, sr.pfx
	if len(line) > 0 && line[0] == '\t' {
		return sr.continuation(line)
	}
	if !pfx.match(line, &sr.ts, in.Location(), &sr.f) {
		return sr.unprefixed(line)
	}
	if sr.ts.unknown != "" {
		in.Warn(sr.lr.N, "time zone abbreviation %q is not in PostgreSQL's default set: read in --time-zone (%s)", sr.ts.unknown, in.Location())
		sr.ts.unknown = ""
	}
	sev, msg, ok := severity(line[sr.f.restOffset:])
	if !ok {
		if err := sr.flush(); err != nil {
			return err
		}
		return in.Bad(sr.lr.N, "no severity (LOG:, ERROR:...) after log_line_prefix %q: %q", pfx.src, short(string(line)))
	}
	sess := sr.session(sev, msg)
	if sev == "DETAIL" && sr.have && sr.cur.session == sess {
		sr.inDetail = true
		sr.detail = append(sr.detail[:0], msg...)
		return nil
	}
	if err := sr.flush(); err != nil {
		return err
	}
	f := &sr.f
	if string(f.user) != sr.lastUser {
		sr.lastUser = string(f.user)
	}
	if string(f.db) != sr.lastDB {
		sr.lastDB = string(f.db)
	}
	sr.cur = message{line: sr.lr.N, at: f.at, session: sess, user: sr.lastUser, db: sr.lastDB, severity: sev}
	sr.have, sr.inDetail = true, false
	sr.text = append(sr.text[:0], msg...)
	sr.detail = sr.detail[:0]
	return nil
}

// continuation adds a tab-led line to the message's text or DETAIL.
func (sr *stderrReader) continuation(line []byte) error {
	if !sr.have {
		if sr.o.Lenient {
			sr.in.Ignore("pg continuation without a message")
			return nil
		}
		return sr.in.Bad(sr.lr.N, "continuation line without a message before it")
	}
	if sr.inDetail {
		sr.detail = append(append(sr.detail, '\n'), line[1:]...)
	} else {
		sr.text = append(append(sr.text, '\n'), line[1:]...)
	}
	return nil
}

// unprefixed reads a line without the prefix: a memory-context dump line
// or noise after a message that is not a statement (counted as ignored),
// a statement's line whose tab an editor turned into spaces, or a
// malformed line.
func (sr *stderrReader) unprefixed(line []byte) error {
	in := sr.in
	switch {
	case len(line) == 0:
		return nil
	case memoryContextLine(line):
		// Not the end of the message before: the dump is written by
		// another process, between its lines.
		in.Ignore(IgnoredMemoryDump)
		return nil
	case sr.have && line[0] == ' ' && !sr.inDetail && isStatement(sr.cur.severity, sr.text):
		sr.text = append(append(sr.text, '\n'), line...)
		return nil
	case sr.have && !isStatement(sr.cur.severity, sr.text):
		in.Ignore(IgnoredNoise)
		return nil
	}
	if err := sr.flush(); err != nil {
		return err
	}
	if sr.o.Lenient {
		in.Ignore("pg line without the prefix")
		return nil
	}
	return in.Bad(sr.lr.N, "line does not start with log_line_prefix %q: %q", sr.pfx.src, short(string(line)))
}

// session is the session of the line just matched: its %c, or its %p
// with a new session at each "connection received" (pid.2, pid.3...);
// "" for a line whose prefix was cut short.
func (sr *stderrReader) session(sev string, msg []byte) string {
	f := &sr.f
	switch {
	case f.partial:
		return ""
	case len(f.session) > 0:
		return string(f.session)
	case len(f.pid) > 0:
		key, seen := sr.keys[string(f.pid)]
		if !seen || (sev == "LOG" && hasPrefix(msg, "connection received:")) {
			pid := string(f.pid)
			g, had := sr.gens[pid]
			if had && seen {
				g++
			}
			sr.gens[pid] = g
			key = pid
			if g > 0 {
				key += "." + strconv.Itoa(g+1)
			}
			sr.keys[pid] = key
		}
		return key
	}
	return ""
}

// What stderr logs hold besides messages, counted in Stats.Ignored.
const (
	IgnoredMemoryDump = "pg memory-context dump line"
	IgnoredNoise      = "pg line without the prefix after a message that is not a statement"
)

// memoryContextLine is a line of a memory-context dump:
// "TopMemoryContext: 101672 total in 12 blocks; 5232 free (18 chunks);
// 96440 used", indented for the contexts below, "N more child contexts
// containing ...", "Grand total: ...".
func memoryContextLine(b []byte) bool {
	i := bytes.Index(b, []byte(" total in "))
	return i > 0 && bytes.Contains(b[i:], []byte(" blocks; ")) && bytes.Contains(b[i:], []byte(" free"))
}

// isStatement says whether a message (severity sev, text) is a statement
// or an execute: a line without the prefix after it could be part of its
// SQL (whose lines start with a tab), so it is malformed, not noise.
func isStatement(sev string, text []byte) bool {
	if sev != "LOG" {
		return false
	}
	t := string(text[:min(len(text), 64)])
	if rest, ok := strings.CutPrefix(t, "duration: "); ok {
		_, t, _ = strings.Cut(rest, " ms")
		t = strings.TrimLeft(t, " ")
	}
	return strings.HasPrefix(t, "statement: ") || strings.HasPrefix(t, "execute ")
}

func hasPrefix(b []byte, p string) bool { return len(b) >= len(p) && string(b[:len(p)]) == p }
