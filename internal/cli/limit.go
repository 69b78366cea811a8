package cli

import (
	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/runner"
	"github.com/dbarena/dbarena/internal/workload"
)

// limitEvents applies a workload.EventLimiter's limit (mysqlslap's
// --number-of-queries, siege's --reps) as --events: without --time, the
// run goes until the limit, not for the default --time
// (runner.Config.LimitEvents).
func limitEvents(w workload.Workload, fs *pflag.FlagSet, cfg *runner.Config) error {
	if el, ok := w.(workload.EventLimiter); ok && el.EventLimit() > 0 && fs.Changed("events") {
		return usagef("--events and the workload's own limit (--number-of-queries, --reps) both limit the run: give one")
	}
	cfg.LimitEvents(w, fs.Changed("time"))
	return nil
}
