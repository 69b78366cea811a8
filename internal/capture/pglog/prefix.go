package pglog

import (
	"bytes"
	"fmt"
	"strings"
	"time"
)

// Prefix is a compiled log_line_prefix.
type Prefix struct {
	src  string
	segs []seg
	// What it names: a time (%m, %n, %t), a session (%c, %p), user, db.
	hasTime, hasSession, hasUser, hasDB bool
}

type seg struct {
	lit string // a literal, or
	esc byte   // an escape letter
	// next is the literal after an escape ("" if none).
	next string
}

// CommonPrefixes are the log_line_prefix values tried when none is
// given: Debian's, PostgreSQL's default, pgBadger's and pgreplay's
// recommendations.
var CommonPrefixes = []string{
	"%m [%p] %q%u@%d ",
	"%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ",
	"%t [%p]: user=%u,db=%d,app=%a,client=%h ",
	"%m|%u|%d|%c|",
	"%m [%p] %u@%d ",
	"%m [%c] %u@%d ",
	"%m %c %u %d ",
	"%m [%p] ",
	"%t [%p] ",
	"%m ",
}

// CompilePrefix compiles a log_line_prefix and checks that it names a
// time and a session.
func CompilePrefix(p string) (*Prefix, error) {
	c := &Prefix{src: p}
	var lit strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] != '%' || i+1 == len(p) {
			lit.WriteByte(p[i])
			continue
		}
		i++
		e := p[i]
		if e == '%' {
			lit.WriteByte('%')
			continue
		}
		// padding like %-10u is not supported.
		if !strings.ContainsRune("amnucdpltsvxehrqiQbBP", rune(e)) {
			return nil, fmt.Errorf("log_line_prefix %q: unsupported escape %%%c", p, e)
		}
		if lit.Len() > 0 {
			c.segs = append(c.segs, seg{lit: lit.String()})
			lit.Reset()
		}
		c.segs = append(c.segs, seg{esc: e})
		switch e {
		case 'm', 'n', 't':
			c.hasTime = true
		case 'c', 'p':
			c.hasSession = true
		case 'u':
			c.hasUser = true
		case 'd':
			c.hasDB = true
		}
	}
	if lit.Len() > 0 {
		c.segs = append(c.segs, seg{lit: lit.String()})
	}
	for i := range c.segs {
		if c.segs[i].esc != 0 && i+1 < len(c.segs) && c.segs[i+1].esc == 0 {
			c.segs[i].next = c.segs[i+1].lit
		}
	}
	if !c.hasTime {
		return nil, fmt.Errorf("log_line_prefix %q has no time: add %%m (or %%n)", p)
	}
	if !c.hasSession {
		return nil, fmt.Errorf("log_line_prefix %q has no session: add %%c (or %%p)", p)
	}
	return c, nil
}

// String is the log_line_prefix.
func (c *Prefix) String() string { return c.src }

// fields are what a prefix gave.
type fields struct {
	at         int64
	session    []byte
	pid        []byte
	user, db   []byte
	partial    bool // %q stopped it: a process that is not a session
	restOffset int
}

// match parses the prefix at the start of line. After %q the rest is
// optional: a line that stops matching there is a non-session process's
// (partial).
func (c *Prefix) match(line []byte, ts *timeCache, loc *time.Location, f *fields) bool {
	*f = fields{}
	pos, qPos := 0, -1
	var saved fields
	fail := func() bool {
		if qPos < 0 {
			return false
		}
		*f = saved
		f.partial, f.restOffset = true, qPos
		return true
	}
	for _, s := range c.segs {
		if s.esc == 0 {
			if !bytes.HasPrefix(line[pos:], []byte(s.lit)) {
				return fail()
			}
			pos += len(s.lit)
			continue
		}
		rest := line[pos:]
		var n int
		switch s.esc {
		case 'q':
			qPos, saved = pos, *f
			continue
		case 'm', 't':
			at, used, ok := ts.parse(rest, loc)
			if !ok {
				return fail()
			}
			f.at, n = at, used
		case 'n':
			at, used, ok := parseEpoch(rest)
			if !ok {
				return fail()
			}
			f.at, n = at, used
		default:
			n = valueEnd(rest, s.next)
			if n < 0 {
				return fail()
			}
			v := rest[:n]
			switch s.esc {
			case 'c':
				f.session = v
			case 'p':
				f.pid = v
			case 'u':
				f.user = v
			case 'd':
				f.db = v
			}
		}
		pos += n
	}
	f.restOffset = pos
	return true
}

// valueEnd is where a variable escape's value ends: at the next literal,
// or at a space when another escape follows directly.
func valueEnd(b []byte, next string) int {
	if next == "" {
		i := bytes.IndexAny(b, " \t")
		if i < 0 {
			return len(b)
		}
		return i
	}
	i := bytes.Index(b, []byte(next))
	if i < 0 {
		return -1
	}
	return i
}

// DetectPrefix picks the CommonPrefixes entry that matches the most of
// the first lines of a log (lines with a severity after the prefix).
func DetectPrefix(head []byte) (*Prefix, error) {
	lines := bytes.Split(head, []byte{'\n'})
	if len(lines) > 1 {
		lines = lines[:len(lines)-1] // the last may be cut
	}
	best, bestN := "", 0
	var ts timeCache
	for _, p := range CommonPrefixes {
		c, err := CompilePrefix(p)
		if err != nil {
			continue
		}
		n := 0
		var f fields
		for _, l := range lines {
			if len(l) > 0 && l[0] != '\t' && c.match(l, &ts, time.UTC, &f) && !f.partial {
				if _, _, ok := severity(l[f.restOffset:]); ok {
					n++
				}
			}
		}
		if n > bestN {
			best, bestN = p, n
		}
	}
	if bestN == 0 {
		return nil, fmt.Errorf("cannot tell the log_line_prefix (tried %q): give it with --log-line-prefix", CommonPrefixes)
	}
	return CompilePrefix(best)
}

// severity reads "LOG:  " (or ERROR, DETAIL, STATEMENT...) and returns
// it and the message after it.
func severity(b []byte) (string, []byte, bool) {
	i := 0
	for i < len(b) && (b[i] >= 'A' && b[i] <= 'Z' || b[i] >= '0' && b[i] <= '9') {
		i++
	}
	if i == 0 || i+3 > len(b) || b[i] != ':' || b[i+1] != ' ' || b[i+2] != ' ' {
		return "", nil, false
	}
	return sevName(b[:i]), b[i+3:], true
}

func sevName(b []byte) string {
	switch string(b) {
	case "LOG":
		return "LOG"
	case "DETAIL":
		return "DETAIL"
	case "STATEMENT":
		return "STATEMENT"
	case "ERROR":
		return "ERROR"
	}
	return string(b)
}
