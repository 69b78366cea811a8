package micro

import "github.com/dbarena/dbarena/internal/workload"

var _ workload.EventLimiter = (*Workload)(nil)

// EventLimit implements workload.EventLimiter: where the run has no
// --events flag of its own (plan steps), the run ends with the suite, as
// `dbarena run micro` does through --events: its operations plus one idle
// event per worker but the last to finish. A plan's duration: then only
// caps it, instead of every step idling until the duration ends. Under
// `dbarena run` (an --events flag) it is 0: Validate sets --events.
func (wl *Workload) EventLimit() int64 {
	if wl.fs != nil && wl.fs.Lookup("events") != nil {
		return 0
	}
	n := wl.runThreads()
	return wl.Planned(n) + int64(n-1)
}
