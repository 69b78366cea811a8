// Package fingerprint normalises SQL statements as pt-query-digest does, so
// that statements differing only in their literals group together: literals
// become ?, IN lists and multi-row VALUES lists collapse to (?+), comments
// go, whitespace and case fold. It is a single pass over the text, with no
// allocation beyond the result.
package fingerprint

import (
	"encoding/hex"
	"hash/fnv"
	"strings"
)

// Flavor selects the lexical rules that differ between server families.
type Flavor int

const (
	// MySQL: "..." is a string, # starts a comment, backslash escapes in strings.
	MySQL Flavor = iota
	// Postgres: "..." is an identifier, $n a parameter, $tag$...$tag$ a string.
	Postgres
)

// tok is the kind of the last token written.
type tok int

const (
	tNone   tok = iota
	tWord       // keyword or identifier
	tLit        // ? (a literal or a placeholder)
	tOp         // operator
	tOpen       // (
	tClose      // )
	tComma      // ,
	tDot        // .
	tQuoted     // "ident" or `ident`
)

// Fingerprint returns the normalised form of the statement q.
func Fingerprint(q string, f Flavor) string {
	n := normalizer{q: q, f: f}
	n.out.Grow(len(q))
	n.run()
	return n.out.String()
}

// ID is a short stable identifier of a fingerprint: 16 hex digits.
func ID(fp string) string {
	h := fnv.New64a()
	h.Write([]byte(fp))
	var b [8]byte
	return hex.EncodeToString(h.Sum(b[:0]))
}

type normalizer struct {
	q    string
	f    Flavor
	out  strings.Builder
	last tok
	// lastWord is the last word written (lower case), for IN and VALUES.
	lastWord string
	// list tracks a collapsible list: the output length where "(" of an
	// IN (...) or VALUES (...) began, and whether only ? and , followed.
	listAt    int
	listOK    bool
	listDepth int
	inValues  bool // the list is a VALUES row
	valuesEnd int  // output length after a collapsed VALUES row, to merge the next
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isWord(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || (c|0x20 >= 'a' && c|0x20 <= 'z') || isDigit(c)
}
func isOp(c byte) bool { return strings.IndexByte("<>=!|&~^%*+-/:@?#", c) >= 0 }

// space writes the separator before a token of kind k.
func (n *normalizer) space(k tok) {
	switch {
	case n.last == tNone, n.last == tOpen, n.last == tDot:
	case k == tComma, k == tClose, k == tDot:
	default:
		n.out.WriteByte(' ')
	}
}

// emit writes a token.
func (n *normalizer) emit(k tok, s string) {
	n.space(k)
	n.out.WriteString(s)
	n.note(k)
}

// note updates the list state after a token of kind k was written.
func (n *normalizer) note(k tok) {
	if n.listAt >= 0 && n.listDepth > 0 && k != tLit && k != tComma && k != tOpen && k != tClose {
		n.listOK = false
	}
	n.last = k
}

func (n *normalizer) run() {
	q := n.q
	n.listAt = -1
	n.valuesEnd = -1
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case isSpace(c):
			i++
		case c == '-' && i+1 < len(q) && q[i+1] == '-',
			c == '#' && n.f == MySQL:
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				i = len(q)
			} else {
				i += j + 4
			}
		case c == '\'':
			i = n.skipString(i, '\'', n.f == MySQL)
			n.literal()
		case c == '"' && n.f == MySQL:
			i = n.skipString(i, '"', true)
			n.literal()
		case c == '"' || c == '`':
			j := n.skipString(i, c, false)
			if j-i < 2 || q[j-1] != c { // unterminated
				n.literal()
			} else {
				n.emit(tQuoted, q[i:j])
			}
			i = j
		case isDigit(c) || (c == '.' && i+1 < len(q) && isDigit(q[i+1])):
			i = n.skipNumber(i)
			n.literal()
		case c == '$' && n.f == Postgres && i+1 < len(q) && isDigit(q[i+1]):
			i++
			for i < len(q) && isDigit(q[i]) {
				i++
			}
			n.literal()
		case c == '$' && n.f == Postgres && n.dollarTag(i) > 0:
			t := n.dollarTag(i)
			tag := q[i : i+t]
			j := strings.Index(q[i+t:], tag)
			if j < 0 {
				i = len(q)
			} else {
				i += t + j + t
			}
			n.literal()
		case isWord(c):
			j := i
			for j < len(q) && isWord(q[j]) {
				j++
			}
			// x'..', b'..', n'..', e'..': a literal with a prefix.
			if j == i+1 && j < len(q) && q[j] == '\'' && strings.IndexByte("xXbBnNeE", c) >= 0 {
				i = n.skipString(j, '\'', n.f == MySQL || c|0x20 == 'e')
				n.literal()
				continue
			}
			n.word(q[i:j])
			i = j
		case c == '(':
			n.open()
			i++
		case c == ')':
			n.close()
			i++
		case c == ',':
			n.emit(tComma, ",")
			i++
		case c == '.':
			n.emit(tDot, ".")
			i++
		case c == ';':
			i++ // statement terminators go
		case c == '?':
			n.literal()
			i++
			if i < len(q) && q[i] == '+' { // a collapsed list's (?+), normalised again
				i++
			}
		case isOp(c):
			j := i + 1
			for j < len(q) && isOp(q[j]) && !(q[j] == '-' && j+1 < len(q) && q[j+1] == '-') &&
				!(q[j] == '/' && j+1 < len(q) && q[j+1] == '*') && !(q[j] == '#' && n.f == MySQL) {
				j++
			}
			op := q[i:j]
			// A sign before a number after an operator, "(" or ",": part of the literal.
			if (op == "-" || op == "+") && j < len(q) && (isDigit(q[j]) || q[j] == '.') &&
				(n.last == tNone || n.last == tOp || n.last == tOpen || n.last == tComma || n.signWord()) {
				i = n.skipNumber(j)
				n.literal()
				continue
			}
			n.emit(tOp, op)
			i = j
		default:
			n.emit(tOp, q[i:i+1])
			i++
		}
	}
}

