package pgwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Type OIDs the client encodes and decodes in binary.
const (
	oidBool    = 16
	oidBytea   = 17
	oidName    = 19
	oidInt8    = 20
	oidInt2    = 21
	oidInt4    = 23
	oidText    = 25
	oidFloat4  = 700
	oidFloat8  = 701
	oidBPChar  = 1042
	oidVarchar = 1043
)

// Format codes.
const (
	fmtText   = 0
	fmtBinary = 1
)

// column is one column of a result.
type column struct {
	name   string
	oid    uint32
	format int16
}

// Stmt is a statement prepared on one Conn: its Parse and Describe ran
// once, and each call sends Bind, Execute and Sync in one write.
type Stmt struct {
	c      *Conn
	name   string
	params []uint32 // parameter type OIDs
	cols   []column // result columns, with the format asked for each
}

// Prepare parses query (with $1, $2... placeholders) on the server as a
// named statement and reads its parameter and result descriptions, in one
// round trip.
func (c *Conn) Prepare(query string) (*Stmt, error) {
	sts, err := c.PrepareAll([]string{query})
	if pe, ok := err.(*PrepareError); ok {
		return nil, pe.Err
	}
	if err != nil {
		return nil, err
	}
	return sts[0], nil
}

// PrepareError is PrepareAll's error for a query the server refused.
type PrepareError struct {
	Index int // of the query in PrepareAll's list
	Err   error
}

func (e *PrepareError) Error() string { return e.Err.Error() }
func (e *PrepareError) Unwrap() error { return e.Err }

// PrepareAll prepares every query like Prepare, all in one round trip
// (a Parse and a Describe each, one Sync). On an error none is kept: the
// server stops at the first failing query, whose error is returned as a
// *PrepareError naming it.
func (c *Conn) PrepareAll(queries []string) ([]*Stmt, error) {
	if c.pipe != nil {
		return nil, errInPipeline
	}
	sts := make([]*Stmt, len(queries))
	for i, q := range queries {
		c.nstmt++
		s := &Stmt{c: c, name: "pw" + strconv.Itoa(c.nstmt)}
		sts[i] = s
		at := c.begin('P')
		c.cstring(s.name)
		c.cstring(q)
		c.int16(0)
		c.end(at)
		at = c.begin('D')
		c.wbuf = append(c.wbuf, 'S')
		c.cstring(s.name)
		c.end(at)
	}
	c.sync()
	if err := c.send(); err != nil {
		return nil, err
	}
	var first error
	next := 0 // the statement the next description is of
	for {
		t, p, err := c.readMsg()
		if err != nil {
			c.busy.Store(false)
			return nil, firstErr(first, err)
		}
		switch t {
		case '1', 'N', 'S':
		case 't':
			if next >= len(sts) {
				return nil, c.outOfStep(t, "PrepareAll")
			}
			r := reader{b: p}
			n := r.int16()
			for i := 0; i < n && !r.err; i++ {
				sts[next].params = append(sts[next].params, uint32(r.int32()))
			}
			if r.err {
				first = firstErr(first, errors.New("pgwire: short ParameterDescription"))
			}
		case 'n', 'T': // the statement's description ends
			if next >= len(sts) {
				return nil, c.outOfStep(t, "PrepareAll")
			}
			if t == 'T' {
				cols, err := parseRowDesc(p, nil)
				if err != nil {
					first = firstErr(first, err)
				}
				for i := range cols {
					cols[i].format = resultFormat(cols[i].oid)
				}
				sts[next].cols = cols
			}
			next++
		case 'E':
			first = firstErr(first, &PrepareError{Index: next, Err: parseError(p)})
		case 'Z':
			c.readyFor(p)
			c.busy.Store(false)
			if first != nil {
				return nil, first
			}
			if next != len(sts) {
				return nil, fmt.Errorf("pgwire: %d statement descriptions for %d statements", next, len(sts))
			}
			return sts, nil
		default:
			return nil, c.outOfStep(t, "PrepareAll")
		}
	}
}

