package lab

import (
	"github.com/dbarena/dbarena/internal/plan"
	"github.com/dbarena/dbarena/internal/runner"
	"github.com/dbarena/dbarena/internal/workload"
)

// LimitEvents applies w's own event limit (workload.EventLimiter: http's
// --reps, script's --number-of-queries) to cfg as `dbarena run` does with
// --time: the run goes until the limit, and the plan's duration caps it
// only when the plan gives one (duration:), not by its default. Call it
// once w knows its threads.
func (j Job) LimitEvents(w workload.Workload, cfg *runner.Config) {
	el, ok := w.(workload.EventLimiter)
	if !ok || el.EventLimit() <= 0 {
		return
	}
	cfg.Events = el.EventLimit()
	if _, set := j.Plan.Lines["duration"]; !set {
		cfg.Duration = 0
	}
}

// checkDetached refuses a connect axis on a workload.Detached workload
// (http): its workers talk to the application, not the database, as
// `dbarena run http` refuses --connect.
func checkDetached(p *plan.Plan, wl plan.Workload, w workload.Workload) []error {
	if _, ok := w.(workload.Detached); !ok {
		return nil
	}
	for _, ax := range p.Axes {
		if ax.Name == plan.AxisConnect {
			return []error{p.Errorf(ax.Line, "axis connect: workload %s has no database connection (give it keep-alive: off for a connection per request)", wl.Name)}
		}
	}
	return nil
}