// signWord reports whether the last word is a keyword after which a sign
// starts a literal (SELECT -1, WHERE -1 < a, ...).
func (n *normalizer) signWord() bool {
	if n.last != tWord {
		return false
	}
	switch n.lastWord {
	case "select", "where", "and", "or", "not", "when", "then", "else", "by", "limit", "offset", "set", "values", "in", "between", "like", "return", "is":
		return true
	}
	return false
}

// literal writes ?.
func (n *normalizer) literal() { n.emit(tLit, "?") }

// word writes a keyword or identifier in lower case.
func (n *normalizer) word(w string) {
	n.space(tWord)
	start := n.out.Len()
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		n.out.WriteByte(c)
	}
	n.lastWord = n.out.String()[start:]
	n.note(tWord)
}

// open writes "(" and starts tracking a list after IN or VALUES (or after a
// VALUES row's comma).
func (n *normalizer) open() {
	afterValues := n.last == tComma && n.valuesEnd >= 0 && n.out.Len() == n.valuesEnd+1
	if n.listAt >= 0 {
		n.listDepth++
		n.emit(tOpen, "(")
		return
	}
	if n.last == tWord && (n.lastWord == "in" || n.lastWord == "values") || afterValues {
		n.inValues = n.lastWord == "values" || afterValues
		n.space(tOpen)
		n.listAt = n.out.Len()
		if afterValues {
			n.listAt = n.valuesEnd // the comma goes with the row
		}
		n.listOK, n.listDepth = true, 1
		n.out.WriteByte('(')
		n.last = tOpen
		return
	}
	n.valuesEnd = -1
	n.emit(tOpen, "(")
}

// close writes ")" and collapses a finished list of literals to (?+).
func (n *normalizer) close() {
	if n.listAt >= 0 {
		n.listDepth--
		if n.listDepth > 0 {
			n.emit(tClose, ")")
			return
		}
		at, ok, values := n.listAt, n.listOK && n.last == tLit, n.inValues
		n.listAt = -1
		if ok {
			s := n.out.String()[:at]
			n.out.Reset()
			n.out.WriteString(s)
			if !strings.HasSuffix(s, "(?+)") { // a later VALUES row merges into the first
				n.out.WriteString("(?+)")
			}
			n.last = tClose
			if values {
				n.valuesEnd = n.out.Len()
			}
			return
		}
	}
	n.valuesEnd = -1
	n.emit(tClose, ")")
}

// dollarTag returns the length of a $tag$ opening a dollar-quoted string
// at i, or 0.
func (n *normalizer) dollarTag(i int) int {
	q := n.q
	j := i + 1
	for j < len(q) && q[j] != '$' && (isWord(q[j]) && (j > i+1 || !isDigit(q[j]))) {
		j++
	}
	if j < len(q) && q[j] == '$' {
		return j + 1 - i
	}
	return 0
}

// skipString returns the index after the quoted string at i (doubled
// quotes and, with backslash, backslash escapes inside).
func (n *normalizer) skipString(i int, quote byte, backslash bool) int {
	q := n.q
	for j := i + 1; j < len(q); j++ {
		switch q[j] {
		case '\\':
			if backslash {
				j++
			}
		case quote:
			if j+1 < len(q) && q[j+1] == quote {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(q)
}

// skipNumber returns the index after the number at i (decimal, exponent,
// hex 0x..).
func (n *normalizer) skipNumber(i int) int {
	q := n.q
	if i+1 < len(q) && q[i] == '0' && (q[i+1]|0x20 == 'x' || q[i+1]|0x20 == 'b') {
		j := i + 2
		for j < len(q) && isWord(q[j]) {
			j++
		}
		return j
	}
	j := i
	for j < len(q) && (isDigit(q[j]) || q[j] == '.') {
		j++
	}
	if j < len(q) && q[j]|0x20 == 'e' {
		k := j + 1
		if k < len(q) && (q[k] == '+' || q[k] == '-') {
			k++
		}
		if k < len(q) && isDigit(q[k]) {
			for k < len(q) && isDigit(q[k]) {
				k++
			}
			j = k
		}
	}
	// 1abc is an identifier in MySQL; leave the letters as a word.
	return j
}
