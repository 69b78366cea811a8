package micro

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/workload"
)

// Figure keys Summarize stores per operation OP (package report reads them):
// SecondsPrefix+OP is the operation's seconds (extrapolated to its full
// count when capped), ExtrapolatedPrefix+OP is 1 for a capped operation.
const (
	SecondsPrefix      = "micro.seconds."
	ExtrapolatedPrefix = "micro.extrapolated."
	// UsrPrefix+OP and SysPrefix+OP are the user and system CPU seconds
	// of dbarena's process while OP ran (sql-bench's usr and sys).
	UsrPrefix = "micro.usr."
	SysPrefix = "micro.sys."
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
		run.Figures[UsrPrefix+op] = t.usr.Seconds()
		run.Figures[SysPrefix+op] = t.sys.Seconds()
	}
	wl.noteWrong(run)
}

// noteWrong counts the wrong results as errors of their operations (code
// WrongResultCode) and notes the first of each. wl.mu is held.
func (wl *Workload) noteWrong(run *summary.Run) {
	for _, op := range slices.Sorted(maps.Keys(wl.wrong)) {
		x := wl.wrong[op]
		run.Figures[WrongPrefix+op] = float64(x.n)
		run.Totals.Errors += x.n
		if run.Totals.ErrorsByCode == nil {
			run.Totals.ErrorsByCode = map[string]int64{}
		}
		run.Totals.ErrorsByCode[WrongResultCode] += x.n
		if t, ok := run.PerType[op]; ok {
			t.Errors += x.n
			if t.ErrorsByCode == nil {
				t.ErrorsByCode = map[string]int64{}
			}
			t.ErrorsByCode[WrongResultCode] += x.n
			run.PerType[op] = t
		}
		run.Notes = append(run.Notes, fmt.Sprintf("%s: %d wrong result(s), marked \"?\" (first: %s)", op, x.n, x.first))
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
// order, with ops/s and latency percentiles after sql-bench's CPU times
// (so that its run-all-tests reads them: see CPUTail), an operation with
// wrong results preceded by a "Warning:" line as sql-bench's are, a
// capped one starting "Estimated time for"; last sql-bench's "Total time:"
// line.
func (wl *Workload) FormatSummary(run *summary.Run) string {
	var b strings.Builder
	var total, usr, sys float64
	for _, op := range ops(run) {
		secs := run.Figures[SecondsPrefix+op]
		u, s := run.Figures[UsrPrefix+op], run.Figures[SysPrefix+op]
		total, usr, sys = total+secs, usr+u, sys+s
		t := run.PerType[op]
		if n := run.Figures[WrongPrefix+op]; n > 0 {
			fmt.Fprintf(&b, "Warning: %s returned %d wrong result(s)%s\n", op, int64(n), firstWrong(run, op))
		}
		prefix, mark := "Time", ""
		if run.Figures[ExtrapolatedPrefix+op] == 1 {
			prefix, mark = "Estimated time", " (estimated: --time-limit)"
		}
		rate := 0.0
		if secs > 0 {
			rate = float64(t.Count) / secs
		}
		fmt.Fprintf(&b, "%s for %s (%d): %.3f wallclock secs %s%s  %.1f ops/s  p50 %.3f ms  p95 %.3f ms  p99 %.3f ms\n",
			prefix, op, t.Count, secs, CPUTail(u, s), mark, rate, t.LatencyMS.P50, t.LatencyMS.P95, t.LatencyMS.P99)
	}
	fmt.Fprintf(&b, "TOTALS: %.3f wallclock secs over %d operations (%s)\n", total, len(ops(run)),
		(time.Duration(total * float64(time.Second))).Round(time.Millisecond))
	fmt.Fprintf(&b, "Total time: %.3f wallclock secs %s\n", total, CPUTail(usr, sys))
	return b.String()
}

// CPUTail is sql-bench's "(usr sys = cpu)" part of a Time for line, as
// Perl's Benchmark::timestr(..., "all") writes it; the children's times
// (cusr, csys) are 0: dbarena runs no child processes.
func CPUTail(usr, sys float64) string {
	return fmt.Sprintf("(%5.2f usr %5.2f sys + %5.2f cusr %5.2f csys = %5.2f CPU)", usr, sys, 0.0, 0.0, usr+sys)
}

// firstWrong is ": first ..." from op's note, "" when there is none.
func firstWrong(run *summary.Run, op string) string {
	for _, n := range run.Notes {
		if rest, ok := strings.CutPrefix(n, op+": "); ok {
			if i := strings.Index(rest, "(first: "); i >= 0 {
				return " " + rest[i:]
			}
		}
	}
	return ""
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
