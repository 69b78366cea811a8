package cli

import (
	"fmt"
	"time"

	"github.com/dbarena/dbarena/internal/lab"
	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// planProgress prints plan run's progress: planPrinter's header and line
// per run, and, as each run starts, a line in the style of load's and
// prepare's progress: time since the plan began, runs done of the
// schedule's (and the percentage), the run starting, and the ETA
// (lab.ETA: the plan's estimate corrected by what has run).
type planProgress struct {
	planPrinter
	began time.Time
	done  int
}

var _ lab.Starter = (*planProgress)(nil)

func newPlanProgress(pr planPrinter) *planProgress {
	return &planProgress{planPrinter: pr, began: time.Now()}
}

func (pr *planProgress) Began(session string, complete int) {
	pr.began, pr.done = time.Now(), complete
	pr.planPrinter.Began(session, complete)
}

func (pr *planProgress) Starting(i, n int, step plan.Step, eta time.Duration) {
	line := fmt.Sprintf("[%5.0fs] runs: %d/%d (%.0f%%) done, starting %d/%d: round %d %s",
		time.Since(pr.began).Seconds(), pr.done, n, 100*float64(pr.done)/float64(max(n, 1)), i+1, n, step.Round, step.ID)
	if eta >= 0 {
		line += fmt.Sprintf(", ETA %s", eta)
	}
	fmt.Fprintln(pr.w, line)
}

func (pr *planProgress) Ran(i, n int, step plan.Step, run *summary.Run, eta time.Duration) {
	pr.done++
	pr.planPrinter.Ran(i, n, step, run, eta)
}
