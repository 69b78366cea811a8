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
	"math"
	"slices"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
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
// The header's optional "sharded" list holds the start barriers of the
// sharded runs exported whole (ExportSharded): their run id (key), shard
// count, common start, error and members; their shards are among the runs
// (tagged shard_of=KEY), so a sharded run keeps its run id across an
// export and import.
const ExportFormat = "dbarena.export/v1"

// ErrConflict is returned (wrapped) by Import when the file holds a
// sharded run whose run id the store already uses for another run.
var ErrConflict = errors.New("conflicts with the store")

// ErrBadInput is returned (wrapped) by Import for a file that is not a
// whole, valid export; the message names the line.
var ErrBadInput = errors.New("not a valid dbarena export")

// maxLine bounds one line of an export file (a run with tens of thousands
// of intervals and a full settings snapshot fits easily).
const maxLine = 256 << 20

type exportHeader struct {
	Format  string          `json:"format"`
	Runs    int             `json:"runs"`
	Sharded []exportedShard `json:"sharded,omitempty"`
}

// exportedShard is a sharded run's start barrier in an export header.
type exportedShard struct {
	Key     string           `json:"key"`
	Count   int              `json:"count"`
	StartAt string           `json:"start_at,omitempty"`
	Error   string           `json:"error,omitempty"`
	Members []exportedMember `json:"members,omitempty"`
	// implied: made from the file's shard runs (impliedShards), not
	// listed; one the store has already is left as it is.
	implied bool
}

type exportedMember struct {
	Index   int     `json:"index"`
	Host    string  `json:"host,omitempty"`
	ReadyAt string  `json:"ready_at"`
	Started bool    `json:"started,omitempty"`
	SkewMS  float64 `json:"skew_ms,omitempty"`
}

// Export writes the runs with the given ids, in that order, to w in the
// ExportFormat. A running run is exported as it stands (its last
// checkpoint). A missing id fails with an error wrapping ErrNotFound before
// anything is written.
func (s *Store) Export(ctx context.Context, ids []int64, w io.Writer) error {
	return s.ExportSharded(ctx, ids, nil, w)
}

// ExportSharded is Export with the start barriers of the sharded runs
// named by keys (their shards' runs should be among ids), so that Import
// restores them whole, under their run ids.
func (s *Store) ExportSharded(ctx context.Context, ids []int64, keys []string, w io.Writer) error {
	runs := make([]*summary.Run, 0, len(ids))
	for _, id := range ids {
		r, err := s.Run(ctx, id)
		if err != nil {
			return fmt.Errorf("export from %s: %w", s.loc, err)
		}
		runs = append(runs, r)
	}
	var sharded []exportedShard
	for _, key := range keys {
		br, err := s.ShardRun(ctx, key)
		if err != nil {
			return fmt.Errorf("export from %s: %w", s.loc, err)
		}
		e := exportedShard{Key: br.Key, Count: br.Count, Error: br.Error}
		if !br.StartAt.IsZero() {
			e.StartAt = formatTime(br.StartAt)
		}
		for _, m := range br.Members {
			e.Members = append(e.Members, exportedMember{Index: m.Index, Host: m.Host, ReadyAt: formatTime(m.ReadyAt),
				Started: m.Started, SkewMS: m.SkewMS})
		}
		sharded = append(sharded, e)
	}
	if err := encodeExport(w, runs, sharded...); err != nil {
		return fmt.Errorf("export from %s: %w", s.loc, err)
	}
	return nil
}

