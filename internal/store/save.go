package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/dbarena/dbarena/internal/secret"
	"github.com/dbarena/dbarena/internal/summary"
)

// timeLayout is how timestamps are stored: UTC, fixed width, so that text
// order is time order and the sqlite3 shell shows readable values.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse time %q: %w", s, err)
	}
	return t, nil
}

// SaveRun stores run in a single transaction: the runs row (headline
// columns, the full summary JSON and the histogram), its intervals, its
// per-type statistics and its tags. Either all of it is stored or none.
// On success it sets run.ID and returns it; nothing else in run is changed.
//
// The stored copy is defended against leaked passwords: anything that
// looks like one in Target.DSN, Error or Dbarena.Command is replaced by
// "***" ("user:secret@" becomes "user:***@"). An empty Schema is stored as
// summary.Schema. Status must be one of the summary.Status* values.
func (s *Store) SaveRun(ctx context.Context, run *summary.Run) (int64, error) {
	if run == nil {
		return 0, errors.New("save run: nil run")
	}
	if err := validate(run); err != nil {
		return 0, fmt.Errorf("save run: %w", err)
	}
	r := *run // shallow copy: only top-level fields are replaced below
	if r.Schema == "" {
		r.Schema = summary.Schema
	}
	r.Target.DSN = secret.Mask(r.Target.DSN)
	r.Error = secret.Mask(r.Error)
	r.Dbarena.Command = secret.MaskCommand(r.Dbarena.Command)

	cols, err := jsonColumns(&r)
	if err != nil {
		return 0, fmt.Errorf("save run: %w", err)
	}

	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (see dsn)
	if err != nil {
		return 0, fmt.Errorf("save run: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit

	var tpmc any
	if r.TpmC != nil {
		tpmc = *r.TpmC
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO runs (
		schema, started_at, ended_at, status, error, workload,
		flavor, version, dsn, sandbox, threads, rate, duration_s, warmup_s,
		events, queries_read, queries_write, queries_other, queries,
		errors, retries, reconnects, late, dropped, tps, qps,
		min_ms, avg_ms, p50_ms, p90_ms, p95_ms, p99_ms, p999_ms, max_ms, tpmc,
		params, settings, server_counters, checks, host, dbarena_version, command,
		summary, histogram
	) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
		?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?)`,
		r.Schema, formatTime(r.StartedAt), formatTime(r.EndedAt), r.Status, r.Error, r.Workload,
		r.Target.Flavor, r.Target.Version, r.Target.DSN, r.Target.Sandbox,
		r.Threads, r.Rate, r.DurationS, r.WarmupS,
		r.Totals.Events, r.Totals.Queries.Read, r.Totals.Queries.Write, r.Totals.Queries.Other, r.Totals.Queries.Total,
		r.Totals.Errors, r.Totals.Retries, r.Totals.Reconnects, r.Totals.Late, r.Totals.Dropped,
		r.Throughput.TPS, r.Throughput.QPS,
		r.LatencyMS.Min, r.LatencyMS.Avg, r.LatencyMS.P50, r.LatencyMS.P90,
		r.LatencyMS.P95, r.LatencyMS.P99, r.LatencyMS.P999, r.LatencyMS.Max, tpmc,
		cols.params, cols.settings, cols.serverCounters, cols.checks, cols.host,
		r.Dbarena.Version, cols.command, r.Histogram,
	)
	if err != nil {
		return 0, fmt.Errorf("save run: insert run: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("save run: run id: %w", err)
	}
	r.ID = id

	if err := insertIntervals(ctx, tx, id, r.Intervals); err != nil {
		return 0, fmt.Errorf("save run %d: %w", id, err)
	}
	if err := insertTypes(ctx, tx, id, r.PerType); err != nil {
		return 0, fmt.Errorf("save run %d: %w", id, err)
	}
	if err := insertTags(ctx, tx, id, r.Tags); err != nil {
		return 0, fmt.Errorf("save run %d: %w", id, err)
	}

	// The summary carries the id, which is known only now.
	sum, err := json.Marshal(&r)
	if err != nil {
		return 0, fmt.Errorf("save run %d: encode summary: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET summary = ? WHERE id = ?`, string(sum), id); err != nil {
		return 0, fmt.Errorf("save run %d: store summary: %w", id, err)
	}

	if s.beforeCommit != nil {
		s.beforeCommit()
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("save run %d: commit: %w", id, err)
	}
	run.ID = id
	return id, nil
}

// validate rejects a run that would be misread later.
func validate(run *summary.Run) error {
	switch run.Status {
	case summary.StatusComplete, summary.StatusInterrupted, summary.StatusFailed:
	default:
		return fmt.Errorf("status %q is not one of %q, %q, %q", run.Status,
			summary.StatusComplete, summary.StatusInterrupted, summary.StatusFailed)
	}
	if run.Workload == "" {
		return errors.New("workload is empty")
	}
	return nil
}

// jsonCols are the JSON-encoded columns of a runs row.
type jsonCols struct {
	params, settings, serverCounters, checks, host, command string
}

func jsonColumns(r *summary.Run) (jsonCols, error) {
	var c jsonCols
	for _, f := range []struct {
		name  string
		v     any
		empty string
		dst   *string
	}{
		{"params", r.Params, "{}", &c.params},
		{"settings", r.Settings, "{}", &c.settings},
		{"server_counters", r.ServerCounters, "{}", &c.serverCounters},
		{"checks", r.Checks, "[]", &c.checks},
		{"host", r.Host, "{}", &c.host},
		{"command", r.Dbarena.Command, "[]", &c.command},
	} {
		b, err := json.Marshal(f.v)
		if err != nil {
			return jsonCols{}, fmt.Errorf("encode %s: %w", f.name, err)
		}
		*f.dst = string(b)
		if *f.dst == "null" {
			*f.dst = f.empty
		}
	}
	return c, nil
}

func insertIntervals(ctx context.Context, tx *sql.Tx, id int64, ivs []summary.Interval) error {
	if len(ivs) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO intervals (
		run_id, seq, t_s, threads, tps, qps, read_qps, write_qps, other_qps,
		p95_ms, errors, reconnects, late
	) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("insert intervals: %w", err)
	}
	defer st.Close()
	for i, iv := range ivs {
		if _, err := st.ExecContext(ctx, id, i, iv.TS, iv.Threads, iv.TPS, iv.QPS,
			iv.ReadQPS, iv.WriteQPS, iv.OtherQPS, iv.P95MS, iv.Errors, iv.Reconnects, iv.Late); err != nil {
			return fmt.Errorf("insert interval %d: %w", i, err)
		}
	}
	return nil
}

func insertTypes(ctx context.Context, tx *sql.Tx, id int64, types map[string]summary.Type) error {
	if len(types) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO run_types (
		run_id, name, count, errors, retries,
		min_ms, avg_ms, p50_ms, p90_ms, p95_ms, p99_ms, p999_ms, max_ms
	) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("insert per-type statistics: %w", err)
	}
	defer st.Close()
	for _, name := range slices.Sorted(maps.Keys(types)) {
		t := types[name]
		l := t.LatencyMS
		if _, err := st.ExecContext(ctx, id, name, t.Count, t.Errors, t.Retries,
			l.Min, l.Avg, l.P50, l.P90, l.P95, l.P99, l.P999, l.Max); err != nil {
			return fmt.Errorf("insert per-type statistics %q: %w", name, err)
		}
	}
	return nil
}

func insertTags(ctx context.Context, tx *sql.Tx, id int64, tags map[string]string) error {
	if len(tags) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO run_tags (run_id, key, value) VALUES (?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("insert tags: %w", err)
	}
	defer st.Close()
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		if _, err := st.ExecContext(ctx, id, k, tags[k]); err != nil {
			return fmt.Errorf("insert tag %q: %w", k, err)
		}
	}
	return nil
}
