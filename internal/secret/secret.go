// Package secret hides passwords in text: DSNs, key=value options, error
// messages and command lines. Every place that prints, stores or reports
// such text masks it here.
package secret

import (
	"regexp"
	"strings"
)

// secretPatterns match what looks like a password in a DSN or a command
// line, in the forms dbarena and its drivers use:
//
//	scheme://user:secret@host     URL user info (MySQL, PostgreSQL)
//	user:secret@tcp(host)/db      go-sql-driver/mysql
//	password=secret               libpq key/value and URL query parameters
//
// A password in URL user info runs to the last '@' of its word, so one that
// itself contains '@' is hidden whole. Masking is idempotent.
type secretPattern struct {
	re   *regexp.Regexp
	repl string
}

// patterns are compiled once; they are never modified.
var patterns = [...]secretPattern{
	{
		// group 1: what precedes the user (start, "://", a separator);
		// group 2: the user; the password must not start with "//", so
		// that "mysql://u:p@h" is matched at "u", not at "mysql".
		re:   regexp.MustCompile(`(^|://|[\s"'=(,;])([^\s:/@"'=(,;]*):(?:[^/\s"']|/[^/\s"'])[^\s"']*@`),
		repl: "${1}${2}:***@",
	},
	{
		re:   regexp.MustCompile(`(?i)((?:^|[\s?&;,"'-])(?:password|passwd|pwd|pass|sslpassword)\s*=\s*)(?:'[^']*'|"[^"]*"|[^\s&;,'"]*)`),
		repl: "${1}***",
	},
}

// Mask returns s with anything that looks like a password replaced by
// "***". It is idempotent and safe for concurrent use.
func Mask(s string) string {
	for _, p := range patterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

// MaskCommand masks every argument of a command line, and also the
// argument that follows a bare password flag ("--password P", "-p P"), and
// the value of a credential header ("--header 'Authorization: ...'",
// MaskHeader).
func MaskCommand(args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		if i > 0 && isPasswordFlag(args[i-1]) {
			out[i] = "***"
			continue
		}
		if i > 0 && args[i-1] == "--header" {
			a = MaskHeader(a)
		} else if h, ok := strings.CutPrefix(a, "--header="); ok {
			a = "--header=" + MaskHeader(h)
		}
		out[i] = Mask(a)
	}
	return out
}

func isPasswordFlag(a string) bool {
	switch a {
	case "-p", "--password", "-password", "--pass", "--passwd", "--pg-password", "--pgsql-password", "--mysql-password", "--sslpassword":
		return true
	}
	return false
}

// MaskURL masks one URL or DSN given whole (a flag's value, a line of a
// list), where Mask's word rules could stop early: the user info runs from
// "://" to the last '@' that comes before any '?' or '#', whatever it holds
// (a password with spaces, newlines or quotes), and its password part
// becomes "***". The rest goes through Mask (password=... parameters).
func MaskURL(s string) string {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		return Mask(s)
	}
	head := len(s) - len(rest)
	end := len(rest)
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		end = i
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return Mask(s)
	}
	user, _, hasPassword := strings.Cut(rest[:at], ":")
	if !hasPassword {
		return Mask(s)
	}
	return Mask(s[:head] + user + ":***" + rest[at:])
}
