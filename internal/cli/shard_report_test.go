package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestShardedReport: report RUNID merges a sharded run's shards into one
// run (one row, one series), as results show does; so does a selection
// by tag that finds the shards' own runs.
func TestShardedReport(t *testing.T) {
	needServers(t)
	freshTables(t, "oltp_point_select", "--tables", "1", "--table-size", "1000")
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	js := jsonPath(t)
	dbarena(t, "run", "oltp_point_select", "--tables", "1", "--table-size", "1000", "--threads", "3", "--events", "300",
		"--results", results, "--monitor", "none", "--shards", "3", "--local", "--run-id", "rep-3", "--json", js).mustSucceed(t)
	merged := readSummary(t, js)
	if merged.Totals.Events != 300 || len(merged.Shards) != 3 {
		t.Fatalf("merged run: %d events, %d shards", merged.Totals.Events, len(merged.Shards))
	}
	row := "| rep-3 |"
	tps := strconv.FormatFloat(merged.Throughput.TPS, 'f', 2, 64)
	for _, sel := range [][]string{{"rep-3"}, {"--tag", "shard_of=rep-3"}} {
		md := filepath.Join(dir, "r.md")
		args := append(append([]string{"report"}, sel...), "--format", "md", "-o", md, "--results", results)
		r := dbarena(t, args...).mustSucceed(t)
		if !strings.Contains(r.stdout, "report of 1 run(s)") {
			t.Errorf("report %v: %s", sel, r.stdout)
		}
		b, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		var line string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, row) {
				line = l
			}
		}
		if line == "" || !strings.Contains(line, "| 3 |") || !strings.Contains(line, "| "+tps+" |") {
			t.Errorf("report %v: runs row %q, want run rep-3 with 3 threads and the merged %s TPS:\n%s", sel, line, tps, b)
		}
		if strings.Contains(string(b), "shard=0") {
			t.Errorf("report %v lists a shard's own run:\n%s", sel, b)
		}
	}
	csv := dbarena(t, "report", "rep-3", "--format", "csv", "-o", "-", "--results", results).mustSucceed(t)
	if !strings.Contains(csv.stdout, "\nrep-3,") {
		t.Errorf("csv does not name the run rep-3:\n%s", csv.stdout)
	}
	r := dbarena(t, "report", "rep-9", "--format", "md", "-o", filepath.Join(dir, "x.md"), "--results", results)
	if r.code != 2 || !strings.Contains(r.stderr, "rep-9") {
		t.Errorf("unknown run id: exit %d, %s", r.code, r.stderr)
	}
}
