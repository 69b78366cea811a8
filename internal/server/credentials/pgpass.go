package credentials

import (
	"bufio"
	"io"
	"strings"
)

// PgpassEntry is one line of a PostgreSQL password file:
// hostname:port:database:username:password. A field "*" matches anything.
type PgpassEntry struct {
	Host, Port, Database, User, Password string
	// Line is the entry's line number in its file.
	Line int
	// wild marks the key fields written as an unescaped "*".
	wild [4]bool
}

// ParsePgpass reads a password file the way libpq does: lines starting
// with '#' are comments; in each field '\' escapes the next character
// (so "\:" and "\\" are a literal ':' and '\'); a line with fewer than five
// fields is ignored silently, as libpq ignores it; the password runs to
// the next unescaped ':' or the end of the line. It never fails on content.
func ParsePgpass(r io.Reader) ([]PgpassEntry, error) {
	var out []PgpassEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		fields, wild, ok := splitPgpass(line)
		if !ok {
			continue
		}
		out = append(out, PgpassEntry{Host: fields[0], Port: fields[1], Database: fields[2],
			User: fields[3], Password: fields[4], Line: n, wild: wild})
	}
	return out, sc.Err()
}

// splitPgpass splits a line into its five de-escaped fields and marks the
// key fields that are an unescaped "*" (an escaped "\*" is a literal star).
func splitPgpass(line string) (f [5]string, wild [4]bool, ok bool) {
	i := 0
	for k := 0; k < 5; k++ {
		if k < 4 && strings.HasPrefix(line[i:], "*:") {
			f[k], wild[k] = "*", true
			i += 2
			continue
		}
		var b strings.Builder
		for i < len(line) && line[i] != ':' {
			if line[i] == '\\' && i+1 < len(line) {
				i++
			}
			b.WriteByte(line[i])
			i++
		}
		val := b.String()
		if k < 4 {
			if i >= len(line) { // no ':' after a key field: too few fields
				return f, wild, false
			}
			i++ // the ':'
		}
		f[k] = val
	}
	return f, wild, true
}

// Matches reports whether the entry applies to a connection. host is
// "localhost" for a connection through the default socket directory.
func (e PgpassEntry) Matches(host, port, database, user string) bool {
	for i, v := range [4]string{host, port, database, user} {
		if !e.wild[i] && [4]string{e.Host, e.Port, e.Database, e.User}[i] != v {
			return false
		}
	}
	return true
}

// LookupPgpass returns the password of the first matching entry.
func LookupPgpass(entries []PgpassEntry, host, port, database, user string) (PgpassEntry, bool) {
	for _, e := range entries {
		if e.Matches(host, port, database, user) {
			return e, true
		}
	}
	return PgpassEntry{}, false
}
