package pgwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Row is one result row handed to a QueryFunc callback. Its values point
// into the connection's read buffer: they are valid during the call only.
type Row struct {
	c       *Conn
	cols    []column
	vals    [][]byte // nil: NULL
	scratch []byte   // text forms of binary values (Bytes)
	result  int      // index of the result the row belongs to (Result)
}

// Result is the 0-based index, within its reply, of the result the row
// belongs to: a simple-protocol query of several statements ("SELECT 1;
// SELECT 2") has one result per statement.
func (r *Row) Result() int { return r.result }

// parse points r at the values of the DataRow p.
func (r *Row) parse(cols []column, p []byte) error {
	rd := reader{b: p}
	n := rd.int16()
	if n != len(cols) {
		return fmt.Errorf("pgwire: a row of %d values for %d columns", n, len(cols))
	}
	r.cols, r.vals, r.scratch = cols, r.vals[:0], r.scratch[:0]
	for i := 0; i < n; i++ {
		l := rd.int32()
		if l < 0 {
			r.vals = append(r.vals, nil)
			continue
		}
		v := rd.bytes(l)
		if v == nil {
			v = []byte{}
		}
		r.vals = append(r.vals, v)
	}
	if rd.err {
		return errors.New("pgwire: short DataRow")
	}
	return nil
}

// Len is the number of columns.
func (r *Row) Len() int { return len(r.vals) }

// Name is column i's name.
func (r *Row) Name(i int) string { return r.cols[i].name }

// IsNull reports whether column i is NULL.
func (r *Row) IsNull(i int) bool { return r.vals[i] == nil }

// Int64 returns column i as an integer: a binary integer, or a text one
// (of any type whose text is an integer). NULL is an error.
func (r *Row) Int64(i int) (int64, error) {
	v := r.vals[i]
	if v == nil {
		return 0, fmt.Errorf("pgwire: column %q is NULL", r.cols[i].name)
	}
	if r.cols[i].format == fmtBinary {
		switch r.cols[i].oid {
		case oidInt8:
			if len(v) == 8 {
				return int64(binary.BigEndian.Uint64(v)), nil
			}
		case oidInt4:
			if len(v) == 4 {
				return int64(int32(binary.BigEndian.Uint32(v))), nil
			}
		case oidInt2:
			if len(v) == 2 {
				return int64(int16(binary.BigEndian.Uint16(v))), nil
			}
		case oidText, oidVarchar, oidBPChar, oidName:
			return strconv.ParseInt(string(v), 10, 64)
		}
		return 0, fmt.Errorf("pgwire: column %q (type %d) is not an integer", r.cols[i].name, r.cols[i].oid)
	}
	return strconv.ParseInt(string(v), 10, 64)
}

// Float64 returns column i as a float: a binary float or integer, or the
// text of a number. NULL is an error.
func (r *Row) Float64(i int) (float64, error) {
	v := r.vals[i]
	if v == nil {
		return 0, fmt.Errorf("pgwire: column %q is NULL", r.cols[i].name)
	}
	if r.cols[i].format == fmtBinary {
		switch r.cols[i].oid {
		case oidFloat8:
			if len(v) == 8 {
				return math.Float64frombits(binary.BigEndian.Uint64(v)), nil
			}
		case oidFloat4:
			if len(v) == 4 {
				return float64(math.Float32frombits(binary.BigEndian.Uint32(v))), nil
			}
		case oidInt8, oidInt4, oidInt2:
			n, err := r.Int64(i)
			return float64(n), err
		case oidText, oidVarchar, oidBPChar, oidName:
			return strconv.ParseFloat(string(v), 64)
		}
		return 0, fmt.Errorf("pgwire: column %q (type %d) is not a number", r.cols[i].name, r.cols[i].oid)
	}
	return strconv.ParseFloat(string(v), 64)
}

// Bytes returns column i in its text form (bytea: its raw bytes); nil for
// NULL. Valid during the call.
func (r *Row) Bytes(i int) []byte {
	v := r.vals[i]
	if v == nil || r.cols[i].format != fmtBinary {
		return v
	}
	at := len(r.scratch)
	switch r.cols[i].oid {
	case oidInt8, oidInt4, oidInt2:
		n, err := r.Int64(i)
		if err != nil {
			return v
		}
		r.scratch = strconv.AppendInt(r.scratch, n, 10)
	case oidFloat8, oidFloat4:
		f, err := r.Float64(i)
		if err != nil {
			return v
		}
		bits := 64
		if r.cols[i].oid == oidFloat4 {
			bits = 32
		}
		r.scratch = strconv.AppendFloat(r.scratch, f, 'g', -1, bits)
	case oidBool:
		if len(v) == 1 && v[0] != 0 {
			r.scratch = append(r.scratch, 't')
		} else {
			r.scratch = append(r.scratch, 'f')
		}
	default: // text types and bytea: the binary form is the value
		return v
	}
	return r.scratch[at:]
}
