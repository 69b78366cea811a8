package console

import (
	"fmt"
	"io"
	"strings"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/workload"
)

// RunProgress prints a run as it goes (an execute.Observer): the opening
// line, notes and the interval lines (sysbench's, or the workload's own:
// workload.Reporter), each with the host figure; then, Ended, the run's
// summary.
type RunProgress struct {
	W io.Writer
	// Quiet prints nothing (plan run prints a line per cell instead).
	Quiet bool
	// Workload is the run's workload.
	Workload workload.Workload
	spec     *execute.Spec
}

// intervalEnder is a workload.Reporter whose interval lines end with a
// line of their own before the run's summary (TPC-C's tpcc-mysql shape:
// "STOPPING THREADS", where tpcc-mysql's analyze.sh stops reading).
type intervalEnder interface {
	EndIntervals() string
}

// Begin implements execute.Observer.
func (p *RunProgress) Begin(s *execute.Session, spec *execute.Spec, notes []string) {
	p.spec = spec
	if p.Quiet {
		return
	}
	w := p.W
	fmt.Fprintf(w, "Running %s on %s %s (%s): %d threads", spec.Workload.Name(), s.Target.Flavor, s.Target.Version,
		targetLabel(s), spec.Config.Threads)
	if spec.Config.Rate > 0 {
		fmt.Fprintf(w, ", fixed rate %g events/s", spec.Config.Rate)
	}
	fmt.Fprintln(w)
	for _, l := range notes {
		fmt.Fprintln(w, l)
	}
	if rep, ok := p.Workload.(workload.Reporter); ok && spec.Config.ReportInterval > 0 {
		fmt.Fprintln(w, rep.IntervalHeader())
	}
}

// Interval implements execute.Observer.
func (p *RunProgress) Interval(iv runner.Interval, figures map[string]float64) {
	if p.Quiet {
		return
	}
	figure := HostFigure(figures)
	if rep, ok := p.Workload.(workload.Reporter); ok {
		fmt.Fprintln(p.W, rep.FormatInterval(workload.IntervalReport{Start: iv.Start, End: iv.End,
			Warmup: iv.Warmup, Threads: iv.Threads, PerType: iv.PerType, Queries: iv.Queries,
			Events: iv.Events, Errors: iv.Errors, Late: iv.Late, P95: iv.P95})+figure)
		return
	}
	fmt.Fprintln(p.W, Interval(iv, p.spec.Config.Warmup)+figure)
}

// Ended prints the end of the workload's interval lines, when it has one
// and interval lines were printed, then the run's summary and the
// workload's own.
func (p *RunProgress) Ended(run *summary.Run) {
	if p.Quiet {
		return
	}
	if e, ok := p.Workload.(intervalEnder); ok && p.spec != nil && p.spec.Config.ReportInterval > 0 {
		fmt.Fprint(p.W, e.EndIntervals())
	}
	Summary(p.W, run)
	if rep, ok := p.Workload.(workload.Reporter); ok {
		fmt.Fprint(p.W, rep.FormatSummary(run))
	}
}

// targetLabel is how the run's opening line names s: the masked DSN, or
// the address of a Standalone session.
func targetLabel(s *execute.Session) string {
	if s.NoDatabase {
		return strings.TrimSpace(s.Target.Host)
	}
	return s.Target.MaskedDSN()
}
