package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/measure/monitor"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
)

// Scripts of the planted lock bottleneck: each transaction updates a row
// and reads another, in two round trips; every client updates the same row
// (hot), or rows spread over pgbench_accounts' 100000.
const (
	hotRowScript = "\\set aid random(1, 100000)\nBEGIN;\n" +
		"UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 1;\n" +
		"SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\nCOMMIT;\n"
	spreadRowScript = "\\set aid random(1, 100000)\nBEGIN;\n" +
		"UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;\n" +
		"SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\nCOMMIT;\n"
	// updateScript is the write workload of the durability cases: one
	// update per transaction, each commit flushed (or not).
	updateScript = "\\set aid random(1, 100000)\nUPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;\n"
)

// bottleneckSandbox starts a sandbox of the test's own with settings,
// prepares the script workload's tables and returns its --target flag.
func bottleneckSandbox(t *testing.T, name string, flavor target.Flavor, profile string, settings ...sandbox.Setting) string {
	t.Helper()
	needServers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := suite.mgr.Start(ctx, sandbox.Spec{Name: name, Flavor: flavor, Profile: profile, Settings: settings}); err != nil {
		t.Fatalf("start sandbox %s: %v", name, err)
	}
	t.Cleanup(func() { _ = suite.mgr.Remove(context.Background(), name) })
	tg := "--target=sandbox:" + name
	dbarena(t, "prepare", "script", tg, "--monitor", "none").mustSucceed(t)
	return tg
}

// scriptRun runs a script on threads clients for a few seconds and
// returns the stored run's verdict and the console output.
func scriptRun(t *testing.T, tg, script string, threads int) (verdict, reason, out string) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "w.sql")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results.db")
	r := dbarena(t, "run", "script", "--file", file, tg, "--threads", strconv.Itoa(threads), "--time", "5",
		"--report-interval", "1", "--results", results).mustSucceed(t)
	run := storedRun(t, results)
	if run.Bottleneck == nil {
		t.Fatalf("no bottleneck section; monitor note %q", run.Monitor.Note)
	}
	if !strings.Contains(r.stdout, "\nBottleneck: "+run.Bottleneck.Reason) {
		t.Errorf("run did not print the verdict %q:\n%s", run.Bottleneck.Reason, tail(r.stdout, 20))
	}
	return run.Bottleneck.Verdict, run.Bottleneck.Reason, r.stdout
}

// TestBottleneckHotRowPostgres: all clients updating one row wait for each
// other's row lock (Lock:transactionid, Lock:tuple); spread over 100000
// rows they do not.
func TestBottleneckHotRowPostgres(t *testing.T) {
	tg := bottleneckSandbox(t, "bnhotpg", target.FlavorPostgres, sandbox.ProfileFast)
	v, reason, out := scriptRun(t, tg, hotRowScript, 8)
	if v != "lock" || !strings.Contains(reason, "Lock:transactionid") {
		t.Errorf("hot row: verdict %s (%s), want lock\n%s", v, reason, tail(out, 30))
	}
	v, reason, out = scriptRun(t, tg, spreadRowScript, 8)
	if v == "lock" {
		t.Errorf("spread rows: verdict %s (%s), want anything but lock\n%s", v, reason, tail(out, 30))
	}
}

// TestBottleneckDurableCommitPostgres: with synchronous_commit on every
// commit waits for its WAL flush (IO:WALSync, LWLock:WALWrite): fsync-bound;
// with it off the same workload is not.
func TestBottleneckDurableCommitPostgres(t *testing.T) {
	durable := bottleneckSandbox(t, "bnsyncon", target.FlavorPostgres, sandbox.ProfileDurable)
	relaxed := bottleneckSandbox(t, "bnsyncoff", target.FlavorPostgres, sandbox.ProfileDurable,
		sandbox.Setting{Key: "synchronous_commit", Value: "off"})
	v, reason, out := scriptRun(t, durable, updateScript, 4)
	if v != "fsync" {
		t.Errorf("synchronous_commit on: verdict %s (%s), want fsync\n%s", v, reason, tail(out, 30))
	}
	v, reason, out = scriptRun(t, relaxed, updateScript, 4)
	if v == "fsync" {
		t.Errorf("synchronous_commit off: verdict %s (%s), want anything but fsync\n%s", v, reason, tail(out, 30))
	}
}

// TestBottleneckHotRowMariaDB: the same planted hot row on MariaDB, seen
// through the sessions waiting for InnoDB row locks (performance_schema
// off, as in the sandbox).
func TestBottleneckHotRowMariaDB(t *testing.T) {
	tg := bottleneckSandbox(t, "bnhotmy", target.FlavorMariaDB, sandbox.ProfileFast)
	v, reason, out := scriptRun(t, tg, hotRowScript, 8)
	if v != "lock" || !strings.Contains(reason, "InnoDB row-lock waits") {
		t.Errorf("hot row: verdict %s (%s), want lock\n%s", v, reason, tail(out, 30))
	}
	if !strings.Contains(out, "performance_schema is off") {
		t.Errorf("the monitor does not say performance_schema is off:\n%s", tail(out, 30))
	}
	v, reason, out = scriptRun(t, tg, spreadRowScript, 8)
	if v == "lock" {
		t.Errorf("spread rows: verdict %s (%s), want anything but lock\n%s", v, reason, tail(out, 30))
	}
}

