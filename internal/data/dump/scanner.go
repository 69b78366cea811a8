// Package dump reads SQL dumps (mysqldump / mariadb-dump files, mydumper
// directories, pg_dump plain SQL and, through pg_restore, its archive
// formats) as a stream of classified statements, each with the file and
// line it starts on. The readers are byte scanners aware of quoting,
// comments, MySQL version comments, DELIMITER blocks, PostgreSQL dollar
// quoting and COPY blocks; they never hold more than one statement (or
// one chunk of COPY data) in memory.
package dump

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Syntax is the SQL lexical family of a dump.
type Syntax int

// The syntaxes.
const (
	MySQL Syntax = iota
	Postgres
)

func (s Syntax) String() string {
	if s == Postgres {
		return "postgres"
	}
	return "mysql"
}

// CopyChunk is how much COPY data one statement carries at most (whole
// lines; a single longer line makes a longer chunk).
const CopyChunk = 1 << 20

// maxStatement bounds one statement's size, so that a dump with an
// unterminated string fails instead of eating memory.
const maxStatement = 1 << 30

// Raw is one statement as the scanner found it.
type Raw struct {
	// SQL is the statement without its delimiter.
	SQL string
	// Line is the 1-based line the statement starts on.
	Line int
	// Copy is a chunk of a PostgreSQL COPY ... FROM stdin block (SQL is
	// the COPY command): whole lines in COPY text format without the
	// terminating `\.`. Nil for every other statement.
	Copy []byte
	// Meta marks a client command (psql `\connect db`, `\restrict`): SQL
	// holds the command line without the backslash.
	Meta bool
}

// Scanner splits a dump stream into statements.
type Scanner struct {
	r      io.Reader
	syntax Syntax
	name   string

	buf   []byte
	pos   int // next byte to scan
	start int // start of the current statement, -1 between statements
	eof   bool
	err   error
	line  int // line of buf[pos]

	delim []byte
	// eolDelim: a delimiter ends a statement only at the end of a line
	// (mydumper's files, split by myloader that way: a ';' inside a
	// routine body is followed by a space).
	eolDelim bool

	copySQL  string // the COPY command while in a COPY block
	copyLine int
}

// NewScanner returns a scanner of r; name is used in errors.
func NewScanner(r io.Reader, name string, syntax Syntax) *Scanner {
	return &Scanner{r: r, syntax: syntax, name: name, buf: make([]byte, 0, 256<<10), start: -1, line: 1, delim: []byte{';'}}
}

