package dump

import "strings"

// A small tokenizer of one statement, for the rewrites: it knows quoting
// and comments well enough to never look inside a string.

type tokKind int

const (
	tWord   tokKind = iota // keyword or bare identifier (letters, digits, _, $, non-ASCII)
	tQuoted                // '...', "..." or `...`, quotes included
	tPunct                 // one byte of anything else ( ) , = . ;
	tMarker                // a version-comment opener /*!NNNNN or its closer */
)

type token struct {
	kind       tokKind
	text       string
	start, end int
}

type tokenizer struct {
	s   string
	pos int
}

func newTokenizer(s string) *tokenizer { return &tokenizer{s: s} }

// next returns the next token, skipping spaces and plain comments.
func (t *tokenizer) next() (token, bool) {
	s := t.s
	for t.pos < len(s) {
		c := s[t.pos]
		start := t.pos
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			t.pos++
		case c == '/' && t.pos+1 < len(s) && s[t.pos+1] == '*':
			j := t.pos + 2
			if j < len(s) && (s[j] == '!' || (s[j] == 'M' && j+1 < len(s) && s[j+1] == '!')) {
				for j < len(s) && (s[j] == '!' || s[j] == 'M') {
					j++
				}
				for j < len(s) && s[j] >= '0' && s[j] <= '9' {
					j++
				}
				t.pos = j
				return token{tMarker, s[start:j], start, j}, true
			}
			k := indexFrom(s, "*/", j)
			if k < 0 {
				t.pos = len(s)
				return token{}, false
			}
			t.pos = k + 2
		case c == '*' && t.pos+1 < len(s) && s[t.pos+1] == '/':
			t.pos += 2
			return token{tMarker, "*/", start, t.pos}, true
		case (c == '-' && t.pos+1 < len(s) && s[t.pos+1] == '-' && (t.pos+2 >= len(s) || s[t.pos+2] <= ' ')) || c == '#':
			k := indexFrom(s, "\n", t.pos)
			if k < 0 {
				t.pos = len(s)
			} else {
				t.pos = k + 1
			}
		case c == '\'' || c == '"' || c == '`':
			j := t.pos + 1
			for j < len(s) {
				if s[j] == '\\' && c != '`' {
					j += 2
					continue
				}
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			if j >= len(s) {
				j = len(s) - 1
			}
			t.pos = j + 1
			return token{tQuoted, s[start:t.pos], start, t.pos}, true
		case isIdentByte(c):
			j := t.pos
			for j < len(s) && isIdentByte(s[j]) {
				j++
			}
			t.pos = j
			return token{tWord, s[start:j], start, j}, true
		default:
			t.pos++
			return token{tPunct, s[start:t.pos], start, t.pos}, true
		}
	}
	return token{}, false
}

func indexFrom(s, sub string, from int) int {
	if from > len(s) {
		return -1
	}
	if k := strings.Index(s[from:], sub); k >= 0 {
		return from + k
	}
	return -1
}

// all returns every token of s.
func tokens(s string) []token {
	t := newTokenizer(s)
	var out []token
	for {
		tok, ok := t.next()
		if !ok {
			return out
		}
		out = append(out, tok)
	}
}
