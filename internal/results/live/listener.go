package live

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// Listener is a command's live figures (--metrics-listen): the exporter
// and its server. A nil Listener serves nothing and passes observers on.
type Listener struct {
	exp    *Exporter
	srv    *Server
	linger time.Duration
}

// Listen serves live figures at addr (loopback unless any) and says where
// on w; linger is how long End waits for a scrape of the final figures.
func Listen(w io.Writer, addr string, any bool, linger time.Duration) (*Listener, error) {
	exp := New()
	srv, err := Serve(exp, addr, any)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "Metrics: serving live figures at %s\n", srv.URL())
	return &Listener{exp: exp, srv: srv, linger: linger}, nil
}

// End waits (up to the linger, or until ctx ends: Ctrl-C) for a scrape
// of the final figures, says on stderr when none came, and stops serving.
func (l *Listener) End(ctx context.Context, stderr io.Writer) {
	if l == nil || l.srv == nil {
		return
	}
	if l.linger > 0 && !l.srv.Linger(ctx, l.linger) && ctx.Err() == nil {
		fmt.Fprintf(stderr, "Metrics: no scrape of %s read the final figures within --metrics-linger %s\n", l.srv.URL(), l.linger)
	}
	_ = l.srv.Close()
	l.srv = nil
}

// Rounds wraps a run's observer so that its rounds also feed the live
// figures, and makes cfg carry the intervals' histograms.
func (l *Listener) Rounds(next execute.RoundObserver, cfg *runner.Config) *Rounds {
	if l == nil {
		return (*Exporter)(nil).Rounds(next, "")
	}
	cfg.IntervalLatency = true
	return l.exp.Rounds(next, "")
}

// PlanPrinter is what prints a plan run's progress (lab.Observer and
// lab.Starter).
type PlanPrinter interface {
	Began(session string, complete int)
	Noted(msg string)
	Starting(i, n int, step plan.Step, eta time.Duration)
	Ran(i, n int, step plan.Step, run *summary.Run, eta time.Duration)
}

// Plan returns the observer of a plan run: printer's, feeding the live
// figures too.
func (l *Listener) Plan(printer PlanPrinter, p *plan.Plan) PlanPrinter {
	if l == nil {
		return printer
	}
	return planObserver{next: printer, exp: l.exp, p: p}
}

// Step returns the observer of a plan step's run in cell: next, feeding
// the live figures too, and the function to call with the run made.
func (l *Listener) Step(next execute.Observer, cell string) (execute.Observer, func(*summary.Run)) {
	if l == nil {
		return next, func(*summary.Run) {}
	}
	o := l.exp.Observe(next, cell)
	return o, o.Finish
}

// planObserver feeds a plan's progress to the live figures beside the
// printer's lines.
type planObserver struct {
	next PlanPrinter
	exp  *Exporter
	p    *plan.Plan
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
