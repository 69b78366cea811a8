package cli

import (
	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/measure/monitor"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// planWhy is one cell's "where the difference comes from" against its
// baseline cell, in plan show --json.
type planWhy struct {
	Cell     string              `json:"cell"`
	Baseline string              `json:"baseline"`
	Reading  string              `json:"reading"`
	Figures  []monitor.WhyFigure `json:"figures"`
}

// planWhys compares each cell of runs with its baseline cell (as
// --fail-on pairs them): cells without the monitor's figures are left out.
func planWhys(runs []*summary.Run, base []plan.Param) []planWhy {
	var out []planWhy
	for _, p := range plan.BaselinePairs(runs, base) {
		rows := monitor.Why(p.Base, p.Runs)
		if len(rows) == 0 {
			continue
		}
		w := planWhy{Cell: p.Cell, Baseline: p.Baseline, Reading: monitor.WhyReading(rows)}
		for _, r := range rows {
			w.Figures = append(w.Figures, r.Figure())
		}
		out = append(out, w)
	}
	return out
}
