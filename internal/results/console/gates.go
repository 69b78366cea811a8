package console

import (
	"fmt"
	"io"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/results/gate"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// CompareVerdicts prints the verdict of each --fail-on limit on B's rounds
// against A's and returns the outcome as a suite named after the two sides,
// with the number of limits exceeded.
func CompareVerdicts(w io.Writer, limits []gate.Limit, names [2]string, sides [2][]*summary.Run) (gate.Suite, int) {
	js, fails := gate.JudgeAll(limits, sides[0], sides[1])
	fmt.Fprintln(w)
	for _, j := range js {
		fmt.Fprintln(w, j.Line())
	}
	name := fmt.Sprintf("dbarena compare %s %s (B against baseline A)", names[0], names[1])
	return gate.CompareSuite(name, js), fails
}

// PlanThresholds prints how a plan run's judged steps fared: how many
// passed all their thresholds, then each failed threshold with its step.
func PlanThresholds(w io.Writer, judged, failed int, runs []*summary.Run) {
	fmt.Fprintf(w, "\nThresholds: %d of %d judged runs passed all\n", judged-failed, judged)
	for _, run := range runs {
		for _, r := range run.Thresholds {
			if !r.Pass {
				where := ""
				if run.Plan != nil {
					where = fmt.Sprintf("round %d %s", run.Plan.Round, run.Plan.Cell)
				}
				fmt.Fprintf(w, "%s [%s%s]\n", gate.Line(r), where, StepRunRef(run))
			}
		}
	}
}

// PlanVerdicts judges each cell's rounds against its baseline cell's, as
// compare judges B against A (plan show --fail-on), prints a line per
// limit and cell, and returns a suite per cell with the number of limits
// exceeded.
func PlanVerdicts(w io.Writer, name string, pairs []plan.BaselinePair, limits []gate.Limit) ([]gate.Suite, int) {
	fmt.Fprintln(w)
	if len(pairs) == 0 {
		fmt.Fprintln(w, "--fail-on: no cell has a baseline cell with complete rounds to be judged against")
		return nil, 0
	}
	var suites []gate.Suite
	fails := 0
	for _, p := range pairs {
		js, n := gate.JudgeAll(limits, p.Base, p.Runs)
		for _, j := range js {
			fmt.Fprintf(w, "%s [%s vs %s]\n", j.Line(), CellLabel(p.Cell), CellLabel(p.Baseline))
		}
		fails += n
		suites = append(suites, gate.CompareSuite(fmt.Sprintf("plan %s %s vs baseline %s", name, CellLabel(p.Cell), CellLabel(p.Baseline)), js))
	}
	return suites, fails
}
