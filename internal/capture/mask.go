package capture

import (
	"regexp"
	"strings"
)

// Password masking: a statement that sets or checks a password has the
// password literal replaced by '***' before it reaches a capture file.
// Covered: SET PASSWORD ... = '...', CREATE/ALTER USER ... IDENTIFIED
// [WITH plugin] BY|AS '...', PASSWORD('...') / OLD_PASSWORD('...'),
// GRANT ... IDENTIFIED BY '...', PostgreSQL's CREATE/ALTER ROLE|USER ...
// [ENCRYPTED] PASSWORD '...'.

// lit matches a quoted literal ('...' or "...", with doubled or
// backslashed quotes) and a PostgreSQL E” or dollar-less string.
const lit = `(?:[eE]?'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")`

var maskRules = []*regexp.Regexp{
	regexp.MustCompile(`(?is)(\bIDENTIFIED\s+(?:WITH\s+\S+\s+)?(?:BY|AS)\s+(?:PASSWORD\s*)?)` + lit),
	regexp.MustCompile(`(?is)(\b(?:OLD_)?PASSWORD\s*\(\s*)` + lit),
	regexp.MustCompile(`(?is)(\bSET\s+PASSWORD\b[^=]*=\s*)` + lit),
	regexp.MustCompile(`(?is)(\bPASSWORD\s+)` + lit),
}

// MaskPasswords returns sql with password literals replaced by '***', and
// whether it changed anything. Statements that cannot hold a password
// cost one case-insensitive scan.
func MaskPasswords(sql string) (string, bool) {
	if !mayHoldPassword(sql) {
		return sql, false
	}
	out := sql
	for _, re := range maskRules {
		out = re.ReplaceAllString(out, "$1'***'")
	}
	return out, out != sql
}

// mayHoldPassword reports whether sql contains "password" or "identified"
// in any case, without allocating.
func mayHoldPassword(s string) bool {
	for i := 0; i+8 <= len(s); i++ {
		if !maskFirst[s[i]] {
			continue
		}
		if strings.EqualFold(s[i:i+8], "password") || (i+10 <= len(s) && strings.EqualFold(s[i:i+10], "identified")) {
			return true
		}
	}
	return false
}

// maskFirst marks the first letters of "password" and "identified".
var maskFirst = func() (t [256]bool) {
	for _, c := range "pPiI" {
		t[c] = true
	}
	return t
}()