// TestBottleneckDurableCommitMariaDB: innodb_flush_log_at_trx_commit=1 and
// sync_binlog=1 fsync about once per transaction: fsync-bound; with both
// at 0 the same workload is not.
func TestBottleneckDurableCommitMariaDB(t *testing.T) {
	durable := bottleneckSandbox(t, "bndurmy", target.FlavorMariaDB, sandbox.ProfileDurable)
	relaxed := bottleneckSandbox(t, "bnrelmy", target.FlavorMariaDB, sandbox.ProfileDurable,
		sandbox.Setting{Key: "innodb_flush_log_at_trx_commit", Value: "0"}, sandbox.Setting{Key: "sync_binlog", Value: "0"})
	v, reason, out := scriptRun(t, durable, updateScript, 4)
	if v != "fsync" {
		t.Errorf("durable: verdict %s (%s), want fsync\n%s", v, reason, tail(out, 30))
	}
	v, reason, out = scriptRun(t, relaxed, updateScript, 4)
	if v == "fsync" {
		t.Errorf("relaxed: verdict %s (%s), want anything but fsync\n%s", v, reason, tail(out, 30))
	}
}

// TestCompareWhyHotRowPostgres: compare names the lock waits as where the
// difference between spread rows (A) and a hot row (B) comes from.
func TestCompareWhyHotRowPostgres(t *testing.T) {
	tg := bottleneckSandbox(t, "bnwhypg", target.FlavorPostgres, sandbox.ProfileFast)
	dir := t.TempDir()
	results := filepath.Join(dir, "results.db")
	for i, script := range []string{spreadRowScript, hotRowScript} {
		file := filepath.Join(dir, strconv.Itoa(i)+".sql")
		if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		dbarena(t, "run", "script", "--file", file, tg, "--threads", "8", "--time", "5",
			"--report-interval", "1", "--results", results).mustSucceed(t)
	}
	r := dbarena(t, "compare", "1", "2", "--results", results).mustSucceed(t)
	if !strings.Contains(r.stdout, "Where the difference comes from") ||
		!strings.Contains(r.stdout, "B's sessions spend") || !strings.Contains(r.stdout, "more of their time in lock waits") {
		t.Errorf("compare does not name the lock waits:\n%s", tail(r.stdout, 20))
	}
}

// TestCompareWhyCPUHeavyPostgres: a query that scans 100000 rows against
// a point select at the same thread count: compare reads the difference
// as server CPU per transaction, and the heavy run's backends are on CPU.
func TestCompareWhyCPUHeavyPostgres(t *testing.T) {
	tg := bottleneckSandbox(t, "bncpupg", target.FlavorPostgres, sandbox.ProfileFast)
	dir := t.TempDir()
	results := filepath.Join(dir, "results.db")
	for i, script := range []string{
		"\\set aid random(1, 100000)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
		"SELECT count(*) FROM pgbench_accounts WHERE abalance + aid % 7 >= 0;\n",
	} {
		file := filepath.Join(dir, strconv.Itoa(i)+".sql")
		if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		dbarena(t, "run", "script", "--file", file, tg, "--threads", "4", "--time", "5",
			"--report-interval", "1", "--results", results).mustSucceed(t)
	}
	r := dbarena(t, "compare", "1", "2", "--results", results).mustSucceed(t)
	// The wait share that differs most is the time on CPU or, its mirror,
	// the time waiting for the client.
	if !strings.Contains(r.stdout, "reading: B spends") || !strings.Contains(r.stdout, "more server CPU per transaction") ||
		!(strings.Contains(r.stdout, "more of their time on CPU") || strings.Contains(r.stdout, "less of their time waiting for the client")) {
		t.Errorf("compare does not read the server CPU:\n%s", tail(r.stdout, 20))
	}
}

// TestBottleneckClientPinnedPostgres: dbarena pinned to one CPU (taskset)
// at 32 threads keeps the backends waiting for it: client-bound.
func TestBottleneckClientPinnedPostgres(t *testing.T) {
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("taskset not installed (util-linux)")
	}
	if monitor.LocalCPUs().Host < 2 {
		t.Skip("one CPU: nothing to pin dbarena away from")
	}
	name := "bnpinpg"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	needServers(t)
	if _, err := suite.mgr.Start(ctx, sandbox.Spec{Name: name, Flavor: target.FlavorPostgres, Profile: sandbox.ProfileFast}); err != nil {
		t.Fatalf("start sandbox %s: %v", name, err)
	}
	t.Cleanup(func() { _ = suite.mgr.Remove(context.Background(), name) })
	tg := "--target=sandbox:" + name
	dbarena(t, "prepare", "oltp_read_write", tg, "--tables", "1", "--table-size", "2000", "--monitor", "none").mustSucceed(t)
	results := filepath.Join(t.TempDir(), "results.db")
	args := []string{"run", "oltp_point_select", tg, "--tables", "1", "--table-size", "2000",
		"--threads", "32", "--time", "6", "--report-interval", "1", "--results", results}
	cmd := exec.CommandContext(ctx, taskset, "-c", "0", os.Args[0])
	cmd.Env = append(os.Environ(), "DBARENA_HOME="+suite.home, childEnv+"="+strings.Join(args, "\x1f"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pinned run: %v\n%s", err, tail(string(out), 20))
	}
	run := storedRun(t, results)
	if b := run.Bottleneck; b == nil || b.Verdict != "client" || b.Figures["client_cpus"] != 1 {
		t.Errorf("pinned client: %+v, want client-bound\n%s", b, tail(string(out), 20))
	}
}