// resultFormat picks the result format of a column of type oid: binary
// where the binary form is as cheap or cheaper to produce and read.
func resultFormat(oid uint32) int16 {
	switch oid {
	case oidInt2, oidInt4, oidInt8, oidFloat4, oidFloat8, oidBool, oidBytea, oidText, oidVarchar, oidBPChar, oidName:
		return fmtBinary
	}
	return fmtText
}

// NumParams is the number of parameters the server found.
func (s *Stmt) NumParams() int { return len(s.params) }

// Exec runs the statement with args and returns the rows it changed (the
// count of its command tag); result rows are skipped. An argument is nil,
// an integer, float64, bool, string or []byte, or a *int64, *string or
// *[]byte read at each call: a caller that changes its arguments in place
// through such pointers binds without allocating.
func (s *Stmt) Exec(args []any) (int64, error) {
	if s.c.pipe != nil {
		return 0, errInPipeline
	}
	if err := s.bind(args); err != nil {
		return 0, err
	}
	return s.c.run(nil, nil)
}

// Query runs the statement and reads and skips its rows.
func (s *Stmt) Query(args []any) error {
	_, err := s.Exec(args)
	return err
}

// QueryFunc runs the statement and calls fn for each row; r is valid
// during the call. An error from fn is returned once the reply is read.
func (s *Stmt) QueryFunc(args []any, fn func(r *Row) error) error {
	if s.c.pipe != nil {
		return errInPipeline
	}
	if err := s.bind(args); err != nil {
		return err
	}
	_, err := s.c.run(s.cols, fn)
	return err
}

// Close releases the statement on the server.
func (s *Stmt) Close() error {
	c := s.c
	if c.stopped() || c.pipe != nil {
		return nil
	}
	at := c.begin('C')
	c.wbuf = append(c.wbuf, 'S')
	c.cstring(s.name)
	c.end(at)
	c.sync()
	if err := c.send(); err != nil {
		return err
	}
	_, err := c.reply(nil, nil)
	return err
}

// bind queues Bind and Execute for s with args (and Sync outside a
// pipeline).
func (s *Stmt) bind(args []any) error {
	c := s.c
	if len(args) != len(s.params) {
		return fmt.Errorf("pgwire: statement wants %d arguments, got %d", len(s.params), len(args))
	}
	start := len(c.wbuf)
	at := c.begin('B')
	c.wbuf = append(c.wbuf, 0) // unnamed portal
	c.cstring(s.name)
	c.int16(len(args))
	fmts := len(c.wbuf)
	for range args {
		c.int16(fmtText)
	}
	c.int16(len(args))
	for i, a := range args {
		f, err := c.appendParam(a, s.params[i])
		if err != nil {
			c.wbuf = c.wbuf[:start]
			return fmt.Errorf("argument %d: %w", i+1, err)
		}
		if f != fmtText {
			binary.BigEndian.PutUint16(c.wbuf[fmts+2*i:], uint16(f))
		}
	}
	c.int16(len(s.cols))
	for _, col := range s.cols {
		c.int16(int(col.format))
	}
	c.end(at)
	c.execute()
	return nil
}

// execute queues Execute of the unnamed portal, all rows, and a Sync
// outside a pipeline.
func (c *Conn) execute() {
	c.wbuf = append(c.wbuf, 'E', 0, 0, 0, 9, 0, 0, 0, 0, 0)
	if c.pipe == nil {
		c.sync()
	} else {
		c.pipe.n++
	}
}

