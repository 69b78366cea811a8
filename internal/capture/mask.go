package capture

import (
	"strings"
)

// Password masking: a statement that sets or checks a password has the
// password literal replaced by '***' before it reaches a capture file (or
// an error message). Covered, with comments anywhere between the words
// and MySQL's executable comments (/*! ... */) read as code:
//   - IDENTIFIED [WITH|VIA plugin] BY|AS|USING [PASSWORD] '...', and every
//     literal of the user's authentication up to the next user, including
//     REPLACE '...' (ALTER USER ... IDENTIFIED BY 'new' REPLACE 'old') and
//     MariaDB's OR plugin USING '...';
//   - PASSWORD('...'), OLD_PASSWORD('...');
//   - SET PASSWORD [FOR user] = '...';
//   - any word ending in PASSWORD followed by a literal, with or without
//     "=": PostgreSQL's [ENCRYPTED] PASSWORD '...', CHANGE MASTER / CHANGE
//     REPLICATION SOURCE's MASTER_PASSWORD = '...' / SOURCE_PASSWORD = '...',
//     OPTIONS (password '...').
// A literal is '...' or "..." (doubled or backslashed quotes), with an E,
// U&, N, B, X or _charset prefix, or a PostgreSQL dollar-quoted $$...$$ /
// $tag$...$tag$ string. The statement is read twice, as MySQL reads it
// (backslash escapes, # comments) and as PostgreSQL does (neither), and a
// literal either reading finds is masked.

// mask is the text a password literal becomes.
const mask = "'***'"

// MaskPasswords returns sql with password literals replaced by '***', and
// whether it changed anything. Statements that cannot hold a password
// cost one case-insensitive scan.
func MaskPasswords(sql string) (string, bool) {
	if !mayHoldPassword(sql) {
		return sql, false
	}
	out := maskPass(sql, true)
	out = maskPass(out, false)
	return out, out != sql
}

// token is one token of a statement: a word (upper case), a literal, or a
// punctuation character.
type token struct {
	start, end int
	word       string // upper-case word; "" for others
	lit        bool
	punct      byte
}

// lexSQL splits s into tokens, dropping whitespace and comments (but for
// the text of executable comments). my selects MySQL's reading: backslash
// escapes in quoted strings and # comments.
func lexSQL(s string, my bool) []token {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-', c == '#' && my:
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			if i+2 < len(s) && (s[i+2] == '!' || s[i+2] == 'M' && i+3 < len(s) && s[i+3] == '!') {
				i += 3
				if s[i-1] == 'M' {
					i++
				}
				for i < len(s) && s[i] >= '0' && s[i] <= '9' {
					i++
				}
				continue
			}
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return out
			}
			i += end + 4
		case c == '*' && i+1 < len(s) && s[i+1] == '/':
			i += 2
		case c == '\'' || c == '"':
			j := quoted(s, i, my)
			out = append(out, token{start: i, end: j, lit: true})
			i = j
		case c == '$' && (i == 0 || !wordByte(s[i-1])):
			j := i + 1
			for j < len(s) && wordByte(s[j]) && !(j == i+1 && s[j] >= '0' && s[j] <= '9') {
				j++
			}
			if j < len(s) && s[j] == '$' {
				tag := s[i : j+1]
				end := strings.Index(s[j+1:], tag)
				k := len(s)
				if end >= 0 {
					k = j + 1 + end + len(tag)
				}
				out = append(out, token{start: i, end: k, lit: true})
				i = k
				continue
			}
			out = append(out, token{start: i, end: i + 1, punct: '$'})
			i++
		case wordByte(c):
			j := i
			for j < len(s) && wordByte(s[j]) {
				j++
			}
			// A literal's prefix: E'', U&'', N'', B'', X'', _utf8mb4''.
			w := strings.ToUpper(s[i:j])
			if j < len(s) && s[j] == '&' && w == "U" && j+1 < len(s) && s[j+1] == '\'' {
				k := quoted(s, j+1, false)
				out = append(out, token{start: i, end: k, lit: true})
				i = k
				continue
			}
			if j < len(s) && s[j] == '\'' && (w == "E" || w == "N" || w == "B" || w == "X" || w[0] == '_') {
				k := quoted(s, j, my || w == "E")
				out = append(out, token{start: i, end: k, lit: true})
				i = k
				continue
			}
			out = append(out, token{start: i, end: j, word: w})
			i = j
		default:
			out = append(out, token{start: i, end: i + 1, punct: c})
			i++
		}
	}
	return out
}

// quoted returns the end of the quoted string starting at s[i].
func quoted(s string, i int, backslash bool) int {
	q := s[i]
	j := i + 1
	for j < len(s) {
		switch {
		case s[j] == '\\' && backslash:
			j += 2
			continue
		case s[j] == q:
			if j+1 < len(s) && s[j+1] == q {
				j += 2
				continue
			}
			return j + 1
		}
		j++
	}
	return len(s)
}

func wordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// maskPass masks the password literals of s as read one way (my: MySQL's).
func maskPass(s string, my bool) string {
	toks := lexSQL(s, my)
	secret := make([]bool, len(toks))
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.word == "IDENTIFIED":
			// Every literal of this user's authentication, up to the next
			// user or the end of the statement.
			j := i + 1
			for ; j < len(toks); j++ {
				u := toks[j]
				if u.punct == ',' || u.punct == ';' || u.word == "COMMENT" || u.word == "ATTRIBUTE" || u.word == "REQUIRE" {
					break
				}
				if u.lit {
					secret[j] = true
				}
			}
			i = j - 1 // each token is looked at once
		case t.word == "SET" && i+1 < len(toks) && toks[i+1].word == "PASSWORD":
			for j := i + 2; j < len(toks); j++ {
				if toks[j].punct == ';' || toks[j].word == "SET" {
					break
				}
				if toks[j].punct == '=' && j+1 < len(toks) && toks[j+1].lit {
					secret[j+1] = true
					break
				}
			}
		case strings.HasSuffix(t.word, "PASSWORD"):
			j := i + 1
			for j < len(toks) && (toks[j].punct == '=' || toks[j].punct == '(') {
				j++
			}
			if j < len(toks) && toks[j].lit {
				secret[j] = true
			}
		}
	}
	var b strings.Builder
	last := 0
	for i, t := range toks {
		if !secret[i] {
			continue
		}
		b.WriteString(s[last:t.start])
		b.WriteString(mask)
		last = t.end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
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
