package script

import (
	"errors"
	"fmt"

	"github.com/dbarena/dbarena/internal/workload"
)

var _ workload.EventLimiter = (*Workload)(nil)

// checkQueryLimit checks --number-of-queries: mysqlslap counts statements,
// so it needs --query scripts only, all with the same number of
// statements, of which one event runs them all.
func (wl *Workload) checkQueryLimit() error {
	n := wl.numberOfQueries
	switch {
	case n < 0:
		return fmt.Errorf("--number-of-queries must be >= 0, got %d", n)
	case n == 0:
		return nil
	case len(wl.files)+len(wl.builtins) > 0 || len(wl.queries) == 0:
		return errors.New("--number-of-queries counts --query statements: use it with --query only (--events counts script runs)")
	}
	k := wl.perEvent()
	for _, s := range wl.scripts {
		if len(s.s.Cmds) != k {
			return errors.New("--number-of-queries needs every --query to have the same number of statements")
		}
	}
	return nil
}

// perEvent is the number of statements of one event of a --query run.
func (wl *Workload) perEvent() int {
	if len(wl.scripts) == 0 {
		return 0
	}
	return len(wl.scripts[0].s.Cmds)
}

// EventLimit implements workload.EventLimiter: --number-of-queries N over
// events of K statements is ceil(N/K) events (N when K is 1, as mysqlslap).
func (wl *Workload) EventLimit() int64 {
	k := int64(wl.perEvent())
	if wl.numberOfQueries <= 0 || k == 0 {
		return 0
	}
	return (wl.numberOfQueries + k - 1) / k
}
