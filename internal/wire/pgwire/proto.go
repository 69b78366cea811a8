package pgwire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// maxMessage bounds one backend message (the server's own limit for a
// value is 1 GiB), so that a corrupt stream cannot make the client
// allocate without end.
const maxMessage = 1 << 30

// Error is an ErrorResponse from the server.
type Error struct {
	Severity string
	// Code is the SQLSTATE (40001 serialization failure, 40P01 deadlock,
	// 53300 too many connections, 57P01 admin shutdown...).
	Code     string
	Message  string
	Detail   string
	Hint     string
	Position string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (SQLSTATE %s)", e.Severity, e.Message, e.Code)
}

// parseError decodes an ErrorResponse.
func parseError(p []byte) error {
	e := &Error{}
	r := reader{b: p}
	for !r.err && len(r.b) > 0 {
		f := r.byte1()
		if f == 0 {
			break
		}
		v := r.cstring()
		switch f {
		case 'S':
			if e.Severity == "" {
				e.Severity = v
			}
		case 'V':
			e.Severity = v // not localized
		case 'C':
			e.Code = v
		case 'M':
			e.Message = v
		case 'D':
			e.Detail = v
		case 'H':
			e.Hint = v
		case 'P':
			e.Position = v
		}
	}
	if e.Severity == "" {
		e.Severity = "ERROR"
	}
	return e
}

// fill reads more bytes into the read buffer, keeping its unread ones.
func (c *Conn) fill() error { return c.s.Fill() }

// readMsg returns the next backend message's type and payload. The
// payload is valid until the next read.
func (c *Conn) readMsg() (byte, []byte, error) {
	for {
		t, p, ok, err := c.buffered()
		if ok || err != nil {
			return t, p, err
		}
		// fill grows the buffer as the bytes come, not at the word of the header.
		if err := c.fill(); err != nil {
			return 0, nil, err
		}
	}
}

// buffered returns the next message if the read buffer holds all of it (ok).
func (c *Conn) buffered() (t byte, p []byte, ok bool, err error) {
	if c.s.End-c.s.Pos < 5 {
		return 0, nil, false, nil
	}
	h := c.s.Buf[c.s.Pos:]
	n := int(binary.BigEndian.Uint32(h[1:5]))
	if n < 4 || n > maxMessage {
		c.Abort() // out of step with the stream
		return 0, nil, false, fmt.Errorf("pgwire: bad message length %d", n)
	}
	if c.s.End-c.s.Pos < n+1 {
		return 0, nil, false, nil
	}
	p = c.s.Buf[c.s.Pos+5 : c.s.Pos+1+n]
	c.s.Pos += 1 + n
	return h[0], p, true, nil
}

// begin starts a frontend message of type t in wbuf and returns where its
// length goes; end fills it in.
func (c *Conn) begin(t byte) int {
	at := len(c.wbuf)
	c.wbuf = append(c.wbuf, t, 0, 0, 0, 0)
	return at
}

func (c *Conn) end(at int) {
	binary.BigEndian.PutUint32(c.wbuf[at+1:], uint32(len(c.wbuf)-at-1))
}

func (c *Conn) cstring(s string) { c.wbuf = append(append(c.wbuf, s...), 0) }

func (c *Conn) int16(v int) { c.wbuf = binary.BigEndian.AppendUint16(c.wbuf, uint16(v)) }

func (c *Conn) int32(v int) { c.wbuf = binary.BigEndian.AppendUint32(c.wbuf, uint32(v)) }

// sync appends a Sync message.
func (c *Conn) sync() { c.wbuf = append(c.wbuf, 'S', 0, 0, 0, 4) }

// commandTag returns the row count at the end of a CommandComplete tag
// ("INSERT 0 5", "UPDATE 3", "SELECT 1"); 0 when there is none.
func commandTag(p []byte) int64 {
	if len(p) > 0 && p[len(p)-1] == 0 {
		p = p[:len(p)-1]
	}
	i := len(p)
	for i > 0 && p[i-1] >= '0' && p[i-1] <= '9' {
		i--
	}
	if i == len(p) || i == 0 || p[i-1] != ' ' || len(p)-i > 18 {
		return 0
	}
	var n int64
	for _, ch := range p[i:] {
		n = n*10 + int64(ch-'0')
	}
	return n
}

// reader decodes a message; err is set once it runs past the end.
type reader struct {
	b   []byte
	err bool
}

func (r *reader) bytes(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.err = true
		r.b = nil
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) byte1() byte {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) int16() int {
	if b := r.bytes(2); b != nil {
		return int(int16(binary.BigEndian.Uint16(b)))
	}
	return 0
}

func (r *reader) int32() int {
	if b := r.bytes(4); b != nil {
		return int(int32(binary.BigEndian.Uint32(b)))
	}
	return 0
}

func (r *reader) cstring() string {
	for i, ch := range r.b {
		if ch == 0 {
			s := string(r.b[:i])
			r.b = r.b[i+1:]
			return s
		}
	}
	r.err = true
	r.b = nil
	return ""
}

// errUnexpected reports a message out of place in a reply.
func errUnexpected(t byte, where string) error {
	return fmt.Errorf("pgwire: unexpected message %q in %s", t, where)
}

// isFatal reports that an error leaves the connection unusable.
func isFatal(err error) bool {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Severity == "FATAL" || pe.Severity == "PANIC"
	}
	return true
}
