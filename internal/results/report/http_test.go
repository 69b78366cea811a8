package report_test

import (
	"testing"

	"github.com/dbarena/dbarena/internal/results/report"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// TestSiegeTableHTTP: an http run's row comes from siege's figures:
// response time and rate over every response, 404s included, OK only
// those below 400; LA and MEM from the monitor.
func TestSiegeTableHTTP(t *testing.T) {
	r := &summary.Run{ID: 7, Workload: "http", Target: summary.Target{Flavor: "mariadb", Version: "10.11.9"},
		DurationS: 10, Throughput: summary.Throughput{TPS: 80},
		Figures: map[string]float64{"http.transactions": 1000, "http.elapsed_s": 10.02, "http.response_time_s": 0.25,
			"http.transaction_rate": 99.8, "http.concurrency": 24.95, "http.successful": 800},
		Monitor: &summary.Monitor{Max: map[string]float64{"host.load1": 3.5, "host.mem.used_mb": 2048}}}
	tb := report.SiegeTable([]*summary.Run{r})
	want := []string{"7 mariadb 10.11.9", "10.02", "0.25", "99.80", "24.95", "800", "3.50", "2048"}
	for i, w := range want {
		if got := tb.Rows[0][i].Text; got != w {
			t.Errorf("column %s = %q, want %q", tb.Columns[i].Name, got, w)
		}
	}
}
