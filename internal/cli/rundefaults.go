package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/runner"
	"github.com/dbarena/dbarena/internal/workload"
)

// untilDone is the --time of a run that lasts until its workload is done:
// longer than any run.
const untilDone = time.Duration(1 << 62)

// applyRunDefaults lets a workload.Defaulter (replay) pick the run settings
// the user did not set: threads, a run until it is done, errors counted.
// It reports whether the workload picked the threads.
func applyRunDefaults(w workload.Workload, fs *pflag.FlagSet, cfg *runner.Config) (threads bool) {
	d, ok := w.(workload.Defaulter)
	if !ok {
		return false
	}
	rd := d.RunDefaults()
	if rd.Threads > 0 && !fs.Changed("threads") {
		cfg.Threads, threads = rd.Threads, true
	}
	if rd.UntilDone && !fs.Changed("time") && !fs.Changed("events") {
		cfg.Duration = untilDone
	}
	if rd.IgnoreErrors && !fs.Changed("ignore-errors") {
		cfg.IgnoreErrors = []string{"all"}
	}
	return threads
}
