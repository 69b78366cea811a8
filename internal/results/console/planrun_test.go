package console

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// TestPlanProgressLines: plan run says, in load's and prepare's style,
// which run starts with the runs done and the ETA, and while a run goes
// on, its phase, time into it, throughput and the ETA counting down.
func TestPlanProgressLines(t *testing.T) {
	p, errs := plan.Parse("p.yaml", []byte("name: lines\nservers: [{name: a, flavor: mariadb}]\nworkloads: [oltp_point_select]\naxes:\n  threads: [1, 2]\nrounds: 1\nwarmup: 10s\nduration: 20s\n"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var out bytes.Buffer
	pr := NewPlanRun(PlanProgress{W: &out, Plan: p})
	pr.every = 0 // a line per interval
	steps := p.Schedule()
	pr.Began("s1", 0)
	pr.Starting(0, 2, steps[0], 60*time.Second)
	obs := pr.StepObserver()
	obs.Begin(nil, &execute.Spec{Config: runner.Config{Warmup: 10 * time.Second, Duration: 20 * time.Second}}, nil)
	obs.Interval(runner.Interval{Start: 4 * time.Second, End: 5 * time.Second, Warmup: true, Events: 100}, nil)
	obs.Interval(runner.Interval{Start: 11 * time.Second, End: 12 * time.Second, Events: 250}, nil)
	pr.Ran(0, 2, steps[0], &summary.Run{Status: summary.StatusComplete, ID: 1}, 30*time.Second)
	obs.Interval(runner.Interval{Start: 12 * time.Second, End: 13 * time.Second, Events: 1}, nil) // between runs: no line
	pr.Starting(1, 2, steps[1], -1)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		"Plan lines (session s1): 1 servers, 2 cells x 1 rounds = 2 runs",
		"] runs: 0/2 (0%) done, starting 1/2: round 1 workload=oltp_point_select,server=a,threads=1, ETA 1m0s",
		"] runs: 0/2 (0%) done, running 1/2: round 1 workload=oltp_point_select,server=a,threads=1: warm-up 5s of 10s, tps 100.00, ETA ",
		"] runs: 0/2 (0%) done, running 1/2: round 1 workload=oltp_point_select,server=a,threads=1: measured 12s of 20s, tps 250.00, ETA ",
		"[1/2] round 1 workload=oltp_point_select,server=a,threads=1: tps 0.00",
		"] runs: 1/2 (50%) done, starting 2/2: round 1 workload=oltp_point_select,server=a,threads=2",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d %q lacks %q", i, lines[i], w)
		}
	}
	if strings.Contains(lines[5], "ETA") {
		t.Errorf("an ETA when none is known: %q", lines[5])
	}
	if !strings.HasPrefix(lines[1], "[    0s]") {
		t.Errorf("line %q: want the time since the plan began first", lines[1])
	}
}
