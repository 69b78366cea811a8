package lab

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/measure/steady"
	"github.com/dbarena/dbarena/internal/results/gate"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// Job is one step for the pipeline: a cell in a round, on its target.
type Job struct {
	Plan    *plan.Plan
	Step    plan.Step
	Session string
	Target  target.Target
}

// Threads is the step's thread count (1 without a threads axis).
func (j Job) Threads() int { return max(j.Step.Threads, 1) }

// Ref places the run in its plan.
func (j Job) Ref() *summary.PlanRef {
	return &summary.PlanRef{Name: j.Plan.Name, Cell: j.Step.ID, Coords: j.Step.CoordMap(), Round: j.Step.Round}
}

// Tags are the run's tags, in order; TagScale is the plan's --scale ("1"
// at full size).
func (j Job) Tags() [][2]string {
	r := strconv.Itoa(j.Step.Round)
	return [][2]string{{TagPlan, j.Plan.Name}, {TagCell, j.Step.ID}, {TagRound, r}, {TagSession, j.Session},
		{TagScale, ScaleTag(j.Plan.ScaleFactor)}, {"round", r}}
}

// ScaleTag is TagScale's value for a plan scaled by f (plan.Plan.ScaleFactor;
// 0 or 1: full size, "1").
func ScaleTag(f float64) string {
	if f <= 0 || f >= 1 {
		return "1"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Judge is the execute.Spec.Judge of the job's run: it judges the
// workload's thresholds (plan thresholds:) on the finished run; nil when
// it has none.
func (j Job) Judge() func(*summary.Run) {
	if len(j.Step.Thresholds) == 0 {
		return nil
	}
	var ts []gate.Threshold
	for _, p := range j.Step.Thresholds {
		if t, err := gate.Parse(p.Value); err == nil { // checked by plan.Parse
			ts = append(ts, t)
		}
	}
	return func(run *summary.Run) { run.Thresholds = gate.EvalAll(ts, run) }
}

// Workload is the job's workload from reg with the step's parameters set
// and validated (a MySQL storage engine is left out on other families).
func (j Job) Workload(reg *workload.Registry) (workload.Workload, error) {
	w, err := reg.New(j.Step.Workload)
	if err != nil {
		return nil, err
	}
	fs := flagSet(j.Step.Workload)
	w.Flags(fs)
	for _, kv := range j.Step.Params {
		if kv.Key == "mysql-storage-engine" && !dialect.MustFor(j.Target.Flavor).StorageEngines() {
			continue
		}
		if err := fs.Set(kv.Key, kv.Value); err != nil {
			return nil, fmt.Errorf("%s=%s: %w", kv.Key, kv.Value, err)
		}
	}
	if errs := w.Validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return w, nil
}

// Config is the runner configuration of the job: its threads, its connect
// axis value and the plan's duration, warm-up (ended at steady state for
// warmup: auto) and report interval. It is not validated.
func (j Job) Config() runner.Config {
	p := j.Plan
	cfg := runner.DefaultConfig()
	cfg.Threads = j.Threads()
	cfg.Duration = p.Duration
	cfg.Warmup = p.Warmup
	cfg.ReportInterval = p.ReportInterval
	if j.Step.Connect != "" { // checked by plan.Parse
		cfg.Connect, _ = runner.ParseConnect(j.Step.Connect)
	}
	cfg.Jobs = j.Step.Jobs
	cfg.Sched = j.Step.Sched
	cfg.Placement = j.Step.Placement
	if p.AutoWarmup {
		det := steady.Detector{}
		cfg.WarmupUntil = func(ivs []runner.Interval) bool {
			xs := make([]float64, len(ivs))
			for i, iv := range ivs {
				if secs := (iv.End - iv.Start).Seconds(); secs > 0 {
					xs[i] = float64(iv.Events) / secs
				}
			}
			return det.Steady(xs)
		}
	}
	return cfg
}
