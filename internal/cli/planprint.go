package cli

import (
	"context"

	"github.com/dbarena/dbarena/internal/lab"
	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/results/console"
	"github.com/dbarena/dbarena/internal/results/store"
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
	why := fs.Bool("why", false, "under each cell's reading against its baseline, the whole where-the-difference-comes-from table")
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
	if err := a.printPlanStats(ctx, st, name, session, base, noisy, o.asJSON, *why); err != nil {
		return err
	}
	return a.planFailOn(ctx, st, name, session, base, &cg, limits)
}

// printPlanStats prints the per-cell table of a plan session.
func (a *App) printPlanStats(ctx context.Context, st *store.Store, name, session string, base []plan.Param, noisyCV float64, asJSON, why bool) error {
	runs, err := lab.SessionRuns(ctx, st, name, session)
	if err != nil {
		return failed(err)
	}
	if len(base) == 0 {
		base = lab.DefaultBaseline(runs)
	}
	cells := plan.Summarise(runs, base, noisyCV)
	if asJSON {
		return a.printJSON(struct {
			Plan     string           `json:"plan"`
			Session  string           `json:"session"`
			Baseline []plan.Param     `json:"baseline"`
			Cells    []plan.CellStats `json:"cells"`
			Why      []planWhy        `json:"why,omitempty"` // why_x.go
		}{name, session, base, cells, planWhys(runs, base)})
	}
	if err := console.PlanStats(a.Stdout, name, session, base, noisyCV, cells); err != nil {
		return err
	}
	console.PlanWhy(a.Stdout, plan.BaselinePairs(runs, base), why)
	return nil
}