// appendParam appends a's length and value for a parameter of type oid
// (0: unknown) and returns the format used: binary where a's Go type and
// the parameter's type agree, text otherwise (the server parses it).
// A *int64, *string or *[]byte is read through (nil is NULL): a caller
// that binds the same statement again and again keeps its arguments in
// place and changes them there, where an int64 or a string put in an
// `any` would allocate on every call.
func (c *Conn) appendParam(a any, oid uint32) (int, error) {
	switch v := a.(type) {
	case nil:
		c.int32(-1)
		return fmtText, nil
	case *int64:
		if v == nil {
			c.int32(-1)
			return fmtText, nil
		}
		return c.appendInt(*v, oid), nil
	case *[]byte:
		if v == nil {
			c.int32(-1)
			return fmtText, nil
		}
		return c.appendBytes(*v, oid), nil
	case *string:
		if v == nil {
			c.int32(-1)
			return fmtText, nil
		}
		return c.appendString(*v, oid), nil
	case int64:
		return c.appendInt(v, oid), nil
	case int:
		return c.appendInt(int64(v), oid), nil
	case int32:
		return c.appendInt(int64(v), oid), nil
	case float64:
		switch oid {
		case oidFloat8:
			c.int32(8)
			c.wbuf = binary.BigEndian.AppendUint64(c.wbuf, math.Float64bits(v))
			return fmtBinary, nil
		case oidFloat4:
			c.int32(4)
			c.wbuf = binary.BigEndian.AppendUint32(c.wbuf, math.Float32bits(float32(v)))
			return fmtBinary, nil
		}
		return c.appendText(func(b []byte) []byte { return strconv.AppendFloat(b, v, 'g', -1, 64) }), nil
	case bool:
		if oid == oidBool {
			c.int32(1)
			if v {
				c.wbuf = append(c.wbuf, 1)
			} else {
				c.wbuf = append(c.wbuf, 0)
			}
			return fmtBinary, nil
		}
		return c.appendText(func(b []byte) []byte { return strconv.AppendBool(b, v) }), nil
	case string:
		return c.appendString(v, oid), nil
	case []byte:
		return c.appendBytes(v, oid), nil
	}
	return 0, fmt.Errorf("pgwire: unsupported argument type %T", a)
}

// appendString appends s as it is: binary for a bytea parameter, text
// otherwise.
func (c *Conn) appendString(s string, oid uint32) int {
	c.int32(len(s))
	c.wbuf = append(c.wbuf, s...)
	if oid == oidBytea {
		return fmtBinary
	}
	return fmtText
}

// appendBytes appends b like appendString; nil is NULL.
func (c *Conn) appendBytes(b []byte, oid uint32) int {
	if b == nil {
		c.int32(-1)
		return fmtText
	}
	c.int32(len(b))
	c.wbuf = append(c.wbuf, b...)
	if oid == oidBytea {
		return fmtBinary
	}
	return fmtText
}

// appendInt appends v in binary for an integer parameter that holds it,
// in text otherwise.
func (c *Conn) appendInt(v int64, oid uint32) int {
	switch {
	case oid == oidInt8:
		c.int32(8)
		c.wbuf = binary.BigEndian.AppendUint64(c.wbuf, uint64(v))
		return fmtBinary
	case oid == oidInt4 && v == int64(int32(v)):
		c.int32(4)
		c.wbuf = binary.BigEndian.AppendUint32(c.wbuf, uint32(v))
		return fmtBinary
	case oid == oidInt2 && v == int64(int16(v)):
		c.int32(2)
		c.wbuf = binary.BigEndian.AppendUint16(c.wbuf, uint16(v))
		return fmtBinary
	}
	return c.appendText(func(b []byte) []byte { return strconv.AppendInt(b, v, 10) })
}

// appendText appends a text value rendered by f, with its length.
func (c *Conn) appendText(f func([]byte) []byte) int {
	at := len(c.wbuf)
	c.int32(0)
	c.wbuf = f(c.wbuf)
	binary.BigEndian.PutUint32(c.wbuf[at:], uint32(len(c.wbuf)-at-4))
	return fmtText
}

