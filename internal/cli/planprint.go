package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dbarena/dbarena/internal/lab"
	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/measure/stats"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
)

// planShow prints the per-cell statistics of a plan session (plan show).
func (a *App) planShow(ctx context.Context, args []string) error {
	var baseline [][2]string
	o, fs := planFlags("show")
	fs.Var(keyValues{&baseline}, "baseline", "baseline coordinate KEY=VALUE (default: server of the first cell)")
	var session string
	var noisy float64
	fs.StringVar(&session, "session", "", "plan session (default: the latest)")
	fs.Float64Var(&noisy, "noisy-cv", 0.10, "flag cells whose throughput CV exceeds this")
	var cg compareGate // --fail-on against the baseline cells (gate_x.go)
	cg.flags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	limits, err := cg.parse()
	if err != nil {
		return err
	}
	if len(limits) > 0 && o.asJSON {
		return usagef("--fail-on: not with --json (its verdicts are lines of text)")
	}
	if fs.NArg() != 1 {
		return usagef("plan show needs exactly one plan NAME")
	}
	st, err := a.openStoreRead(ctx, o.results)
	if err != nil {
		return usagef("--results: %w", err)
	}
	defer st.Close()
	name := fs.Arg(0)
	if session == "" {
		if session, err = lab.LatestSession(ctx, st, name); err != nil {
			return failed(err)
		}
		if session == "" {
			return usagef("no runs of plan %q in %s", name, st.Location())
		}
	}
	var base []plan.Param
	for _, kv := range baseline {
		base = append(base, plan.Param{Key: kv[0], Value: kv[1]})
	}
	if err := a.printPlanStats(ctx, st, name, session, base, noisy, o.asJSON); err != nil {
		return err
	}
	return a.planFailOn(ctx, st, name, session, base, &cg, limits)
}

// printPlanStats prints the per-cell table of a plan session.
func (a *App) printPlanStats(ctx context.Context, st *store.Store, name, session string, base []plan.Param, noisyCV float64, asJSON bool) error {
	rows, err := st.List(ctx, store.Filter{Tags: map[string]string{lab.TagPlan: name, lab.TagSession: session}})
	if err != nil {
		return failed(err)
	}
	slices.Reverse(rows) // oldest first: cells in schedule order
	var runs []*summary.Run
	for _, r := range rows {
		run, err := st.Run(ctx, r.ID)
		if err != nil {
			return failed(err)
		}
		runs = append(runs, run)
	}
	if runs, err = shard.MergeRuns(ctx, st, runs); err != nil {
		return failed(err)
	}
	if len(base) == 0 {
		for _, r := range runs {
			if r.Plan != nil {
				base = []plan.Param{{Key: "server", Value: r.Plan.Coords["server"]}}
				break
			}
		}
	}
	cells := plan.Summarise(runs, base, noisyCV)
	if asJSON {
		return a.printJSON(struct {
			Plan     string           `json:"plan"`
			Session  string           `json:"session"`
			Baseline []plan.Param     `json:"baseline"`
			Cells    []plan.CellStats `json:"cells"`
		}{name, session, base, cells})
	}
	var bl []string
	for _, b := range base {
		bl = append(bl, b.Key+"="+b.Value)
	}
	fmt.Fprintf(a.Stdout, "Plan %s, session %s: mean over rounds ± 95%% CI half-width; baseline %s; noisy above CV %.0f%%\n",
		name, session, strings.Join(bl, ","), noisyCV*100)
	tw := tabwriter.NewWriter(a.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CELL\tN\tTPS\tCV\tP95 MS\tP99 MS\tWARM-UP\tVS BASELINE\tNOTE")
	for _, c := range cells {
		label := cellLabel(c.Cell)
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

// cellLabel drops the workload coordinate's key names for a compact table.
func cellLabel(id string) string {
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

// planPrinter prints plan run's progress: a header and a line per run.
type planPrinter struct {
	w io.Writer
	p *plan.Plan
}

func (pr planPrinter) Began(session string, complete int) {
	fmt.Fprintf(pr.w, "Plan %s (session %s): %d servers, %d cells x %d rounds = %d runs",
		pr.p.Name, session, len(pr.p.Variants()), len(pr.p.Cells()), pr.p.Rounds, len(pr.p.Schedule()))
	if complete > 0 {
		fmt.Fprintf(pr.w, ", %d already complete", complete)
	}
	fmt.Fprintln(pr.w)
}

func (pr planPrinter) Noted(msg string) { fmt.Fprintln(pr.w, "note:", msg) }

func (pr planPrinter) Ran(i, n int, step plan.Step, run *summary.Run, eta time.Duration) {
	line := fmt.Sprintf("[%d/%d] round %d %s: ", i+1, n, step.Round, step.ID)
	if run.Status == summary.StatusComplete {
		line += fmt.Sprintf("tps %.2f p95 %.2f ms p99 %.2f ms warm-up %.0fs", run.Throughput.TPS, run.LatencyMS.P95, run.LatencyMS.P99, run.WarmupS)
	} else {
		line += run.Status + ": " + oneLine(run.Error)
	}
	line += stepRunRef(run)
	fmt.Fprintf(pr.w, "%s; ETA %s\n", line, eta)
}
