package report_test

import (
	"slices"
	"testing"

	"github.com/dbarena/dbarena/internal/results/report"
	"github.com/dbarena/dbarena/internal/results/report/reporttest"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// TestServersTableTLS: the servers table shows how each series connected
// when its runs recorded it ("mixed" when they differ), and keeps its
// columns when no run did.
func TestServersTableTLS(t *testing.T) {
	runs := reporttest.PlanRuns(reporttest.Options{Servers: 1, Threads: []int{1, 2}, Workloads: []string{"oltp_read_only"}})
	rep, err := report.Build(runs, report.NewOptions())
	if err != nil {
		t.Fatal(err)
	}
	if tb := rep.ServersTable(); len(tb.Columns) != 5 {
		t.Errorf("no TLS recorded: %d columns, want 5", len(tb.Columns))
	}

	on := &summary.TLS{Enabled: true, Mode: "tls=true", Version: "TLSv1.3", Cipher: "TLS_AES_256_GCM_SHA384"}
	for _, r := range runs {
		r.Target.TLS = on
	}
	rep, err = report.Build(runs, report.NewOptions())
	if err != nil {
		t.Fatal(err)
	}
	tb := rep.ServersTable()
	col := slices.IndexFunc(tb.Columns, func(c report.Column) bool { return c.Name == "TLS" })
	if col < 0 || len(tb.Rows) != 1 || tb.Rows[0][col].Text != on.String() {
		t.Fatalf("servers table %+v, want a TLS column reading %q", tb, on.String())
	}

	runs[len(runs)-1].Target.TLS = &summary.TLS{Mode: "tls=false"}
	if rep, err = report.Build(runs, report.NewOptions()); err != nil {
		t.Fatal(err)
	}
	if got := rep.Context.Servers[0].TLS; got != "mixed" {
		t.Errorf("runs on and off TLS in one series: TLS %q, want mixed", got)
	}
}
