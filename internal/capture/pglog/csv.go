package pglog

import (
	"bytes"
	"fmt"
	"io"

	"github.com/dbarena/dbarena/internal/capture"
)

// csvlog columns (the same positions from PostgreSQL 8.4, which has 22;
// 9.0 adds application_name as the 23rd, 13 backend_type as the 24th, 14
// leader_pid and query_id, 26 in all).
const (
	colTime     = 0
	colUser     = 1
	colDB       = 2
	colSession  = 5
	colSeverity = 11
	colMessage  = 13
	colDetail   = 14
	minColumns  = 22
	// maxColumns bounds the count: releases add columns at the end (26 in
	// 14 to 18), which are not read; a record with far more is not a
	// csvlog.
	maxColumns = 40
)

// CSVOptions configure ParseCSVWith.
type CSVOptions struct {
	// Sessions says where sessions come from ("" is SessionsAuto).
	Sessions Sessions
}

// ParseCSV reads a PostgreSQL csvlog with the default options.
func ParseCSV(r io.Reader, in *capture.Input, emit func(*capture.Record) error) error {
	return ParseCSVWith(r, in, CSVOptions{}, emit)
}

// ParseCSVWith reads a PostgreSQL csvlog. The column count (22 in 8.4, 23
// to 12, 24 in 13, 26 from 14) is taken from the first record; every
// record must have it.
func ParseCSVWith(r io.Reader, in *capture.Input, o CSVOptions, emit func(*capture.Record) error) error {
	h := newHandler(in, emit)
	h.mode = o.Sessions
	if h.mode == "" {
		h.mode = SessionsAuto
	}
	lr := capture.NewLineReader(r)
	var (
		rec     []byte
		fields  [][]byte
		scratch []byte
		ts      timeCache
		columns int
		m       message
		arena   capture.Arena
	)
	for {
		line, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", in.Name, err)
		}
		if in.Stats != nil {
			in.Stats.Lines++
		}
		start := lr.N
		rec = append(rec[:0], line...)
		for bytes.Count(rec, []byte{'"'})%2 == 1 {
			if lr.Partial {
				break
			}
			line, err = lr.Next()
			if err == io.EOF {
				return in.Bad(start, "csvlog record with an unterminated quoted field")
			}
			if err != nil {
				return fmt.Errorf("%s: %w", in.Name, err)
			}
			rec = append(rec, '\n')
			rec = append(rec, line...)
		}
		if len(rec) == 0 {
			continue
		}
		if lr.Partial && len(bytes.TrimSpace(rec)) > 0 {
			// The log ends mid-record: the record is cut off.
			in.CutOff(lr.N, start)
			break
		}
		var ok bool
		fields, scratch, ok = splitCSV(rec, fields[:0], scratch[:0])
		if !ok {
			if err := in.Bad(start, "malformed csvlog record"); err != nil {
				return err
			}
			continue
		}
		if columns == 0 {
			if len(fields) < minColumns || len(fields) > maxColumns {
				return in.BadFatal(start, "csvlog record with %d columns, want %d to %d (log_destination=csvlog of PostgreSQL 8.4 or later: 22 to 26 columns)", len(fields), minColumns, maxColumns)
			}
			columns = len(fields)
		}
		if len(fields) != columns {
			if err := in.Bad(start, "csvlog record with %d columns, the first had %d", len(fields), columns); err != nil {
				return err
			}
			continue
		}
		at, used, ok := ts.parse(fields[colTime], in.Location())
		if !ok || used != len(fields[colTime]) {
			if err := in.Bad(start, "bad log_time %q", short(string(fields[colTime]))); err != nil {
				return err
			}
			continue
		}
		if ts.unknown != "" {
			in.Warn(start, "time zone abbreviation %q is not in PostgreSQL's default set: read in --time-zone (%s)", ts.unknown, in.Location())
			ts.unknown = ""
		}
		m = message{line: start, at: at, session: reuse(m.session, fields[colSession]), user: reuse(m.user, fields[colUser]),
			db: reuse(m.db, fields[colDB]), severity: sevName(fields[colSeverity]), text: arena.String(fields[colMessage]),
			detail: string(fields[colDetail])}
		if err := h.handle(&m); err != nil {
			return err
		}
	}
	return h.finish(in.Name)
}

// splitCSV splits one record; quoted fields with doubled quotes are
// unquoted into scratch.
func splitCSV(rec []byte, fields [][]byte, scratch []byte) ([][]byte, []byte, bool) {
	if cap(scratch) < len(rec) {
		scratch = make([]byte, 0, len(rec))
	}
	i := 0
	for {
		if i < len(rec) && rec[i] == '"' {
			j := i + 1
			start := len(scratch)
			plain := true
			for {
				k := bytes.IndexByte(rec[j:], '"')
				if k < 0 {
					return fields, scratch, false
				}
				if j+k+1 < len(rec) && rec[j+k+1] == '"' {
					plain = false
					scratch = append(scratch, rec[j:j+k+1]...)
					j += k + 2
					continue
				}
				if plain {
					fields = append(fields, rec[i+1:j+k])
				} else {
					scratch = append(scratch, rec[j:j+k]...)
					fields = append(fields, scratch[start:len(scratch):len(scratch)])
				}
				i = j + k + 1
				break
			}
		} else {
			k := bytes.IndexByte(rec[i:], ',')
			if k < 0 {
				k = len(rec) - i
			}
			fields = append(fields, rec[i:i+k])
			i += k
		}
		if i == len(rec) {
			return fields, scratch, true
		}
		if rec[i] != ',' {
			return fields, scratch, false
		}
		i++
		if i == len(rec) {
			return append(fields, rec[i:]), scratch, true
		}
	}
}

// reuse returns prev when b holds the same text (no allocation).
func reuse(prev string, b []byte) string {
	if string(b) == prev {
		return prev
	}
	return string(b)
}
