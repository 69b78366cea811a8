package lab

import (
	"context"
	"errors"
	"fmt"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// Steps is the Pipeline of real runs: each step through the run service
// (package execute), as `dbarena run` runs, stored in Store.
type Steps struct {
	Registry *workload.Registry
	Store    execute.Store
	// Home is DBARENA_HOME (sandboxes' records, for the monitor).
	Home string
	// Host and Dbarena are stored with each run; Dbarena's Command is
	// made for the step's target (its password masked) by Command.
	Host    summary.Host
	Version string
	Command func(t target.Target) []string
	// Observe, if set, gives the observer of each step's run (progress
	// lines, live metrics) and done, which hears the run it made (nil
	// when it could not run).
	Observe func(j Job) (obs execute.Observer, done func(*summary.Run))
	// IntervalLatency makes the runs' intervals carry their latency
	// histograms (runner.Config.IntervalLatency), for live metrics.
	IntervalLatency bool
}

var _ Pipeline = Steps{}

// loaders is a plan's preparing parallelism.
const loaders = 2

// Prepare implements Pipeline: it drops and loads the step's data.
func (st Steps) Prepare(ctx context.Context, j Job) error {
	w, err := j.Workload(st.Registry)
	if err != nil {
		return err
	}
	return execute.PrepareOn(ctx, j.Target, w, loaders, discardProgress{})
}

// Run implements Pipeline: it runs the step once and stores it. A run the
// store refused is kept in a file of the working directory, and the error
// says where.
func (st Steps) Run(ctx context.Context, j Job) (*summary.Run, error) {
	w, err := j.Workload(st.Registry)
	if err != nil {
		return nil, err
	}
	if _, ok := w.(workload.Runner); !ok {
		return nil, fmt.Errorf("workload %s has no run step", w.Name())
	}
	cfg, err := j.RunConfig(w)
	if err != nil {
		return nil, err
	}
	tags := map[string]string{}
	for _, kv := range j.Tags() {
		tags[kv[0]] = kv[1]
	}
	spec := execute.Spec{Workload: w, Config: cfg, Home: st.Home, Tags: tags, Plan: j.Ref(), Host: st.Host,
		Dbarena: summary.Dbarena{Version: st.Version}}
	if st.Command != nil {
		spec.Dbarena.Command = st.Command(j.Target)
	}
	spec.Judge = j.Judge()
	obs, done := st.observer(j, &spec)
	out, err := execute.RunOn(ctx, st.Store, j.Target, spec, obs)
	if err != nil {
		done(nil)
		return nil, err
	}
	done(out.Run)
	if err := out.Keep(""); err != nil {
		return nil, err
	}
	return out.Run, nil
}

// observer is the observer of j's run (Observe's, or one that hears
// nothing) and the function that hears the run made.
func (st Steps) observer(j Job, spec *execute.Spec) (execute.Observer, func(*summary.Run)) {
	spec.Config.IntervalLatency = st.IntervalLatency
	if st.Observe == nil {
		return quiet{}, func(*summary.Run) {}
	}
	return st.Observe(j)
}

// RunConfig is the runner configuration of the job's run of w, with w's
// capabilities applied as for `dbarena run` (execute.Configure): the
// plan's threads, its duration when it gives one.
func (j Job) RunConfig(w workload.Workload) (runner.Config, error) {
	cfg := j.Config()
	execute.SetThreads(w, j.Threads())
	_, durationSet := j.Plan.Lines["duration"]
	if _, err := execute.Configure(w, &cfg, execute.Given{Threads: true, Time: durationSet, TimeFixed: true}); err != nil {
		return cfg, err
	}
	if errs := cfg.Validate(); len(errs) > 0 {
		return cfg, errors.Join(errs...)
	}
	return cfg, nil
}

// quiet is the Observer of a plan step: plan run prints one line per cell
// (Observer.Ran) instead.
type quiet struct{}

func (quiet) Begin(*execute.Session, *execute.Spec, []string) {}
func (quiet) Interval(runner.Interval, map[string]float64)    {}

// discardProgress ignores load progress (plan run prints a line per cell).
type discardProgress struct{}

func (discardProgress) SetTotal(int64)   {}
func (discardProgress) Add(int64, int64) {}