// Exec runs an unprepared statement and returns the rows it changed:
// with args nil through the simple protocol (Query: one round trip, and
// the text may hold several statements; the count is the last one's), with
// args not nil (even empty) as an unnamed statement of the extended
// protocol (Parse, Bind, Execute and Sync in one write), each argument
// sent in text with its type left for the server to infer ([]byte as
// bytea).
func (c *Conn) Exec(query string, args []any) (int64, error) {
	if c.pipe != nil {
		return 0, errInPipeline
	}
	if err := c.unprepared(query, args, false); err != nil {
		return 0, err
	}
	return c.run(nil, nil)
}

// Query runs an unprepared statement like Exec and skips its rows.
func (c *Conn) Query(query string, args []any) error {
	_, err := c.Exec(query, args)
	return err
}

// QueryFunc runs an unprepared statement like Exec and calls fn for each
// row (of every result, with the simple protocol); r is valid during the
// call.
func (c *Conn) QueryFunc(query string, args []any, fn func(r *Row) error) error {
	if c.pipe != nil {
		return errInPipeline
	}
	if err := c.unprepared(query, args, true); err != nil {
		return err
	}
	_, err := c.run(nil, fn)
	return err
}

// ErrCopy is the error of a statement that starts a COPY to or from the
// client (COPY ... FROM STDIN, TO STDOUT), which Conn does not speak: the
// connection is closed, as its stream cannot go on.
var ErrCopy = errors.New("pgwire: COPY to or from the client is not supported")

// Results is the number of results the last reply held (one per
// statement of a simple-protocol query string; Row.Result numbers them).
func (c *Conn) Results() int { return c.results }

// unprepared queues query: Query for nil args outside a pipeline, Parse,
// Bind, (Describe when the rows are read) and Execute otherwise.
func (c *Conn) unprepared(query string, args []any, describe bool) error {
	if args == nil && c.pipe == nil {
		at := c.begin('Q')
		c.cstring(query)
		c.end(at)
		return nil
	}
	start := len(c.wbuf)
	at := c.begin('P')
	c.wbuf = append(c.wbuf, 0)
	c.cstring(query)
	c.int16(len(args))
	for _, a := range args {
		if isBytes(a) {
			c.int32(oidBytea)
		} else {
			c.int32(0)
		}
	}
	c.end(at)
	at = c.begin('B')
	c.wbuf = append(c.wbuf, 0, 0) // unnamed portal, unnamed statement
	c.int16(len(args))
	fmts := len(c.wbuf)
	for range args {
		c.int16(fmtText)
	}
	c.int16(len(args))
	for i, a := range args {
		if s, ok := a.(string); ok { // the common case, without a closure
			c.int32(len(s))
			c.wbuf = append(c.wbuf, s...)
			continue
		}
		oid := uint32(0)
		if isBytes(a) {
			oid = oidBytea
		}
		f, err := c.appendParam(a, oid)
		if err != nil {
			c.wbuf = c.wbuf[:start]
			return fmt.Errorf("argument %d: %w", i+1, err)
		}
		if f != fmtText {
			binary.BigEndian.PutUint16(c.wbuf[fmts+2*i:], uint16(f))
		}
	}
	c.int16(0) // every result column in text
	c.end(at)
	if describe {
		c.wbuf = append(c.wbuf, 'D', 0, 0, 0, 6, 'P', 0)
	}
	c.execute()
	return nil
}

// isBytes reports that a is a []byte (or a *[]byte to one) that is not
// nil: an unprepared statement sends it as bytea.
func isBytes(a any) bool {
	switch v := a.(type) {
	case []byte:
		return v != nil
	case *[]byte:
		return v != nil && *v != nil
	}
	return false
}

// send flushes the queued request and marks the Conn busy (Abort cancels
// a busy Conn's statement).
func (c *Conn) send() error {
	c.busy.Store(true)
	if err := c.flush(); err != nil {
		c.busy.Store(false)
		return err
	}
	return nil
}

