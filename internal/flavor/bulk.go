package flavor

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
)

// Bulk loading. Both families read the same text rows in bulk: fields
// separated by tabs, rows ended by newlines, a backslash escaping a
// backslash, tab, newline or carriage return (\\, \t, \n, \r), \N for
// NULL. That is LOAD DATA's default format and COPY's text format. Each
// dialect sends such rows with its own statement (LoadText); a RowSink
// streams generated rows through it and falls back to multi-row INSERTs
// when the server refuses local files (Dialect.RefusesBulk).

// BulkTable is the destination of a bulk load.
type BulkTable struct {
	// Table is the table as the statement writes it (quoted or
	// qualified as needed).
	Table string
	// Columns is the column list as SQL, without parentheses; "" for
	// every column in table order.
	Columns string
	// Modifier is "", "IGNORE" or "REPLACE" (MySQL family only).
	Modifier string
	// Charset is the data's character set (MySQL family only); "" for
	// the server's default.
	Charset string
}

// chunkBytes is the size at which Rows hands its rows on.
const chunkBytes = 256 << 10

// Rows writes rows in the bulk text format and hands them on in chunks
// of about 256 KiB of whole rows. The zero Rows accumulates without
// handing on (for a producer that skips rows).
type Rows struct {
	// Buf holds the current chunk. After Field a producer may append a
	// field's text to Buf itself when it needs no escaping (no
	// backslash, tab, newline or carriage return).
	Buf  []byte
	rows int64
	sep  bool
	// flush receives whole rows; it must not keep buf after returning.
	flush func(buf []byte, rows int64) error
}

// NewRows returns a Rows that hands each chunk and its number of rows
// to flush, which must not keep the chunk after it returns.
func NewRows(flush func(chunk []byte, rows int64) error) *Rows {
	return &Rows{Buf: make([]byte, 0, chunkBytes+4096), flush: flush}
}

// Field starts a field.
func (w *Rows) Field() {
	if w.sep {
		w.Buf = append(w.Buf, '\t')
	}
	w.sep = true
}

// Int writes an integer field.
func (w *Rows) Int(v int64) {
	w.Field()
	w.Buf = strconv.AppendInt(w.Buf, v, 10)
}

// Text writes a text field, escaped.
func (w *Rows) Text(s string) {
	w.Field()
	w.Buf = appendEscaped(w.Buf, s)
}

// Null writes a NULL field.
func (w *Rows) Null() {
	w.Field()
	w.Buf = append(w.Buf, `\N`...)
}

// End ends the row and hands the chunk on when it is full.
func (w *Rows) End() error {
	w.Buf = append(w.Buf, '\n')
	w.sep = false
	w.rows++
	if w.flush != nil && len(w.Buf) >= chunkBytes {
		return w.Flush()
	}
	return nil
}

// Flush hands on the rows written so far.
func (w *Rows) Flush() error {
	if len(w.Buf) == 0 || w.flush == nil {
		return nil
	}
	err := w.flush(w.Buf, w.rows)
	w.Buf, w.rows = w.Buf[:0], 0
	return err
}

// appendEscaped appends s with the bulk format's escapes.
func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		var e byte
		switch s[i] {
		case '\\':
			e = '\\'
		case '\t':
			e = 't'
		case '\n':
			e = 'n'
		case '\r':
			e = 'r'
		default:
			continue
		}
		b = append(b, s[:i]...)
		b = append(b, '\\', e)
		s = s[i+1:]
		i = -1
	}
	return append(b, s...)
}

// unescapeField reads one field of the bulk format: its value, or nil
// for \N.
func unescapeField(f []byte) any {
	if len(f) == 2 && f[0] == '\\' && f[1] == 'N' {
		return nil
	}
	i := bytes.IndexByte(f, '\\')
	if i < 0 {
		return string(f)
	}
	out := make([]byte, 0, len(f))
	for ; i >= 0; i = bytes.IndexByte(f, '\\') {
		out = append(out, f[:i]...)
		if i+1 == len(f) {
			f = f[i:] // a trailing lone backslash stays
			break
		}
		switch c := f[i+1]; c {
		case 't':
			out = append(out, '\t')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case '0':
			out = append(out, 0)
		default:
			out = append(out, c)
		}
		f = f[i+2:]
	}
	return string(append(out, f...))
}

// RowSink loads generated rows into tables through the fastest path the
// server allows: the dialect's LoadText streamed from the generator
// (LOAD DATA LOCAL INFILE, COPY FROM STDIN), or multi-row INSERTs whose
// values are placeholders, when asked or once the server refused local
// files. It is safe for concurrent use, one connection per load.
type RowSink struct {
	d Dialect
	// insertRows is the number of rows per INSERT.
	insertRows int
	progress   func(rows, bytes int64)
	// insertOnly is set when asked or once the server refused the
	// bulk path.
	insertOnly atomic.Bool
}

