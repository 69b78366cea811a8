package mysqlwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unsafe"
)

// Column types of the protocol (enum_field_types) whose binary values are
// not length-encoded strings.
const (
	colTiny       = 0x01
	colShort      = 0x02
	colLong       = 0x03
	colFloat      = 0x04
	colDouble     = 0x05
	colNull       = 0x06
	colTimestamp  = 0x07
	colLongLong   = 0x08
	colInt24      = 0x09
	colDate       = 0x0a
	colTime       = 0x0b
	colDatetime   = 0x0c
	colYear       = 0x0d
	colNewDate    = 0x0e
	colTimestamp2 = 0x11
	colDatetime2  = 0x12
	colTime2      = 0x13
)

// flagUnsigned is UNSIGNED_FLAG of a column definition.
const flagUnsigned = 0x20

// column is what a row decoder needs of a column definition.
type column struct {
	typ      byte
	unsigned bool
}

// Row is one row of a result set, handed to a QueryFunc callback. It is
// valid only during the callback, which must not use the Conn: its bytes
// are the Conn's read buffer.
//
// Rows of prepared statements come in the binary protocol: integers and
// floating-point numbers binary, DECIMAL and strings as text, temporal
// values in their binary form (Bytes). Rows of text queries are all text.
type Row struct {
	data   []byte
	cols   []column
	off    []int32 // value i is data[off[2i]:off[2i+1]]; off[2i] < 0: NULL
	binary bool
}

// Len is the number of columns.
func (r *Row) Len() int { return len(r.cols) }

// IsNull reports whether column i is NULL.
func (r *Row) IsNull(i int) bool { return r.off[2*i] < 0 }

// Bytes returns column i's value: the text of a text-protocol value or of
// a string or DECIMAL, else the binary encoding of the protocol; nil for
// NULL. The bytes are the Conn's: copy them to keep them.
func (r *Row) Bytes(i int) []byte {
	if r.off[2*i] < 0 {
		return nil
	}
	return r.data[r.off[2*i]:r.off[2*i+1]]
}

// errNull is returned when a NULL is read as a number.
var errNull = errors.New("mysqlwire: NULL value")

// Int64 returns column i as an integer: a binary integer, or text (such
// as a DECIMAL without fraction) parsed.
func (r *Row) Int64(i int) (int64, error) {
	b := r.Bytes(i)
	if b == nil {
		return 0, fmt.Errorf("column %d: %w", i+1, errNull)
	}
	if r.binary {
		c := r.cols[i]
		switch c.typ {
		case colTiny:
			if c.unsigned {
				return int64(b[0]), nil
			}
			return int64(int8(b[0])), nil
		case colShort, colYear:
			v := binary.LittleEndian.Uint16(b)
			if c.unsigned {
				return int64(v), nil
			}
			return int64(int16(v)), nil
		case colLong, colInt24:
			v := binary.LittleEndian.Uint32(b)
			if c.unsigned {
				return int64(v), nil
			}
			return int64(int32(v)), nil
		case colLongLong:
			v := binary.LittleEndian.Uint64(b)
			if c.unsigned && v > math.MaxInt64 {
				return 0, fmt.Errorf("column %d: %d out of int64's range", i+1, v)
			}
			return int64(v), nil
		case colFloat, colDouble:
			f, _ := r.Float64(i)
			if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
				return 0, fmt.Errorf("column %d: %v is not an integer", i+1, f)
			}
			return int64(f), nil
		}
		if !textual(c.typ) {
			return 0, fmt.Errorf("column %d: type 0x%02x is not a number", i+1, c.typ)
		}
	}
	v, err := strconv.ParseInt(unsafe.String(unsafe.SliceData(b), len(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("column %d: %q is not an integer", i+1, b)
	}
	return v, nil
}

// Float64 returns column i as a floating-point number: a binary number,
// or text (such as a DECIMAL) parsed.
func (r *Row) Float64(i int) (float64, error) {
	b := r.Bytes(i)
	if b == nil {
		return 0, fmt.Errorf("column %d: %w", i+1, errNull)
	}
	if r.binary {
		c := r.cols[i]
		switch c.typ {
		case colFloat:
			return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), nil
		case colDouble:
			return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
		case colLongLong:
			if c.unsigned {
				return float64(binary.LittleEndian.Uint64(b)), nil
			}
			fallthrough
		case colTiny, colShort, colYear, colLong, colInt24:
			v, err := r.Int64(i)
			return float64(v), err
		}
		if !textual(c.typ) {
			return 0, fmt.Errorf("column %d: type 0x%02x is not a number", i+1, c.typ)
		}
	}
	v, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(b), len(b)), 64)
	if err != nil {
		return 0, fmt.Errorf("column %d: %q is not a number", i+1, b)
	}
	return v, nil
}

