package dumpload

import (
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/target"
)

// Workload is the workload name a load is stored under.
const Workload = "load"

// Summary is the load as a stored run (workload "load"), so that results,
// report and compare work on it: per_type is keyed by table with Count =
// its rows; events are rows (tps = rows/s) and queries are statements;
// figures hold load.bytes, load.rows, load.statements, load.rate_mb_s,
// load.rows_s, and per table load.table.NAME.data_bytes / .index_bytes /
// .loaded / .sent (where known);
// the tag "engine" names the engine asked for (or "as-dumped"). runErr is
// the error Load returned, if any.
func (r *Result) Summary(t target.Target, runErr error) *summary.Run {
	run := &summary.Run{
		Schema: summary.Schema, Status: summary.StatusComplete,
		StartedAt: r.StartedAt, EndedAt: r.EndedAt, Workload: Workload,
		Target:  summary.Target{Flavor: string(t.Flavor), Version: t.Version, DSN: t.MaskedDSN(), Sandbox: t.Sandbox},
		Threads: r.Threads, DurationS: r.Duration.Seconds(),
		Params: map[string]any{"files": r.Files, "format": r.Format, "databases": r.Databases},
		Tags:   map[string]string{"engine": "as-dumped"},
		Figures: map[string]float64{
			"load.bytes": float64(r.Bytes), "load.rows": float64(r.Rows), "load.statements": float64(r.Statements),
			"load.errors": float64(r.ErrorCount),
		},
		PerType: map[string]summary.Type{},
		Notes:   append([]string(nil), r.Notes...),
	}
	if r.Engine != "" {
		run.Tags["engine"] = r.Engine
		run.Params["engine"] = r.Engine
	}
	if s := r.Duration.Seconds(); s > 0 {
		run.Figures["load.rate_mb_s"] = float64(r.Bytes) / 1e6 / s
		run.Figures["load.rows_s"] = float64(r.Rows) / s
		run.Throughput = summary.Throughput{TPS: float64(r.Rows) / s, QPS: float64(r.Statements) / s}
	}
	run.Totals.Events = r.Rows
	run.Totals.Queries = summary.Queries{Write: r.Statements, Total: r.Statements}
	run.Totals.Errors = int64(r.ErrorCount)
	codes := map[string]int64{}
	for _, e := range r.Errors {
		if e.Code != "" {
			codes[e.Code]++
		}
	}
	if len(codes) > 0 {
		run.Totals.ErrorsByCode = codes
	}
	for _, tb := range r.Tables {
		name := tb.Name
		if len(r.Databases) > 1 && tb.Database != "" {
			name = tb.Database + "." + tb.Name
		}
		rows := tb.Rows
		if rows < 0 {
			rows = tb.Loaded
		}
		run.PerType[name] = summary.Type{Count: rows}
		run.Figures["load.table."+name+".data_bytes"] = float64(tb.DataBytes)
		run.Figures["load.table."+name+".index_bytes"] = float64(tb.IndexBytes)
		run.Figures["load.table."+name+".loaded"] = float64(tb.Loaded)
		if tb.Sent >= 0 {
			run.Figures["load.table."+name+".sent"] = float64(tb.Sent)
		}
	}
	switch {
	case r.Interrupted:
		run.Status = summary.StatusInterrupted
	case runErr != nil:
		run.Status = summary.StatusFailed
		run.Error = printable(runErr.Error())
	}
	return run
}
