package dumpload

import "strings"

// loadDataInsert is a MySQL-family INSERT turned into LOAD DATA input.
type loadDataInsert struct {
	// Modifier is "", "IGNORE" or "REPLACE".
	Modifier string
	// Table is the table as written in the INSERT (quoted, maybe
	// qualified); Columns the column list with its parentheses, or "".
	Table, Columns string
	// Data is the rows in LOAD DATA's default format: fields separated
	// by tabs, rows ended by newlines, backslash escapes, NULL as \N.
	Data []byte
	Rows int
	// Kinds has, per field position, the literal kinds of its values.
	Kinds []uint8
}

// Literal kinds, for the target columns' check (loadDataFits).
const (
	kindBytes  uint8 = 1 << iota // hex or _binary literal
	kindNumber                   // a plain number
	kindOddNum                   // a number whose text an INSERT into a string column would change
	kindString                   // a quoted string
)

// toLoadData converts `INSERT [IGNORE] INTO t [(cols)] VALUES (...),...`
// (or REPLACE INTO) whose values are all literals LOAD DATA reproduces
// exactly: NULL, plain numbers, quoted strings (optionally _binary), hex
// literals (0x.., X'..'). Anything else (expressions, b'..' bit literals,
// other introducers, ON DUPLICATE KEY UPDATE, SET, SELECT) reports false:
// the caller keeps the INSERT. Hex and _binary literals become their
// bytes, as they are in a string column; mysqldump writes them only for
// binary and string columns.
func toLoadData(sql string) (*loadDataInsert, bool) {
	p := &tupleParser{s: sql}
	r := &loadDataInsert{}
	switch {
	case p.keyword("INSERT"):
		if p.keyword("IGNORE") {
			r.Modifier = "IGNORE"
		}
	case p.keyword("REPLACE"):
		r.Modifier = "REPLACE"
	default:
		return nil, false
	}
	if !p.keyword("INTO") {
		return nil, false
	}
	p.space()
	start := p.i
	if !p.ident() {
		return nil, false
	}
	if p.peek() == '.' {
		p.i++
		if !p.ident() {
			return nil, false
		}
	}
	r.Table = sql[start:p.i]
	p.space()
	if p.peek() == '(' {
		start = p.i
		p.i++
		for {
			p.space()
			if !p.ident() {
				return nil, false
			}
			p.space()
			if p.peek() == ',' {
				p.i++
				continue
			}
			if p.peek() != ')' {
				return nil, false
			}
			p.i++
			break
		}
		r.Columns = sql[start:p.i]
	}
	if !p.keyword("VALUES") && !p.keyword("VALUE") {
		return nil, false
	}
	out := make([]byte, 0, len(sql))
	for {
		p.space()
		if p.peek() != '(' {
			return nil, false
		}
		p.i++
		rowStart := len(out)
		for field := 0; ; field++ {
			first := field == 0
			p.space()
			if !first {
				out = append(out, '\t')
			}
			var ok bool
			var kind uint8
			if out, kind, ok = p.value(out); !ok {
				return nil, false
			}
			if r.Rows == 0 {
				r.Kinds = append(r.Kinds, 0)
			} else if field >= len(r.Kinds) {
				return nil, false // rows of different lengths
			}
			r.Kinds[field] |= kind
			p.space()
			if p.peek() == ',' {
				p.i++
				continue
			}
			if p.peek() != ')' || field+1 != len(r.Kinds) {
				return nil, false
			}
			p.i++
			break
		}
		if len(out) == rowStart {
			return nil, false // one empty field: LOAD DATA's empty line
		}
		out = append(out, '\n')
		r.Rows++
		p.space()
		if p.peek() == ',' {
			p.i++
			continue
		}
		break
	}
	p.space()
	if p.i != len(sql) {
		return nil, false // ON DUPLICATE KEY UPDATE, a trailing ';', ...
	}
	r.Data = out
	return r, true
}

// tupleParser reads one INSERT statement.
type tupleParser struct {
	s string
	i int
}

func (p *tupleParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// space skips whitespace (comments make the statement unusual: the
// caller then fails on them).
func (p *tupleParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.i++
		default:
			return
		}
	}
}

// keyword consumes kw (case-insensitive) as a whole word.
func (p *tupleParser) keyword(kw string) bool {
	p.space()
	j := p.i + len(kw)
	if j > len(p.s) || !strings.EqualFold(p.s[p.i:j], kw) || (j < len(p.s) && isWordByte(p.s[j])) {
		return false
	}
	p.i = j
	return true
}

// ident consumes a plain or backquoted identifier.
func (p *tupleParser) ident() bool {
	p.space()
	if p.peek() == '`' {
		for j := p.i + 1; j < len(p.s); j++ {
			if p.s[j] == '`' {
				if j+1 < len(p.s) && p.s[j+1] == '`' {
					j++
					continue
				}
				p.i = j + 1
				return true
			}
		}
		return false
	}
	j := p.i
	for j < len(p.s) && (isWordByte(p.s[j]) || p.s[j] == '$' || p.s[j] >= 0x80) {
		j++
	}
	if j == p.i {
		return false
	}
	p.i = j
	return true
}

