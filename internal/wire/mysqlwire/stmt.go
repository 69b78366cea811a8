package mysqlwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Binary protocol column types used for parameters.
const (
	typeDouble   = 0x05
	typeNull     = 0x06
	typeLongLong = 0x08
	typeDatetime = 0x0c
	typeString   = 0xfe
)

// Stmt is a server-side prepared statement of one Conn.
type Stmt struct {
	c       *Conn
	id      uint32
	nparams int
	// types are the parameter types the server last received; an
	// execution with the same types sends none (new-params-bound flag 0),
	// as libmariadb and libmysqlclient do. nil: send them.
	types []byte
	// cols are the result's column definitions, from the prepare reply or
	// the last execution that sent them (metadata caching, Conn.cacheMeta).
	cols []column
}

// Prepare prepares query on the server (COM_STMT_PREPARE).
func (c *Conn) Prepare(query string) (*Stmt, error) {
	if c.pipe != nil {
		return nil, errInPipeline
	}
	c.startCommand(comStmtPrepare)
	c.wbuf = append(c.wbuf, query...)
	if err := c.writePacket(); err != nil {
		return nil, err
	}
	p, err := c.readPacket()
	if err != nil {
		return nil, err
	}
	if len(p) > 0 && p[0] == 0xff {
		return nil, parseError(p)
	}
	if len(p) < 12 || p[0] != 0 {
		return nil, errors.New("mysqlwire: bad COM_STMT_PREPARE reply")
	}
	s := &Stmt{c: c, id: binary.LittleEndian.Uint32(p[1:5])}
	ncols := int(binary.LittleEndian.Uint16(p[5:7]))
	s.nparams = int(binary.LittleEndian.Uint16(p[7:9]))
	// Parameter and column definitions, each list closed by an EOF packet.
	for i, n := range [...]int{s.nparams, ncols} {
		if n == 0 {
			continue
		}
		for {
			p, err := c.readPacket()
			if err != nil {
				return nil, err
			}
			if isEOF(p) {
				break
			}
			if i == 1 {
				// Kept for executions whose reply leaves them out.
				if col, ok := parseColumn(p); ok {
					s.cols = append(s.cols, col)
				}
			}
		}
	}
	if len(s.cols) != ncols {
		s.cols = nil // not usable: an execution without them fails
	}
	return s, nil
}

// NumParams is the number of '?' placeholders.
func (s *Stmt) NumParams() int { return s.nparams }

// Query executes the statement and reads and skips its rows. An argument
// is nil, an integer, bool, float64, time.Time, string or []byte, or a
// *int64, *string or *[]byte read at each call (see appendBinary).
func (s *Stmt) Query(args []any) error {
	_, _, err := s.run(args)
	return err
}

// Exec executes the statement and returns the rows it changed.
func (s *Stmt) Exec(args []any) (int64, error) {
	n, _, err := s.run(args)
	return n, err
}

// run sends COM_STMT_EXECUTE and reads the reply; in a pipeline, it
// queues the command.
func (s *Stmt) run(args []any) (int64, bool, error) {
	if err := s.send(args); err != nil || s.c.pipe != nil {
		return 0, false, err
	}
	n, rows, err := s.c.result()
	if err != nil {
		s.types = nil // whatever the server kept, send them again
	}
	return n, rows, err
}

// send sends COM_STMT_EXECUTE. The parameter types go with it only when
// they differ from the last execution's.
func (s *Stmt) send(args []any) error {
	if len(args) != s.nparams {
		return fmt.Errorf("mysqlwire: statement wants %d arguments, got %d", s.nparams, len(args))
	}
	c := s.c
	c.startCommand(comStmtExecute)
	c.wbuf = binary.LittleEndian.AppendUint32(c.wbuf, s.id)
	c.wbuf = append(c.wbuf, 0)                           // CURSOR_TYPE_NO_CURSOR
	c.wbuf = binary.LittleEndian.AppendUint32(c.wbuf, 1) // iteration count
	if s.nparams > 0 {
		nullAt := len(c.wbuf)
		for range (s.nparams + 7) / 8 {
			c.wbuf = append(c.wbuf, 0)
		}
		c.wbuf = append(c.wbuf, 1) // new parameters bound: types follow
		typesAt := len(c.wbuf)
		for range s.nparams {
			c.wbuf = append(c.wbuf, 0, 0)
		}
		for i, a := range args {
			t, err := c.appendBinary(a)
			if err != nil {
				return fmt.Errorf("argument %d: %w", i+1, err)
			}
			if t == typeNull {
				c.wbuf[nullAt+i/8] |= 1 << (i % 8)
			}
			c.wbuf[typesAt+2*i] = t
		}
		types := c.wbuf[typesAt : typesAt+2*s.nparams]
		if len(s.types) == len(types) && string(s.types) == string(types) {
			// Same types as last time: flag 0, no types.
			c.wbuf[typesAt-1] = 0
			c.wbuf = append(c.wbuf[:typesAt], c.wbuf[typesAt+len(types):]...)
		} else {
			s.types = append(s.types[:0], types...)
		}
	}
	if c.pipe != nil {
		return c.queue()
	}
	return c.writePacket()
}

