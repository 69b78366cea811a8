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
	"github.com/dbarena/dbarena/internal/secret"
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

// SaveRun stores a finished run in a single transaction: the runs row
// (headline columns, the full summary JSON and the histogram), its
// intervals, per-type statistics, tags and monitor samples. Either all of
// it is stored or none. On success it sets run.ID and returns it; nothing
// else in run is changed.
//
// The stored copy is defended against leaked passwords: anything that
// looks like one in Target.DSN, Error or Dbarena.Command is replaced by
// "***" ("user:secret@" becomes "user:***@"). An empty Schema is stored as
// summary.Schema. Status must be complete, interrupted, failed or degraded.
func (s *Store) SaveRun(ctx context.Context, run *summary.Run) (int64, error) {
	if run == nil {
		return 0, errors.New("save run: nil run")
	}
	if err := validate(run, finalStatuses); err != nil {
		return 0, fmt.Errorf("save run: %w", err)
	}
	id, err := s.inTx(ctx, func(tx *sql.Tx) (int64, error) {
		id, err := s.insertRun(ctx, tx, run, false)
		if err == nil && s.beforeCommit != nil {
			s.beforeCommit()
		}
		return id, err
	})
	if err != nil {
		return 0, fmt.Errorf("save run in %s: %w", s.loc, err)
	}
	run.ID = id
	return id, nil
}

// inTx runs f in one transaction and commits it.
func (s *Store) inTx(ctx context.Context, f func(*sql.Tx) (int64, error)) (int64, error) {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE on SQLite (see sqliteDSN)
	if err != nil {
		return 0, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	id, err := f(tx)
	if err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	return id, nil
}

// insertRun inserts run whole (its row and every child row) in tx and
// returns its id. running stores it as a checkpointed run, owned by this
// process.
func (s *Store) insertRun(ctx context.Context, tx *sql.Tx, run *summary.Run, running bool) (int64, error) {
	r := storedCopy(run)
	if running {
		r.Status = summary.StatusRunning
	}
	names, vals, err := s.runColumns(r)
	if err != nil {
		return 0, err
	}
	if running {
		now := formatTime(time.Now())
		names = append(names, "owner_host", "owner_boot", "owner_pid", "owner_start", "heartbeat_at")
		vals = append(vals, s.self.host, s.self.boot, s.self.pid, s.self.start, now)
	}
	id, err := s.insertID(ctx, tx, "INSERT INTO runs ("+strings.Join(names, ", ")+") VALUES ("+
		strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ")+")", vals...)
	if err != nil {
		return 0, fmt.Errorf("insert run: %w", err)
	}
	r.ID = id
	if err := s.insertIntervals(ctx, tx, id, 0, r.Intervals); err != nil {
		return 0, fmt.Errorf("run %d: %w", id, err)
	}
	if r.Monitor != nil {
		if err := s.insertSamples(ctx, tx, id, 0, r.Monitor.Samples); err != nil {
			return 0, fmt.Errorf("run %d: %w", id, err)
		}
	}
	if err := s.replaceTypesAndTags(ctx, tx, id, r, false); err != nil {
		return 0, fmt.Errorf("run %d: %w", id, err)
	}
	// The summary carries the id, which is known only now.
	sum, err := encodeSummary(r, running)
	if err != nil {
		return 0, fmt.Errorf("run %d: %w", id, err)
	}
	if _, err := s.exec(ctx, tx, `UPDATE runs SET summary = ? WHERE id = ?`, sum, id); err != nil {
		return 0, fmt.Errorf("run %d: store summary: %w", id, err)
	}
	return id, nil
}

// storedCopy returns the copy of run that is stored: passwords masked, the
// schema set. Only top-level fields (and Monitor) are replaced, so run's
// own maps and slices are shared, never written.
func storedCopy(run *summary.Run) *summary.Run {
	r := *run
	if r.Schema == "" {
		r.Schema = summary.Schema
	}
	r.Target.DSN = secret.Mask(r.Target.DSN)
	r.Error = secret.Mask(r.Error)
	r.Dbarena.Command = secret.MaskCommand(r.Dbarena.Command)
	if r.Monitor != nil {
		m := *r.Monitor
		r.Monitor = &m
	}
	return &r
}

// encodeSummary returns the summary JSON of r. A running run's intervals
// and samples live in their tables only (they grow with each append), so
// they are left out of it.
func encodeSummary(r *summary.Run, running bool) (string, error) {
	if running {
		c := *r
		c.Intervals = nil
		if c.Monitor != nil {
			m := *c.Monitor
			m.Samples = nil
			c.Monitor = &m
		}
		r = &c
	}
	b, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("encode summary: %w", err)
	}
	return string(b), nil
}

// finalStatuses are those SaveRun and FinishRun accept.
var finalStatuses = []string{summary.StatusComplete, summary.StatusInterrupted, summary.StatusFailed, summary.StatusDegraded}

// validate rejects a run that would be misread later.
func validate(run *summary.Run, statuses []string) error {
	if !slices.Contains(statuses, run.Status) {
		return fmt.Errorf("status %q is not one of %s", run.Status, quoteAll(statuses))
	}
	if run.Workload == "" {
		return errors.New("workload is empty")
	}
	return nil
}

