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
	lr := capture.NewLineReader(br)
	var (
		ts               timeCache
		f                fields
		cur              message
		have             bool
		inDetail         bool
		text             []byte
		detail           []byte
		gens             = map[string]int{}
		keys             = map[string]string{} // pid -> its current session key
		lastUser, lastDB string
		arena            capture.Arena
	)
	flush := func() error {
		if !have {
			return nil
		}
		have = false
		cur.text, cur.detail = arena.String(text), string(detail)
		return h.handle(&cur)
	}
	for {
		line, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", in.Name, err)
		}
		if in.Stats != nil {
			in.Stats.Lines++
		}
		if lr.Partial && len(bytes.TrimSpace(line)) > 0 {
			// The last line was cut off: a message it continues is
			// incomplete, and so is one it starts.
			cont := len(line) > 0 && line[0] == '\t'
			if !cont && have && pfx.match(line, &ts, in.Location(), &f) {
				sev, _, _ := severity(line[f.restOffset:])
				cont = sev == "DETAIL" // the parameters of the message before
			}
			if cont && have {
				in.CutOff(lr.N, cur.line)
				have = false
			} else {
				in.CutOff(lr.N, lr.N)
			}
			break
		}
		if len(line) > 0 && line[0] == '\t' {
			if !have {
				if o.Lenient {
					in.Ignore("pg continuation without a message")
					continue
				}
				if err := in.Bad(lr.N, "continuation line without a message before it"); err != nil {
					return err
				}
				continue
			}
			if inDetail {
				detail = append(append(detail, '\n'), line[1:]...)
			} else {
				text = append(append(text, '\n'), line[1:]...)
			}
			continue
		}
		if !pfx.match(line, &ts, in.Location(), &f) {
			if len(line) == 0 {
				continue
			}
			if memoryContextLine(line) {
				// Not the end of the message before: the dump is written by
				// another process, between its lines.
				in.Ignore(IgnoredMemoryDump)
				continue
			}
			if have && line[0] == ' ' && !inDetail && isStatement(cur.severity, text) {
				// A statement's line whose tab an editor turned into spaces.
				text = append(append(text, '\n'), line...)
				continue
			}
			if have && !isStatement(cur.severity, text) {
				in.Ignore(IgnoredNoise)
				continue
			}
			if err := flush(); err != nil {
				return err
			}
			if o.Lenient {
				in.Ignore("pg line without the prefix")
				continue
			}
			if err := in.Bad(lr.N, "line does not start with log_line_prefix %q: %q", pfx.src, short(string(line))); err != nil {
				return err
			}
			continue
		}
		if ts.unknown != "" {
			in.Warn(lr.N, "time zone abbreviation %q is not in PostgreSQL's default set: read in --time-zone (%s)", ts.unknown, in.Location())
			ts.unknown = ""
		}
		sev, msg, ok := severity(line[f.restOffset:])
		if !ok {
			if err := flush(); err != nil {
				return err
			}
			if err := in.Bad(lr.N, "no severity (LOG:, ERROR:...) after log_line_prefix %q: %q", pfx.src, short(string(line))); err != nil {
				return err
			}
			continue
		}
		var sess string
		switch {
		case len(f.session) > 0:
			sess = string(f.session)
		case len(f.pid) > 0 && !f.partial:
			key, seen := keys[string(f.pid)]
			if !seen || (sev == "LOG" && hasPrefix(msg, "connection received:")) {
				pid := string(f.pid)
				g, had := gens[pid]
				if had && seen {
					g++
				}
				gens[pid] = g
				key = pid
				if g > 0 {
					key += "." + strconv.Itoa(g+1)
				}
				keys[pid] = key
			}
			sess = key
		}
		if f.partial {
			sess = ""
		}
		if sev == "DETAIL" && have && cur.session == sess {
			inDetail = true
			detail = append(detail[:0], msg...)
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		if string(f.user) != lastUser {
			lastUser = string(f.user)
		}
		if string(f.db) != lastDB {
			lastDB = string(f.db)
		}
		cur = message{line: lr.N, at: f.at, session: sess, user: lastUser, db: lastDB, severity: sev}
		have, inDetail = true, false
		text = append(text[:0], msg...)
		detail = detail[:0]
	}
	if err := flush(); err != nil {
		return err
	}
	return h.finish(in.Name)
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
