package lab

import (
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/workload"
)

// limited is a toy whose --queries limits a run's events (as mysqlslap's
// --number-of-queries), 0 for none.
type limited struct {
	toy
	queries int64
}

func (*limited) Name() string { return "limited" }
func (w *limited) Flags(fs *pflag.FlagSet) {
	w.toy.Flags(fs)
	fs.Int64Var(&w.queries, "queries", 0, "events")
}
func (w *limited) EventLimit() int64 { return w.queries }

var _ workload.EventLimiter = (*limited)(nil)

// TestEstimatePlan: a run bounded by its event limit alone (no duration in
// the plan) has no time bound: only its warm-up counts and the estimate
// says so; with a duration it counts in full and may end sooner.
func TestEstimatePlan(t *testing.T) {
	reg := workload.NewRegistry(func() workload.Workload { return &toy{} }, func() workload.Workload { return &limited{} })
	const text = `name: e
servers: [{flavor: mariadb}]
workloads:
  - toy
  - name: limited
    params: {queries: 100}
  - limited
axes:
  threads: [1, 2]
rounds: 1
warmup: 10s
`
	e := EstimatePlan(mustParse(t, text), reg)
	// toy and limited without a limit: 4 runs of 60s + 10s; limited
	// with queries: 2 runs of their 10s warm-up only.
	if want := (Estimate{Max: 4*70*time.Second + 2*10*time.Second, Timed: 4, EventsOnly: 2}); e != want {
		t.Errorf("without duration: %+v, want %+v", e, want)
	}
	if s, want := e.String(), "at most 5m0s of measurement and warm-up; 2 runs end at their event limit, in a time not known (only their warm-up is counted)"; s != want {
		t.Errorf("String() = %q, want %q", s, want)
	}
	e = EstimatePlan(mustParse(t, text+"duration: 20s\n"), reg)
	if want := (Estimate{Max: 6 * 30 * time.Second, Timed: 6, Sooner: 2}); e != want {
		t.Errorf("with duration: %+v, want %+v", e, want)
	}
	if s, want := e.String(), "at most 3m0s of measurement and warm-up; 2 of the 6 timed runs may end sooner (an event limit or a replay's end)"; s != want {
		t.Errorf("String() = %q, want %q", s, want)
	}
}
