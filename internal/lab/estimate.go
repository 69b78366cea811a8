package lab

import (
	"fmt"
	"time"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/workload"
)

// Estimate is how long a plan's runs measure and warm up, for plan check.
type Estimate struct {
	// Max bounds the measurement and warm-up of the runs a time limit
	// ends (the plan's duration): Timed runs.
	Max   time.Duration
	Timed int
	// Sooner of the Timed runs may end before their time: an event limit
	// too, or a workload that ends on its own (a replay's file).
	Sooner int
	// EventsOnly runs end at their event limit alone (number-of-queries,
	// requests without the plan's duration): their time is not known and
	// not in Max (their warm-up is).
	EventsOnly int
}

// EstimatePlan estimates the time of the plan's runs (Schedule) as they would
// run (Job.Config, Job.LimitEvents); a step whose workload cannot be made
// counts as bounded by the plan's duration.
func EstimatePlan(p *plan.Plan, reg *workload.Registry) Estimate {
	var e Estimate
	for _, step := range p.Schedule() {
		j := Job{Plan: p, Step: step}
		cfg := j.Config()
		w, err := j.Workload(reg)
		if err == nil {
			j.LimitEvents(w, &cfg)
		}
		if cfg.Duration <= 0 {
			e.EventsOnly++
			e.Max += cfg.Warmup
			continue
		}
		e.Timed++
		e.Max += cfg.Duration + cfg.Warmup
		if err != nil {
			continue
		}
		d, _ := w.(workload.Defaulter)
		if cfg.Events > 0 || d != nil && d.RunDefaults().UntilDone {
			e.Sooner++
		}
	}
	return e
}

// String says the estimate for plan check's summary line: "at most 10m0s
// of measurement and warm-up", then the runs it cannot bound.
func (e Estimate) String() string {
	s := fmt.Sprintf("at most %s of measurement and warm-up", e.Max)
	if e.Sooner > 0 {
		s += fmt.Sprintf("; %d of the %d timed runs may end sooner (an event limit or a replay's end)", e.Sooner, e.Timed)
	}
	if e.EventsOnly > 0 {
		s += fmt.Sprintf("; %d runs end at their event limit, in a time not known (only their warm-up is counted)", e.EventsOnly)
	}
	return s
}
