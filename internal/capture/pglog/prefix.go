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
	hasC                                bool // %c
}

type seg struct {
	lit string // a literal, or
	esc byte   // an escape letter
	// next is the literal after an escape ("" if none).
	next string
}

// CommonPrefixes are the log_line_prefix values tried when none is
// given: Debian's, PostgreSQL's default, pgBadger's and pgreplay's
// recommendations, Amazon RDS's. DetectPrefix also tries prefixes read
// off the log's own lines (inferPrefix).
var CommonPrefixes = []string{
	"%m [%p] %q%u@%d ",
	"%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ",
	"%t [%p]: user=%u,db=%d,app=%a,client=%h ",
	"%t [%p]: [%l-1] db=%d,user=%u,app=%a,client=%h ",
	"%t [%p]: db=%d,user=%u,app=%a,client=%h ",
	"%m [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ",
	"%t [%p]: [%l-1] user=%u,db=%d ",
	"%t [%p]: [%l-1] ",
	"%t:%r:%u@%d:[%p]:",
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
			c.hasC = c.hasC || e == 'c'
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

// DetectPrefix picks the log_line_prefix that matches the most of the
// first lines of a log (lines with a severity after the prefix): one of
// CommonPrefixes, or one read off the lines themselves (inferPrefix); on a
// tie the earlier common one wins.
func DetectPrefix(head []byte) (*Prefix, error) {
	lines := bytes.Split(head, []byte{'\n'})
	if len(lines) > 1 {
		lines = lines[:len(lines)-1] // the last may be cut
	}
	cands := append([]string(nil), CommonPrefixes...)
	seen := map[string]bool{}
	for _, p := range cands {
		seen[p] = true
	}
	tried := 0
	for _, l := range lines {
		if tried == 200 {
			break
		}
		if len(l) == 0 || l[0] < '0' || l[0] > '9' {
			continue
		}
		tried++
		if p := inferPrefix(l); p != "" && !seen[p] {
			seen[p] = true
			cands = append(cands, p)
		}
	}
	best, bestN := "", 0
	var ts timeCache
	for _, p := range cands {
		c, err := CompilePrefix(p)
		if err != nil {
			continue
		}
		n := 0
		var f fields
		for _, l := range lines {
			// A %q prefix cut short (a background process) counts too.
			if len(l) > 0 && l[0] != '\t' && c.match(l, &ts, time.UTC, &f) && plausible(&f) {
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
		return nil, fmt.Errorf("cannot tell the log_line_prefix (tried %q and the lines' own form): give it with --log-line-prefix", CommonPrefixes)
	}
	return CompilePrefix(best)
}

// plausible says whether what a prefix read looks like what its escapes
// stand for: a process id of digits, a user and database without spaces
// (a prefix that reads "[queryid=1] app" as the user is the wrong one).
func plausible(f *fields) bool {
	for _, c := range f.pid {
		if c < '0' || c > '9' {
			return false
		}
	}
	return bytes.IndexByte(f.user, ' ') < 0 && bytes.IndexByte(f.db, ' ') < 0 && (len(f.session) == 0 || isSessionID(string(f.session)))
}

// severities are the severities a message starts with.
var severities = []string{"LOG", "ERROR", "FATAL", "PANIC", "WARNING", "NOTICE", "INFO", "DEBUG", "DEBUG1", "DEBUG2",
	"DEBUG3", "DEBUG4", "DEBUG5", "DETAIL", "HINT", "CONTEXT", "STATEMENT", "QUERY", "LOCATION"}

// inferPrefix reads a log_line_prefix off one line: a time (%m or %t) at
// its start, then, up to the first severity ("LOG:  "), delimiters
// (space , : ; [ ] | ( )) kept as literals and the words between them
// read as escapes: KEY=VALUE by its key (user, usr: %u; db, database: %d;
// app, appli, application: %a; client, host: %h; session: %c; pid: %p;
// queryid: %Q), USER@DB as %u@%d, a session id (hex.hex) as %c, the first
// number as %p and later ones as %x, N-1 (%l-1), other words with digits
// or dots (a host) as %h; words of letters stay literal. "" when the line
// has no time or no severity, or the guess names no session.
func inferPrefix(line []byte) string {
	var ts timeCache
	_, n, ok := ts.parse(line, time.UTC)
	if !ok {
		return ""
	}
	var b strings.Builder
	if line[19] == '.' {
		b.WriteString("%m")
	} else {
		b.WriteString("%t")
	}
	body := line[n:]
	end := -1
	for i := 0; i < len(body) && end < 0; i++ {
		if i > 0 && body[i-1] >= 'A' && body[i-1] <= 'Z' {
			continue
		}
		for _, sv := range severities {
			if bytes.HasPrefix(body[i:], []byte(sv+": ")) {
				end = i
				break
			}
		}
	}
	if end < 0 {
		return ""
	}
	body = body[:end]
	delim := func(c byte) bool { return bytes.IndexByte([]byte(" ,:;[]|()"), c) >= 0 }
	pid := false
	for j := 0; j < len(body); {
		if delim(body[j]) {
			b.WriteByte(body[j])
			j++
			continue
		}
		k := j
		for k < len(body) && !delim(body[k]) {
			k++
		}
		w := string(body[j:k])
		j = k
		if key, _, ok := strings.Cut(w, "="); ok && key != "" {
			b.WriteString(strings.ReplaceAll(key, "%", "%%") + "=")
			switch strings.ToLower(key) {
			case "user", "usr", "u":
				b.WriteString("%u")
			case "db", "database", "d":
				b.WriteString("%d")
			case "client", "host", "h", "remote":
				b.WriteString("%h")
			case "session", "c":
				b.WriteString("%c")
			case "pid", "p":
				b.WriteString("%p")
				pid = true
			case "queryid":
				b.WriteString("%Q")
			default:
				b.WriteString("%a")
			}
			continue
		}
		if _, d, ok := strings.Cut(w, "@"); ok && !strings.Contains(d, "@") {
			b.WriteString("%u@%d")
			continue
		}
		switch {
		case isSessionID(w):
			b.WriteString("%c")
		case allDigits(w) && !pid:
			b.WriteString("%p")
			pid = true
		case allDigits(w):
			b.WriteString("%x")
		case isLineNum(w):
			b.WriteString("%l" + w[strings.IndexByte(w, '-'):])
		case strings.ContainsAny(w, "0123456789."):
			b.WriteString("%h")
		default:
			b.WriteString(strings.ReplaceAll(w, "%", "%%"))
		}
	}
	p := b.String()
	if _, err := CompilePrefix(p); err != nil {
		return ""
	}
	return p
}

func allDigits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
}

// isLineNum is %l followed by a literal "-1" (pgBadger's [%l-1]).
func isLineNum(w string) bool {
	a, c, ok := strings.Cut(w, "-")
	return ok && allDigits(a) && allDigits(c)
}

// isSessionID is %c: hex digits, a dot, hex digits.
func isSessionID(w string) bool {
	a, c, ok := strings.Cut(w, ".")
	hex := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
				return false
			}
		}
		return s != ""
	}
	return ok && hex(a) && hex(c) && len(a) >= 6
}

// severity reads "LOG:  " (or ERROR, DETAIL, STATEMENT...; some logs have
// one space after the colon) and returns it and the message after it.
func severity(b []byte) (string, []byte, bool) {
	i := 0
	for i < len(b) && (b[i] >= 'A' && b[i] <= 'Z' || b[i] >= '0' && b[i] <= '9') {
		i++
	}
	if i == 0 || i+2 > len(b) || b[i] != ':' || b[i+1] != ' ' {
		return "", nil, false
	}
	if i+2 < len(b) && b[i+2] == ' ' {
		return sevName(b[:i]), b[i+3:], true
	}
	return sevName(b[:i]), b[i+2:], true
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