// textual reports a type whose binary value is a length-encoded string.
func textual(typ byte) bool { return binarySize(typ) == -1 }

// binarySize is the size of a binary value of typ: a fixed size, -2 for a
// one-byte length prefix (temporal types), -1 for a length-encoded string.
func binarySize(typ byte) int {
	switch typ {
	case colTiny:
		return 1
	case colShort, colYear:
		return 2
	case colLong, colInt24, colFloat:
		return 4
	case colLongLong, colDouble:
		return 8
	case colNull:
		return 0
	case colDate, colNewDate, colDatetime, colTimestamp, colTime, colTimestamp2, colDatetime2, colTime2:
		return -2
	}
	return -1
}

// QueryFunc executes the statement and calls fn for each row, in the
// binary protocol. An error of fn ends the calls; the rest of the reply is
// read, and fn's error returned.
func (s *Stmt) QueryFunc(args []any, fn func(r *Row) error) error {
	if s.c.pipe != nil {
		return errInPipeline
	}
	if err := s.send(args); err != nil {
		return err
	}
	_, _, err := s.c.resultFunc(s, fn)
	if err != nil {
		s.types = nil
	}
	return err
}

// QueryFunc runs query like Query (the text protocol) and calls fn for
// each row, like Stmt.QueryFunc.
func (c *Conn) QueryFunc(query string, args []any, fn func(r *Row) error) error {
	if err := c.sendText(query, args); err != nil {
		return err
	}
	_, _, err := c.resultFunc(nil, fn)
	return err
}

// resultFunc reads the reply to a statement like result, calling fn for
// each row of its result sets: those of the prepared statement s (binary
// protocol), or of a text query when s is nil.
func (c *Conn) resultFunc(s *Stmt, fn func(r *Row) error) (affected int64, rows bool, err error) {
	var fnErr error
	for {
		p, err := c.readPacket()
		if err != nil {
			return 0, rows, err
		}
		if len(p) == 0 {
			return 0, rows, errors.New("mysqlwire: empty reply")
		}
		switch p[0] {
		case 0x00:
			affected = c.readOK(p)
		case 0xff:
			return 0, rows, parseError(p)
		case 0xfb:
			return 0, rows, errors.New("mysqlwire: LOCAL INFILE request not supported")
		default:
			rows = true
			r := reader{b: p}
			n := r.lenenc()
			meta := true
			if c.cacheMeta {
				meta = r.byte1() == 1
			}
			if r.err || n == 0 || n > 4096 {
				c.Abort() // out of step with the stream
				return 0, rows, fmt.Errorf("mysqlwire: bad column count in reply")
			}
			if err := c.readRows(s, int(n), meta, fn, &fnErr); err != nil {
				return 0, rows, err
			}
		}
		if c.status&statusMoreResults == 0 {
			return affected, rows, fnErr
		}
	}
}