// value appends one literal in LOAD DATA form.
func (p *tupleParser) value(out []byte) ([]byte, uint8, bool) {
	c := p.peek()
	switch {
	case c == '\'' || c == '"':
		out, ok := p.str(out)
		return out, kindString, ok
	case c == '_':
		if p.keyword("_binary") {
			p.space()
			if c := p.peek(); c == '\'' || c == '"' {
				out, ok := p.str(out)
				return out, kindBytes | kindString, ok
			}
		}
		return out, 0, false
	case c == 'N' || c == 'n':
		if p.keyword("NULL") {
			return append(out, '\\', 'N'), 0, true
		}
		return out, 0, false
	case (c == 'X' || c == 'x') && p.i+1 < len(p.s) && p.s[p.i+1] == '\'':
		j := strings.IndexByte(p.s[p.i+2:], '\'')
		if j < 0 {
			return out, 0, false
		}
		h := p.s[p.i+2 : p.i+2+j]
		if len(h)%2 != 0 {
			return out, 0, false
		}
		p.i += 2 + j + 1
		out, ok := appendHex(out, h)
		return out, kindBytes, ok
	case c == '0' && p.i+1 < len(p.s) && (p.s[p.i+1] == 'x'):
		j := p.i + 2
		for j < len(p.s) && isHex(p.s[j]) {
			j++
		}
		h := p.s[p.i+2 : j]
		if h == "" || (j < len(p.s) && isWordByte(p.s[j])) {
			return out, 0, false
		}
		if len(h)%2 != 0 {
			h = "0" + h
		}
		p.i = j
		out, ok := appendHex(out, h)
		return out, kindBytes, ok
	case c == '-' || (c >= '0' && c <= '9') || c == '.':
		start := p.i
		out, ok := p.number(out)
		kind := kindNumber
		if ok && !plainNumberText(p.s[start:p.i]) {
			kind |= kindOddNum
		}
		return out, kind, ok
	}
	return out, 0, false
}

// number appends a plain decimal number: -?digits[.digits][e[+-]digits].
func (p *tupleParser) number(out []byte) ([]byte, bool) {
	s, j := p.s, p.i
	if s[j] == '-' {
		j++
	}
	digits := 0
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
		digits++
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
			digits++
		}
	}
	if digits == 0 {
		return out, false
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		j++
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		e := j
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == e {
			return out, false
		}
	}
	if j < len(s) && (isWordByte(s[j]) || s[j] == '.') {
		return out, false
	}
	out = append(out, s[p.i:j]...)
	p.i = j
	return out, true
}

// plainNumberText reports a number whose text an INSERT into a string
// column keeps: -?(0|[1-9][0-9]*)(.[0-9]+)?, not a negative zero.
func plainNumberText(n string) bool {
	neg := strings.HasPrefix(n, "-")
	n = strings.TrimPrefix(n, "-")
	intPart, frac, hasDot := strings.Cut(n, ".")
	if intPart == "" || (len(intPart) > 1 && intPart[0] == '0') || (hasDot && frac == "") {
		return false
	}
	for _, c := range []byte(intPart + frac) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return !neg || strings.Trim(intPart+frac, "0") != ""
}

// str appends a quoted string's value, decoded with MySQL's escapes
// (without NO_BACKSLASH_ESCAPES) and escaped again for LOAD DATA.
func (p *tupleParser) str(out []byte) ([]byte, bool) {
	q := p.s[p.i]
	s := p.s
	for j := p.i + 1; j < len(s); j++ {
		// Copy the run of bytes that need nothing done at once.
		k := j
		for k < len(s) && !strSpecial[s[k]] {
			k++
		}
		if k > j {
			out = append(out, s[j:k]...)
			if j = k; j >= len(s) {
				break
			}
		}
		c := s[j]
		switch {
		case c == q:
			if j+1 < len(s) && s[j+1] == q {
				j++
				out = append(out, q)
				continue
			}
			p.i = j + 1
			p.space()
			if c := p.peek(); c == '\'' || c == '"' {
				return out, false // adjacent literals concatenate: unusual
			}
			return out, true
		case c == '\\':
			if j+1 >= len(s) {
				return out, false
			}
			j++
			switch e := s[j]; e {
			case '0':
				out = append(out, '\\', '0')
			case 'b':
				out = append(out, '\b')
			case 'n':
				out = append(out, '\\', 'n')
			case 'r':
				out = append(out, '\\', 'r')
			case 't':
				out = append(out, '\\', 't')
			case 'Z':
				out = append(out, 0x1a)
			case '%', '_':
				out = append(out, '\\', '\\', e) // MySQL keeps the backslash
			case '\\':
				out = append(out, '\\', '\\')
			default:
				out = appendRaw(out, e)
			}
		default:
			out = appendRaw(out, c)
		}
	}
	return out, false
}

// strSpecial marks the bytes str handles one by one: quotes, the
// backslash, and what appendRaw escapes.
var strSpecial = func() (t [256]bool) {
	for _, c := range []byte{'\'', '"', '\\', '\t', '\n', '\r', 0} {
		t[c] = true
	}
	return t
}()

// appendRaw appends one data byte, escaped for LOAD DATA.
func appendRaw(out []byte, c byte) []byte {
	switch c {
	case '\\':
		return append(out, '\\', '\\')
	case '\t':
		return append(out, '\\', 't')
	case '\n':
		return append(out, '\\', 'n')
	case '\r':
		return append(out, '\\', 'r')
	case 0:
		return append(out, '\\', '0')
	}
	return append(out, c)
}

func appendHex(out []byte, h string) ([]byte, bool) {
	for k := 0; k+1 < len(h); k += 2 {
		if !isHex(h[k]) || !isHex(h[k+1]) {
			return out, false
		}
		out = appendRaw(out, unhex(h[k])<<4|unhex(h[k+1]))
	}
	return out, true
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// isWordByte reports an identifier byte.
func isWordByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}
