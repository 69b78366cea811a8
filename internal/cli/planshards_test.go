package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
)

// shardPlan is a plan on the suite's MariaDB sandbox (by DSN: its shards
// take the password from the environment) with a 2-shard oltp_read_only
// step and a 1-shard oltp_point_select step.
func shardPlan(t *testing.T, threads string) string {
	t.Helper()
	good := suite.mariadb.Target()
	return writePlan(t, fmt.Sprintf(`name: shardplan
servers:
  - name: good
    dsn: mysql://%s:%s@127.0.0.1:%d/%s
workloads:
  - name: oltp_read_only
    params: {tables: 2, table-size: 1000}
    shards: 2
  - name: oltp_point_select
    params: {tables: 2, table-size: 1000}
axes:
  threads: [%s]
rounds: 1
warmup: 0
duration: 1s
`, good.User, good.Password, good.Port, good.Database, threads))
}

func TestPlanShardsCheck(t *testing.T) {
	path := shardPlan(t, "1")
	r := dbarena(t, "plan", "check", path)
	want := path + ":8: shards 2: workload oltp_read_only: --threads 1: fewer threads than --shards 2"
	if r.code != ExitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, want)
	}
	r = dbarena(t, "plan", "check", shardPlan(t, "2")).mustSucceed(t)
	if !strings.Contains(r.stdout, "Shards (local processes per run): oltp_read_only 2") {
		t.Errorf("plan check does not print the shards:\n%s", r.stdout)
	}
}

// TestPlanShards: a plan's 2-shard step runs as two local shard processes
// stored as one sharded run, whose totals are its shards' sums, beside the
// plan's 1-shard step; plan show and report count it as one run of its
// cell; resume skips it.
func TestPlanShards(t *testing.T) {
	needServers(t)
	results := filepath.Join(t.TempDir(), "r.db")
	path := shardPlan(t, "2")
	r := dbarena(t, "plan", "run", path, "--results", results).mustSucceed(t)
	assertNoPassword(t, "stdout", r.stdout)
	assertNoPassword(t, "stderr", r.stderr)
	if !strings.Contains(r.stdout, "(sharded run plan-shardplan-") || !strings.Contains(r.stdout, "2 runs done") {
		t.Errorf("plan run output:\n%s", r.stdout)
	}

	rows := planRuns(t, results, "shardplan")
	var keys, cells []string
	plain, plainID := 0, int64(0)
	for _, row := range rows {
		if row.Status != "complete" {
			t.Errorf("run %d %s", row.ID, row.Status)
		}
		if k := row.Tags[shard.TagRun]; k != "" {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
			continue
		}
		plain, plainID = plain+1, row.ID
		cells = append(cells, row.Tags["plan.cell"])
	}
	if len(keys) != 1 || plain != 1 || len(rows) != 3 || !strings.HasPrefix(cells[0], "workload=oltp_point_select") {
		t.Fatalf("stored: %d runs, sharded runs %q, %d plain (%q); want 2 shard runs of one key and 1 plain", len(rows), keys, plain, cells)
	}
	merged, st := loadSharded(t, results, keys[0])
	if merged.Status != "complete" || len(merged.Shards) != 2 || merged.Threads != 2 || merged.Plan == nil ||
		!strings.HasPrefix(merged.Plan.Cell, "workload=oltp_read_only") || merged.Plan.Coords["threads"] != "2" {
		t.Fatalf("merged run: %s, %d shards, %d threads, plan %+v", merged.Status, len(merged.Shards), merged.Threads, merged.Plan)
	}
	var events, queries, ivEvents int64
	for _, s := range merged.Shards {
		run, err := st.Run(context.Background(), s.Run)
		if err != nil {
			t.Fatal(err)
		}
		if run.Threads != 1 || run.Tags["plan"] != "shardplan" || run.Tags["plan.cell"] != merged.Plan.Cell ||
			run.Tags["plan.round"] != "1" || run.Plan == nil || run.Plan.Cell != merged.Plan.Cell {
			t.Errorf("shard %d: %d threads, tags %v, plan %+v", s.Index, run.Threads, run.Tags, run.Plan)
		}
		events += run.Totals.Events
		queries += run.Totals.Queries.Total
	}
	for _, iv := range merged.Intervals {
		ivEvents += iv.Events
	}
	if events == 0 || merged.Totals.Events != events || merged.Totals.Queries.Total != queries || ivEvents != events {
		t.Errorf("merged %d events, %d queries, intervals %d events; shards' sums %d, %d",
			merged.Totals.Events, merged.Totals.Queries.Total, ivEvents, events, queries)
	}
	checkMergedHistogram(t, st, merged)
	if len(merged.Settings) == 0 {
		t.Error("the merged run has no server settings")
	}

	show := dbarena(t, "plan", "show", "shardplan", "--results", results, "--json").mustSucceed(t)
	var doc struct {
		Cells []plan.CellStats `json:"cells"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cells) != 2 || doc.Cells[0].Runs != 1 || doc.Cells[1].Runs != 1 {
		t.Errorf("plan show: %+v, want 2 cells of 1 run each", doc.Cells)
	}
	rep := dbarena(t, "report", "--plan", "shardplan", "--format", "json", "-o", "-", "--results", results).mustSucceed(t)
	if !strings.Contains(rep.stdout, `"`+keys[0]+`"`) {
		t.Errorf("report does not name the sharded run %s:\n%s", keys[0], tail(rep.stdout, 2000))
	}

	cmp := dbarena(t, "compare", keys[0], strconv.FormatInt(plainID, 10), "--results", results).mustSucceed(t)
	if !strings.Contains(cmp.stdout, "tps") {
		t.Errorf("compare of the sharded run:\n%s", cmp.stdout)
	}

	r = dbarena(t, "plan", "run", path, "--resume", "--results", results).mustSucceed(t)
	if !strings.Contains(r.stdout, "0 runs done, 2 skipped") {
		t.Errorf("resume output:\n%s", r.stdout)
	}
	if n := len(planRuns(t, results, "shardplan")); n != len(rows) {
		t.Errorf("resume stored %d more runs", n-len(rows))
	}
	if sr, err := st.ShardRun(context.Background(), keys[0][:len(keys[0])-1]+"2"); err == nil {
		t.Errorf("resume started sharded run %s again", sr.Key)
	} else if !strings.Contains(err.Error(), store.ErrNotFound.Error()) {
		t.Fatal(err)
	}
}
