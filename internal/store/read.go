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

	"github.com/dbarena/dbarena/internal/summary"
)

// Run returns the stored run with the given id, rebuilt from its stored
// summary JSON (the authoritative copy), histogram included. If there is no
// such run the error wraps ErrNotFound.
func (s *Store) Run(ctx context.Context, id int64) (*summary.Run, error) {
	var doc string
	err := s.db.QueryRowContext(ctx, `SELECT summary FROM runs WHERE id = ?`, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read run %d: %w", id, err)
	}
	var run summary.Run
	if err := json.Unmarshal([]byte(doc), &run); err != nil {
		return nil, fmt.Errorf("read run %d: decode summary: %w", id, err)
	}
	run.ID = id
	return &run, nil
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
		where = append(where, "EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND t.key = ? AND t.value = ?)")
		args = append(args, k, f.Tags[k])
	}
	if f.Plan != "" {
		where = append(where, "json_extract(r.summary, '$.plan.name') = ?")
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
		(SELECT json_group_object(t.key, t.value) FROM run_tags t WHERE t.run_id = r.id)
		FROM runs r`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY r.started_at DESC, r.id DESC"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}

	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []RunRow
	for rows.Next() {
		var (
			r             RunRow
			started, tags string
		)
		if err := rows.Scan(&r.ID, &started, &r.Status, &r.Workload, &r.Flavor, &r.Version,
			&r.Threads, &r.TPS, &r.QPS, &r.P95MS, &r.DurationS, &tags); err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		if r.StartedAt, err = parseTime(started); err != nil {
			return nil, fmt.Errorf("list runs: run %d: %w", r.ID, err)
		}
		if err := json.Unmarshal([]byte(tags), &r.Tags); err != nil {
			return nil, fmt.Errorf("list runs: run %d: decode tags: %w", r.ID, err)
		}
		if len(r.Tags) == 0 {
			r.Tags = nil
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}
