package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/lab"
	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/results/console"
	"github.com/dbarena/dbarena/internal/results/gate"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// gateOptions are run's CI gate flags: --threshold, --junit, --md-summary
// (docs/CLI.md, "Thresholds and gates").
type gateOptions struct {
	exprs    []string
	junit    string
	mdPath   string
	parsed   []gate.Threshold
	suites   []gate.Suite
	failures int
}

func (g *gateOptions) flags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&g.exprs, "threshold", nil, "pass/fail rule on the run's figures, such as p95<5ms, tps>=1000, errors<0.1%, lag_p99<100ms or 'type:new_order p90<5ms' (repeatable); a failed one makes the run exit 1")
	fs.StringVar(&g.junit, "junit", "", "write the thresholds' outcome to this file as JUnit XML")
	fs.StringVar(&g.mdPath, "md-summary", "", "write the thresholds' outcome to this file as Markdown (e.g. $GITHUB_STEP_SUMMARY)")
}

// validate parses the thresholds and checks the output files.
func (g *gateOptions) validate(fs *pflag.FlagSet) []error {
	var errs []error
	for _, e := range g.exprs {
		t, err := gate.Parse(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("--threshold %w", err))
			continue
		}
		g.parsed = append(g.parsed, t)
	}
	if len(g.exprs) == 0 && (g.junit != "" || g.mdPath != "") {
		return append(errs, errors.New("--junit and --md-summary of run need --threshold"))
	}
	if len(g.parsed) > 0 && (fs.Changed("shard") || fs.Changed("shards")) {
		errs = append(errs, errors.New("--threshold: not with --shard/--shards (the merged run is judged by no process); judge it with a plan or compare"))
	}
	for _, f := range []struct{ flag, path string }{{"--junit", g.junit}, {"--md-summary", g.mdPath}} {
		if f.path != "" {
			if err := checkWritable(f.path); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", f.flag, err))
			}
		}
	}
	return errs
}

// judge adds the threshold results to a finished run, before it is stored
// (execute.Spec.Judge).
func (g *gateOptions) judge(run *summary.Run) {
	if len(g.parsed) > 0 {
		run.Thresholds = gate.EvalAll(g.parsed, run)
	}
}

// judgeFunc is the Spec.Judge of a run with these options (nil: none).
func (g *gateOptions) judgeFunc() func(*summary.Run) {
	if len(g.parsed) == 0 {
		return nil
	}
	return g.judge
}

// gateRound prints a round's PASS/FAIL lines and keeps its outcome.
func (a *App) gateRound(o *runOptions, run *summary.Run) {
	g := &o.gates
	if len(g.parsed) == 0 || run == nil {
		return
	}
	if !o.quiet {
		fmt.Fprintln(a.Stdout)
		for _, r := range run.Thresholds {
			fmt.Fprintln(a.Stdout, gate.Line(r))
		}
	}
	if gate.Failed(run.Thresholds) {
		g.failures++
	}
	g.suites = append(g.suites, gate.RunSuite(run))
}

// gateEnd writes --junit and --md-summary and returns runErr, or, when it
// is nil and a threshold failed, the failure (exit 1).
func (a *App) gateEnd(o *runOptions, runErr error) error {
	g := &o.gates
	if len(g.parsed) == 0 {
		return runErr
	}
	if err := gate.WriteFiles(g.junit, g.mdPath, g.suites); err != nil && runErr == nil {
		runErr = failed(err)
	}
	if runErr == nil && g.failures > 0 {
		what := "a threshold failed"
		if len(g.suites) > 1 {
			what = fmt.Sprintf("thresholds failed in %d of %d rounds", g.failures, len(g.suites))
		}
		runErr = failed(fmt.Errorf("%s; the result is stored", what))
	}
	return runErr
}

// compareGate is compare's --fail-on, --junit and --md-summary.
type compareGate struct {
	failOn, junit, md string
}

func (c *compareGate) flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.failOn, "fail-on", "", "exit 1 when B is significantly worse than A by more than a size: NAME:[+|-]PERCENT% items, such as tps:-5%,p95:+10% (needs rounds on both sides; single runs cannot be judged and pass)")
	fs.StringVar(&c.junit, "junit", "", "with --fail-on: write the outcome to this file as JUnit XML")
	fs.StringVar(&c.md, "md-summary", "", "with --fail-on: write the outcome to this file as Markdown")
}

// parse reads --fail-on and checks the output files.
func (c *compareGate) parse() ([]gate.Limit, error) {
	if c.failOn == "" {
		if c.junit != "" || c.md != "" {
			return nil, usagef("--junit and --md-summary of compare need --fail-on")
		}
		return nil, nil
	}
	ls, err := gate.ParseLimits(c.failOn)
	if err != nil {
		return nil, usagef("--fail-on %w", err)
	}
	for _, f := range []struct{ flag, path string }{{"--junit", c.junit}, {"--md-summary", c.md}} {
		if f.path != "" {
			if err := checkWritable(f.path); err != nil {
				return nil, usagef("%s: %w", f.flag, err)
			}
		}
	}
	return ls, nil
}

// judgeCompare prints the verdict of each limit on B's rounds against A's, writes
// the outcome files and fails (exit 1) when a limit is exceeded.
func (a *App) judgeCompare(c *compareGate, limits []gate.Limit, names [2]string, sides [2][]*summary.Run) error {
	if len(limits) == 0 {
		return nil
	}
	suite, fails := console.CompareVerdicts(a.Stdout, limits, names, sides)
	if err := gate.WriteFiles(c.junit, c.md, []gate.Suite{suite}); err != nil {
		return failed(err)
	}
	if fails > 0 {
		return failed(fmt.Errorf("%d of %d --fail-on limits exceeded", fails, len(limits)))
	}
	return nil
}

// planGates prints the outcome of a plan run's thresholds (its workloads'
// thresholds:) and fails (exit 1) when one failed in any step.
func (a *App) planGates(res lab.Result, judged []*summary.Run) error {
	if res.Judged == 0 {
		return nil
	}
	console.PlanThresholds(a.Stdout, res.Judged, res.GateFailed, judged)
	if res.GateFailed > 0 {
		return failed(fmt.Errorf("thresholds failed in %d of %d runs (stored with their results)", res.GateFailed, res.Judged))
	}
	return nil
}

// planFailOn is plan show's --fail-on: each cell's rounds are judged
// against its baseline cell's, as compare judges B against A; exit 1 when
// a limit is exceeded somewhere.
func (a *App) planFailOn(ctx context.Context, st *store.Store, name, session string, base []plan.Param, c *compareGate, limits []gate.Limit) error {
	if len(limits) == 0 {
		return nil
	}
	runs, err := lab.SessionRuns(ctx, st, name, session)
	if err != nil {
		return failed(err)
	}
	if len(base) == 0 { // as printPlanStats: the server of the first cell
		base = lab.DefaultBaseline(runs)
	}
	suites, fails := console.PlanVerdicts(a.Stdout, name, plan.BaselinePairs(runs, base), limits)
	if err := gate.WriteFiles(c.junit, c.md, suites); err != nil {
		return failed(err)
	}
	if fails > 0 {
		return failed(fmt.Errorf("%d --fail-on limits exceeded against the baseline cells", fails))
	}
	return nil
}
