package live

import (
	"strconv"
	"time"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// RunObserver feeds the exporter with one run's figures and passes every
// call on to the observer it wraps (the progress printer). Give it to
// execute.Run; set the run's runner.Config.IntervalLatency so that its
// intervals carry the histogram the latency buckets are made from; call
// Finish with the run execute.Run returned.
type RunObserver struct {
	e    *Exporter
	next execute.Observer
	cell string
	st   *runState
}

var _ execute.StoredObserver = (*RunObserver)(nil)

// Observe returns the observer of a run in plan cell cell ("" outside a
// plan) that passes everything on to next (nil: nothing).
func (e *Exporter) Observe(next execute.Observer, cell string) *RunObserver {
	return &RunObserver{e: e, next: next, cell: cell}
}

// Begin implements execute.Observer.
func (o *RunObserver) Begin(s *execute.Session, spec *execute.Spec, notes []string) {
	st := &runState{status: summary.StatusRunning, running: true, types: map[string]bool{},
		typeP95: map[string]time.Duration{}, phases: [2]*phaseCounts{newPhase(), newPhase()}}
	st.flavor, st.version = string(s.Target.Flavor), s.Target.Version
	st.lv = []string{"", spec.Workload.Name(), serverName(s, spec), o.cell}
	o.st = st
	if o.next != nil {
		o.next.Begin(s, spec, notes)
	}
}

// serverName is the server label: the plan's server coordinate, else the
// sandbox's name, else the target's host:port (never its DSN: no user).
func serverName(s *execute.Session, spec *execute.Spec) string {
	if spec.Plan != nil && spec.Plan.Coords["server"] != "" {
		return spec.Plan.Coords["server"]
	}
	t := s.Target
	switch {
	case t.Sandbox != "":
		return t.Sandbox
	case t.Socket != "":
		return t.Socket
	case t.Port > 0:
		return t.Host + ":" + strconv.Itoa(t.Port)
	}
	return t.Host
}

// Stored implements execute.StoredObserver: the run is served from here
// on, labelled with its ID.
func (o *RunObserver) Stored(id int64) {
	e := o.e
	e.mu.Lock()
	if o.st != nil {
		o.st.lv[0] = e.runName(id)
		e.runs = append(e.runs, o.st)
		e.touch()
	}
	e.mu.Unlock()
	if so, ok := o.next.(execute.StoredObserver); ok {
		so.Stored(id)
	}
}

// Interval implements execute.Observer.
func (o *RunObserver) Interval(iv runner.Interval, figures map[string]float64) {
	if o.st != nil {
		o.e.mu.Lock()
		o.st.interval(iv, figures)
		o.e.touch()
		o.e.mu.Unlock()
	}
	if o.next != nil {
		o.next.Interval(iv, figures)
	}
}

// Finish ends the run's series with the totals of run, as stored; a nil
// run (it could not start) only ends them.
func (o *RunObserver) Finish(run *summary.Run) {
	if o.st == nil {
		return
	}
	o.e.mu.Lock()
	defer o.e.mu.Unlock()
	if run != nil {
		o.st.finish(run)
	} else {
		o.st.running, o.st.status = false, summary.StatusFailed
	}
	o.e.touch()
}

// Rounds is the RoundObserver of a run of rounds (execute.Rounds) that
// also feeds each round to the live figures, as Observe does for one run.
type Rounds struct {
	execute.RoundObserver
	e    *Exporter
	cell string
	cur  *RunObserver // the round going on
}

// Rounds wraps next; with a nil Exporter it only passes everything on.
func (e *Exporter) Rounds(next execute.RoundObserver, cell string) *Rounds {
	return &Rounds{RoundObserver: next, e: e, cell: cell}
}

// Begin implements execute.Observer.
func (r *Rounds) Begin(s *execute.Session, spec *execute.Spec, notes []string) {
	if r.e == nil {
		r.RoundObserver.Begin(s, spec, notes)
		return
	}
	r.cur = r.e.Observe(r.RoundObserver, r.cell)
	r.cur.Begin(s, spec, notes)
}

// Interval implements execute.Observer.
func (r *Rounds) Interval(iv runner.Interval, figures map[string]float64) {
	if r.cur != nil {
		r.cur.Interval(iv, figures)
		return
	}
	r.RoundObserver.Interval(iv, figures)
}

// Stored implements execute.StoredObserver.
func (r *Rounds) Stored(id int64) {
	if r.cur != nil {
		r.cur.Stored(id)
		return
	}
	if so, ok := r.RoundObserver.(execute.StoredObserver); ok {
		so.Stored(id)
	}
}

// Ran implements execute.RoundObserver: the round's series end with its
// stored totals.
func (r *Rounds) Ran(out *execute.Outcome) error {
	if r.cur != nil {
		r.cur.Finish(out.Run)
		r.cur = nil
	}
	return r.RoundObserver.Ran(out)
}

// End ends the series of a round that stopped without an outcome.
func (r *Rounds) End() {
	if r.cur != nil {
		r.cur.Finish(nil)
		r.cur = nil
	}
}
