package micro

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/summary"
	"github.com/dbarena/dbarena/internal/workload"
)

// Figure keys Summarize stores per operation OP (package report reads them):
// SecondsPrefix+OP is the operation's seconds (extrapolated to its full
// count when capped), ExtrapolatedPrefix+OP is 1 for a capped operation.
const (
	SecondsPrefix      = "micro.seconds."
	ExtrapolatedPrefix = "micro.extrapolated."
)

// IntervalHeader implements workload.Reporter.
func (wl *Workload) IntervalHeader() string {
	return "Operations done per report interval (each test runs alone, one after another):"
}

// FormatInterval implements workload.Reporter: the operations that ran in
// the interval, with their counts.
func (wl *Workload) FormatInterval(iv workload.IntervalReport) string {
	var parts []string
	for _, op := range slices.Sorted(maps.Keys(iv.PerType)) {
		if op == skipType || op == idleType {
			continue
		}
		t := iv.PerType[op]
		parts = append(parts, fmt.Sprintf("%s %d", op, t.Count))
	}
	if len(parts) == 0 {
		parts = append(parts, "idle")
	}
	return fmt.Sprintf("[ %ds ] %s", int(iv.End.Seconds()+0.5), strings.Join(parts, ", "))
}

// Summarize implements workload.Reporter: it leaves the pseudo events out
// of the totals and per_type, and stores each operation's seconds, for
// the report's micro section (summary.SectionMicro).
func (wl *Workload) Summarize(run *summary.Run) {
	run.AddSection(summary.SectionMicro)
	for _, pseudo := range []string{skipType, idleType} {
		if t, ok := run.PerType[pseudo]; ok {
			run.Totals.Events -= t.Count
			delete(run.PerType, pseudo)
		}
	}
	if run.DurationS > 0 {
		run.Throughput.TPS = float64(run.Totals.Events) / run.DurationS
	}
	wl.mu.Lock()
	defer wl.mu.Unlock()
	wl.noteCuts(run)
	if run.Figures == nil {
		run.Figures = map[string]float64{}
	}
	for _, op := range slices.Sorted(maps.Keys(wl.timings)) {
		t := wl.timings[op]
		secs := t.elapsed.Seconds()
		if t.capped && t.done > 0 {
			secs *= float64(t.planned) / float64(t.done)
			run.Figures[ExtrapolatedPrefix+op] = 1
			if t.limited {
				run.Notes = append(run.Notes, fmt.Sprintf("%s: --time-limit %v reached after %d of %d operations; its %.2f s are extrapolated",
					op, wl.timeLimit, t.done, t.planned, secs))
			}
		}
		run.Figures[SecondsPrefix+op] = secs
	}
}

// noteCuts says, never silently, that the run ended before a worker's
// suite did; the operation it cut short counts as extrapolated. wl.mu is
// held.
func (wl *Workload) noteCuts(run *summary.Run) {
	ws := make([]*worker, 0, len(wl.cuts))
	for w := range wl.cuts {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].id < ws[j].id })
	for _, w := range ws {
		c := wl.cuts[w]
		msg := "the run ended (--time, --events or the plan's duration) before the suite did"
		if c.op != "" {
			if wl.timings == nil {
				wl.timings = map[string]*timing{}
			}
			t := wl.timings[c.op]
			if t == nil {
				t = &timing{}
				wl.timings[c.op] = t
			}
			t.done += c.done
			t.planned += c.planned
			t.elapsed += c.elapsed
			t.capped = true
			msg += fmt.Sprintf(": %s stopped after %d of %d operations (its seconds are extrapolated)", c.op, c.done, c.planned)
		}
		if c.notRun > 0 {
			msg += fmt.Sprintf("; %d test(s) after it did not run", c.notRun)
		}
		if len(wl.cuts) > 1 {
			msg = fmt.Sprintf("worker %d: %s", w.id, msg)
		}
		run.Notes = append(run.Notes, msg)
	}
	wl.cuts = nil
}

// FormatSummary implements workload.Reporter: sql-bench's lines, in suite
// order, with ops/s and latency percentiles.
func (wl *Workload) FormatSummary(run *summary.Run) string {
	var b strings.Builder
	var total float64
	for _, op := range ops(run) {
		secs := run.Figures[SecondsPrefix+op]
		total += secs
		t := run.PerType[op]
		mark := ""
		if run.Figures[ExtrapolatedPrefix+op] == 1 {
			mark = " (estimated: --time-limit)"
		}
		rate := 0.0
		if secs > 0 {
			rate = float64(t.Count) / secs
		}
		fmt.Fprintf(&b, "Time for %s (%d): %.3f wallclock secs%s  %.1f ops/s  p50 %.3f ms  p95 %.3f ms  p99 %.3f ms\n",
			op, t.Count, secs, mark, rate, t.LatencyMS.P50, t.LatencyMS.P95, t.LatencyMS.P99)
	}
	fmt.Fprintf(&b, "TOTALS: %.3f wallclock secs over %d operations (%s)\n", total, len(ops(run)),
		(time.Duration(total * float64(time.Second))).Round(time.Millisecond))
	return b.String()
}

// ops are the run's operations in suite order.
func ops(run *summary.Run) []string {
	var out []string
	for _, t := range suite {
		if _, ok := run.Figures[SecondsPrefix+t.op]; ok {
			out = append(out, t.op)
		}
	}
	return out
}

// Ops lists every operation of the suite in the order it runs them.
func Ops() []string {
	out := make([]string, len(suite))
	for i, t := range suite {
		out[i] = t.op
	}
	return out
}
