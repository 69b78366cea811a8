package store

import "regexp"

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

func secretPatterns() []secretPattern {
	return []secretPattern{
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
}

// masker hides passwords in text. It holds compiled patterns and is safe
// for concurrent use.
type masker struct{ patterns []secretPattern }

func newMasker() masker { return masker{patterns: secretPatterns()} }

// mask returns s with anything that looks like a password replaced by "***".
func (m masker) mask(s string) string {
	for _, p := range m.patterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}

// maskCommand masks every argument of a command line, and also the argument
// that follows a bare password flag ("--password P", "-p P").
func (m masker) maskCommand(args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		if i > 0 && isPasswordFlag(args[i-1]) {
			out[i] = "***"
			continue
		}
		out[i] = m.mask(a)
	}
	return out
}

func isPasswordFlag(a string) bool {
	switch a {
	case "-p", "--password", "-password", "--pass", "--passwd", "--pg-password", "--mysql-password", "--sslpassword":
		return true
	}
	return false
}

// MaskSecrets returns s with anything that looks like a password (in a DSN,
// a key=value option or a command line) replaced by "***", the way the
// store masks what it saves. Readers use it as a second line of defence.
func MaskSecrets(s string) string { return newMasker().mask(s) }