// appendBinary appends a in the binary protocol and returns its type.
// A *int64, *string or *[]byte is read through (nil is NULL): a caller
// that runs the same statement again and again keeps its arguments in
// place and changes them there, where an int64 or a string put in an
// `any` would allocate on every call.
func (c *Conn) appendBinary(a any) (byte, error) {
	switch v := a.(type) {
	case nil:
		return typeNull, nil
	case *int64:
		if v == nil {
			return typeNull, nil
		}
		c.wbuf = binary.LittleEndian.AppendUint64(c.wbuf, uint64(*v))
	case *[]byte:
		if v == nil || *v == nil {
			return typeNull, nil
		}
		c.wbuf = appendLenenc(c.wbuf, uint64(len(*v)))
		c.wbuf = append(c.wbuf, *v...)
		return typeString, nil
	case *string:
		if v == nil {
			return typeNull, nil
		}
		c.wbuf = appendLenenc(c.wbuf, uint64(len(*v)))
		c.wbuf = append(c.wbuf, *v...)
		return typeString, nil
	case int64:
		c.wbuf = binary.LittleEndian.AppendUint64(c.wbuf, uint64(v))
	case int:
		c.wbuf = binary.LittleEndian.AppendUint64(c.wbuf, uint64(v))
	case int32:
		c.wbuf = binary.LittleEndian.AppendUint64(c.wbuf, uint64(v))
	case bool:
		var b uint64
		if v {
			b = 1
		}
		c.wbuf = binary.LittleEndian.AppendUint64(c.wbuf, b)
	case float64:
		c.wbuf = binary.LittleEndian.AppendUint64(c.wbuf, math.Float64bits(v))
		return typeDouble, nil
	case time.Time:
		c.wbuf = appendDatetime(c.wbuf, v)
		return typeDatetime, nil
	case string:
		c.wbuf = appendLenenc(c.wbuf, uint64(len(v)))
		c.wbuf = append(c.wbuf, v...)
		return typeString, nil
	case []byte:
		if v == nil {
			return typeNull, nil
		}
		c.wbuf = appendLenenc(c.wbuf, uint64(len(v)))
		c.wbuf = append(c.wbuf, v...)
		return typeString, nil
	default:
		return 0, fmt.Errorf("mysqlwire: unsupported argument type %T", a)
	}
	return typeLongLong, nil
}

// appendDatetime appends t, in UTC, as a binary DATETIME value.
func appendDatetime(b []byte, t time.Time) []byte {
	t = t.UTC()
	n := byte(7)
	if t.Nanosecond() >= 1000 {
		n = 11
	}
	b = append(b, n)
	b = binary.LittleEndian.AppendUint16(b, uint16(t.Year()))
	b = append(b, byte(t.Month()), byte(t.Day()), byte(t.Hour()), byte(t.Minute()), byte(t.Second()))
	if n == 11 {
		b = binary.LittleEndian.AppendUint32(b, uint32(t.Nanosecond()/1000))
	}
	return b
}

// Close releases the statement on the server (COM_STMT_CLOSE, no reply).
func (s *Stmt) Close() error {
	c := s.c
	if c.stopped() {
		return nil
	}
	if c.pipe != nil {
		return errInPipeline
	}
	c.startCommand(comStmtClose)
	c.wbuf = binary.LittleEndian.AppendUint32(c.wbuf, s.id)
	return c.writePacket()
}

// Query runs query with the text protocol (COM_QUERY), its '?' placeholders
// replaced by args as SQL literals, and reads and skips any rows.
func (c *Conn) Query(query string, args []any) error {
	_, _, err := c.text(query, args)
	return err
}

// Exec runs query like Query and returns the rows it changed.
func (c *Conn) Exec(query string, args []any) (int64, error) {
	n, _, err := c.text(query, args)
	return n, err
}

func (c *Conn) text(query string, args []any) (int64, bool, error) {
	if err := c.sendText(query, args); err != nil {
		return 0, false, err
	}
	return c.result()
}

// sendText sends COM_QUERY.
func (c *Conn) sendText(query string, args []any) error {
	if c.pipe != nil {
		return errInPipeline
	}
	c.startCommand(comQuery)
	if err := c.interpolate(query, args); err != nil {
		return err
	}
	return c.writePacket()
}

// interpolate appends query with each '?' replaced by the next argument.
func (c *Conn) interpolate(query string, args []any) error {
	k := 0
	for i := 0; i < len(query); i++ {
		ch := query[i]
		if ch != '?' {
			c.wbuf = append(c.wbuf, ch)
			continue
		}
		if k == len(args) {
			return fmt.Errorf("mysqlwire: more placeholders than the %d arguments", len(args))
		}
		if err := c.appendLiteral(args[k]); err != nil {
			return fmt.Errorf("argument %d: %w", k+1, err)
		}
		k++
	}
	if k != len(args) {
		return fmt.Errorf("mysqlwire: %d placeholders for %d arguments", k, len(args))
	}
	return nil
}

