package cli

import (
	"strings"
	"testing"
)

// TestShardedVerdict: two local shards sampled by the monitor give the
// merged run one monitor section (dbarena's CPU the shards' sum) and a
// bottleneck verdict, as one process would have.
func TestShardedVerdict(t *testing.T) {
	needServers(t)
	freshTables(t, "oltp_point_select", "--tables", "1", "--table-size", "2000")
	js := jsonPath(t)
	r := dbarena(t, "run", "oltp_point_select", "--tables", "1", "--table-size", "2000", "--threads", "4", "--time", "3",
		"--report-interval", "1s", "--monitor", "on", "--shards", "2", "--local", "--run-id", "verdict-2", "--json", js)
	r.mustSucceed(t)
	merged := readSummary(t, js)
	if merged.Monitor == nil || merged.Bottleneck == nil || merged.Bottleneck.Verdict == "" {
		t.Fatalf("merged run without a monitor or verdict: monitor %v, bottleneck %+v, notes %q", merged.Monitor != nil, merged.Bottleneck, merged.Notes)
	}
	if merged.Monitor.Avg["client.cpu"] <= 0 {
		t.Errorf("merged client CPU %v", merged.Monitor.Avg["client.cpu"])
	}
	for _, n := range merged.Notes {
		if strings.Contains(n, "no bottleneck verdict") {
			t.Errorf("note %q", n)
		}
	}
}