// encodeExport writes runs (and sharded runs' barriers) in the
// ExportFormat.
func encodeExport(w io.Writer, runs []*summary.Run, sharded ...exportedShard) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw) // Encode ends each value with "\n"
	enc.SetEscapeHTML(false)
	if err := enc.Encode(exportHeader{Format: ExportFormat, Runs: len(runs), Sharded: sharded}); err != nil {
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

// ImportResult is what Import did.
type ImportResult struct {
	// IDs are the new ids of the runs stored, in file order.
	IDs []int64
	// Skipped are the ids of the runs of the file already in the store
	// (the same run: same start, end, workload, host, events and shard),
	// which were not stored again, in file order.
	Skipped []int64
	// Sharded are the run ids of the sharded runs restored;
	// ShardedSkipped those already in the store.
	Sharded, ShardedSkipped []string
}

// Import reads an export file (ExportFormat) and stores its runs and
// sharded runs in one transaction, all or none. It is idempotent: a run
// already in the store (isSameRun) is skipped, not duplicated, and so is a
// sharded run with the same run id, count and start; a sharded run whose
// run id the store uses for another fails the import (ErrConflict). The
// whole file is checked before anything is written: a malformed one fails
// with an error wrapping ErrBadInput that names the line. A run exported
// while running is stored as aborted (no process here writes it).
// Passwords are masked as in SaveRun.
//
// r may also hold one run summary (dbarena.run/v1, as --json writes it, or
// the dbarena-run-*.json a run writes when it cannot store itself): that
// run is imported alone.
func (s *Store) Import(ctx context.Context, r io.Reader) (*ImportResult, error) {
	hdr, runs, err := decodeImport(r)
	if err != nil {
		return nil, err
	}
	return s.importRuns(ctx, hdr, runs)
}

// ImportRuns stores runs read from elsewhere (sql-bench's result files:
// ParseSQLBench) as Import stores an export's: all or none, new ids, runs
// already in the store skipped.
func (s *Store) ImportRuns(ctx context.Context, runs []*summary.Run) (*ImportResult, error) {
	for i, run := range runs {
		if err := validate(run, finalStatuses); err != nil {
			return nil, fmt.Errorf("run %d of %d: %w", i+1, len(runs), err)
		}
	}
	return s.importRuns(ctx, &exportHeader{}, runs)
}

func (s *Store) importRuns(ctx context.Context, hdr *exportHeader, runs []*summary.Run) (*ImportResult, error) {
	res := &ImportResult{}
	fail := func(err error) (*ImportResult, error) {
		return nil, fmt.Errorf("import into %s: %w", s.loc, err)
	}
	// What the store holds already, read before the transaction.
	existing := make([]int64, len(runs)) // 0: not in the store
	for i, run := range runs {
		id, err := s.findRun(ctx, run)
		if err != nil {
			return fail(err)
		}
		for j := range i { // the same run twice in the file
			if id == 0 && existing[j] >= 0 && isSameRun(runs[j], run) {
				id = -1
			}
		}
		existing[i] = id
	}
	hdr.Sharded = append(hdr.Sharded, impliedShards(hdr.Sharded, runs)...)
	newShards := make([]bool, len(hdr.Sharded))
	for i, e := range hdr.Sharded {
		br, err := s.ShardRun(ctx, e.Key)
		switch {
		case errors.Is(err, ErrNotFound):
			newShards[i] = true
			res.Sharded = append(res.Sharded, e.Key)
		case err != nil:
			return fail(err)
		case e.implied:
			// The store has this sharded run: its shards join it.
		case br.Count != e.Count || formatTimeOrEmpty(br.StartAt) != e.StartAt:
			return fail(fmt.Errorf("sharded run %q: this store has another run under that run id (%d shards, start %s): %w",
				e.Key, br.Count, formatTimeOrEmpty(br.StartAt), ErrConflict))
		default:
			res.ShardedSkipped = append(res.ShardedSkipped, e.Key)
		}
	}
	_, err := s.inTx(ctx, func(tx *sql.Tx) (int64, error) {
		res.IDs, res.Skipped = res.IDs[:0], res.Skipped[:0]
		for i, e := range hdr.Sharded {
			if newShards[i] {
				if err := s.insertShardRun(ctx, tx, e); err != nil {
					return 0, fmt.Errorf("sharded run %q: %w", e.Key, err)
				}
			}
		}
		for i, run := range runs {
			switch {
			case existing[i] > 0:
				res.Skipped = append(res.Skipped, existing[i])
				continue
			case existing[i] < 0:
				continue // listed twice in the file: stored once
			}
			id, err := s.insertRun(ctx, tx, run, false)
			if err != nil {
				return 0, fmt.Errorf("run %d of %d: %w", i+1, len(runs), err)
			}
			res.IDs = append(res.IDs, id)
		}
		return 0, nil
	})
	if err != nil {
		return fail(err)
	}
	return res, nil
}

// impliedShards are the barriers of the sharded runs whose shards' runs
// are in the file (tagged shard_of, with their place in run.Shard) but
// not the barrier itself (an export of shard runs by number, or by an
// older dbarena): made from the runs, so that the imported shards keep
// their sharded run's id. The start is the earliest shard's start; the
// start skews are not known (0).
func impliedShards(listed []exportedShard, runs []*summary.Run) []exportedShard {
	have := map[string]bool{}
	for _, e := range listed {
		have[e.Key] = true
	}
	var out []exportedShard
	at := map[string]int{}
	for _, r := range runs {
		key := r.Tags["shard_of"]
		if key == "" || have[key] || !validKey(key) || r.Shard == nil || r.Shard.Count < 1 || r.Shard.Count > maxShardCount ||
			r.Shard.Index < 0 || r.Shard.Index >= r.Shard.Count {
			continue
		}
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, exportedShard{Key: key, Count: r.Shard.Count, implied: true})
		}
		e := &out[i]
		if e.Count != r.Shard.Count {
			continue // shards that disagree: leave the run as it is
		}
		start := formatTime(r.StartedAt)
		if e.StartAt == "" || start < e.StartAt {
			e.StartAt = start
		}
		if !slices.ContainsFunc(e.Members, func(m exportedMember) bool { return m.Index == r.Shard.Index }) {
			e.Members = append(e.Members, exportedMember{Index: r.Shard.Index, Host: r.Host.Hostname, ReadyAt: start, Started: true})
		}
	}
	return out
}