// SyntaxError is an input the scanner cannot split.
type SyntaxError struct {
	File string
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// fill reads more input, keeping buf[keep:]. It reports false at EOF or on
// a read error (s.err).
func (s *Scanner) fill(keep int) bool {
	if s.eof {
		return false
	}
	if keep > 0 {
		n := copy(s.buf, s.buf[keep:])
		s.buf = s.buf[:n]
		s.pos -= keep
		if s.start >= 0 {
			s.start -= keep
		}
	}
	if cap(s.buf)-len(s.buf) < 64<<10 {
		if len(s.buf) > maxStatement {
			s.err = &SyntaxError{s.name, s.line, "statement longer than 1 GiB (an unterminated string or comment?)"}
			s.eof = true
			return false
		}
		nb := make([]byte, len(s.buf), 2*cap(s.buf)+64<<10)
		copy(nb, s.buf)
		s.buf = nb
	}
	n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
	s.buf = s.buf[:len(s.buf)+n]
	if err != nil {
		s.eof = true
		var bi *BadInputError
		switch {
		case errors.As(err, &bi):
			s.err = err
		case !errors.Is(err, io.EOF):
			s.err = fmt.Errorf("read %s: %w", s.name, err)
		}
	}
	return n > 0 || !s.eof
}

// keep is the first byte the scanner still needs.
func (s *Scanner) keep() int {
	if s.start >= 0 {
		return s.start
	}
	return s.pos
}

// ensure makes n bytes from pos available if the input has them.
func (s *Scanner) ensure(n int) bool {
	for len(s.buf)-s.pos < n {
		if !s.fill(s.keep()) {
			return len(s.buf)-s.pos >= n
		}
	}
	return true
}

// Next returns the next statement, or io.EOF after the last.
func (s *Scanner) Next() (Raw, error) {
	if s.copySQL != "" {
		return s.nextCopy()
	}
	if err := s.skipSpace(); err != nil {
		return Raw{}, err
	}
	if s.pos >= len(s.buf) {
		if s.err != nil {
			return Raw{}, s.err
		}
		return Raw{}, io.EOF
	}
	line := s.line
	// Client commands at the start of a statement.
	if s.syntax == MySQL && s.isDelimiterCommand() {
		if err := s.delimiterCommand(); err != nil {
			return Raw{}, err
		}
		return s.Next()
	}
	if s.syntax == MySQL && s.isSourceCommand() {
		// mysql's source / \. FILE: the rest of the line, trailing ';'
		// and spaces dropped, as the client reads it.
		cmd := strings.TrimRight(s.restOfLine(), "; \t")
		if strings.HasPrefix(cmd, "\\.") {
			cmd = ". " + strings.TrimSpace(cmd[2:])
		} else {
			cmd = "source " + strings.TrimSpace(cmd[len("source"):])
		}
		return Raw{SQL: cmd, Line: line, Meta: true}, nil
	}
	if s.syntax == Postgres && s.buf[s.pos] == '\\' {
		cmd := s.restOfLine()
		return Raw{SQL: cmd[1:], Line: line, Meta: true}, nil
	}
	s.start = s.pos
	end, err := s.scanStatement()
	if err != nil {
		return Raw{}, err
	}
	sql := string(bytes.TrimRight(s.buf[s.start:end], " \t\r\n"))
	s.start = -1
	raw := Raw{SQL: sql, Line: line}
	if s.syntax == Postgres && isCopyFromStdin(sql) {
		s.copySQL, s.copyLine = sql, line
		// The data starts on the line after the command.
		if err := s.skipToLineEnd(); err != nil {
			return Raw{}, err
		}
		return s.nextCopy()
	}
	return raw, nil
}

// skipSpace skips whitespace and comments between statements.
func (s *Scanner) skipSpace() error {
	for {
		if !s.ensure(4) && s.pos >= len(s.buf) {
			return nil
		}
		c := s.buf[s.pos]
		switch {
		case c == '\n':
			s.line++
			s.pos++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			s.pos++
		case s.isLineComment(s.pos):
			s.skipLine()
		case c == '/' && s.at(s.pos+1) == '*' && !s.isVersionComment(s.pos):
			if err := s.skipBlockComment(); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// at returns buf[i] or 0 past the end.
func (s *Scanner) at(i int) byte {
	if i < len(s.buf) {
		return s.buf[i]
	}
	return 0
}

// isLineComment: "-- " (MySQL wants a space or control character after
// the dashes; PostgreSQL does not), and '#' in MySQL.
func (s *Scanner) isLineComment(i int) bool {
	c := s.buf[i]
	if c == '#' && s.syntax == MySQL {
		return true
	}
	if c != '-' || s.at(i+1) != '-' {
		return false
	}
	if s.syntax == Postgres {
		return true
	}
	n := s.at(i + 2)
	return n <= ' ' // space, tab, newline, or end of input
}

// isVersionComment: /*!NNNNN and /*M!NNNNNN hold SQL the server runs.
func (s *Scanner) isVersionComment(i int) bool {
	if s.syntax != MySQL {
		return false
	}
	n := s.at(i + 2)
	return n == '!' || (n == 'M' && s.at(i+3) == '!')
}

// skipLine moves pos past the next newline (or to the end).
func (s *Scanner) skipLine() {
	for {
		if j := bytes.IndexByte(s.buf[s.pos:], '\n'); j >= 0 {
			s.pos += j + 1
			s.line++
			return
		}
		s.pos = len(s.buf)
		if !s.fill(s.keep()) {
			return
		}
	}
}

// skipBlockComment moves pos past a /* ... */ comment.
func (s *Scanner) skipBlockComment() error {
	line := s.line
	s.pos += 2
	for {
		if j := bytes.Index(s.buf[s.pos:], []byte("*/")); j >= 0 {
			s.line += bytes.Count(s.buf[s.pos:s.pos+j], []byte{'\n'})
			s.pos += j + 2
			return nil
		}
		// Keep a trailing '*' that may pair with the next read's '/'.
		n := len(s.buf) - 1
		if n < s.pos {
			n = s.pos
		}
		s.line += bytes.Count(s.buf[s.pos:n], []byte{'\n'})
		s.pos = n
		if !s.fill(s.keep()) {
			if s.err != nil {
				return s.err
			}
			return &SyntaxError{s.name, line, "unterminated /* comment"}
		}
	}
}

// restOfLine returns the current line from pos without its newline and
// moves past it.
func (s *Scanner) restOfLine() string {
	s.start = s.pos
	for {
		if j := bytes.IndexByte(s.buf[s.pos:], '\n'); j >= 0 {
			l := string(bytes.TrimRight(s.buf[s.start:s.pos+j], "\r \t"))
			s.pos += j + 1
			s.line++
			s.start = -1
			return l
		}
		s.pos = len(s.buf)
		if !s.fill(s.keep()) {
			l := string(bytes.TrimRight(s.buf[s.start:], "\r \t"))
			s.start = -1
			return l
		}
	}
}

// skipToLineEnd skips the rest of the current line (after a COPY
// command's delimiter: spaces, maybe a comment).
func (s *Scanner) skipToLineEnd() error {
	s.restOfLine()
	return s.err
}

// isSourceCommand: the mysql client's source or \. command, at the
// start of a statement.
func (s *Scanner) isSourceCommand() bool {
	s.ensure(8)
	rest := s.buf[s.pos:]
	if len(rest) >= 3 && rest[0] == '\\' && rest[1] == '.' && (rest[2] == ' ' || rest[2] == '\t') {
		return true
	}
	const kw = "source"
	if len(rest) < len(kw)+1 {
		return false
	}
	for i := 0; i < len(kw); i++ {
		if rest[i]|0x20 != kw[i] {
			return false
		}
	}
	return rest[len(kw)] == ' ' || rest[len(kw)] == '\t'
}

// isDelimiterCommand: the mysql client's DELIMITER command, at the start
// of a statement.
func (s *Scanner) isDelimiterCommand() bool {
	s.ensure(10)
	const kw = "delimiter"
	if len(s.buf)-s.pos < len(kw)+1 {
		return false
	}
	for i := 0; i < len(kw); i++ {
		if s.buf[s.pos+i]|0x20 != kw[i] {
			return false
		}
	}
	c := s.buf[s.pos+len(kw)]
	return c == ' ' || c == '\t'
}

func (s *Scanner) delimiterCommand() error {
	line := s.line
	l := s.restOfLine()
	d := bytes.TrimSpace([]byte(l[len("delimiter"):]))
	if i := bytes.IndexAny(d, " \t"); i >= 0 {
		d = d[:i]
	}
	if len(d) == 0 {
		return &SyntaxError{s.name, line, "DELIMITER without a delimiter"}
	}
	if bytes.ContainsAny(d, `'"`+"`\\") {
		return &SyntaxError{s.name, line, fmt.Sprintf("DELIMITER %q: quotes and backslashes are not supported", d)}
	}
	s.delim = append([]byte(nil), d...)
	return nil
}

// scanStatement scans from pos to the end of the statement and returns
// the end (exclusive, before the delimiter); pos moves past the delimiter.
func (s *Scanner) scanStatement() (int, error) {
	for {
		if s.pos >= len(s.buf) {
			if !s.fill(s.keep()) {
				if s.err != nil {
					return 0, s.err
				}
				return len(s.buf), nil // the last statement may lack a delimiter
			}
			continue
		}
		c := s.buf[s.pos]
		switch {
		case c == '\n':
			s.line++
			s.pos++
		case c == s.delim[0] && s.matchDelim():
			end := s.pos
			s.pos += len(s.delim)
			return end, nil
		case c == '\'' || c == '"' || (c == '`' && s.syntax == MySQL):
			if err := s.skipQuoted(c, s.backslashes(c)); err != nil {
				return 0, err
			}
		case c == '$' && s.syntax == Postgres:
			ok, err := s.skipDollar()
			if err != nil {
				return 0, err
			}
			if !ok {
				s.pos++
			}
		case c == '-' || c == '#':
			if !s.ensure(3) {
				// fine: at end of input
			}
			if s.isLineComment(s.pos) {
				s.skipLine()
			} else {
				s.pos++
			}
		case c == '/':
			s.ensure(4)
			if s.at(s.pos+1) == '*' && !s.isVersionComment(s.pos) {
				if err := s.skipBlockComment(); err != nil {
					return 0, err
				}
			} else {
				s.pos++
			}
		default:
			s.pos++
		}
	}
}

// matchDelim reports whether the delimiter starts at pos.
func (s *Scanner) matchDelim() bool {
	if len(s.delim) > 1 {
		s.ensure(len(s.delim))
		if !bytes.HasPrefix(s.buf[s.pos:], s.delim) {
			return false
		}
	}
	if !s.eolDelim {
		return true
	}
	s.ensure(len(s.delim) + 2)
	i := s.pos + len(s.delim)
	return i >= len(s.buf) || s.buf[i] == '\n' || (s.buf[i] == '\r' && s.at(i+1) == '\n')
}

// LineDelimited makes a delimiter end a statement only at the end of a
// line, as myloader reads mydumper's files.
func (s *Scanner) LineDelimited() { s.eolDelim = true }

// backslashes reports whether a string opened by q at pos takes backslash
// escapes: MySQL strings do; PostgreSQL only E” strings.
func (s *Scanner) backslashes(q byte) bool {
	if s.syntax == MySQL {
		return q != '`'
	}
	if q != '\'' || s.pos == s.start {
		return false
	}
	p := s.buf[s.pos-1]
	if p != 'E' && p != 'e' {
		return false
	}
	if s.pos-2 < s.start {
		return true
	}
	return !isIdentByte(s.buf[s.pos-2])
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z' || c >= 0x80
}

// skipQuoted moves pos past a quoted string or identifier opened at pos.
// A doubled quote is an escaped quote; with bs, so is a backslash pair.
func (s *Scanner) skipQuoted(q byte, bs bool) error {
	line := s.line
	s.pos++
	for {
		rest := s.buf[s.pos:]
		var j int
		if bs {
			j = indexEither(rest, q, '\\')
		} else {
			j = bytes.IndexByte(rest, q)
		}
		if j < 0 {
			s.line += bytes.Count(rest, []byte{'\n'})
			s.pos = len(s.buf)
			if !s.fill(s.keep()) {
				if s.err != nil {
					return s.err
				}
				return &SyntaxError{s.name, line, fmt.Sprintf("unterminated %c string", q)}
			}
			continue
		}
		s.line += bytes.Count(rest[:j], []byte{'\n'})
		s.pos += j
		if !s.ensure(2) && s.pos+1 >= len(s.buf) {
			if s.buf[s.pos] == q {
				s.pos++
				return nil
			}
			return &SyntaxError{s.name, line, fmt.Sprintf("unterminated %c string", q)}
		}
		if s.buf[s.pos] == '\\' {
			if s.buf[s.pos+1] == '\n' {
				s.line++
			}
			s.pos += 2
			continue
		}
		if s.buf[s.pos+1] == q { // doubled quote
			s.pos += 2
			continue
		}
		s.pos++
		return nil
	}
}

// indexEither is bytes.IndexAny for two bytes, without the UTF-8 decoding.
func indexEither(b []byte, x, y byte) int {
	i := bytes.IndexByte(b, x)
	var k int
	if i >= 0 {
		k = bytes.IndexByte(b[:i], y)
	} else {
		k = bytes.IndexByte(b, y)
	}
	if k >= 0 {
		return k
	}
	return i
}

// skipDollar moves pos past a $tag$...$tag$ string opened at pos; ok is
// false if '$' does not open one (a parameter $1, or part of a name).
func (s *Scanner) skipDollar() (bool, error) {
	if s.pos > s.start && isIdentByte(s.buf[s.pos-1]) {
		return false, nil
	}
	s.ensure(66)
	j := s.pos + 1
	for j < len(s.buf) && j-s.pos < 65 && s.buf[j] != '$' {
		c := s.buf[j]
		if !(c == '_' || c|0x20 >= 'a' && c|0x20 <= 'z' || c >= 0x80 || (j > s.pos+1 && c >= '0' && c <= '9')) {
			return false, nil
		}
		j++
	}
	if j >= len(s.buf) || s.buf[j] != '$' {
		return false, nil
	}
	tag := append([]byte(nil), s.buf[s.pos:j+1]...)
	line := s.line
	s.pos = j + 1
	for {
		if k := bytes.Index(s.buf[s.pos:], tag); k >= 0 {
			s.line += bytes.Count(s.buf[s.pos:s.pos+k], []byte{'\n'})
			s.pos += k + len(tag)
			return true, nil
		}
		n := len(s.buf) - len(tag) + 1
		if n < s.pos {
			n = s.pos
		}
		s.line += bytes.Count(s.buf[s.pos:n], []byte{'\n'})
		s.pos = n
		if !s.fill(s.keep()) {
			if s.err != nil {
				return false, s.err
			}
			return false, &SyntaxError{s.name, line, fmt.Sprintf("unterminated %s string", tag)}
		}
	}
}

// nextCopy returns the next chunk of a COPY block.
func (s *Scanner) nextCopy() (Raw, error) {
	line := s.line
	s.start = s.pos
	for {
		j := bytes.IndexByte(s.buf[s.pos:], '\n')
		if j < 0 {
			if s.pos-s.start >= CopyChunk {
				break
			}
			if !s.fill(s.keep()) {
				if s.err != nil {
					return Raw{}, s.err
				}
				if s.pos < len(s.buf) && isCopyEnd(s.buf[s.pos:]) {
					s.pos = len(s.buf)
					return s.endCopy(line)
				}
				return Raw{}, &SyntaxError{s.name, s.copyLine, "COPY data not ended by a \\. line"}
			}
			continue
		}
		if isCopyEnd(s.buf[s.pos : s.pos+j]) {
			if s.pos > s.start {
				break // return the data first; the end line comes next call
			}
			s.pos += j + 1
			s.line++
			return s.endCopy(line)
		}
		s.pos += j + 1
		s.line++
		if s.pos-s.start >= CopyChunk {
			break
		}
	}
	data := append([]byte(nil), s.buf[s.start:s.pos]...)
	s.start = -1
	return Raw{SQL: s.copySQL, Line: line, Copy: data}, nil
}

// endCopy leaves the COPY block; a block with no rows yields no statement.
func (s *Scanner) endCopy(line int) (Raw, error) {
	s.start = -1
	s.copySQL = ""
	return s.Next()
}

func isCopyEnd(l []byte) bool {
	l = bytes.TrimRight(l, "\r")
	return len(l) == 2 && l[0] == '\\' && l[1] == '.'
}

// isCopyFromStdin reports whether sql is COPY ... FROM stdin.
func isCopyFromStdin(sql string) bool {
	sql, _ = effectiveText(sql, Postgres, Server{}, readAsServer)
	w := words(sql, 1)
	if len(w) == 0 || w[0] != "COPY" {
		return false
	}
	up := bytes.ToUpper([]byte(sql))
	i := bytes.LastIndex(up, []byte(" FROM "))
	if i < 0 {
		return false
	}
	rest := bytes.TrimSpace(up[i+6:])
	return bytes.HasPrefix(rest, []byte("STDIN"))
}
