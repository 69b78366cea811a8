package cli

import (
	"fmt"

	"github.com/dbarena/dbarena/internal/workload"
)

// intervalEnder is a workload.Reporter whose interval lines end with a
// line of their own before the run's summary (TPC-C's tpcc-mysql shape:
// "STOPPING THREADS", where tpcc-mysql's analyze.sh stops reading).
type intervalEnder interface {
	EndIntervals() string
}

// printEndIntervals prints w's end of the interval lines, when it has one
// and interval lines were printed.
func printEndIntervals(a *App, w workload.Workload, o *runOptions) {
	e, ok := w.(intervalEnder)
	if !ok || o.cfg.ReportInterval <= 0 {
		return
	}
	if s := e.EndIntervals(); s != "" {
		fmt.Fprint(a.Stdout, s)
	}
}
