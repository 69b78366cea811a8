package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/lab"
	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/measure/hostinfo"
	"github.com/dbarena/dbarena/internal/results/console"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/catalog"
	"github.com/dbarena/dbarena/internal/server/target"
)

func (a *App) plan(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("name a plan command: check, run, show, cells")
	}
	switch args[0] {
	case "check":
		return a.planCheck(args[1:])
	case "run":
		return a.planRun(ctx, args[1:])
	case "show":
		return a.planShow(ctx, args[1:])
	case "cells":
		return a.planCells(args[1:])
	case "step": // hidden: one shard of a sharded step (planstep.go)
		return a.planStep(ctx, args[1:])
	}
	return usagef("unknown plan command %q (want check, run, show, cells)", args[0])
}

// loadPlan reads, parses and checks a plan file; every problem names the
// file and line (exit 2).
func (a *App) loadPlan(path string, scale float64) (*plan.Plan, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, usagef("%s: %w", path, err)
	}
	p, errs := plan.Parse(path, data)
	if p != nil {
		p.Scale(scale)
		errs = append(errs, lab.Check(p, a.Registry)...)
	}
	if len(errs) > 0 {
		return nil, nil, validate(errs)
	}
	cat, _ := catalog.Open(a.home()).List()
	return p, lab.Expand(p, cat, a.sandboxes().Discover), nil
}

func planFlags(name string) (*planOptions, *pflag.FlagSet) {
	o := &planOptions{}
	fs := newFlagSet("plan " + name)
	fs.Float64Var(&o.scale, "scale", 1, "scale durations and data sizes by this factor (0 < F <= 1) for a quick run")
	fs.StringVar(&o.results, "results", "", "results store (SQLite file); default $DBARENA_HOME/results.db")
	fs.BoolVar(&o.resume, "resume", false, "continue the plan's latest session, skipping rounds already complete")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
	fs.BoolVar(&o.keep, "keep-servers", false, "leave the plan's sandboxes running at the end")
	if name == "run" {
		durationFlag(fs, &o.wait, "wait", 0, "when another plan run of this plan holds its lock, wait up to this long for it (0: fail at once)")
		o.metrics.flags(fs)
	}
	return o, fs
}

type planOptions struct {
	scale   float64
	results string
	resume  bool
	asJSON  bool
	keep    bool
	wait    time.Duration
	metrics metricsOptions // plan run's --metrics-listen (metrics_x.go)
}

// planFile parses the flags of plan command name and loads its plan FILE.
func (a *App) planFile(name string, args []string) (*planOptions, *plan.Plan, []string, error) {
	o, fs := planFlags(name)
	if err := parseFlags(fs, args); err != nil {
		return nil, nil, nil, err
	}
	if fs.NArg() != 1 {
		return nil, nil, nil, usagef("plan %s needs exactly one plan FILE", name)
	}
	if o.scale <= 0 || o.scale > 1 {
		return nil, nil, nil, usagef("--scale must be > 0 and <= 1, got %g", o.scale)
	}
	if err := validate(o.metrics.validate(fs)); err != nil {
		return nil, nil, nil, err
	}
	p, warnings, err := a.loadPlan(fs.Arg(0), o.scale)
	return o, p, warnings, err
}

func (a *App) planCheck(args []string) error {
	_, p, warnings, err := a.planFile("check", args)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(a.Stdout, "warning:", w)
	}
	steps := p.Schedule()
	fmt.Fprintf(a.Stdout, "Plan %s: %d servers, %d cells, %d rounds, %d runs, %s\n",
		p.Name, len(p.Variants()), len(p.Cells()), p.Rounds, len(steps), lab.EstimatePlan(p, a.Registry))
	if l := console.ShardsLine(p); l != "" {
		fmt.Fprintln(a.Stdout, l)
	}
	return nil
}

func (a *App) planCells(args []string) error {
	_, p, _, err := a.planFile("cells", args)
	if err != nil {
		return err
	}
	for i, s := range p.Schedule() {
		fmt.Fprintf(a.Stdout, "%4d round %d %s\n", i+1, s.Round, s.ID)
	}
	return nil
}

func (a *App) planRun(ctx context.Context, args []string) error {
	o, p, warnings, err := a.planFile("run", args)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(a.Stderr, "warning:", w)
	}
	unlock, err := a.lockPlan(p.Name, o.wait)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := a.openStore(ctx, o.results)
	if err != nil {
		return usagef("--results: %w", err)
	}
	defer st.Close()
	ctx, stop := a.Interrupts(ctx)
	defer stop()
	host := hostinfo.Collect()
	command := func(t target.Target) []string { return maskArgs(a.Args, t) }
	var judged []*summary.Run // steps that judged thresholds (gate_x.go)
	if err := o.metrics.start(a); err != nil {
		return err
	}
	defer o.metrics.l.End(ctx, a.Stderr)
	printer := console.NewPlanRun(console.PlanProgress{W: a.Stdout, Plan: p})
	observer := o.metrics.l.Plan(printer, p)
	observe := func(j lab.Job) (execute.Observer, func(*summary.Run)) {
		return o.metrics.l.Step(printer.StepObserver(), j.Step.ID)
	}
	l := &lab.Lab{
		Store:     st,
		Sandboxes: lab.Local{Manager: a.sandboxes(), Catalog: catalog.Open(a.home())},
		Pipeline: lab.Steps{Registry: a.Registry, Store: st, Home: a.home(), Host: host, Version: Version,
			Command: command, Observe: observe, IntervalLatency: o.metrics.on()},
		Observer: observer,
		Registry: a.Registry,
		Loader:   lab.DumpLoader{Store: st, Host: host, Version: Version, Command: command},
		Shards:   a.planShards(st, o.results),
		Judged:   func(run *summary.Run) { judged = append(judged, run) },
		Stamp: func(run *summary.Run, t target.Target) {
			run.Host, run.Dbarena = host, summary.Dbarena{Version: Version, Command: maskArgs(a.Args, t)}
		},
	}
	res, err := l.Run(ctx, p, lab.Options{Resume: o.resume, Keep: o.keep})
	if errors.Is(err, lab.ErrResumeScale) {
		return usagef("%w", err)
	}
	if err != nil {
		return failed(err)
	}
	if res.Interrupted {
		return failed(fmt.Errorf("interrupted: finish with `dbarena plan run %s --resume`", p.File))
	}
	fmt.Fprintf(a.Stdout, "\nPlan %s: %d runs done, %d skipped (already complete), %d failed\n\n", p.Name, res.Ran, res.Skipped, res.Failed)
	if err := a.printPlanStats(ctx, st, p.Name, res.Session, p.Baseline, p.NoisyCV, false, false); err != nil {
		return err
	}
	if res.Failed > 0 {
		return failed(fmt.Errorf("%d of %d runs failed (stored with their errors)", res.Failed, res.Ran))
	}
	return a.planGates(res, judged)
}
