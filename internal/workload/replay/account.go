package replay

import "strings"

// Account and privilege statements are never replayed: a capture is
// untrusted input, and such a statement would change the sandbox's own
// accounts (a replayed SET PASSWORD, masked in the capture, sets the
// workload account's password to '***' and locks every later run out).
// They are skipped and counted by kind (docs/CLI.md, "Replay"):
//
//   - GRANT, REVOKE;
//   - CREATE, ALTER, DROP, RENAME of USER, ROLE or GROUP (CREATE OR
//     REPLACE USER too), ALTER DEFAULT PRIVILEGES;
//   - SET PASSWORD, SET [DEFAULT] ROLE, SET [SESSION|LOCAL] ROLE, SET
//     SESSION AUTHORIZATION, and any SET that names PASSWORD, ROLE or
//     AUTHORIZATION among its assignments;
//   - statements that run SQL of their own (PREPARE, EXECUTE IMMEDIATE,
//     DO, CREATE PROCEDURE / FUNCTION / TRIGGER / EVENT / RULE) whose text,
//     strings and bodies included, holds any of the above words or
//     PASSWORD or IDENTIFIED: "dynamic SQL".
//
// The statement text is read as the server reads it: MySQL's executable
// comments (/*! ... */, /*M! ... */) are code, other comments are not, and
// every statement of a multi-statement text is looked at.

// accountKind returns the kind of account or privilege statement q is
// ("SET PASSWORD", "ALTER ROLE", "dynamic SQL", ...), or "" for any
// other statement.
func accountKind(q string, pg bool) string {
	if !mayBeAccount(q) {
		return ""
	}
	toks := tokenize(q, pg, false)
	var stmt []string
	kind := ""
	flush := func() {
		if kind == "" && len(stmt) > 0 {
			kind = stmtKind(stmt, q, pg)
		}
		stmt = stmt[:0]
	}
	for _, t := range toks {
		if t == ";" {
			flush()
			continue
		}
		stmt = append(stmt, t)
	}
	flush()
	return kind
}

// mayBeAccount is a quick test that q contains one of the words every
// account statement has (GRANT, REVOKE, USER, ROLE, GROUP, PASSWORD,
// PRIVILEGES, AUTHORIZATION) or runs SQL of its own (PREPARE, EXECUTE,
// DO, CREATE): most statements need no tokenizing.
func mayBeAccount(q string) bool {
	for i := 0; i+2 <= len(q); i++ {
		switch q[i] | 0x20 {
		case 'g', 'r', 'u', 'p', 'a', 'e', 'd', 'c':
			for _, w := range accountHints {
				if len(q)-i >= len(w) && strings.EqualFold(q[i:i+len(w)], w) {
					return true
				}
			}
		}
	}
	return false
}

var accountHints = []string{"grant", "revoke", "user", "role", "group", "password", "privileges", "authorization", "prepare", "execute", "do", "create"}

// stmtKind classifies one statement's words (upper case).
func stmtKind(w []string, q string, pg bool) string {
	at := func(i int) string {
		if i < len(w) {
			return w[i]
		}
		return ""
	}
	principal := func(s string) bool { return s == "USER" || s == "ROLE" || s == "GROUP" }
	switch at(0) {
	case "GRANT", "REVOKE":
		return at(0)
	case "CREATE", "ALTER", "DROP", "RENAME":
		i := 1
		if at(0) == "CREATE" && at(1) == "OR" && at(2) == "REPLACE" {
			i = 3
		}
		if principal(at(i)) {
			return at(0) + " " + at(i)
		}
		if at(0) == "ALTER" && at(1) == "DEFAULT" && at(2) == "PRIVILEGES" {
			return "ALTER DEFAULT PRIVILEGES"
		}
		if at(0) == "CREATE" && routine(w[i:]) && (holdsAccountWords(q, pg) || runsDynamic(q, pg)) {
			return "dynamic SQL"
		}
	case "SET":
		switch {
		case at(1) == "PASSWORD":
			return "SET PASSWORD"
		case at(1) == "ROLE", at(1) == "DEFAULT" && at(2) == "ROLE",
			(at(1) == "SESSION" || at(1) == "LOCAL") && at(2) == "ROLE":
			return "SET ROLE"
		case at(1) == "SESSION" && at(2) == "AUTHORIZATION":
			return "SET SESSION AUTHORIZATION"
		}
		for _, x := range w[1:] {
			if x == "PASSWORD" || x == "ROLE" || x == "AUTHORIZATION" {
				return "SET PASSWORD"
			}
		}
		// SET @q = '...' feeds PREPARE s FROM @q.
		if holdsAccountWords(q, pg) {
			return "dynamic SQL"
		}
	case "PREPARE":
		// PREPARE s FROM @q runs text this check cannot see.
		if holdsAccountWords(q, pg) || !fromLiteral(q) {
			return "dynamic SQL"
		}
	case "DO":
		if holdsAccountWords(q, pg) || runsDynamic(q, pg) {
			return "dynamic SQL"
		}
	case "EXECUTE":
		if at(1) == "IMMEDIATE" && (holdsAccountWords(q, pg) || !fromLiteral(q)) {
			return "dynamic SQL"
		}
	}
	return ""
}

