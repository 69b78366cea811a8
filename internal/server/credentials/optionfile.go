package credentials

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// ClientGroups are the option-file groups whose password dbarena uses, in
// the order they are read (a later group's value wins, as in the mysql
// client): the MySQL and MariaDB client groups, then dbarena's own.
var ClientGroups = []string{"client", "client-server", "client-mariadb", "dbarena"}

// OptionFile is a parsed MySQL-style option file: group name -> option
// name (with '_' spelled '-') -> value. An option given twice keeps its
// last value. An option without '=' has the value "" and Bare set.
type OptionFile struct {
	Groups map[string]map[string]OptionValue
}

// OptionValue is one option's value and where it was set.
type OptionValue struct {
	Value string
	// Bare is an option written without '=' ("password" alone asks the
	// mysql client to prompt).
	Bare bool
	Line int
}

// ParseOptionFile parses a my.cnf-style file as the mysql client does:
// '#' and ';' lines are comments, "[group]" starts a group, "name=value"
// sets an option (spaces around both trimmed; a '#' outside quotes ends the
// value; matching surrounding quotes are removed; \n \t \r \b \s \" \' \\
// are escapes). "!include" and "!includedir" lines are skipped, not
// followed. Like mysql, it refuses a group line without ']' and an option
// before any group: the error names name:line and never the line's text.
func ParseOptionFile(r io.Reader, name string) (*OptionFile, error) {
	of := &OptionFile{Groups: map[string]map[string]OptionValue{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	var group map[string]OptionValue
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' || line[0] == '!' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return nil, fmt.Errorf("%s:%d: group line without ']' (want [client])", name, n)
			}
			g := strings.ToLower(strings.TrimSpace(line[1:end]))
			if of.Groups[g] == nil {
				of.Groups[g] = map[string]OptionValue{}
			}
			group = of.Groups[g]
			continue
		}
		if group == nil {
			return nil, fmt.Errorf("%s:%d: option before any [group] (want a [client] line first)", name, n)
		}
		key, val, hasEq := strings.Cut(line, "=")
		key = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(key)), "_", "-")
		if !hasEq {
			key = strings.TrimSpace(removeEndComment(key))
			group[key] = OptionValue{Bare: true, Line: n}
			continue
		}
		group[key] = OptionValue{Value: optionValue(val), Line: n}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, n+1, err)
	}
	return of, nil
}

// optionValue unquotes and unescapes the text after '='.
func optionValue(v string) string {
	v = strings.TrimSpace(removeEndComment(strings.TrimSpace(v)))
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i == len(v)-1 {
			b.WriteByte(c)
			continue
		}
		i++
		switch v[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 's':
			b.WriteByte(' ')
		case '"', '\'', '\\':
			b.WriteByte(v[i])
		default: // unknown escapes keep their backslash
			b.WriteByte('\\')
			b.WriteByte(v[i])
		}
	}
	return b.String()
}

// removeEndComment cuts s at the first '#' outside quotes.
func removeEndComment(s string) string {
	var quote byte
	escape := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c == '\'' || c == '"') && !escape {
			switch quote {
			case 0:
				quote = c
			case c:
				quote = 0
			}
		}
		if quote == 0 && c == '#' {
			return s[:i]
		}
		escape = quote != 0 && c == '\\' && !escape
	}
	return s
}

// Password returns the password the client groups set, if any: the last
// group in ClientGroups that has a "password=" wins.
func (of *OptionFile) Password() (OptionValue, bool) {
	var (
		pw    OptionValue
		found bool
	)
	for _, g := range ClientGroups {
		if v, ok := of.Groups[g]["password"]; ok && !v.Bare {
			pw, found = v, true
		}
	}
	return pw, found
}