func quoteAll(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// runColumns returns the columns of r's runs row, summary and owner
// excluded (summary is written last, with the id), and their values.
func (s *Store) runColumns(r *summary.Run) ([]string, []any, error) {
	cols, err := jsonColumns(r)
	if err != nil {
		return nil, nil, err
	}
	var tpmc any
	if r.TpmC != nil {
		tpmc = *r.TpmC
	}
	planName := ""
	if r.Plan != nil {
		planName = r.Plan.Name
	}
	// summary is NOT NULL: a placeholder until the id is known.
	names := []string{`"schema"`, "started_at", "ended_at", "status", "error", "workload",
		"flavor", "version", "dsn", "sandbox", "threads", "rate", "duration_s", "warmup_s",
		"events", "queries_read", "queries_write", "queries_other", "queries",
		"errors", "retries", "reconnects", "late", "dropped", "tps", "qps",
		"min_ms", "avg_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms", "tpmc",
		"params", "settings", "server_counters", "checks", "host", "dbarena_version", "command",
		"summary", "histogram", "plan_name"}
	vals := []any{r.Schema, formatTime(r.StartedAt), formatTime(r.EndedAt), r.Status, r.Error, r.Workload,
		r.Target.Flavor, r.Target.Version, r.Target.DSN, r.Target.Sandbox,
		r.Threads, r.Rate, r.DurationS, r.WarmupS,
		r.Totals.Events, r.Totals.Queries.Read, r.Totals.Queries.Write, r.Totals.Queries.Other, r.Totals.Queries.Total,
		r.Totals.Errors, r.Totals.Retries, r.Totals.Reconnects, r.Totals.Late, r.Totals.Dropped,
		r.Throughput.TPS, r.Throughput.QPS,
		r.LatencyMS.Min, r.LatencyMS.Avg, r.LatencyMS.P50, r.LatencyMS.P90,
		r.LatencyMS.P95, r.LatencyMS.P99, r.LatencyMS.P999, r.LatencyMS.Max, tpmc,
		cols.params, cols.settings, cols.serverCounters, cols.checks, cols.host,
		r.Dbarena.Version, cols.command, "", r.Histogram, planName}
	return names, vals, nil
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

// insertIntervals inserts ivs as intervals first, first+1, ... of run id.
func (s *Store) insertIntervals(ctx context.Context, tx *sql.Tx, id int64, first int, ivs []summary.Interval) error {
	if len(ivs) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, s.be.rebind(`INSERT INTO intervals (
		run_id, seq, t_s, threads, tps, qps, read_qps, write_qps, other_qps,
		p95_ms, errors, reconnects, late, per_type
	) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`))
	if err != nil {
		return fmt.Errorf("insert intervals: %w", err)
	}
	defer st.Close()
	for i, iv := range ivs {
		perType := ""
		if iv.PerType != nil {
			b, err := json.Marshal(iv.PerType)
			if err != nil {
				return fmt.Errorf("interval %d: encode per-type figures: %w", first+i, err)
			}
			perType = string(b)
		}
		if _, err := st.ExecContext(ctx, id, first+i, iv.TS, iv.Threads, iv.TPS, iv.QPS,
			iv.ReadQPS, iv.WriteQPS, iv.OtherQPS, iv.P95MS, iv.Errors, iv.Reconnects, iv.Late, perType); err != nil {
			return fmt.Errorf("insert interval %d: %w", first+i, err)
		}
	}
	return nil
}

// insertSamples inserts samples as monitor samples first, first+1, ... of
// run id.
func (s *Store) insertSamples(ctx context.Context, tx *sql.Tx, id int64, first int, samples []summary.Sample) error {
	if len(samples) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, s.be.rebind(`INSERT INTO run_samples (run_id, seq, t_s, data) VALUES (?, ?, ?, ?)`))
	if err != nil {
		return fmt.Errorf("insert monitor samples: %w", err)
	}
	defer st.Close()
	for i, sm := range samples {
		b, err := json.Marshal(sm.Values)
		if err != nil {
			return fmt.Errorf("monitor sample %d: encode: %w", first+i, err)
		}
		if _, err := st.ExecContext(ctx, id, first+i, sm.TS, string(b)); err != nil {
			return fmt.Errorf("insert monitor sample %d: %w", first+i, err)
		}
	}
	return nil
}

// replaceTypesAndTags writes run id's per-type statistics and tags,
// deleting the old ones first when replace is set.
func (s *Store) replaceTypesAndTags(ctx context.Context, tx *sql.Tx, id int64, r *summary.Run, replace bool) error {
	if replace {
		for _, table := range []string{"run_types", "run_tags"} {
			if _, err := s.exec(ctx, tx, "DELETE FROM "+table+" WHERE run_id = ?", id); err != nil {
				return fmt.Errorf("delete old %s: %w", table, err)
			}
		}
	}
	if err := s.insertTypes(ctx, tx, id, r.PerType); err != nil {
		return err
	}
	return s.insertTags(ctx, tx, id, r.Tags)
}

func (s *Store) insertTypes(ctx context.Context, tx *sql.Tx, id int64, types map[string]summary.Type) error {
	if len(types) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, s.be.rebind(`INSERT INTO run_types (
		run_id, name, count, errors, retries,
		min_ms, avg_ms, p50_ms, p90_ms, p95_ms, p99_ms, p999_ms, max_ms
	) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`))
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

func (s *Store) insertTags(ctx context.Context, tx *sql.Tx, id int64, tags map[string]string) error {
	if len(tags) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, s.be.rebind(`INSERT INTO run_tags (run_id, "key", value) VALUES (?, ?, ?)`))
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
