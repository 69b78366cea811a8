package capture

import "strings"

// CopyFromStdin reports whether q is PostgreSQL's COPY ... FROM STDIN: the
// rows follow on the connection, not in the statement, and no log holds
// them, so a replay of the statement alone would wait for them for ever.
// Leading whitespace and comments are skipped; the words are matched
// without regard to case, outside quotes.
func CopyFromStdin(q string) bool {
	q = skipSpaceAndComments(q)
	if len(q) < 5 || !strings.EqualFold(q[:4], "copy") || isIdentByte(q[4]) {
		return false
	}
	prevFrom := false
	for i := 4; i < len(q); {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(q[i+1:], c)
			if j < 0 {
				return false
			}
			i += j + 2
			prevFrom = false
		case c == '-' && strings.HasPrefix(q[i:], "--"), c == '/' && strings.HasPrefix(q[i:], "/*"):
			i = len(q) - len(skipSpaceAndComments(q[i:]))
		case isIdentByte(c):
			j := i
			for j < len(q) && isIdentByte(q[j]) {
				j++
			}
			w := q[i:j]
			if prevFrom && strings.EqualFold(w, "stdin") {
				return true
			}
			prevFrom = strings.EqualFold(w, "from")
			i = j
		case c == ';':
			return false
		default:
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				prevFrom = false
			}
			i++
		}
	}
	return false
}

func skipSpaceAndComments(q string) string {
	for {
		q = strings.TrimLeft(q, " \t\r\n")
		switch {
		case strings.HasPrefix(q, "--"):
			i := strings.IndexByte(q, '\n')
			if i < 0 {
				return ""
			}
			q = q[i+1:]
		case strings.HasPrefix(q, "/*"):
			i := strings.Index(q[2:], "*/")
			if i < 0 {
				return ""
			}
			q = q[i+4:]
		default:
			return q
		}
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
