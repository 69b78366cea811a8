package report_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/dbarena/dbarena/internal/results/report"
	"github.com/dbarena/dbarena/internal/results/report/reporttest"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// TestJSONRunIDsOfMergedRun: a cell's run_ids list the stored runs behind
// it, a merged sharded run (no number of its own) by its shards' runs, and
// run_names name each round, the merged one by its run id.
func TestJSONRunIDsOfMergedRun(t *testing.T) {
	runs := reporttest.PlanRuns(reporttest.Options{Servers: 1, Threads: []int{2}, Workloads: []string{"oltp_read_only"}})
	if len(runs) != reporttest.Rounds {
		t.Fatalf("%d runs, want %d", len(runs), reporttest.Rounds)
	}
	for i, r := range runs {
		r.ID = int64(100 + i)
	}
	m := runs[1]
	m.ID, m.RunKey = 0, "bench-7"
	m.Shards = []summary.Shard{{Index: 0, Count: 3, Run: 41}, {Index: 1, Count: 3, Run: 42}, {Index: 2, Count: 3, Status: "missing"}}
	rep, err := report.Build(runs, report.NewOptions())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cells []struct {
			RunIDs   []int64  `json:"run_ids"`
			RunNames []string `json:"run_names"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cells) != 1 {
		t.Fatalf("%d cells, want 1", len(doc.Cells))
	}
	c := doc.Cells[0]
	if want := []int64{100, 41, 42, 102}; !slices.Equal(c.RunIDs, want) {
		t.Errorf("run_ids %v, want %v", c.RunIDs, want)
	}
	if want := []string{"100", "bench-7", "102"}; !slices.Equal(c.RunNames, want) {
		t.Errorf("run_names %v, want %v", c.RunNames, want)
	}
}

// TestSeriesSettingsFromALaterRun: a series whose first run has no server
// settings (a merged sharded run of old, a failed run) takes them from the
// next run, instead of failing.
func TestSeriesSettingsFromALaterRun(t *testing.T) {
	runs := reporttest.PlanRuns(reporttest.Options{Servers: 1, Threads: []int{2}, Workloads: []string{"oltp_read_only"}})
	runs[0].Settings = nil
	rep, err := report.Build(runs, report.NewOptions())
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Context.Servers; len(s) != 1 || len(s[0].Settings) == 0 {
		t.Errorf("servers %+v, want one with the later runs' settings", s)
	}
}
