package console

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/measure/stats"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// PlanStats prints the per-cell table of a plan session (plan show, plan
// run's end): each cell's mean over rounds with its 95% interval, against
// the baseline cells base.
func PlanStats(w io.Writer, name, session string, base []plan.Param, noisyCV float64, cells []plan.CellStats) error {
	var bl []string
	for _, b := range base {
		bl = append(bl, b.Key+"="+b.Value)
	}
	fmt.Fprintf(w, "Plan %s, session %s: mean over rounds ± 95%% CI half-width; baseline %s; noisy above CV %.0f%%\n",
		name, session, strings.Join(bl, ","), noisyCV*100)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CELL\tN\tTPS\tCV\tP95 MS\tP99 MS\tWARM-UP\tVS BASELINE\tNOTE")
	for _, c := range cells {
		label := CellLabel(c.Cell)
		if c.Runs == 0 {
			fmt.Fprintf(tw, "%s\t0/%d\t-\t-\t-\t-\t-\t-\tfailed: %s\n", label, c.Failed, truncate(oneLine(c.Error), 60))
			continue
		}
		n := strconv.Itoa(c.Runs)
		if c.Failed > 0 {
			n += fmt.Sprintf("/%d", c.Runs+c.Failed)
		}
		var notes []string
		if c.Noisy {
			notes = append(notes, "noisy")
		}
		rel := "-"
		switch {
		case plan.IsBaseline(c.Coords, base):
			rel = "baseline"
		case c.Relative != nil:
			rel = fmt.Sprintf("%.3f", c.Relative.Value)
			if c.Relative.HasCI {
				rel += fmt.Sprintf(" [%.3f, %.3f]", c.Relative.Low, c.Relative.High)
			}
			if !c.Relative.Significant {
				notes = append(notes, "no significant difference")
			}
		}
		if c.Failed > 0 {
			notes = append(notes, fmt.Sprintf("%d failed", c.Failed))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f%%\t%s\t%s\t%.0fs\t%s\t%s\n", label, n, pm(c.TPS), c.TPS.CV*100,
			pm(c.P95), pm(c.P99), c.WarmupS, rel, strings.Join(notes, ", "))
	}
	return tw.Flush()
}

// pm renders mean ± CI half-width.
func pm(s stats.Summary) string {
	if !s.HasCI() {
		return fmt.Sprintf("%.2f", s.Mean)
	}
	return fmt.Sprintf("%.2f ± %.2f", s.Mean, (s.CIHigh-s.CILow)/2)
}

// CellLabel drops the workload coordinate's key names for a compact table.
func CellLabel(id string) string {
	var parts []string
	for _, kv := range strings.Split(id, ",") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "workload", "server", "engine":
			parts = append(parts, v)
		default:
			parts = append(parts, kv)
		}
	}
	return strings.Join(parts, " ")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// PlanProgress prints plan run's progress (a lab.Observer): a header and
// a line per run.
type PlanProgress struct {
	W    io.Writer
	Plan *plan.Plan
}

// Began implements lab.Observer.
func (pr PlanProgress) Began(session string, complete int) {
	fmt.Fprintf(pr.W, "Plan %s (session %s): %d servers, %d cells x %d rounds = %d runs",
		pr.Plan.Name, session, len(pr.Plan.Variants()), len(pr.Plan.Cells()), pr.Plan.Rounds, len(pr.Plan.Schedule()))
	if complete > 0 {
		fmt.Fprintf(pr.W, ", %d already complete", complete)
	}
	fmt.Fprintln(pr.W)
}

// Noted implements lab.Observer.
func (pr PlanProgress) Noted(msg string) { fmt.Fprintln(pr.W, "note:", msg) }

// Ran implements lab.Observer.
func (pr PlanProgress) Ran(i, n int, step plan.Step, run *summary.Run, eta time.Duration) {
	line := fmt.Sprintf("[%d/%d] round %d %s: ", i+1, n, step.Round, step.ID)
	if run.Status == summary.StatusComplete {
		line += fmt.Sprintf("tps %.2f p95 %.2f ms p99 %.2f ms warm-up %.0fs", run.Throughput.TPS, run.LatencyMS.P95, run.LatencyMS.P99, run.WarmupS)
	} else {
		line += run.Status + ": " + oneLine(run.Error)
	}
	line += StepRunRef(run)
	fmt.Fprintf(pr.W, "%s; ETA %s\n", line, eta)
}

// ShardsLine says how the plan's workloads are sharded, for plan check:
// "" when no step is.
func ShardsLine(p *plan.Plan) string {
	var parts []string
	for _, w := range p.Workloads {
		if n, _ := p.ShardsOf(w); n > 1 {
			parts = append(parts, w.Name+" "+strconv.Itoa(n))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Shards (local processes per run): " + strings.Join(parts, ", ")
}

// StepRunRef names a plan step's stored run for its progress line: its
// number, or the sharded run with its shards' start skew (and, when it is
// not complete, why).
func StepRunRef(run *summary.Run) string {
	switch {
	case run.ID > 0:
		return fmt.Sprintf(" (run %d)", run.ID)
	case run.RunKey == "":
		return ""
	}
	ref := fmt.Sprintf(" (sharded run %s: %d shards, start skew up to %.1f ms)", run.RunKey, len(run.Shards), maxShardSkew(run))
	if run.Status != summary.StatusComplete && len(run.Notes) > 0 {
		ref += " " + oneLine(strings.Join(run.Notes, "; "))
	}
	return ref
}

func maxShardSkew(run *summary.Run) float64 {
	m := 0.0
	for _, s := range run.Shards {
		m = max(m, s.StartSkewMS)
	}
	return m
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
