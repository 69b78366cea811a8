package execute

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/secret"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// untilDone is the duration of a run that lasts until its workload is
// done: longer than any run.
const untilDone = time.Duration(1 << 62)

// Given says which run settings the user set; the workload's own choices
// (workload.Defaulter, workload.EventLimiter) fill in the others.
type Given struct {
	Threads, Time, Events, IgnoreErrors bool
	// TimeFixed: the run's duration holds even when not given (a plan's
	// default duration), so a workload that could run until it is done
	// (a replay) still stops at it.
	TimeFixed bool
}

// Configure applies w's capabilities to cfg, in the order every run takes
// them (dbarena run, run http, plan steps, shards): its event limit
// (mysqlslap's --number-of-queries, siege's --reps) as cfg.Events, the
// run settings it picks where the user set none (a replay's threads, a run
// until it is done, errors counted), then the thread count it is told
// (workload.ThreadSetter). It reports whether the workload picked the
// threads. The error (BadInput) is for two limits given at once.
func Configure(w workload.Workload, cfg *runner.Config, given Given) (threadsPicked bool, err error) {
	if el, ok := w.(workload.EventLimiter); ok && el.EventLimit() > 0 && given.Events {
		return false, wrap(BadInput, errors.New("--events and the workload's own limit (--number-of-queries, --reps) both limit the run: give one"))
	}
	cfg.LimitEvents(w, given.Time)
	if d, ok := w.(workload.Defaulter); ok {
		rd := d.RunDefaults()
		if rd.Threads > 0 && !given.Threads {
			cfg.Threads, threadsPicked = rd.Threads, true
		}
		if rd.UntilDone && !given.Time && !given.Events && !given.TimeFixed {
			cfg.Duration = untilDone
		}
		if rd.IgnoreErrors && !given.IgnoreErrors {
			cfg.IgnoreErrors = []string{"all"}
		}
	}
	return threadsPicked, nil
}

// SetThreads tells a workload.ThreadSetter the run's thread count.
func SetThreads(w workload.Workload, n int) {
	if ta, ok := w.(workload.ThreadSetter); ok {
		ta.SetThreads(n)
	}
}

// Conns is the pool size a run of w with threads needs: a connection a
// worker; a workload.Detached one (http) only monitors the server and
// reads its counters, as `dbarena run http --db-target` does, so 2.
func Conns(w workload.Workload, threads int) int {
	if _, ok := w.(workload.Detached); ok {
		return 2
	}
	return threads
}

// DetachedOpener opens the sessions of a workload.Detached run (run
// http): on db, the database behind the application, which the monitor
// samples and the run is stored against, with a pool of 2 (Conns); with
// no db, a Standalone session named after the workload (its Origin).
func DetachedOpener(w workload.Workload, db *target.Target) func(context.Context) (*Session, error) {
	if db == nil {
		addr := w.Name()
		if or, ok := w.(workload.Originer); ok {
			addr = or.Origin()
		}
		return func(context.Context) (*Session, error) { return Standalone(w.Name(), addr), nil }
	}
	t := *db
	return func(ctx context.Context) (*Session, error) {
		return Connect(ctx, t, dialect.OpenOptions{MaxConns: Conns(w, 0)})
	}
}

// RunOn runs spec as Run does, on a session of its own to t.
func RunOn(ctx context.Context, st Store, t target.Target, spec Spec, obs Observer) (*Outcome, error) {
	s, err := Connect(ctx, t, dialect.OpenOptions{MaxConns: Conns(spec.Workload, spec.Config.Threads)})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return Run(ctx, st, s, spec, obs)
}

// PrepareOn drops w's data on t and loads it anew (workload.Cleaner, then
// workload.Preparer) with loaders connections.
func PrepareOn(ctx context.Context, t target.Target, w workload.Workload, loaders int, progress workload.Progress) error {
	s, err := Connect(ctx, t, dialect.OpenOptions{MaxConns: loaders + 1})
	if err != nil {
		return err
	}
	defer s.Close()
	if cl, ok := w.(workload.Cleaner); ok {
		err = cl.Cleanup(ctx, s.Env())
	}
	if p, ok := w.(workload.Preparer); ok && err == nil {
		SetThreads(w, loaders)
		err = p.Prepare(ctx, s.Env(), loaders, progress)
	}
	if err != nil {
		return errors.New(t.Mask(err.Error()))
	}
	return nil
}

// Keep writes the run to jsonPath (--json) when given. When the store
// failed (StoreErr), the run is kept there or, without a path, in a file
// named after its start in the working directory, and the error says
// where (or that the run is lost).
func (o *Outcome) Keep(jsonPath string) error {
	run := o.Run
	if o.StoreErr != nil && jsonPath == "" {
		jsonPath = fmt.Sprintf("dbarena-run-%s.json", run.StartedAt.Format("20060102T150405Z"))
	}
	if jsonPath != "" {
		if err := summary.WriteFile(jsonPath, run); err != nil {
			if o.StoreErr != nil {
				return fmt.Errorf("%s; the run is lost: --json %s: %w", secret.Mask(o.StoreErr.Error()), jsonPath, err)
			}
			return fmt.Errorf("--json: %w", err)
		}
	}
	if o.StoreErr != nil {
		return fmt.Errorf("%s; the run summary is in %s", secret.Mask(o.StoreErr.Error()), jsonPath)
	}
	return nil
}
