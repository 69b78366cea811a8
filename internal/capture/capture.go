// Package capture defines dbarena's capture file, schema
// "dbarena.capture/v1": the SQL an application sent, one JSON object a
// line, written by `dbarena capture` and read by the replay workload.
//
// The first line is a Header; every other line is an Event. Events are in
// start order (t_us), and within a session in the order the session sent
// them. Field names are a public contract (docs/CLI.md).
package capture

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// Schema is the value of Header.Schema.
const Schema = "dbarena.capture/v1"

// Event kinds.
const (
	KindConnect = "connect" // a session opens (User, DB set)
	KindQuery   = "query"   // a statement sent as text
	KindPrepare = "prepare" // SQL is prepared as statement Name
	KindExecute = "execute" // statement Name runs with Params (SQL holds its text)
	KindClose   = "close"   // statement Name is deallocated
	KindQuit    = "quit"    // the session ends
)

// Kinds lists the event kinds in documentation order.
var Kinds = []string{KindConnect, KindQuery, KindPrepare, KindExecute, KindClose, KindQuit}

// Header is the first line of a capture file.
type Header struct {
	Schema string `json:"schema"`
	// Flavor is the server family the traffic was sent to: "mysql" or
	// "postgres".
	Flavor string `json:"flavor"`
	// Source names where the events came from: "mysql-general",
	// "mysql-slow", "pg-csv", "pg-stderr", "live:mysql", ...
	Source string `json:"source"`
	// Start is the wall-clock time of t_us = 0.
	Start time.Time `json:"start"`
	// Files are the logs converted, if any.
	Files []string `json:"files,omitempty"`
	// Skipped counts malformed input lines left out (--skip-bad).
	Skipped int64 `json:"skipped,omitempty"`
}

// MaxTUS bounds t_us and dur_us: a capture spans at most 10 years (365.25
// days each), so that times scaled by a replay's --speed and converted to
// nanoseconds stay far from overflowing.
const MaxTUS = 10 * 36525 * 24 * 3600 * 1e6 / 100

const maxSpan = "10 years"

// Event is one thing a session did.
type Event struct {
	// Session identifies the client connection (a thread id, a PostgreSQL
	// session id); unique within the capture.
	Session string `json:"session"`
	// TUS is the start time in microseconds after Header.Start.
	TUS  int64  `json:"t_us"`
	DB   string `json:"db,omitempty"`
	User string `json:"user,omitempty"`
	Kind string `json:"kind"`
	// Name is a prepared statement's name (prepare, execute, close).
	Name string `json:"name,omitempty"`
	SQL  string `json:"sql,omitempty"`
	// Params are an execute's parameters as text; nil elements are NULL.
	Params []*string `json:"params,omitempty"`
	// DurUS and Rows are what the log said about the original execution,
	// when it said (slow log, csvlog with durations).
	DurUS *int64 `json:"dur_us,omitempty"`
	Rows  *int64 `json:"rows,omitempty"`
}

// Writer writes a capture file. Events are encoded by hand (appendEvent),
// the same JSON encoding/json would write, several times faster.
type Writer struct {
	w   *bufio.Writer
	buf []byte
}

// NewWriter writes h as the first line of w.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	h.Schema = Schema
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(h); err != nil {
		return nil, err
	}
	return &Writer{w: bw}, nil
}

// Write appends one event.
func (w *Writer) Write(e *Event) error {
	w.buf = AppendEvent(w.buf[:0], e)
	_, err := w.w.Write(w.buf)
	return err
}

// WriteEncoded appends lines made by AppendEvent.
func (w *Writer) WriteEncoded(lines []byte) error {
	_, err := w.w.Write(lines)
	return err
}

// Flush writes what is buffered.
func (w *Writer) Flush() error { return w.w.Flush() }

// Reader reads a capture file.
type Reader struct {
	name   string
	sc     *bufio.Scanner
	line   int
	Header Header
}

// maxLine bounds one event's line (a statement with a large literal).
const maxLine = 256 << 20

// NewReader reads the header of the capture in r; name is the file name
// used in errors.
func NewReader(r io.Reader, name string) (*Reader, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), maxLine)
	rd := &Reader{name: name, sc: sc}
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return nil, fmt.Errorf("%s:1: empty file, not a capture (%s)", name, Schema)
	}
	rd.line = 1
	if err := json.Unmarshal(sc.Bytes(), &rd.Header); err != nil || rd.Header.Schema != Schema {
		return nil, fmt.Errorf("%s:1: not a capture file: the first line must be a %s header", name, Schema)
	}
	return rd, nil
}

// Next reads the next event into e; it returns io.EOF at the end.
func (r *Reader) Next(e *Event) error {
	if !r.sc.Scan() {
		if err := r.sc.Err(); err != nil {
			return fmt.Errorf("%s:%d: %w", r.name, r.line+1, err)
		}
		return io.EOF
	}
	r.line++
	*e = Event{}
	if err := json.Unmarshal(r.sc.Bytes(), e); err != nil {
		return fmt.Errorf("%s:%d: %v", r.name, r.line, err)
	}
	if err := e.Validate(); err != nil {
		return fmt.Errorf("%s:%d: %v", r.name, r.line, err)
	}
	return nil
}

// Line is the line number of the event Next read last.
func (r *Reader) Line() int { return r.line }

// Validate reports what makes e unusable.
func (e *Event) Validate() error {
	if e.Session == "" {
		return errors.New("event without a session")
	}
	if e.TUS < 0 || e.TUS > MaxTUS {
		return fmt.Errorf("t_us %d out of range (0 to %d, %s)", e.TUS, int64(MaxTUS), maxSpan)
	}
	if e.DurUS != nil && (*e.DurUS < 0 || *e.DurUS > MaxTUS) {
		return fmt.Errorf("dur_us %d out of range (0 to %d, %s)", *e.DurUS, int64(MaxTUS), maxSpan)
	}
	switch e.Kind {
	case KindConnect, KindQuit:
	case KindQuery, KindPrepare:
		if e.SQL == "" {
			return fmt.Errorf("%s event without sql", e.Kind)
		}
	case KindExecute:
		if e.SQL == "" && e.Name == "" {
			return errors.New("execute event without sql or name")
		}
	case KindClose:
		if e.Name == "" {
			return errors.New("close event without a name")
		}
	default:
		return fmt.Errorf("unknown kind %q (want one of %v)", e.Kind, Kinds)
	}
	return nil
}