// readRows reads the ncols column definitions (when meta says they
// follow) and the rows of a result set of s (binary protocol; nil: a text
// query), calling fn for each row until it fails (*fnErr). Column
// definitions a prepared statement's execution left out (metadata caching)
// are s's, which those it sends replace.
func (c *Conn) readRows(s *Stmt, ncols int, meta bool, fn func(r *Row) error, fnErr *error) error {
	cols := &c.cols
	if s != nil {
		cols = &s.cols
	}
	if meta {
		*cols = (*cols)[:0]
		for range ncols {
			p, err := c.readPacket()
			if err != nil {
				return err
			}
			if len(p) > 0 && p[0] == 0xff {
				return parseError(p)
			}
			col, ok := parseColumn(p)
			if !ok {
				c.Abort()
				return errors.New("mysqlwire: bad column definition")
			}
			*cols = append(*cols, col)
		}
	} else if len(*cols) != ncols {
		c.Abort()
		return errors.New("mysqlwire: result without column definitions and none kept")
	}
	p, err := c.readPacket()
	if err != nil {
		return err
	}
	if !isEOF(p) {
		c.Abort()
		return errors.New("mysqlwire: no EOF after the column definitions")
	}
	if cap(c.offs) < 2*ncols {
		c.offs = make([]int32, 2*ncols)
	}
	row := &c.row
	row.cols, row.off, row.binary = *cols, c.offs[:2*ncols], s != nil
	for {
		p, err := c.readPacket()
		if err != nil {
			return err
		}
		switch {
		case isEOF(p):
			c.status = eofStatus(p)
			row.data = nil
			return nil
		case len(p) > 0 && p[0] == 0xff:
			row.data = nil
			return parseError(p)
		}
		if *fnErr != nil {
			continue
		}
		if err := row.parse(p); err != nil {
			*fnErr = err
			continue
		}
		*fnErr = fn(row)
	}
}

// parseColumn reads the type and flags of a column definition
// (Protocol::ColumnDefinition41).
func parseColumn(p []byte) (column, bool) {
	r := reader{b: p}
	for range 6 { // catalog, schema, table, org_table, name, org_name
		r.lenencBytes()
	}
	if n := r.lenenc(); n < 0x0c {
		return column{}, false
	}
	r.skip(2 + 4) // character set, column length
	typ := r.byte1()
	flags := r.uint16()
	if r.err {
		return column{}, false
	}
	return column{typ: typ, unsigned: flags&flagUnsigned != 0}, true
}

// errBadRow reports a row that does not match its column definitions.
var errBadRow = errors.New("mysqlwire: malformed row")

// parse records where each value of row packet p lies.
func (r *Row) parse(p []byte) error {
	r.data = p
	if len(p) >= 1<<31 {
		return errBadRow
	}
	if !r.binary {
		pos := 0
		for i := range r.cols {
			if pos >= len(p) {
				return errBadRow
			}
			if p[pos] == 0xfb {
				r.off[2*i], r.off[2*i+1] = -1, -1
				pos++
				continue
			}
			lr := reader{b: p[pos:]}
			n := lr.lenenc()
			start := len(p) - len(lr.b)
			if lr.err || n > uint64(len(p)-start) {
				return errBadRow
			}
			r.off[2*i], r.off[2*i+1] = int32(start), int32(start+int(n))
			pos = start + int(n)
		}
		return nil
	}
	// Binary: 0x00, a NULL bitmap with an offset of 2 bits, the values.
	nb := (len(r.cols) + 9) / 8
	if len(p) < 1+nb || p[0] != 0x00 {
		return errBadRow
	}
	bitmap := p[1 : 1+nb]
	pos := 1 + nb
	for i, c := range r.cols {
		if bitmap[(i+2)/8]&(1<<((i+2)%8)) != 0 {
			r.off[2*i], r.off[2*i+1] = -1, -1
			continue
		}
		size := binarySize(c.typ)
		switch size {
		case -2:
			if pos >= len(p) {
				return errBadRow
			}
			size = int(p[pos])
			pos++
		case -1:
			lr := reader{b: p[pos:]}
			n := lr.lenenc()
			start := len(p) - len(lr.b)
			if lr.err || n > uint64(len(p)-start) {
				return errBadRow
			}
			pos, size = start, int(n)
		}
		if size > len(p)-pos {
			return errBadRow
		}
		r.off[2*i], r.off[2*i+1] = int32(pos), int32(pos+size)
		pos += size
	}
	return nil
}

// lenencBytes reads a length-encoded string.
func (r *reader) lenencBytes() []byte {
	n := r.lenenc()
	if n > uint64(len(r.b)) {
		r.err = true
		r.b = nil
		return nil
	}
	return r.bytes(int(n))
}
