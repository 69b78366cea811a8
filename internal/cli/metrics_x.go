package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/lab"
	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/console"
	"github.com/dbarena/dbarena/internal/results/live"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// defaultMetricsLinger is --metrics-linger's default: long enough for a
// scrape at Prometheus's usual 15s interval, and one retry.
const defaultMetricsLinger = 30 * time.Second

// metricsOptions are --metrics-listen and its companions (docs/metrics.md)
// of `run` and `plan run`: live figures for Prometheus.
type metricsOptions struct {
	listen string
	any    bool
	linger time.Duration
	exp    *live.Exporter
	srv    *live.Server
}

func (m *metricsOptions) flags(fs *pflag.FlagSet) {
	fs.StringVar(&m.listen, "metrics-listen", "", "serve the live figures for Prometheus at http://HOST:PORT/metrics (e.g. 127.0.0.1:9464; port 0 picks one); loopback only unless --metrics-listen-any")
	fs.BoolVar(&m.any, "metrics-listen-any", false, "let --metrics-listen use an address that is not loopback (the figures name workloads, servers and plan cells)")
	durationFlag(fs, &m.linger, "metrics-linger", defaultMetricsLinger, "with --metrics-listen: after the work, keep serving until a scrape has read the final figures, at most this long (0: stop at once)")
}

func (m *metricsOptions) validate(fs *pflag.FlagSet) []error {
	if m.listen == "" {
		var errs []error
		for _, f := range []string{"metrics-listen-any", "metrics-linger"} {
			if fs.Changed(f) {
				errs = append(errs, fmt.Errorf("--%s: only with --metrics-listen", f))
			}
		}
		return errs
	}
	if m.linger < 0 {
		return []error{errors.New("--metrics-linger must not be negative")}
	}
	if err := live.CheckAddr(m.listen, m.any); err != nil {
		return []error{fmt.Errorf("--metrics-listen: %w", err)}
	}
	return nil
}

// on reports whether live figures are served.
func (m *metricsOptions) on() bool { return m.listen != "" }

// start starts serving and says where.
func (m *metricsOptions) start(a *App) error {
	if !m.on() {
		return nil
	}
	m.exp = live.New()
	srv, err := live.Serve(m.exp, m.listen, m.any)
	if err != nil {
		return usagef("--metrics-listen: %w", err)
	}
	m.srv = srv
	fmt.Fprintf(a.Stdout, "Metrics: serving live figures at %s\n", srv.URL())
	return nil
}

// end waits (up to --metrics-linger, or until ctx ends: Ctrl-C) for a
// scrape of the final figures, says when none came, and stops serving.
func (m *metricsOptions) end(ctx context.Context, a *App) {
	if m.srv == nil {
		return
	}
	if m.linger > 0 && !m.srv.Linger(ctx, m.linger) && ctx.Err() == nil {
		fmt.Fprintf(a.Stderr, "Metrics: no scrape of %s read the final figures within --metrics-linger %s\n", m.srv.URL(), m.linger)
	}
	_ = m.srv.Close()
	m.srv = nil
}

// rounds wraps a run's observer: with live figures on, one that also
// feeds them, and cfg is made to carry the intervals' histograms.
func (m *metricsOptions) rounds(next execute.RoundObserver, cfg *runner.Config) *live.Rounds {
	if m.exp != nil {
		cfg.IntervalLatency = true
	}
	return m.exp.Rounds(next, "")
}

// planObserver feeds a plan's progress to the live figures beside the
// printer's lines.
type planObserver struct {
	next interface {
		lab.Observer
		lab.Starter
	}
	exp *live.Exporter
	p   *plan.Plan
}

func (o planObserver) Began(session string, complete int) {
	o.exp.PlanBegan(o.p.Name, session, len(o.p.Schedule()), complete)
	o.next.Began(session, complete)
}

func (o planObserver) Noted(msg string) { o.next.Noted(msg) }

func (o planObserver) Starting(i, n int, step plan.Step, eta time.Duration) {
	o.exp.PlanStarting(i, step.ID, step.Round, eta)
	o.next.Starting(i, n, step, eta)
}

func (o planObserver) Ran(i, n int, step plan.Step, run *summary.Run, eta time.Duration) {
	o.exp.PlanRan(run.Status == summary.StatusComplete, eta)
	o.next.Ran(i, n, step, run, eta)
}

// planObservers are the lab's observer of a plan run and the observer
// of each of its steps' runs: the printer's, feeding the live figures too
// when they are on.
func (m *metricsOptions) planObservers(printer *console.PlanRun, p *plan.Plan) (lab.Observer, func(j lab.Job) (execute.Observer, func(*summary.Run))) {
	if m.exp == nil {
		return printer, func(lab.Job) (execute.Observer, func(*summary.Run)) {
			return printer.StepObserver(), func(*summary.Run) {}
		}
	}
	return planObserver{next: printer, exp: m.exp, p: p}, func(j lab.Job) (execute.Observer, func(*summary.Run)) {
		o := m.exp.Observe(printer.StepObserver(), j.Step.ID)
		return o, o.Finish
	}
}
