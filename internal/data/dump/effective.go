package dump

import (
	"strconv"
	"strings"
)

// Server is the server a dump is read for: the classifier reads MySQL
// version comments (/*!NNNNN ... */, /*M!NNNNNN ... */) as that server
// reads them, code where it runs them and comment where it skips them.
type Server struct {
	// MariaDB servers run /*M!NNNNNN ... */ comments; MySQL skips them.
	MariaDB bool
	// Version numbers the server as version comments do (10.11.6 is
	// 101106, 8.0.36 is 80036); 0 is unknown: every version comment is
	// read as code.
	Version int
}

// ParseServer reads a server version string such as "10.11.6-MariaDB-log"
// or "8.0.36"; a string it cannot read gives Version 0.
func ParseServer(mariadb bool, version string) Server {
	s := Server{MariaDB: mariadb}
	f := strings.FieldsFunc(version, func(r rune) bool { return r < '0' || r > '9' })
	if len(f) < 3 {
		return s
	}
	var n [3]int
	for i := range n {
		v, err := strconv.Atoi(f[i])
		if err != nil || v > 99 || (i == 0 && v > 99) {
			return s
		}
		n[i] = v
	}
	s.Version = n[0]*10000 + n[1]*100 + n[2]
	return s
}

// runs reports whether s runs a version comment: mariaOnly for /*M!, v
// the version digits (-1 for none).
func (s Server) runs(mariaOnly bool, v int) bool {
	if mariaOnly && !s.MariaDB && s.Version != 0 {
		return false
	}
	return v < 0 || s.Version == 0 || v <= s.Version
}

// reading is how effectiveText treats version comments.
type reading int

const (
	readAsServer reading = iota // as Server runs them
	readAllCode                 // every version comment is code
	readNoCode                  // every version comment is a comment
)

// effectiveText is sql as the server parses it: comments become one
// space each, version comments code or a space as the server (or mode)
// has it; quoted strings and names are kept as they are. It reports
// whether sql has version comments at all.
func effectiveText(sql string, syn Syntax, srv Server, mode reading) (string, bool) {
	var b strings.Builder
	b.Grow(len(sql))
	versioned := false
	inVersion := false // inside a version comment read as code
	s := sql
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\'' || c == '"' || (c == '`' && syn == MySQL):
			j := endQuoted(s, i, syn)
			b.WriteString(s[i:j])
			i = j
		case c == '$' && syn == Postgres && (i == 0 || !isIdentByte(s[i-1])):
			if j, ok := endDollar(s, i); ok {
				b.WriteString(s[i:j])
				i = j
			} else {
				b.WriteByte(c)
				i++
			}
		case c == '#' && syn == MySQL, c == '-' && i+1 < len(s) && s[i+1] == '-' && (syn == Postgres || i+2 >= len(s) || s[i+2] <= ' '):
			k := strings.IndexByte(s[i:], '\n')
			if k < 0 {
				i = len(s)
			} else {
				i += k
			}
			b.WriteByte(' ')
		case c == '*' && inVersion && i+1 < len(s) && s[i+1] == '/':
			inVersion = false
			i += 2
			b.WriteByte(' ')
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := i + 2
			if syn == MySQL && !inVersion && j < len(s) && (s[j] == '!' || (s[j] == 'M' && j+1 < len(s) && s[j+1] == '!')) {
				versioned = true
				mariaOnly := s[j] == 'M'
				if mariaOnly {
					j++
				}
				j++
				d := j
				for j < len(s) && j-d < 6 && s[j] >= '0' && s[j] <= '9' {
					j++
				}
				v := -1
				if j > d {
					v, _ = strconv.Atoi(s[d:j])
				}
				code := mode == readAllCode || (mode == readAsServer && srv.runs(mariaOnly, v))
				if code {
					inVersion = true
					i = j
					b.WriteByte(' ')
					continue
				}
			}
			i = endComment(s, i, syn)
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), versioned
}

// endQuoted returns the index after the string or name quoted at i (the
// end of s if unterminated). MySQL strings take backslash escapes;
// PostgreSQL only E-prefixed strings.
func endQuoted(s string, i int, syn Syntax) int {
	q := s[i]
	bs := syn == MySQL && q != '`'
	if syn == Postgres && q == '\'' && i > 0 && (s[i-1] == 'E' || s[i-1] == 'e') && (i < 2 || !isIdentByte(s[i-2])) {
		bs = true
	}
	j := i + 1
	for j < len(s) {
		switch {
		case bs && s[j] == '\\':
			j += 2
		case s[j] == q && j+1 < len(s) && s[j+1] == q:
			j += 2
		case s[j] == q:
			return j + 1
		default:
			j++
		}
	}
	return len(s)
}

// endDollar returns the index after a $tag$...$tag$ string at i; ok is
// false if '$' opens none.
func endDollar(s string, i int) (int, bool) {
	j := i + 1
	for j < len(s) && s[j] != '$' {
		c := s[j]
		if !(c == '_' || c|0x20 >= 'a' && c|0x20 <= 'z' || c >= 0x80 || (j > i+1 && c >= '0' && c <= '9')) {
			return 0, false
		}
		j++
	}
	if j >= len(s) {
		return 0, false
	}
	tag := s[i : j+1]
	k := strings.Index(s[j+1:], tag)
	if k < 0 {
		return len(s), true
	}
	return j + 1 + k + len(tag), true
}

// endComment returns the index after the /* comment at i; PostgreSQL
// comments nest, MySQL ones end at the first */.
func endComment(s string, i int, syn Syntax) int {
	depth := 0
	j := i
	for j+1 < len(s) {
		switch {
		case s[j] == '/' && s[j+1] == '*' && (depth == 0 || syn == Postgres):
			depth++
			j += 2
		case s[j] == '*' && s[j+1] == '/':
			depth--
			j += 2
			if depth == 0 {
				return j
			}
		default:
			j++
		}
	}
	return len(s)
}
