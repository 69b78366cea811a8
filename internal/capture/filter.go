package capture

import (
	"slices"
	"strings"
	"time"
)

// Filter selects events. A zero Filter keeps everything; each non-empty
// field narrows it.
type Filter struct {
	// Since and Until bound the start time (Since inclusive, Until
	// exclusive); zero means unbounded.
	Since, Until time.Time
	// Databases, Users, Sessions and Kinds keep events whose field is in
	// the list. Connect and quit events of kept sessions are kept whatever
	// Databases says, and an event with no database is kept.
	Databases, Users, Sessions, Kinds []string
	// ReadOnly keeps SELECT and SHOW statements (pt-upgrade's default),
	// and what a replay needs to run them as the application did: connect,
	// quit, close, USE, SET (but not SET PASSWORD), transaction control
	// (BEGIN, START TRANSACTION, COMMIT, ROLLBACK, SAVEPOINT, RELEASE),
	// DEALLOCATE and PREPARE/EXECUTE of a SELECT.
	ReadOnly bool
}

// Keep reports whether r passes the filter.
func (f *Filter) Keep(r *Record) bool {
	if !f.Since.IsZero() && r.At < f.Since.UnixMicro() {
		return false
	}
	if !f.Until.IsZero() && r.At >= f.Until.UnixMicro() {
		return false
	}
	if len(f.Sessions) > 0 && !slices.Contains(f.Sessions, r.Session) {
		return false
	}
	if len(f.Users) > 0 && r.User != "" && !slices.Contains(f.Users, r.User) {
		return false
	}
	if len(f.Kinds) > 0 && !slices.Contains(f.Kinds, r.Kind) {
		return false
	}
	sessionEvent := r.Kind == KindConnect || r.Kind == KindQuit
	if len(f.Databases) > 0 && r.DB != "" && !sessionEvent && !slices.Contains(f.Databases, r.DB) {
		return false
	}
	if f.ReadOnly && !readOnlyKeeps(r) {
		return false
	}
	return true
}

func readOnlyKeeps(r *Record) bool {
	switch r.Kind {
	case KindConnect, KindQuit, KindClose:
		return true
	case KindExecute:
		if r.SQL == "" {
			return true
		}
	}
	return ReadOnlyStatement(r.SQL)
}

// ReadOnlyStatement reports whether sql is kept by Filter.ReadOnly.
func ReadOnlyStatement(sql string) bool {
	w := FirstWord(sql)
	switch w {
	case "SELECT", "SHOW", "USE", "BEGIN", "START", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "DEALLOCATE", "END":
		return w != "SELECT" || !selectWrites(sql)
	case "SET":
		rest := strings.TrimSpace(sql[strings.Index(strings.ToUpper(sql), "SET")+3:])
		return FirstWord(rest) != "PASSWORD"
	case "PREPARE":
		// PREPARE name FROM 'SELECT ...' (MySQL) or PREPARE name AS SELECT (PostgreSQL).
		up := strings.ToUpper(sql)
		for _, sep := range []string{" FROM ", " AS "} {
			if i := strings.Index(up, sep); i >= 0 {
				rest := strings.TrimLeft(sql[i+len(sep):], " \t\r\n'\"(")
				return FirstWord(rest) == "SELECT"
			}
		}
	case "EXECUTE":
		return true
	}
	return false
}

// selectWrites reports a SELECT ... INTO (a table or a file).
func selectWrites(sql string) bool {
	up := strings.ToUpper(sql)
	return strings.Contains(up, " INTO ") && !strings.Contains(up, " INTO @")
}

// FirstWord returns the first keyword of sql in upper case, after
// whitespace, comments and opening parentheses.
func FirstWord(sql string) string {
	s := sql
	for {
		s = strings.TrimLeft(s, " \t\r\n(")
		switch {
		case strings.HasPrefix(s, "/*"):
			i := strings.Index(s[2:], "*/")
			if i < 0 {
				return ""
			}
			s = s[i+4:]
			continue
		case strings.HasPrefix(s, "--") || strings.HasPrefix(s, "#"):
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				return ""
			}
			s = s[i+1:]
			continue
		}
		break
	}
	end := 0
	for end < len(s) && (s[end]|0x20 >= 'a' && s[end]|0x20 <= 'z' || s[end] == '_') {
		end++
	}
	return strings.ToUpper(s[:end])
}
