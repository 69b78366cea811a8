package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/measure/hist"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
)

// The test binary plays dbarena for the local shards it starts.
func init() {
	shardCommand = func(args []string) (*exec.Cmd, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+strings.Join(args, "\x1f"))
		return cmd, nil
	}
}

// loadSharded reads a sharded run from a store file.
func loadSharded(t *testing.T, results, key string) (*summary.Run, *store.Store) {
	t.Helper()
	st, err := store.Open(context.Background(), results)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	run, err := shard.Load(context.Background(), st, key)
	if err != nil {
		t.Fatal(err)
	}
	return run, st
}

// checkMergedHistogram: the merged histogram is the bucket-wise sum of the
// shards' stored ones, and counts every event (and unfinished one).
func checkMergedHistogram(t *testing.T, st *store.Store, run *summary.Run) {
	t.Helper()
	ref := hist.New()
	for _, s := range run.Shards {
		r, err := st.Run(context.Background(), s.Run)
		if err != nil {
			t.Fatal(err)
		}
		h, err := hist.Decode(r.Histogram)
		if err != nil {
			t.Fatal(err)
		}
		ref.Merge(h)
	}
	m, err := hist.Decode(run.Histogram)
	if err != nil {
		t.Fatal(err)
	}
	if m.Count() != run.Totals.Events+run.Totals.Unfinished || m.Count() != ref.Count() || m.Latency() != ref.Latency() {
		t.Errorf("merged histogram: %d values, %+v; want %d, %+v", m.Count(), m.Latency(), ref.Count(), ref.Latency())
	}
}

