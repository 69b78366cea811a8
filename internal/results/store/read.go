package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// queryer is a *sql.DB or a *sql.Tx.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Run returns the stored run with the given id, rebuilt from its stored
// summary JSON (the authoritative copy), histogram included. A run still
// being written has its intervals and samples so far; one whose writer is
// gone (see alive) has status "aborted" and, unless it has one, its last
// write time as EndedAt. If there is no such run the error wraps
// ErrNotFound.
func (s *Store) Run(ctx context.Context, id int64) (*summary.Run, error) {
	var (
		doc, status, heartbeat string
		o                      owner
	)
	err := s.db.QueryRowContext(ctx, s.be.rebind(`SELECT summary, status,
		owner_host, owner_boot, owner_pid, owner_start, heartbeat_at FROM runs WHERE id = ?`), id).
		Scan(&doc, &status, &o.host, &o.boot, &o.pid, &o.start, &heartbeat)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read run %d from %s: %w", id, s.loc, err)
	}
	var run summary.Run
	if err := json.Unmarshal([]byte(doc), &run); err != nil {
		return nil, fmt.Errorf("read run %d from %s: decode summary: %w", id, s.loc, err)
	}
	run.ID = id
	if status != summary.StatusRunning {
		return &run, nil
	}
	if run.Intervals, err = s.readIntervals(ctx, s.db, id); err != nil {
		return nil, fmt.Errorf("read run %d from %s: %w", id, s.loc, err)
	}
	samples, err := s.readSamples(ctx, s.db, id)
	if err != nil {
		return nil, fmt.Errorf("read run %d from %s: %w", id, s.loc, err)
	}
	if len(samples) > 0 {
		if run.Monitor == nil {
			run.Monitor = &summary.Monitor{}
		}
		run.Monitor.Samples = samples
	}
	hb, _ := parseTime(heartbeat) // zero when unreadable: then only /proc decides
	if !s.alive(o, hb, time.Now()) {
		run.Status = summary.StatusAborted
		if run.EndedAt.IsZero() || run.EndedAt.Before(hb) {
			run.EndedAt = hb
		}
	}
	return &run, nil
}

// readIntervals returns the stored intervals of run id, in order.
func (s *Store) readIntervals(ctx context.Context, q queryer, id int64) ([]summary.Interval, error) {
	rows, err := q.QueryContext(ctx, s.be.rebind(`SELECT t_s, threads, tps, qps, read_qps, write_qps,
		other_qps, p95_ms, errors, reconnects, late, per_type FROM intervals WHERE run_id = ? ORDER BY seq`), id)
	if err != nil {
		return nil, fmt.Errorf("read intervals: %w", err)
	}
	defer rows.Close()
	var out []summary.Interval
	for rows.Next() {
		var (
			iv      summary.Interval
			perType string
		)
		if err := rows.Scan(&iv.TS, &iv.Threads, &iv.TPS, &iv.QPS, &iv.ReadQPS, &iv.WriteQPS,
			&iv.OtherQPS, &iv.P95MS, &iv.Errors, &iv.Reconnects, &iv.Late, &perType); err != nil {
			return nil, fmt.Errorf("read intervals: %w", err)
		}
		if perType != "" {
			if err := json.Unmarshal([]byte(perType), &iv.PerType); err != nil {
				return nil, fmt.Errorf("read interval %d: decode per-type figures: %w", len(out), err)
			}
		}
		out = append(out, iv)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read intervals: %w", err)
	}
	return out, nil
}

// readSamples returns the stored monitor samples of run id, in order.
func (s *Store) readSamples(ctx context.Context, q queryer, id int64) ([]summary.Sample, error) {
	rows, err := q.QueryContext(ctx, s.be.rebind(`SELECT t_s, data FROM run_samples WHERE run_id = ? ORDER BY seq`), id)
	if err != nil {
		return nil, fmt.Errorf("read monitor samples: %w", err)
	}
	defer rows.Close()
	var out []summary.Sample
	for rows.Next() {
		var (
			sm   summary.Sample
			data string
		)
		if err := rows.Scan(&sm.TS, &data); err != nil {
			return nil, fmt.Errorf("read monitor samples: %w", err)
		}
		if err := json.Unmarshal([]byte(data), &sm.Values); err != nil {
			return nil, fmt.Errorf("read monitor sample %d: %w", len(out), err)
		}
		out = append(out, sm)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read monitor samples: %w", err)
	}
	return out, nil
}

