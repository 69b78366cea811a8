package runner

import (
	"fmt"
	"maps"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/workload"
)

// Fill copies the result into the run summary: DurationS, WarmupS, Totals
// (Unfinished included), Throughput (UpTPS when there were outages),
// LatencyMS, Intervals, PerType, Outages, UptimeS and the encoded
// Histogram. The rest of run (identity, target, threads, status) is the
// caller's.
func (r *Result) Fill(run *summary.Run) {
	secs := r.Elapsed.Seconds()
	per := func(n int64, secs float64) float64 {
		if secs <= 0 {
			return 0
		}
		return float64(n) / secs
	}
	run.DurationS = secs
	run.Sched = r.Sched
	run.Placement, run.PlacementMoves = r.Placement, r.Moves
	if r.SchedErr != nil {
		run.Notes = append(run.Notes, fmt.Sprintf("%v: the run used the %s scheduling policy", r.SchedErr, r.Sched))
	}
	run.WarmupS = r.Warmup.Seconds()
	run.Totals = summary.Totals{
		Events:        r.Events,
		Queries:       queries(r.Queries),
		Errors:        r.Errors,
		Retries:       r.Retries,
		Reconnects:    r.Reconnects,
		Late:          r.Late,
		Dropped:       r.Dropped,
		Unfinished:    r.Unfinished,
		Connects:      r.Connects,
		ConnectErrors: r.ConnectErrors,
	}
	if len(r.ErrorsByCode) > 0 {
		run.Totals.ErrorsByCode = maps.Clone(r.ErrorsByCode)
	}
	run.Throughput = summary.Throughput{TPS: per(r.Events, secs), QPS: per(r.Queries.Total(), secs)}
	run.UptimeS = secs
	run.Outages = nil
	if len(r.Outages) > 0 {
		run.UptimeS = r.Uptime.Seconds()
		run.Throughput.UpTPS = per(r.Events, run.UptimeS)
		run.Outages = make([]summary.Outage, 0, len(r.Outages))
		for _, o := range r.Outages {
			run.Outages = append(run.Outages, summary.Outage{StartS: o.Start.Seconds(), EndS: o.End.Seconds(), Recovered: o.Recovered})
		}
	}
	if r.Latency != nil {
		run.LatencyMS = r.Latency.Latency()
		if s, err := r.Latency.Encode(); err == nil {
			run.Histogram = s
		}
	}
	run.Intervals = make([]summary.Interval, 0, len(r.Intervals))
	for _, iv := range r.Intervals {
		run.Intervals = append(run.Intervals, iv.Summary())
	}
	run.ConnectMS = nil
	if r.Connect != nil && r.Connect.Count() > 0 {
		l := r.Connect.Latency()
		run.ConnectMS = &l
	}
	if r.TickWork.Ticks > 0 {
		if run.Figures == nil {
			run.Figures = map[string]float64{}
		}
		run.Figures["runner.tick_avg_ms"] = millis(r.TickWork.Mean())
		run.Figures["runner.tick_max_ms"] = millis(r.TickWork.Max)
	}
	run.PerType = nil
	if len(r.PerType) > 0 {
		run.PerType = make(map[string]summary.Type, len(r.PerType))
		for name, t := range r.PerType {
			st := summary.Type{Count: t.Count, Errors: t.Errors, Retries: t.Retries, Late: t.Late}
			if t.Latency != nil {
				st.LatencyMS = t.Latency.Latency()
			}
			run.PerType[name] = st
		}
	}
}

func queries(q workload.Queries) summary.Queries {
	return summary.Queries{Read: q.Read, Write: q.Write, Other: q.Other, Total: q.Total()}
}

func intervalTypes(m map[string]workload.TypeInterval, hists map[string]string) map[string]summary.IntervalType {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]summary.IntervalType, len(m))
	for name, t := range m {
		out[name] = summary.IntervalType{Count: t.Count, Late: t.Late, Errors: t.Errors, Retries: t.Retries,
			P90MS: float64(t.P90.Microseconds()) / 1000, MaxMS: float64(t.Max.Microseconds()) / 1000,
			Histogram: hists[name]}
	}
	return out
}

// Summary is the interval as stored: rates over its real length.
func (iv Interval) Summary() summary.Interval {
	s := (iv.End - iv.Start).Seconds()
	per := func(n int64) float64 {
		if s <= 0 {
			return 0
		}
		return float64(n) / s
	}
	return summary.Interval{
		TS:            iv.End.Seconds(),
		Threads:       iv.Threads,
		Events:        iv.Events,
		TPS:           per(iv.Events),
		QPS:           per(iv.Queries.Total()),
		ReadQPS:       per(iv.Queries.Read),
		WriteQPS:      per(iv.Queries.Write),
		OtherQPS:      per(iv.Queries.Other),
		P95MS:         millis(iv.P95),
		Errors:        iv.Errors,
		Reconnects:    iv.Reconnects,
		Connects:      iv.Connects,
		ConnectErrors: iv.ConnectErrors,
		Late:          iv.Late,
		PerType:       intervalTypes(iv.PerType, iv.TypeHistograms),
		Histogram:     iv.Histogram,
	}
}

// millis is d in milliseconds, to the microsecond.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// TypeHistograms returns the per-type latency histograms, encoded as
// Fill encodes the total one (summary.Run.TypeHistograms), for a run whose
// shards are merged later; nil when the workload names no types.
func (r *Result) TypeHistograms() map[string]string {
	if len(r.PerType) == 0 {
		return nil
	}
	out := make(map[string]string, len(r.PerType))
	for name, t := range r.PerType {
		if t.Latency == nil {
			continue
		}
		if s, err := t.Latency.Encode(); err == nil {
			out[name] = s
		}
	}
	return out
}
