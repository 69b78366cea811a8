package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/results/console"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// monitorFlag registers --monitor on fs.
func monitorFlag(fs *pflag.FlagSet, mode *string) {
	fs.StringVar(mode, "monitor", execute.MonitorOn, "sample host, server and client figures at each report interval: on, off (server counters and dbarena's own only) or none")
}

// validateMonitor checks a --monitor value.
func validateMonitor(mode string) []error {
	if execute.ValidMonitor(mode) {
		return nil
	}
	return []error{fmt.Errorf("--monitor must be on, off or none, got %q", mode)}
}

// printLoadMonitor prints the monitor's summary of a load (prepare is not
// stored as a run; its figures are printed only).
func (a *App) printLoadMonitor(rm *execute.Monitor) {
	if m := rm.LoadSummary(); m != nil {
		console.Monitor(a.Stdout, &summary.Run{Monitor: m, Host: summary.Host{Cores: runtime.NumCPU()}})
	}
}
