package lab

import (
	"context"
	"errors"
	"fmt"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/dialect"
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

// Run implements Pipeline: it runs the step once and stores it, through
// the run service as `dbarena run` does (execute.Request). A run the store
// refused is kept in a file of the working directory, and the error says
// where.
func (st Steps) Run(ctx context.Context, j Job) (*summary.Run, error) {
	w, err := j.Workload(st.Registry)
	if err != nil {
		return nil, err
	}
	if _, ok := w.(workload.Runner); !ok {
		return nil, fmt.Errorf("workload %s has no run step", w.Name())
	}
	r := j.Request(w)
	r.Home, r.Host, r.Version, r.Command = st.Home, st.Host, st.Version, st.Command
	if err := configure(r); err != nil {
		return nil, err
	}
	r.Config.IntervalLatency = st.IntervalLatency
	q := st.observer(j)
	if err := execute.Rounds(ctx, st.Store, r, q); err != nil {
		q.done(nil)
		return nil, err
	}
	return q.run, nil
}

// Request is the job's run of w as a request to the run service: the
// plan's threads, duration (fixed when the plan gives one), warm-up and
// report interval, the step's tags, plan reference and thresholds, on a
// session of its own to the job's target each round.
func (j Job) Request(w workload.Workload) *execute.Request {
	_, durationSet := j.Plan.Lines["duration"]
	r := &execute.Request{Workload: w, Config: j.Config(), Tags: j.Tags(), Plan: j.Ref(), Rounds: 1, Judge: j.Judge(),
		Given: execute.Given{Threads: true, Time: durationSet, TimeFixed: true}}
	r.Open = func(ctx context.Context) (*execute.Session, error) {
		return execute.Connect(ctx, j.Target, dialect.OpenOptions{MaxConns: execute.Conns(w, r.Config.Threads)})
	}
	return r
}

// observer is the RoundObserver of j's run: it passes the run's beginning,
// intervals and storing to Observe's observer, when there is one, and keeps
// the run.
func (st Steps) observer(j Job) *stepObserver {
	q := &stepObserver{obs: nothing{}, done: func(*summary.Run) {}}
	if st.Observe != nil {
		q.obs, q.done = st.Observe(j)
	}
	return q
}

// RunConfig is the runner configuration of the job's run of w, with w's
// capabilities applied as for `dbarena run` (Request, Configure).
func (j Job) RunConfig(w workload.Workload) (runner.Config, error) {
	r := j.Request(w)
	err := configure(r)
	return r.Config, err
}

// configure applies the request's capabilities and validates its
// configuration.
func configure(r *execute.Request) error {
	if err := r.Configure(); err != nil {
		return err
	}
	if errs := r.Config.Validate(); len(errs) > 0 {
		return errors.Join(errs...)
	}
	return nil
}

// stepObserver is the RoundObserver of a plan step: plan run prints one
// line per cell (Observer.Ran); obs hears the run as it goes, done the run
// made. It keeps the run, or, when the store refused it, a file of it.
type stepObserver struct {
	obs  execute.Observer
	done func(*summary.Run)
	run  *summary.Run
}

func (q *stepObserver) Begin(s *execute.Session, spec *execute.Spec, notes []string) {
	q.obs.Begin(s, spec, notes)
}
func (q *stepObserver) Interval(iv runner.Interval, figures map[string]float64) {
	q.obs.Interval(iv, figures)
}
func (q *stepObserver) Round(int, int) {}

// Stored implements execute.StoredObserver.
func (q *stepObserver) Stored(id int64) {
	if so, ok := q.obs.(execute.StoredObserver); ok {
		so.Stored(id)
	}
}

func (q *stepObserver) Ran(out *execute.Outcome) error {
	q.run = out.Run
	q.done(out.Run)
	return out.Keep("")
}

// nothing is an Observer that hears nothing.
type nothing struct{}

func (nothing) Begin(*execute.Session, *execute.Spec, []string) {}
func (nothing) Interval(runner.Interval, map[string]float64)    {}

// discardProgress ignores load progress (plan run prints a line per cell).
type discardProgress struct{}

func (discardProgress) SetTotal(int64)   {}
func (discardProgress) Add(int64, int64) {}
