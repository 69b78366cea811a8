package lab

import (
	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/workload"
)

// LimitEvents applies w's own event limit to cfg as `dbarena run` does
// (runner.Config.LimitEvents): the plan's duration caps it only when the
// plan gives one (duration:), not by its default. Call it once w knows its
// threads.
func (j Job) LimitEvents(w workload.Workload, cfg *runner.Config) {
	_, set := j.Plan.Lines["duration"]
	cfg.LimitEvents(w, set)
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