// Filter selects runs for List. Zero fields select everything.
type Filter struct {
	// Tags keeps runs that carry every one of these key=value tags.
	Tags map[string]string
	// Workload keeps runs of this workload.
	Workload string
	// Limit caps the number of runs returned (the newest); 0 means no cap.
	Limit int
	// IDs keeps only these runs.
	IDs []int64
	// Plan keeps runs placed in the plan of this name (summary plan.name).
	Plan string
}

// RunRow is one line of a run listing: the headline numbers of a run.
type RunRow struct {
	ID        int64
	StartedAt time.Time
	// Status is as in Run: "running" while the run is written, "aborted"
	// once its writer is gone.
	Status    string
	Workload  string
	Flavor    string
	Version   string
	Threads   int
	TPS       float64
	QPS       float64
	P95MS     float64
	DurationS float64
	// Tags is nil when the run has none.
	Tags map[string]string
}

// List returns the runs selected by f, newest first.
func (s *Store) List(ctx context.Context, f Filter) ([]RunRow, error) {
	var (
		where []string
		args  []any
	)
	if f.Workload != "" {
		where = append(where, "r.workload = ?")
		args = append(args, f.Workload)
	}
	for _, k := range slices.Sorted(maps.Keys(f.Tags)) {
		where = append(where, `EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND t."key" = ? AND t.value = ?)`)
		args = append(args, k, f.Tags[k])
	}
	if f.Plan != "" {
		where = append(where, "r.plan_name = ?")
		args = append(args, f.Plan)
	}
	if len(f.IDs) > 0 {
		where = append(where, "r.id IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(f.IDs)), ", ")+")")
		for _, id := range f.IDs {
			args = append(args, id)
		}
	}
	q := `SELECT r.id, r.started_at, r.status, r.workload, r.flavor, r.version,
		r.threads, r.tps, r.qps, r.p95_ms, r.duration_s,
		r.owner_host, r.owner_boot, r.owner_pid, r.owner_start, r.heartbeat_at
		FROM runs r`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY r.started_at DESC, r.id DESC"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}

	fail := func(err error) ([]RunRow, error) { return nil, fmt.Errorf("list runs in %s: %w", s.loc, err) }
	rows, err := s.db.QueryContext(ctx, s.be.rebind(q), args...)
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	var (
		out []RunRow
		now = time.Now()
	)
	for rows.Next() {
		var (
			r                  RunRow
			started, heartbeat string
			o                  owner
		)
		if err := rows.Scan(&r.ID, &started, &r.Status, &r.Workload, &r.Flavor, &r.Version,
			&r.Threads, &r.TPS, &r.QPS, &r.P95MS, &r.DurationS,
			&o.host, &o.boot, &o.pid, &o.start, &heartbeat); err != nil {
			return fail(err)
		}
		if r.StartedAt, err = parseTime(started); err != nil {
			return fail(fmt.Errorf("run %d: %w", r.ID, err))
		}
		if r.Status == summary.StatusRunning {
			hb, _ := parseTime(heartbeat)
			if !s.alive(o, hb, now) {
				r.Status = summary.StatusAborted
			}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	rows.Close()
	if err := s.listTags(ctx, out); err != nil {
		return fail(err)
	}
	return out, nil
}

// listTags fills in the tags of rows.
func (s *Store) listTags(ctx context.Context, rows []RunRow) error {
	if len(rows) == 0 {
		return nil
	}
	at := make(map[int64]int, len(rows))
	for i, r := range rows {
		at[r.ID] = i
	}
	// In chunks: databases cap the number of bound parameters.
	const chunk = 500
	for start := 0; start < len(rows); start += chunk {
		part := rows[start:min(start+chunk, len(rows))]
		args := make([]any, len(part))
		for i, r := range part {
			args[i] = r.ID
		}
		if err := s.readTags(ctx, rows, at, args); err != nil {
			return err
		}
	}
	return nil
}

// readTags adds the tags of the runs whose ids are ids to rows (at maps an
// id to its index in rows).
func (s *Store) readTags(ctx context.Context, rows []RunRow, at map[int64]int, ids []any) error {
	q := `SELECT run_id, "key", value FROM run_tags WHERE run_id IN (` +
		strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ") + ")"
	tr, err := s.db.QueryContext(ctx, s.be.rebind(q), ids...)
	if err != nil {
		return fmt.Errorf("read tags: %w", err)
	}
	defer tr.Close()
	for tr.Next() {
		var (
			id   int64
			k, v string
		)
		if err := tr.Scan(&id, &k, &v); err != nil {
			return fmt.Errorf("read tags: %w", err)
		}
		r := &rows[at[id]]
		if r.Tags == nil {
			r.Tags = map[string]string{}
		}
		r.Tags[k] = v
	}
	if err := tr.Err(); err != nil {
		return fmt.Errorf("read tags: %w", err)
	}
	return nil
}
