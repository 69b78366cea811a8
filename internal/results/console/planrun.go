package console

import (
	"fmt"
	"sync"
	"time"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// planRunEvery is how often plan run prints a progress line while a
// run goes on (a two-hour warm-up is not silent).
const planRunEvery = time.Minute

// PlanRun prints plan run's progress: PlanProgress's header and line
// per run and, in the style of load's and prepare's progress lines (time
// since the plan began; done/total (percent); ETA), a line as each run
// starts (the run starting) and every planRunEvery while it goes on
// (its phase, time into it and throughput). The ETA is lab.ETA's: the
// plan's estimate corrected by what has run; while a run goes on, the ETA
// at its start less the time since.
type PlanRun struct {
	PlanProgress
	every time.Duration

	mu    sync.Mutex // Starting and Ran on the lab's goroutine, intervals on the runner's
	began time.Time
	done  int
	// The run going on.
	n                int
	cur              string
	curStart, last   time.Time
	curETA           time.Duration // at its start; negative: not known
	warmup, duration time.Duration
}

// NewPlanRun prints through pr, with a progress line every minute while a run goes on.
func NewPlanRun(pr PlanProgress) *PlanRun {
	return &PlanRun{PlanProgress: pr, every: planRunEvery, began: time.Now()}
}

func (pr *PlanRun) Began(session string, complete int) {
	pr.mu.Lock()
	pr.began, pr.done = time.Now(), complete
	pr.mu.Unlock()
	pr.PlanProgress.Began(session, complete)
}

// head is a progress line's start: "[   65s] runs: 3/12 (25%) done".
func (pr *PlanRun) head(n int) string {
	return fmt.Sprintf("[%5.0fs] runs: %d/%d (%.0f%%) done", time.Since(pr.began).Seconds(), pr.done, n,
		100*float64(pr.done)/float64(max(n, 1)))
}

func (pr *PlanRun) Starting(i, n int, step plan.Step, eta time.Duration) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.n, pr.cur, pr.curETA = n, fmt.Sprintf("%d/%d: round %d %s", i+1, n, step.Round, step.ID), eta
	pr.curStart = time.Now()
	pr.last = pr.curStart
	line := pr.head(n) + ", starting " + pr.cur
	if eta >= 0 {
		line += fmt.Sprintf(", ETA %s", eta)
	}
	fmt.Fprintln(pr.W, line)
}

func (pr *PlanRun) Ran(i, n int, step plan.Step, run *summary.Run, eta time.Duration) {
	pr.mu.Lock()
	pr.done++
	pr.cur = ""
	pr.mu.Unlock()
	pr.PlanProgress.Ran(i, n, step, run, eta)
}

// StepObserver is the observer of a step's run: its intervals make the
// lines printed while it goes on.
func (pr *PlanRun) StepObserver() execute.Observer { return planStepObserver{pr} }

type planStepObserver struct{ pr *PlanRun }

func (o planStepObserver) Begin(_ *execute.Session, spec *execute.Spec, _ []string) {
	o.pr.mu.Lock()
	defer o.pr.mu.Unlock()
	o.pr.warmup, o.pr.duration = spec.Config.Warmup, spec.Config.Duration
}

func (o planStepObserver) Interval(iv runner.Interval, _ map[string]float64) {
	pr := o.pr
	pr.mu.Lock()
	defer pr.mu.Unlock()
	now := time.Now()
	if pr.cur == "" || now.Sub(pr.last) < pr.every {
		return
	}
	pr.last = now
	phase, of := "measured", pr.duration
	if iv.Warmup {
		phase, of = "warm-up", pr.warmup
	}
	line := fmt.Sprintf("%s, running %s: %s %s", pr.head(pr.n), pr.cur, phase, iv.End.Round(time.Second))
	if of > 0 {
		line += fmt.Sprintf(" of %s", of)
	}
	if secs := (iv.End - iv.Start).Seconds(); secs > 0 {
		line += fmt.Sprintf(", tps %.2f", float64(iv.Events)/secs)
	}
	if pr.curETA >= 0 {
		line += fmt.Sprintf(", ETA %s", max(0, pr.curETA-now.Sub(pr.curStart)).Round(time.Second))
	}
	fmt.Fprintln(pr.W, line)
}