// NewRowSink returns a sink for d's servers. insertRows is the number
// of rows per INSERT of the fallback; insertOnly skips the bulk path;
// progress, if not nil, receives the rows and bytes (of the text
// format) as the server gets them.
func NewRowSink(d Dialect, insertRows int, insertOnly bool, progress func(rows, bytes int64)) *RowSink {
	s := &RowSink{d: d, insertRows: max(insertRows, 1), progress: progress}
	s.insertOnly.Store(insertOnly)
	return s
}

// InsertOnly reports whether the sink sends INSERTs (asked, or the
// server refused local files).
func (s *RowSink) InsertOnly() bool { return s.insertOnly.Load() }

// Load writes the rows gen produces into t on conn. gen may run again
// (from its first row) when the bulk path is refused.
func (s *RowSink) Load(ctx context.Context, conn *sql.Conn, t BulkTable, gen func(*Rows) error) error {
	if !s.insertOnly.Load() {
		err := s.bulk(ctx, conn, t, gen)
		if err == nil || !s.d.RefusesBulk(err) {
			return err
		}
		s.insertOnly.Store(true)
	}
	return s.insert(ctx, conn, t, gen)
}

func (s *RowSink) add(rows, bytes int64) {
	if s.progress != nil {
		s.progress(rows, bytes)
	}
}

// bulk streams the rows of gen from memory through a pipe: the
// generator runs ahead of the server by one chunk at most.
func (s *RowSink) bulk(ctx context.Context, conn *sql.Conn, t BulkTable, gen func(*Rows) error) error {
	pr, pw := io.Pipe()
	genErr := make(chan error, 1)
	go func() {
		rw := NewRows(func(b []byte, rows int64) error {
			if _, err := pw.Write(b); err != nil {
				return err
			}
			s.add(rows, int64(len(b)))
			return nil
		})
		err := gen(rw)
		if err == nil {
			err = rw.Flush()
		}
		pw.CloseWithError(err) // nil: EOF for the reader
		genErr <- err
	}()
	_, err := s.d.LoadText(ctx, conn, t, pr)
	// Unblock the generator if the server stopped reading early.
	pr.CloseWithError(errors.New("load stopped"))
	gerr := <-genErr
	if err != nil {
		return err
	}
	return gerr
}

// insert writes the rows of gen with multi-row INSERTs whose values are
// placeholders (the text fields, NULL for \N).
func (s *RowSink) insert(ctx context.Context, conn *sql.Conn, t BulkTable, gen func(*Rows) error) error {
	head := "INSERT INTO " + t.Table + " "
	if t.Columns != "" {
		head += "(" + t.Columns + ") "
	}
	head += "VALUES "
	ncols := 0
	texts := map[int]string{}
	stmt := func(n int) string {
		if q, ok := texts[n]; ok {
			return q
		}
		tuple := "(" + strings.Repeat("?, ", ncols-1) + "?)"
		q := s.d.Rebind(head + strings.Repeat(tuple+", ", n-1) + tuple)
		texts[n] = q
		return q
	}
	var args []any
	var pending, pendingBytes int64
	exec := func() error {
		if pending == 0 {
			return nil
		}
		if _, err := conn.ExecContext(ctx, stmt(int(pending)), args...); err != nil {
			return err
		}
		s.add(pending, pendingBytes)
		args, pending, pendingBytes = args[:0], 0, 0
		return nil
	}
	rw := NewRows(func(b []byte, _ int64) error {
		for len(b) > 0 {
			line := b
			if i := bytes.IndexByte(b, '\n'); i >= 0 {
				line, b = b[:i], b[i+1:]
			} else {
				b = nil
			}
			pendingBytes += int64(len(line)) + 1
			n := 0
			for {
				i := bytes.IndexByte(line, '\t')
				if i < 0 {
					args = append(args, unescapeField(line))
					n++
					break
				}
				args = append(args, unescapeField(line[:i]))
				line = line[i+1:]
				n++
			}
			if ncols == 0 {
				ncols = n
				args = append(make([]any, 0, s.insertRows*ncols), args...)
			} else if n != ncols {
				return errors.New("bulk load: rows of different lengths")
			}
			pending++
			if pending == int64(s.insertRows) {
				if err := exec(); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err := gen(rw); err != nil {
		return err
	}
	if err := rw.Flush(); err != nil {
		return err
	}
	return exec()
}
