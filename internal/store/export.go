package store

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/dbarena/dbarena/internal/summary"
)

// ExportFormat names the export file format, written by Export and read by
// Import. An export file is JSON lines, each ending in "\n":
//
//	{"format":"dbarena.export/v1","runs":N}     line 1, the header
//	{"schema":"dbarena.run/v1","id":7,...}      lines 2..N+1, one run each
//
// Each run line is the complete dbarena.run/v1 summary as `dbarena results
// show --json` prints it, plus the encoded latency histogram: intervals
// (with their per-type figures), per-type statistics, monitor samples,
// tags, plan reference and everything else a store keeps. "id" is the
// run's id in the store it came from; Import gives each run a new id. The
// header's run count lets Import tell a truncated file from a whole one.
const ExportFormat = "dbarena.export/v1"

// ErrBadInput is returned (wrapped) by Import for a file that is not a
// whole, valid export; the message names the line.
var ErrBadInput = errors.New("not a valid dbarena export")

// maxLine bounds one line of an export file (a run with tens of thousands
// of intervals and a full settings snapshot fits easily).
const maxLine = 256 << 20

type exportHeader struct {
	Format string `json:"format"`
	Runs   int    `json:"runs"`
}

// Export writes the runs with the given ids, in that order, to w in the
// ExportFormat. A running run is exported as it stands (its last
// checkpoint). A missing id fails with an error wrapping ErrNotFound before
// anything is written.
func (s *Store) Export(ctx context.Context, ids []int64, w io.Writer) error {
	runs := make([]*summary.Run, 0, len(ids))
	for _, id := range ids {
		r, err := s.Run(ctx, id)
		if err != nil {
			return fmt.Errorf("export from %s: %w", s.loc, err)
		}
		runs = append(runs, r)
	}
	if err := encodeExport(w, runs); err != nil {
		return fmt.Errorf("export from %s: %w", s.loc, err)
	}
	return nil
}

// encodeExport writes runs in the ExportFormat.
func encodeExport(w io.Writer, runs []*summary.Run) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw) // Encode ends each value with "\n"
	enc.SetEscapeHTML(false)
	if err := enc.Encode(exportHeader{Format: ExportFormat, Runs: len(runs)}); err != nil {
		return fmt.Errorf("write header: %w", err)
	}
	for _, r := range runs {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("write run %d: %w", r.ID, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// Import reads an export file (ExportFormat) and stores its runs in one
// transaction, all or none, and returns their new ids in file order. The
// whole file is checked before anything is written: a malformed one fails
// with an error wrapping ErrBadInput that names the line. A run exported
// while running is stored as aborted (no process here writes it).
// Passwords are masked as in SaveRun.
func (s *Store) Import(ctx context.Context, r io.Reader) ([]int64, error) {
	runs, err := decodeExport(r)
	if err != nil {
		return nil, err
	}
	var ids []int64
	_, err = s.inTx(ctx, func(tx *sql.Tx) (int64, error) {
		ids = ids[:0]
		for i, run := range runs {
			id, err := s.insertRun(ctx, tx, run, false)
			if err != nil {
				return 0, fmt.Errorf("run %d of %d: %w", i+1, len(runs), err)
			}
			ids = append(ids, id)
		}
		return 0, nil
	})
	if err != nil {
		return nil, fmt.Errorf("import into %s: %w", s.loc, err)
	}
	return ids, nil
}

// importStatuses are the statuses an export may hold.
var importStatuses = append([]string{summary.StatusRunning, summary.StatusAborted}, finalStatuses...)

// decodeExport parses and checks an export file.
func decodeExport(r io.Reader) ([]*summary.Run, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	bad := func(line int, format string, args ...any) error {
		return fmt.Errorf("line %d: %s: %w", line, fmt.Sprintf(format, args...), ErrBadInput)
	}
	var (
		hdr  exportHeader
		runs []*summary.Run
		line int
	)
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if line == 1 {
			if err := strictUnmarshal(b, &hdr); err != nil || hdr.Format != ExportFormat || hdr.Runs < 0 {
				return nil, bad(line, "want the header {\"format\":%q,\"runs\":N}", ExportFormat)
			}
			continue
		}
		if len(b) == 0 {
			continue
		}
		if len(runs) == hdr.Runs {
			return nil, bad(line, "more runs than the header's %d", hdr.Runs)
		}
		run, err := decodeRun(b)
		if err != nil {
			return nil, bad(line, "%v", err)
		}
		runs = append(runs, run)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, bad(line+1, "longer than %d MiB", maxLine>>20)
		}
		return nil, fmt.Errorf("read line %d: %w", line+1, err)
	}
	if line == 0 {
		return nil, fmt.Errorf("line 1: empty file: %w", ErrBadInput)
	}
	if len(runs) != hdr.Runs {
		return nil, bad(line, "file ends after %d of the header's %d runs (truncated?)", len(runs), hdr.Runs)
	}
	return runs, nil
}

// decodeRun parses and checks one run line.
func decodeRun(b []byte) (*summary.Run, error) {
	var run summary.Run
	if err := strictUnmarshal(b, &run); err != nil {
		return nil, err
	}
	if run.Schema != summary.Schema {
		return nil, fmt.Errorf("schema %q, want %q", run.Schema, summary.Schema)
	}
	if err := validate(&run, importStatuses); err != nil {
		return nil, err
	}
	if run.Status == summary.StatusRunning {
		run.Status = summary.StatusAborted
	}
	if _, err := base64.StdEncoding.DecodeString(run.Histogram); err != nil {
		return nil, fmt.Errorf("histogram is not base64: %v", err)
	}
	run.ID = 0
	return &run, nil
}

// strictUnmarshal decodes one JSON value, refusing unknown fields (they
// would be lost) and trailing data.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid JSON: %v", err)
	}
	if dec.More() {
		return errors.New("invalid JSON: data after the value")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("invalid JSON: data after the value")
	}
	return nil
}
