package console

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/summary"
)

func whyRun(tps, cpuUS, lock, client float64) *summary.Run {
	r := &summary.Run{Threads: 4,
		Monitor:    &summary.Monitor{PerTxn: map[string]float64{"server_cpu_us": cpuUS, "fsyncs": 1}},
		Bottleneck: &summary.Bottleneck{Figures: map[string]float64{"wait_lock_pct": lock, "wait_client_pct": client}}}
	r.Throughput.TPS = tps
	return r
}

// TestWhyConsole: with rounds, intervals and * marks; with single rounds,
// one line saying there are none.
func TestWhyConsole(t *testing.T) {
	var b bytes.Buffer
	Why(&b, []*summary.Run{whyRun(1000, 100, 5, 90), whyRun(1000, 110, 6, 91), whyRun(1000, 120, 7, 89)},
		[]*summary.Run{whyRun(500, 200, 50, 45), whyRun(500, 220, 52, 44), whyRun(500, 240, 54, 43)})
	out := b.String()
	t.Log("\n" + out)
	for _, want := range []string{"mean over 3 and 3 rounds, 95% intervals", "server CPU us/txn", "2.00x  [", "x] *\n",
		"% of session time", "lock wait", "+46.0 pts", "session time per transaction (threads / tps): A 4.000 ms, B 8.000 ms (+4.000 ms)",
		"reading: B spends 2.0x more server CPU per transaction; B's sessions spend 46 points more"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q", want)
		}
	}
	b.Reset()
	Why(&b, []*summary.Run{whyRun(1000, 100, 5, 90)}, []*summary.Run{whyRun(500, 200, 50, 45)})
	out = b.String()
	t.Log("\n" + out)
	if !strings.Contains(out, "no confidence intervals from single rounds") || strings.Contains(out, "*") || strings.Contains(out, "[") {
		t.Errorf("single rounds:\n%s", out)
	}
}