// run sends the queued request and reads its reply.
func (c *Conn) run(cols []column, fn func(*Row) error) (int64, error) {
	if err := c.send(); err != nil {
		return 0, err
	}
	return c.reply(cols, fn)
}

// reply reads messages until ReadyForQuery: the rows (skipped, or handed
// to fn with the columns cols, or those of the reply's RowDescription),
// the affected rows of the last CommandComplete, and the first error.
func (c *Conn) reply(cols []column, fn func(*Row) error) (int64, error) {
	defer c.busy.Store(false)
	rs := replyState{cols: cols, fn: fn}
	for {
		t, p, err := c.readMsg()
		if err != nil {
			return 0, firstErr(rs.first, err)
		}
		if done, err := c.take(&rs, t, p); done || err != nil {
			return rs.result(err)
		}
	}
}

// replyState is a reply read so far.
type replyState struct {
	cols     []column
	fn       func(*Row) error
	affected int64 // of the last CommandComplete
	first    error // the first error
	results  int   // results ended so far (CommandComplete, EmptyQueryResponse)
}

// result is the reply's outcome once take ended it with err.
func (rs *replyState) result(err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return rs.affected, nil
}

// take handles one message of a reply: done at ReadyForQuery (err is then
// the reply's first error), or an error that puts the Conn out of step.
func (c *Conn) take(rs *replyState, t byte, p []byte) (done bool, err error) {
	switch t {
	case 'D':
		if rs.fn == nil || rs.first != nil {
			return false, nil
		}
		if err := c.row.parse(rs.cols, p); err != nil {
			rs.first = err
			return false, nil
		}
		c.row.result = rs.results
		if err := rs.fn(&c.row); err != nil {
			rs.first = err
		}
	case 'C':
		rs.affected = commandTag(p)
		rs.results++
	case 'I':
		rs.results++
	case 'G', 'H', 'W':
		// A COPY the client did not start: the stream cannot go on.
		c.busy.Store(false)
		c.Abort()
		return false, ErrCopy
	case 'T':
		if rs.fn != nil {
			var err error
			c.unnamed.cols, err = parseRowDesc(p, c.unnamed.cols[:0])
			if err != nil {
				rs.first = firstErr(rs.first, err)
			}
			rs.cols = c.unnamed.cols
		}
	case '1', '2', '3', 'n', 's', 'N', 'A', 't':
	case 'S':
		r := reader{b: p}
		if k, v := r.cstring(), r.cstring(); !r.err {
			c.params[k] = v
		}
	case 'E':
		rs.first = firstErr(rs.first, parseError(p))
	case 'Z':
		c.readyFor(p)
		c.results = rs.results
		return true, rs.first
	default:
		return false, c.outOfStep(t, "a reply")
	}
	return false, nil
}

// outOfStep aborts the Conn, whose stream can no longer be trusted.
func (c *Conn) outOfStep(t byte, where string) error {
	c.busy.Store(false)
	c.Abort()
	return errUnexpected(t, where)
}

// firstErr keeps the first error: a server's error before the lost
// connection that followed it (a FATAL error closes the connection).
func firstErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// desc holds the columns of the last RowDescription of an unprepared
// statement.
type desc struct{ cols []column }

// parseRowDesc decodes a RowDescription into cols.
func parseRowDesc(p []byte, cols []column) ([]column, error) {
	r := reader{b: p}
	n := r.int16()
	for i := 0; i < n && !r.err; i++ {
		var col column
		col.name = r.cstring()
		r.bytes(6) // table OID, attribute number
		col.oid = uint32(r.int32())
		r.bytes(6) // type size, type modifier
		col.format = int16(r.int16())
		cols = append(cols, col)
	}
	if r.err {
		return cols[:0], errors.New("pgwire: short RowDescription")
	}
	return cols, nil
}
