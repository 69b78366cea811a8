package lab

import (
	"time"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/workload"
)

// Starter is an Observer that also hears each step as it begins: step i
// (0-based) of n and the estimated time left of the plan, this step
// included (negative when nothing is known yet to estimate it).
type Starter interface {
	Starting(i, n int, step plan.Step, eta time.Duration)
}

// StepEstimates is the time each step of p's schedule measures and warms
// up (its plan's duration and warm-up, as EstimatePlan counts them), 0 for
// a step that ends at its event limit alone (its time is not known). reg
// may be nil: event limits of the workloads are then not seen.
func StepEstimates(p *plan.Plan, reg *workload.Registry) []time.Duration {
	steps := p.Schedule()
	est := make([]time.Duration, len(steps))
	for i, step := range steps {
		j := Job{Plan: p, Step: step}
		cfg := j.Config()
		if reg != nil {
			if w, err := j.Workload(reg); err == nil {
				j.LimitEvents(w, &cfg)
			}
		}
		if cfg.Duration > 0 {
			est[i] = cfg.Duration + cfg.Warmup
		}
	}
	return est
}

// ETA estimates the time left of a plan run from its steps' estimates
// (StepEstimates), corrected by what has run: the estimates of the steps
// left are scaled by how long the steps run so far took against their
// own estimates (servers started, data loaded, the stop: what no estimate
// holds), and a step with no estimate counts as the mean of those run
// without one (or of all steps run).
type ETA struct {
	est []time.Duration
	// Of the steps run: with an estimate, their time and estimate; without
	// one, their time and number; all steps.
	spent, estimated time.Duration
	spentBare        time.Duration
	bare             int
	spentAll         time.Duration
	ran              int
}

// NewETA returns the ETA of a schedule with step estimates est.
func NewETA(est []time.Duration) *ETA { return &ETA{est: est} }

// Ran records that step i took took.
func (e *ETA) Ran(i int, took time.Duration) {
	e.ran++
	e.spentAll += took
	if i < len(e.est) && e.est[i] > 0 {
		e.spent += took
		e.estimated += e.est[i]
		return
	}
	e.spentBare += took
	e.bare++
}

// Left is the estimated time of the steps left, whose indices are left;
// negative when one of them cannot be estimated yet (no estimate and no
// step run).
func (e *ETA) Left(left []int) time.Duration {
	factor := 1.0
	if e.estimated > 0 {
		factor = float64(e.spent) / float64(e.estimated)
	}
	var total time.Duration
	for _, i := range left {
		switch {
		case i < len(e.est) && e.est[i] > 0:
			total += time.Duration(float64(e.est[i]) * factor)
		case e.bare > 0:
			total += e.spentBare / time.Duration(e.bare)
		case e.ran > 0:
			total += e.spentAll / time.Duration(e.ran)
		default:
			return -1
		}
	}
	return total.Round(time.Second)
}