// appendLiteral appends a as an SQL literal; pointers as in appendBinary.
func (c *Conn) appendLiteral(a any) error {
	switch v := a.(type) {
	case nil:
		c.wbuf = append(c.wbuf, "NULL"...)
	case *int64:
		if v == nil {
			c.wbuf = append(c.wbuf, "NULL"...)
		} else {
			c.wbuf = strconv.AppendInt(c.wbuf, *v, 10)
		}
	case *[]byte:
		if v == nil || *v == nil {
			c.wbuf = append(c.wbuf, "NULL"...)
		} else {
			c.appendQuoted(string(*v))
		}
	case *string:
		if v == nil {
			c.wbuf = append(c.wbuf, "NULL"...)
		} else {
			c.appendQuoted(*v)
		}
	case int64:
		c.wbuf = strconv.AppendInt(c.wbuf, v, 10)
	case int:
		c.wbuf = strconv.AppendInt(c.wbuf, int64(v), 10)
	case int32:
		c.wbuf = strconv.AppendInt(c.wbuf, int64(v), 10)
	case bool:
		if v {
			c.wbuf = append(c.wbuf, '1')
		} else {
			c.wbuf = append(c.wbuf, '0')
		}
	case float64:
		c.wbuf = strconv.AppendFloat(c.wbuf, v, 'g', -1, 64)
	case time.Time:
		c.wbuf = append(c.wbuf, '\'')
		c.wbuf = v.UTC().AppendFormat(c.wbuf, "2006-01-02 15:04:05.999999")
		c.wbuf = append(c.wbuf, '\'')
	case string:
		c.appendQuoted(v)
	case []byte:
		if v == nil {
			c.wbuf = append(c.wbuf, "NULL"...)
		} else {
			c.appendQuoted(string(v))
		}
	default:
		return fmt.Errorf("mysqlwire: unsupported argument type %T", a)
	}
	return nil
}

// appendQuoted appends s as a quoted string literal, escaped the way the
// server's current sql_mode reads it.
func (c *Conn) appendQuoted(s string) {
	c.wbuf = append(c.wbuf, '\'')
	if c.status&statusNoBackslashEscapes != 0 {
		for i := 0; i < len(s); i++ {
			if s[i] == '\'' {
				c.wbuf = append(c.wbuf, '\'')
			}
			c.wbuf = append(c.wbuf, s[i])
		}
	} else {
		for i := 0; i < len(s); i++ {
			switch ch := s[i]; ch {
			case 0:
				c.wbuf = append(c.wbuf, '\\', '0')
			case '\n':
				c.wbuf = append(c.wbuf, '\\', 'n')
			case '\r':
				c.wbuf = append(c.wbuf, '\\', 'r')
			case 0x1a:
				c.wbuf = append(c.wbuf, '\\', 'Z')
			case '\'', '"', '\\':
				c.wbuf = append(c.wbuf, '\\', ch)
			default:
				c.wbuf = append(c.wbuf, ch)
			}
		}
	}
	c.wbuf = append(c.wbuf, '\'')
}

// appendLenenc appends a length-encoded integer.
func appendLenenc(b []byte, n uint64) []byte {
	switch {
	case n < 251:
		return append(b, byte(n))
	case n < 1<<16:
		return append(b, 0xfc, byte(n), byte(n>>8))
	case n < 1<<24:
		return append(b, 0xfd, byte(n), byte(n>>8), byte(n>>16))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xfe), n)
}

// reader decodes a packet; err is set once it runs past the end.
type reader struct {
	b   []byte
	err bool
}

func (r *reader) bytes(n int) []byte {
	if n > len(r.b) {
		r.err = true
		r.b = nil
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) skip(n int) { r.bytes(n) }

func (r *reader) byte1() byte {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) uint16() uint16 {
	if b := r.bytes(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *reader) uint32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) nulString() string {
	for i, ch := range r.b {
		if ch == 0 {
			s := string(r.b[:i])
			r.b = r.b[i+1:]
			return s
		}
	}
	s := string(r.b)
	r.b = nil
	return s
}

func (r *reader) lenenc() uint64 {
	switch b := r.byte1(); b {
	case 0xfc:
		v := r.bytes(2)
		if v == nil {
			return 0
		}
		return uint64(binary.LittleEndian.Uint16(v))
	case 0xfd:
		v := r.bytes(3)
		if v == nil {
			return 0
		}
		return uint64(v[0]) | uint64(v[1])<<8 | uint64(v[2])<<16
	case 0xfe:
		v := r.bytes(8)
		if v == nil {
			return 0
		}
		return binary.LittleEndian.Uint64(v)
	default:
		return uint64(b)
	}
}

func (r *reader) rest() []byte {
	v := r.b
	r.b = nil
	return v
}
