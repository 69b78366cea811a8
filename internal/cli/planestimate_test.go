package cli

import (
	"strings"
	"testing"
)

// TestPlanCheckEventLimit: plan check's estimate does not bound a run
// that ends at its event limit alone (mysqlslap's --number-of-queries
// without the plan's duration) by the default duration: it says so.
func TestPlanCheckEventLimit(t *testing.T) {
	const text = `name: ev
servers: [{flavor: mariadb}]
workloads:
  - name: script
    params: {query: "SELECT 1", number-of-queries: 100}
  - oltp_read_only
rounds: 1
warmup: 5s
`
	r := dbarena(t, "plan", "check", writePlan(t, text)).mustSucceed(t)
	want := "2 runs, at most 1m10s of measurement and warm-up; 1 runs end at their event limit, in a time not known (only their warm-up is counted)\n"
	if !strings.Contains(r.stdout, want) {
		t.Errorf("plan check:\n%s\nwant %q", r.stdout, want)
	}
	r = dbarena(t, "plan", "check", writePlan(t, text+"duration: 10s\n")).mustSucceed(t)
	want = "2 runs, at most 30s of measurement and warm-up; 1 of the 2 timed runs may end sooner (an event limit or a replay's end)\n"
	if !strings.Contains(r.stdout, want) {
		t.Errorf("plan check with duration:\n%s\nwant %q", r.stdout, want)
	}
}
