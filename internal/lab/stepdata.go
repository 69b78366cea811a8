package lab

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/server/target"
)

// StepEnv is the environment variable that hands a shard process its step
// (StepData as JSON): `dbarena plan step --shard I/N --run-id KEY` runs
// shard I of it. A sharded step so reaches its shards as data, never as a
// command line to parse again.
const StepEnv = "DBARENA_PLAN_STEP"

// StepData is a plan step as a shard process needs it: the plan's run
// settings, the step (its cell and round), the session, where to run
// (Job.TargetArg: sandbox:NAME, or a DSN whose password comes from the
// environment) and the results store.
type StepData struct {
	Plan    StepPlan  `json:"plan"`
	Step    plan.Step `json:"step"`
	Session string    `json:"session"`
	Target  string    `json:"target"`
	Results string    `json:"results,omitempty"`
}

// StepPlan is what a step takes from its plan (Job.Config, Job.Ref).
type StepPlan struct {
	Name           string        `json:"name"`
	Duration       time.Duration `json:"duration"`
	DurationSet    bool          `json:"duration_set"` // the plan gives duration:
	Warmup         time.Duration `json:"warmup"`
	AutoWarmup     bool          `json:"auto_warmup"`
	ReportInterval time.Duration `json:"report_interval"`
	// Scale is the plan's ScaleFactor (0: full size), for the runs' tag.
	Scale float64 `json:"scale,omitempty"`
}

// Data describes j for a shard process, with the results store to write
// to; the password of a DSN target is returned apart, for the environment.
func (j Job) Data(results string) (d StepData, password string) {
	p := j.Plan
	_, set := p.Lines["duration"]
	d = StepData{Plan: StepPlan{Name: p.Name, Duration: p.Duration, DurationSet: set, Warmup: p.Warmup,
		AutoWarmup: p.AutoWarmup, ReportInterval: p.ReportInterval, Scale: p.ScaleFactor},
		Step: j.Step, Session: j.Session, Results: results}
	d.Target, password = j.TargetArg()
	return d, password
}

// ParseStepData reads StepEnv's value.
func ParseStepData(s string) (StepData, error) {
	var d StepData
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		return d, fmt.Errorf("$%s: %w", StepEnv, err)
	}
	if d.Plan.Name == "" || d.Step.Workload == "" || d.Target == "" {
		return d, fmt.Errorf("$%s: want a plan step (plan name, workload and target)", StepEnv)
	}
	return d, nil
}

// Job is the step's Job on t (its target resolved).
func (d StepData) Job(t target.Target) Job {
	p := &plan.Plan{Name: d.Plan.Name, Duration: d.Plan.Duration, Warmup: d.Plan.Warmup,
		AutoWarmup: d.Plan.AutoWarmup, ReportInterval: d.Plan.ReportInterval, ScaleFactor: d.Plan.Scale, Lines: map[string]int{}}
	if d.Plan.DurationSet {
		p.Lines["duration"] = 1
	}
	return Job{Plan: p, Step: d.Step, Session: d.Session, Target: t}
}