func formatTimeOrEmpty(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return formatTime(t)
}

// insertShardRun stores an exported sharded run's barrier.
func (s *Store) insertShardRun(ctx context.Context, tx *sql.Tx, e exportedShard) error {
	if _, err := s.exec(ctx, tx, "INSERT INTO shard_runs (run_key, shards, created_at, start_at, error) VALUES (?, ?, ?, ?, ?)",
		e.Key, e.Count, formatTime(time.Now()), e.StartAt, e.Error); err != nil {
		return err
	}
	for _, m := range e.Members {
		started := 0
		if m.Started {
			started = 1
		}
		if _, err := s.exec(ctx, tx, "INSERT INTO shard_members (run_key, shard, host, pid, ready_at, started, skew_ms) VALUES (?, ?, ?, 0, ?, ?, ?)",
			e.Key, m.Index, m.Host, m.ReadyAt, started, m.SkewMS); err != nil {
			return fmt.Errorf("shard %d: %w", m.Index, err)
		}
	}
	return nil
}

// findRun returns the id of a stored run that is run (isSameRun), 0 if none.
func (s *Store) findRun(ctx context.Context, run *summary.Run) (int64, error) {
	rows, err := s.db.QueryContext(ctx, s.be.rebind("SELECT id FROM runs WHERE started_at = ? AND workload = ? ORDER BY id"),
		formatTime(run.StartedAt), run.Workload)
	if err != nil {
		return 0, fmt.Errorf("look for run: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("look for run: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("look for run: %w", err)
	}
	for _, id := range ids {
		r, err := s.Run(ctx, id)
		if err != nil {
			return 0, err
		}
		if isSameRun(r, run) {
			return id, nil
		}
	}
	return 0, nil
}

// isSameRun reports whether a and b are one run (an export imported again):
// the same start and end (to the nanosecond), status, workload, client
// host, events and statements, and place in a sharded run.
func isSameRun(a, b *summary.Run) bool {
	return a.StartedAt.Equal(b.StartedAt) && a.EndedAt.Equal(b.EndedAt) && a.Workload == b.Workload && a.Status == b.Status &&
		a.Host.Hostname == b.Host.Hostname && a.Totals.Events == b.Totals.Events &&
		a.Totals.Queries.Total == b.Totals.Queries.Total && a.RunKey == b.RunKey &&
		a.Tags["shard_of"] == b.Tags["shard_of"] && a.Tags["shard"] == b.Tags["shard"]
}

// importStatuses are the statuses an export may hold.
var importStatuses = append([]string{summary.StatusRunning, summary.StatusAborted}, finalStatuses...)

// decodeImport parses and checks what Import reads: an export file
// (decodeExport) or one run summary (a --json file), told apart by their
// start.
func decodeImport(r io.Reader) (*exportHeader, []*summary.Run, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(64 << 10) // less at the end of r
	line := head
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		line = head[:i]
	}
	if bytes.Contains(line, []byte(`"format"`)) || !bytes.Contains(head, []byte(`"schema"`)) {
		return decodeExport(br)
	}
	b, err := io.ReadAll(io.LimitReader(br, maxLine+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read: %w", err)
	}
	if len(b) > maxLine {
		return nil, nil, fmt.Errorf("line 1: a run summary longer than %d MiB: %w", maxLine>>20, ErrBadInput)
	}
	run, err := decodeRun(b)
	if err != nil {
		return nil, nil, fmt.Errorf("line 1: not an export (no header) nor a valid run summary: %v: %w", err, ErrBadInput)
	}
	return &exportHeader{Format: ExportFormat, Runs: 1}, []*summary.Run{run}, nil
}

// decodeExport parses and checks an export file.
func decodeExport(r io.Reader) (*exportHeader, []*summary.Run, error) {
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
				return nil, nil, bad(line, "want the header {\"format\":%q,\"runs\":N}", ExportFormat)
			}
			if err := checkSharded(hdr.Sharded); err != nil {
				return nil, nil, bad(line, "%v", err)
			}
			continue
		}
		if len(b) == 0 {
			continue
		}
		if len(runs) == hdr.Runs {
			return nil, nil, bad(line, "more runs than the header's %d", hdr.Runs)
		}
		run, err := decodeRun(b)
		if err != nil {
			return nil, nil, bad(line, "%v", err)
		}
		runs = append(runs, run)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, nil, bad(line+1, "longer than %d MiB", maxLine>>20)
		}
		return nil, nil, fmt.Errorf("read line %d: %w", line+1, err)
	}
	if line == 0 {
		return nil, nil, fmt.Errorf("line 1: empty file: %w", ErrBadInput)
	}
	if len(runs) != hdr.Runs {
		return nil, nil, bad(line, "file ends after %d of the header's %d runs (truncated?)", len(runs), hdr.Runs)
	}
	return &hdr, runs, nil
}

