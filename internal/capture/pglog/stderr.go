package pglog

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"

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
}

// ParseStderr reads a PostgreSQL stderr log (log_destination=stderr,
// also what logging_collector writes to log/*.log). Continuation lines
// (a multi-line statement) start with a tab; a "DETAIL:" line belongs to
// the message before it. Sessions are %c, or %p with a new session at
// each "connection received".
func ParseStderr(r io.Reader, in *capture.Input, o StderrOptions, emit func(*capture.Record) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	pfx := o.Prefix
	if pfx == nil {
		head, _ := br.Peek(256 << 10)
		var err error
		if pfx, err = DetectPrefix(head); err != nil {
			return fmt.Errorf("%s: %w", in.Name, err)
		}
	}
	h := newHandler(in, emit)
	h.noCheck = o.Lenient
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

func hasPrefix(b []byte, p string) bool { return len(b) >= len(p) && string(b[:len(p)]) == p }
