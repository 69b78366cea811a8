package micro

import (
	"testing"

	"github.com/spf13/pflag"
)

// TestEventLimit: in a plan step (no --events flag) the suite's own event
// count ends the run, so a step no longer idles until the plan's duration;
// under `dbarena run` (an --events flag, which Validate sets) it is 0.
func TestEventLimit(t *testing.T) {
	step := New().(*Workload)
	fs := pflag.NewFlagSet("micro", pflag.ContinueOnError)
	step.Flags(fs)
	if err := fs.Set("scale", "0.01"); err != nil {
		t.Fatal(err)
	}
	if errs := step.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	step.SetThreads(3)
	if got, want := step.EventLimit(), step.Planned(3)+2; got != want || want <= 2 {
		t.Errorf("plan step: EventLimit %d, want %d (the suite's operations and 2 idle events)", got, want)
	}
	run := New().(*Workload)
	rfs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	rfs.Int64("events", 0, "")
	run.Flags(rfs)
	if errs := run.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := run.EventLimit(); got != 0 {
		t.Errorf("dbarena run: EventLimit %d, want 0 (--events carries the count)", got)
	}
}