// maxShardCount bounds a sharded run's shard count (shard.MaxShards).
const maxShardCount = 1024

// checkSharded checks the sharded runs of an export header: run ids as
// --run-id takes them, counts, times and members.
func checkSharded(list []exportedShard) error {
	keys := map[string]bool{}
	for _, e := range list {
		if !validKey(e.Key) {
			return fmt.Errorf("sharded run id %q: want 1 to 63 letters, digits, '.', '_' or '-', starting with a letter", e.Key)
		}
		if keys[e.Key] {
			return fmt.Errorf("sharded run %q listed twice", e.Key)
		}
		keys[e.Key] = true
		if e.Count < 1 || e.Count > maxShardCount {
			return fmt.Errorf("sharded run %q: %d shards, want 1 to %d", e.Key, e.Count, maxShardCount)
		}
		if e.StartAt != "" {
			if _, err := time.Parse(timeLayout, e.StartAt); err != nil {
				return fmt.Errorf("sharded run %q: start %q is not a time", e.Key, e.StartAt)
			}
		}
		if len(e.Error) > maxShardError {
			return fmt.Errorf("sharded run %q: error longer than %d bytes", e.Key, maxShardError)
		}
		seen := map[int]bool{}
		for _, m := range e.Members {
			if m.Index < 0 || m.Index >= e.Count || seen[m.Index] {
				return fmt.Errorf("sharded run %q: shard %d out of range or listed twice", e.Key, m.Index)
			}
			seen[m.Index] = true
			if _, err := time.Parse(timeLayout, m.ReadyAt); err != nil {
				return fmt.Errorf("sharded run %q: shard %d: ready_at %q is not a time", e.Key, m.Index, m.ReadyAt)
			}
			if len(m.Host) > 255 || math.IsNaN(m.SkewMS) || math.IsInf(m.SkewMS, 0) {
				return fmt.Errorf("sharded run %q: shard %d: bad host or skew", e.Key, m.Index)
			}
		}
	}
	return nil
}

// validKey reports whether key is a sharded run id as --run-id takes it.
func validKey(key string) bool {
	if key == "" || len(key) > 63 {
		return false
	}
	for j, c := range key {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if j == 0 && !letter || !letter && !(c >= '0' && c <= '9') && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
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