// routine reports whether the words after CREATE [OR REPLACE] create
// stored code (skipping DEFINER = ... and other attributes).
func routine(w []string) bool {
	for i, x := range w {
		switch x {
		case "PROCEDURE", "FUNCTION", "TRIGGER", "EVENT", "RULE", "PACKAGE":
			return true
		case "(", "AS", "BEGIN":
			return false
		}
		if i > 8 {
			return false
		}
	}
	return false
}

// runsDynamic reports whether stored code or a DO block runs SQL built at
// run time (EXECUTE, PREPARE), whose text this check cannot see.
func runsDynamic(q string, pg bool) bool {
	for _, x := range tokenize(q, pg, true) {
		if x == "EXECUTE" || x == "PREPARE" {
			return true
		}
	}
	return false
}

// fromLiteral reports whether a PREPARE ... FROM or EXECUTE IMMEDIATE
// statement's SQL is a string literal (not a variable or expression).
func fromLiteral(q string) bool {
	t := strings.TrimRight(strings.TrimSpace(q), "; \t\n")
	if t == "" {
		return false
	}
	last := t[len(t)-1]
	if last != '\'' && last != '"' {
		return false
	}
	// The literal is the statement's last token and starts after FROM
	// or IMMEDIATE.
	u := strings.ToUpper(t)
	k := strings.Index(u, " FROM ")
	if i := strings.Index(u, "IMMEDIATE "); i >= 0 && (k < 0 || i < k) {
		k = i
	}
	if k < 0 {
		return false
	}
	rest := strings.TrimLeft(t[k:], " ")
	_, rest, _ = strings.Cut(rest, " ")
	rest = strings.TrimSpace(rest)
	if len(rest) < 2 || rest[0] != last {
		return false
	}
	// One literal: any quote inside is doubled or escaped.
	for i := 1; i < len(rest)-1; i++ {
		switch rest[i] {
		case '\\':
			i++
		case last:
			if i+1 >= len(rest)-1 || rest[i+1] != last {
				return false
			}
			i++
		}
	}
	return true
}

// holdsAccountWords reports whether q, its strings and bodies read as SQL
// too, holds words of an account statement.
func holdsAccountWords(q string, pg bool) bool {
	w := tokenize(q, pg, true)
	for i, x := range w {
		next := ""
		if i+1 < len(w) {
			next = w[i+1]
		}
		switch x {
		case "GRANT", "REVOKE", "PASSWORD", "IDENTIFIED", "AUTHORIZATION":
			return true
		case "CREATE", "ALTER", "DROP", "RENAME", "SET":
			if next == "USER" || next == "ROLE" || next == "GROUP" || next == "DEFAULT" {
				return true
			}
		}
	}
	return false
}

// tokenize splits q into upper-case words and the punctuation ";", "("
// and "=" as the server reads it: comments are dropped, except MySQL's
// executable ones whose text is code; string literals (and PostgreSQL's
// dollar-quoted bodies) are dropped, or, with inner, tokenized as SQL too.
func tokenize(q string, pg, inner bool) []string {
	var out []string
	var rec func(q string, depth int)
	rec = func(q string, depth int) {
		for i := 0; i < len(q); {
			c := q[i]
			switch {
			case c == '-' && i+1 < len(q) && q[i+1] == '-', c == '#' && !pg:
				for i < len(q) && q[i] != '\n' {
					i++
				}
			case c == '/' && i+1 < len(q) && q[i+1] == '*':
				if !pg && i+2 < len(q) && (q[i+2] == '!' || q[i+2] == 'M' && i+3 < len(q) && q[i+3] == '!') {
					// Executable comment: its version number, then code.
					i += 3
					if q[i-1] == 'M' {
						i++
					}
					for i < len(q) && q[i] >= '0' && q[i] <= '9' {
						i++
					}
					continue
				}
				end := strings.Index(q[i+2:], "*/")
				if end < 0 {
					return
				}
				i += end + 4
			case c == '*' && i+1 < len(q) && q[i+1] == '/':
				i += 2 // the end of an executable comment
			case c == '\'' || c == '"' || c == '`':
				j := i + 1
				var b strings.Builder
				for j < len(q) {
					if q[j] == '\\' && !pg && c != '`' && j+1 < len(q) {
						b.WriteByte(q[j+1])
						j += 2
						continue
					}
					if q[j] == c {
						if j+1 < len(q) && q[j+1] == c {
							b.WriteByte(c)
							j += 2
							continue
						}
						break
					}
					b.WriteByte(q[j])
					j++
				}
				if inner && c != '`' && depth < 4 {
					rec(b.String(), depth+1)
				}
				i = j + 1
			case c == '$' && pg && (i == 0 || !isWord(q[i-1])):
				j := i + 1
				for j < len(q) && isWord(q[j]) && !(q[j] >= '0' && q[j] <= '9' && j == i+1) {
					j++
				}
				if j < len(q) && q[j] == '$' {
					tag := q[i : j+1]
					end := strings.Index(q[j+1:], tag)
					body := q[j+1:]
					next := len(q)
					if end >= 0 {
						body = q[j+1 : j+1+end]
						next = j + 1 + end + len(tag)
					}
					if inner && depth < 4 {
						rec(body, depth+1)
					}
					i = next
					continue
				}
				i++
			case isWord(c):
				j := i
				for j < len(q) && isWord(q[j]) {
					j++
				}
				out = append(out, strings.ToUpper(q[i:j]))
				i = j
			case c == ';' || c == '(' || c == '=':
				out = append(out, string(c))
				i++
			default:
				i++
			}
		}
	}
	rec(q, 0)
	return out
}

func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
