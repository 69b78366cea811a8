package dumpload

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/data/dump"
)

// Text from a dump (statements, names, the server's messages about them)
// is untrusted: before it is printed or stored it has passwords masked and
// control characters escaped, so that a dump cannot leak a password into
// a report or drive the terminal that shows it.

// Printable returns s with every character that is not printable
// (control characters such as ESC, C1 controls, format characters,
// invalid UTF-8) escaped as \xNN or \uNNNN; a backslash stays as it is.
func Printable(s string) string { return printable(s) }

func printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || !strconv.IsPrint(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !strconv.IsPrint(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case !strconv.IsPrint(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

// quoteText quotes a name from a dump for a message.
func quoteText(s string) string { return strconv.Quote(s) }

// maskStatement masks the password literals of a statement.
func maskStatement(sql string) string {
	m, _ := capture.MaskPasswords(sql)
	return m
}

// literal is a quoted string of a statement.
var literal = regexp.MustCompile(`'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|\$\$.*?\$\$`)

// maskError masks in msg (a server's message about sql) the string
// literals that masking takes out of sql: servers quote the statement
// text near an error.
func maskError(msg, sql string) string {
	masked := maskStatement(sql)
	if masked == sql {
		return msg
	}
	for _, lit := range literal.FindAllString(sql, -1) {
		if strings.Contains(masked, lit) {
			continue
		}
		inner := strings.Trim(lit, `'"$`)
		if inner != "" {
			msg = strings.ReplaceAll(msg, inner, "***")
		}
	}
	return msg
}

// skipAdmin counts a server administration statement not run.
func (l *loader) skipAdmin(st *dump.Statement) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.res.AdminStatementsSkipped == 0 {
		l.firstAdmin = printable(st.Where())
	}
	l.res.AdminStatementsSkipped++
}

// skipAccount counts an account or privilege statement that is not run.
func (l *loader) skipAccount(st *dump.Statement) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.res.AccountStatementsSkipped == 0 {
		l.firstAccount = printable(st.Where())
	}
	l.res.AccountStatementsSkipped++
}
