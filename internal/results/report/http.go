package report

import (
	"fmt"
	"math"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/workload/web"
)

// httpRow is SiegeTable's row of an `http` run, from siege's own figures
// (run.Figures, package web) rather than the runner's: RTime over every
// response (4xx and 5xx included, as siege), TRate of those responses,
// Conc as siege's total response time over elapsed, OK the responses
// below 400. ok is false for runs without them.
func httpRow(r *summary.Run) (row []Entry, ok bool) {
	f := r.Figures
	if _, ok := f[web.FigTransactions]; !ok {
		return nil, false
	}
	la, mem := math.NaN(), math.NaN()
	if r.Monitor != nil {
		if v, ok := r.Monitor.Max["host.load1"]; ok {
			la = v
		}
		if v, ok := r.Monitor.Max["host.mem.used_mb"]; ok {
			mem = v
		}
	}
	return []Entry{txt(fmt.Sprintf("%s %s %s", RunName(r), r.Target.Flavor, r.Target.Version)),
		num(f[web.FigElapsed], 2), num(f[web.FigResponseTime], 2), num(f[web.FigRate], 2),
		num(f[web.FigConcurrency], 2), integer(int64(f[web.FigSuccessful])), num(la, 2), num(mem, 0)}, true
}