// TestShardedOLTP: three local shard processes of oltp_read_write do the
// work of one process: the same events and statements, exactly.
func TestShardedOLTP(t *testing.T) {
	needServers(t)
	freshTables(t, "oltp_read_write", "--tables", "3", "--table-size", "5000")
	results := filepath.Join(t.TempDir(), "r.db")
	common := []string{"oltp_read_write", "--tables", "3", "--table-size", "5000", "--threads", "3", "--events", "301",
		"--results", results, "--monitor", "none", "--report-interval", "1s"}
	one := jsonPath(t)
	dbarena(t, append(append([]string{"run"}, common...), "--json", one)...).mustSucceed(t)
	single := readSummary(t, one)

	js := jsonPath(t)
	r := dbarena(t, append(append([]string{"run"}, common...), "--shards", "3", "--local", "--run-id", "oltp-3", "--json", js)...)
	r.mustSucceed(t)
	for _, want := range []string{"Shards:", "0/3", "2/3", "Stored as run oltp-3 (complete, 3 shards)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	merged := readSummary(t, js)
	if merged.Status != summary.StatusComplete || merged.Totals.Events != 301 || single.Totals.Events != 301 {
		t.Fatalf("merged %s with %d events, single %d; want complete, 301", merged.Status, merged.Totals.Events, single.Totals.Events)
	}
	if merged.Totals.Retries+merged.Totals.Errors+single.Totals.Retries+single.Totals.Errors == 0 &&
		merged.Totals.Queries.Total != single.Totals.Queries.Total {
		t.Errorf("merged %d statements, one process %d", merged.Totals.Queries.Total, single.Totals.Queries.Total)
	}
	if merged.Threads != 3 || len(merged.Shards) != 3 {
		t.Fatalf("merged: %d threads, %d shards", merged.Threads, len(merged.Shards))
	}
	var sum int64
	for i, s := range merged.Shards {
		if s.Status != summary.StatusComplete || s.Threads != 1 || s.Run == 0 || s.StartSkewMS < 0 {
			t.Errorf("shard %d: %+v", i, s)
		}
		sum += s.Totals.Events
	}
	if sum != 301 || merged.Shards[0].Totals.Events != 101 {
		t.Errorf("shards' events add up to %d (shard 0: %d), want 301 (101)", sum, merged.Shards[0].Totals.Events)
	}
	run, st := loadSharded(t, results, "oltp-3")
	checkMergedHistogram(t, st, run)
	for _, n := range merged.Notes {
		if strings.Contains(n, "upper bound") {
			t.Errorf("interval percentiles not merged: %s", n)
		}
	}
	var ivEvents int64
	for _, iv := range merged.Intervals {
		ivEvents += iv.Events
		if iv.Histogram != "" {
			t.Fatal("--json holds interval histograms")
		}
	}
	if ivEvents != 301 {
		t.Errorf("merged intervals add up to %d events, want 301", ivEvents)
	}
	shown := dbarena(t, "results", "show", "oltp-3", "--results", results).mustSucceed(t)
	if !strings.Contains(shown.stdout, "Run oltp-3: oltp_read_write") || !strings.Contains(shown.stdout, "START SKEW MS") {
		t.Errorf("results show:\n%s", shown.stdout)
	}
	dbarena(t, "compare", "oltp-3", "1", "--results", results).mustSucceed(t)
}

// TestShardKilled: a shard killed mid-run leaves the run degraded, with
// the other shards' data.
func TestShardKilled(t *testing.T) {
	needServers(t)
	freshTables(t, "oltp_point_select", "--tables", "1", "--table-size", "1000")
	results := filepath.Join(t.TempDir(), "r.db")
	cmds := make([]*exec.Cmd, 3)
	for i := range cmds {
		args := []string{"run", "oltp_point_select", "--tables", "1", "--table-size", "1000", "--threads", "3",
			"--time", "4s", "--report-interval", "1s", "--results", results, "--monitor", "none",
			"--shard", string(rune('0'+i)) + "/3", "--run-id", "killed"}
		cmd, _ := shardCommand(args)
		cmd.Env = append(cmd.Env, "DBARENA_HOME="+suite.home)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	defer func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}()
	// Kill shard 1 once its clock started: it is then mid-run.
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := store.Open(context.Background(), results)
		started := false
		if err == nil {
			if r, err := st.ShardRun(context.Background(), "killed"); err == nil {
				for _, m := range r.Members {
					started = started || m.Index == 1 && m.Started
				}
			}
			st.Close()
		}
		if started {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("shard 1 never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmds[1].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i, c := range cmds {
		err := c.Wait()
		if i != 1 && err != nil {
			t.Errorf("shard %d: %v", i, err)
		}
	}
	run, _ := loadSharded(t, results, "killed")
	if run.Status != summary.StatusDegraded || run.Shards[1].Status != summary.StatusAborted {
		t.Fatalf("status %s, shard 1 %s; want degraded, aborted", run.Status, run.Shards[1].Status)
	}
	want := run.Shards[0].Totals.Events + run.Shards[2].Totals.Events
	if want == 0 || run.Totals.Events != want || run.Threads != 2 {
		t.Errorf("merged %d events of %d threads, want shards 0 and 2's %d of 2", run.Totals.Events, run.Threads, want)
	}
	r := dbarena(t, "results", "show", "killed", "--results", results, "--json")
	r.mustSucceed(t)
	if !strings.Contains(r.stdout, `"status": "degraded"`) || !strings.Contains(r.stdout, "shard 1 aborted") {
		t.Errorf("results show --json:\n%s", tail(r.stdout, 2000))
	}
}

// TestShardedTPCC: three local shards of TPC-C, each with its own home
// warehouses, do the events of one process, exactly, and their per-type
// histograms merge.
func TestShardedTPCC(t *testing.T) {
	needServers(t)
	dbarena(t, "cleanup", "tpcc").mustSucceed(t)
	t.Cleanup(func() { dbarena(t, "cleanup", "tpcc") })
	dbarena(t, "prepare", "tpcc", "--warehouses", "3", "--threads", "4", "--monitor", "none").mustSucceed(t)
	results := filepath.Join(t.TempDir(), "r.db")
	common := []string{"run", "tpcc", "--threads", "3", "--events", "120", "--results", results, "--monitor", "none"}
	one := jsonPath(t)
	dbarena(t, append(common, "--json", one)...).mustSucceed(t)
	single := readSummary(t, one)
	js := jsonPath(t)
	dbarena(t, append(common, "--shards", "3", "--local", "--run-id", "tpcc-3", "--json", js)...).mustSucceed(t)
	merged := readSummary(t, js)
	if merged.Status != summary.StatusComplete || merged.Totals.Events != 120 || single.Totals.Events != 120 {
		t.Fatalf("merged %s with %d events, one process %d; want complete, 120", merged.Status, merged.Totals.Events, single.Totals.Events)
	}
	var perType int64
	for name, pt := range merged.PerType {
		perType += pt.Count
		if pt.Count > 0 && pt.LatencyMS.P90 <= 0 {
			t.Errorf("%s: %d events but no merged latency", name, pt.Count)
		}
	}
	if perType != 120 || merged.TpmC == nil || *merged.TpmC <= 0 {
		t.Errorf("per-type counts add up to %d, tpmC %v", perType, merged.TpmC)
	}
	run, st := loadSharded(t, results, "tpcc-3")
	checkMergedHistogram(t, st, run)
	for _, s := range run.Shards {
		r, err := st.Run(context.Background(), s.Run)
		if err != nil {
			t.Fatal(err)
		}
		if r.Shard == nil || r.Shard.Index != s.Index || len(r.TypeHistograms) == 0 || r.Tags[shard.TagRun] != "tpcc-3" {
			t.Errorf("shard %d's run: %+v, %d type histograms, tags %v", s.Index, r.Shard, len(r.TypeHistograms), r.Tags)
		}
		// Each interval's types carry their histograms, for an exact
		// merged p90 and max.
		for k, iv := range r.Intervals {
			for name, pt := range iv.PerType {
				if pt.Count > 0 && pt.Histogram == "" {
					t.Errorf("shard %d interval %d %s: %d events, no histogram", s.Index, k, name, pt.Count)
				}
			}
		}
	}
	for _, n := range run.Notes {
		if strings.Contains(n, "upper bound") {
			t.Errorf("merged run note %q", n)
		}
	}
	for k, iv := range merged.Intervals {
		for name, pt := range iv.PerType {
			if pt.Histogram != "" || pt.Count > 0 && pt.P90MS <= 0 {
				t.Errorf("--json interval %d %s: p90 %v, histogram kept: %v", k, name, pt.P90MS, pt.Histogram != "")
			}
		}
	}
}

// TestShardFailsBeforeBarrier: a local shard that fails before it joins
// the start barrier (its target does not exist) stops the others at once,
// rather than leaving them at the barrier until --barrier-timeout.
func TestShardFailsBeforeBarrier(t *testing.T) {
	needServers(t)
	freshTables(t, "oltp_point_select", "--tables", "1", "--table-size", "1000")
	orig := shardCommand
	shardCommand = func(args []string) (*exec.Cmd, error) {
		if slices.Contains(args, "1/2") {
			args = append(args, "--target=sandbox:no-such-sandbox")
		}
		return orig(args)
	}
	t.Cleanup(func() { shardCommand = orig })
	results := filepath.Join(t.TempDir(), "r.db")
	r := dbarena(t, "run", "oltp_point_select", "--tables", "1", "--table-size", "1000", "--threads", "2", "--time", "10s",
		"--results", results, "--monitor", "none", "--shards", "2", "--local", "--run-id", "early", "--barrier-timeout", "90s")
	if r.code == 0 {
		t.Fatalf("run succeeded:\n%s", r.stdout)
	}
	for _, want := range []string{"shard 1: exit status 2", "no-such-sandbox", "the other shards were stopped at the start barrier"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, tail(r.stderr, 3000))
		}
	}
	if strings.Contains(r.stderr, "not ready after") {
		t.Errorf("shard 0 waited out the barrier:\n%s", tail(r.stderr, 3000))
	}
}
