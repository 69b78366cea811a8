package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
)

// TestBottleneckHotRowMariaDBPerfSchema: a MariaDB sandbox started with
// performance_schema=ON alone gets the wait instruments the profile reads
// (mutexes, rwlocks and conditions included, which the server leaves off);
// the hot row is still lock-bound and the verdict names
// performance_schema's top wait events, not only the row-lock fallback.
func TestBottleneckHotRowMariaDBPerfSchema(t *testing.T) {
	tg := bottleneckSandbox(t, "w2hotps", target.FlavorMariaDB, sandbox.ProfileFast,
		sandbox.Setting{Key: "performance_schema", Value: "ON"})
	v, reason, out := scriptRun(t, tg, hotRowScript, 8)
	if v != "lock" {
		t.Errorf("hot row: verdict %s (%s), want lock\n%s", v, reason, tail(out, 2000))
	}
	if strings.Contains(out, "performance_schema is off") || !strings.Contains(out, "performance_schema waits:") {
		t.Errorf("no performance_schema waits in the verdict:\n%s", tail(out, 2000))
	}
	if !strings.Contains(out, "top waits:\n      wait/") || !strings.Contains(out, "      wait/synch/") {
		t.Errorf("the verdict names no performance_schema wait event, or no mutex, rwlock or condition:\n%s", tail(out, 2000))
	}
	if i := strings.Index(out, "\nBottleneck: "); i >= 0 {
		t.Logf("verdict:%s", out[i:])
	}
}

// compareScripts runs script a on target ta and script b on tb (threads
// clients, 5 s each) into one results store and returns compare's output.
func compareScripts(t *testing.T, ta, a, tb, b string, threads int) string {
	t.Helper()
	dir := t.TempDir()
	results := filepath.Join(dir, "results.db")
	for i, run := range []struct{ tg, script string }{{ta, a}, {tb, b}} {
		file := filepath.Join(dir, strconv.Itoa(i)+".sql")
		if err := os.WriteFile(file, []byte(run.script), 0o644); err != nil {
			t.Fatal(err)
		}
		dbarena(t, "run", "script", "--file", file, run.tg, "--threads", strconv.Itoa(threads), "--time", "5",
			"--report-interval", "1", "--results", results).mustSucceed(t)
	}
	r := dbarena(t, "compare", "1", "2", "--results", results).mustSucceed(t)
	if !strings.Contains(r.stdout, "Where the difference comes from") {
		t.Fatalf("compare has no why table:\n%s", tail(r.stdout, 2000))
	}
	return r.stdout
}

// whyRatio returns the B/A column of the why table's row named name.
func whyRatio(t *testing.T, out, name string) float64 {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), name); ok {
			f := strings.Fields(rest)
			if len(f) == 3 {
				if x, err := strconv.ParseFloat(strings.TrimSuffix(f[2], "x"), 64); err == nil {
					return x
				}
			}
		}
	}
	t.Fatalf("no ratio for %q in:\n%s", name, tail(out, 2000))
	return 0
}

// checkDurableWhy: relaxed commit (B) against durable (A) is read as
// fewer fsyncs per transaction.
func checkDurableWhy(t *testing.T, out string) {
	t.Helper()
	if !strings.Contains(out, "reading: B spends") || !strings.Contains(out, "less fsyncs per transaction") {
		t.Errorf("compare does not name the fsyncs:\n%s", tail(out, 2000))
	}
	if r := whyRatio(t, out, "fsyncs/txn"); r > 0.5 {
		t.Errorf("fsyncs/txn ratio %.2f, want well under 1", r)
	}
	t.Logf("server CPU us/txn B/A: %.2f", whyRatio(t, out, "server CPU us/txn"))
}

// TestCompareWhyDurableCommitPostgres: synchronous_commit on (A) against
// off (B) through compare.
func TestCompareWhyDurableCommitPostgres(t *testing.T) {
	durable := bottleneckSandbox(t, "w2syncon", target.FlavorPostgres, sandbox.ProfileDurable)
	relaxed := bottleneckSandbox(t, "w2syncoff", target.FlavorPostgres, sandbox.ProfileDurable,
		sandbox.Setting{Key: "synchronous_commit", Value: "off"})
	checkDurableWhy(t, compareScripts(t, durable, updateScript, relaxed, updateScript, 4))
}

// TestCompareWhyDurableCommitMariaDB: innodb_flush_log_at_trx_commit=1 and
// sync_binlog=1 (A) against both at 0 (B) through compare.
func TestCompareWhyDurableCommitMariaDB(t *testing.T) {
	durable := bottleneckSandbox(t, "w2durmy", target.FlavorMariaDB, sandbox.ProfileDurable)
	relaxed := bottleneckSandbox(t, "w2relmy", target.FlavorMariaDB, sandbox.ProfileDurable,
		sandbox.Setting{Key: "innodb_flush_log_at_trx_commit", Value: "0"}, sandbox.Setting{Key: "sync_binlog", Value: "0"})
	checkDurableWhy(t, compareScripts(t, durable, updateScript, relaxed, updateScript, 4))
}

// TestCompareWhyHotRowMariaDB: spread rows (A) against a hot row (B) on
// MariaDB through compare: the row-lock waits are where the difference
// comes from.
func TestCompareWhyHotRowMariaDB(t *testing.T) {
	tg := bottleneckSandbox(t, "w2whymy", target.FlavorMariaDB, sandbox.ProfileFast)
	out := compareScripts(t, tg, spreadRowScript, tg, hotRowScript, 8)
	if !strings.Contains(out, "more of their time in row-lock waits") {
		t.Errorf("compare does not name the row-lock waits:\n%s", tail(out, 2000))
	}
}

// scriptPerTxn runs a script on threads clients for a few seconds and
// returns the stored run's per-transaction costs.
func scriptPerTxn(t *testing.T, tg, script string, threads int) map[string]float64 {
	t.Helper()
	return scriptMonitor(t, tg, script, threads).PerTxn
}

// scriptMonitor runs a script on threads clients for a few seconds and
// returns the stored run's monitor section.
func scriptMonitor(t *testing.T, tg, script string, threads int) *summary.Monitor {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "w.sql")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results.db")
	dbarena(t, "run", "script", "--file", file, tg, "--threads", strconv.Itoa(threads), "--time", "4",
		"--report-interval", "1", "--results", results).mustSucceed(t)
	run := storedRun(t, results)
	if run.Monitor == nil || run.Monitor.PerTxn == nil {
		t.Fatalf("no per_txn figures")
	}
	return run.Monitor
}

// TestPerTxnServerCounts: a point select examines about one row per
// transaction; an update writes WAL (PostgreSQL: WAL records) every
// transaction; both flavors report buffer pool misses. The wait profile
// says what its readings cost, and MariaDB's row-lock gauge is read once
// a second without row-lock waits, ten times with them.
func TestPerTxnServerCounts(t *testing.T) {
	const pointSelect = "\\set aid random(1, 100000)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n"
	for _, c := range []struct {
		name   string
		flavor target.Flavor
	}{{"w2costmy", target.FlavorMariaDB}, {"w2costpg", target.FlavorPostgres}} {
		t.Run(string(c.flavor), func(t *testing.T) {
			tg := bottleneckSandbox(t, c.name, c.flavor, sandbox.ProfileFast)
			m := scriptMonitor(t, tg, pointSelect, 2)
			pt := m.PerTxn
			// The wait profile's readings: PostgreSQL's sessions ten a
			// second; MariaDB's row-lock gauge once a second while no
			// session waits for a row lock.
			readings := m.Avg["monitor.wait_readings"]
			if c.flavor == target.FlavorPostgres && (readings < 5 || readings > 11) ||
				c.flavor == target.FlavorMariaDB && (readings < 0.5 || readings > 2.5) {
				t.Errorf("point select: %.1f wait readings a second", readings)
			}
			if _, ok := m.Avg["monitor.wait_query_ms"]; !ok || m.Avg["monitor.sample_ms"] <= 0 {
				t.Errorf("no sampling cost figures: %v", m.Avg)
			}
			// PostgreSQL publishes statistics up to a second late: the
			// last interval's rows may be missing.
			if r, ok := pt["rows_examined"]; !ok || r < 0.6 || r > 2 {
				t.Errorf("point select: rows_examined %v (%v), want about 1; %v", r, ok, pt)
			}
			if _, ok := pt["buffer_misses"]; !ok {
				t.Errorf("point select: no buffer_misses: %v", pt)
			}
			if w := pt["wal_kb"]; w > 0.05 {
				t.Errorf("point select: %.3f WAL KB per transaction, want about none", w)
			}
			pt = scriptPerTxn(t, tg, updateScript, 2)
			if w := pt["wal_kb"]; w < 0.05 {
				t.Errorf("update: %.3f WAL KB per transaction, want some: %v", w, pt)
			}
			if c.flavor == target.FlavorPostgres {
				if r := pt["wal_records"]; r < 1 {
					t.Errorf("update: %.2f WAL records per transaction, want at least 1: %v", r, pt)
				}
				return
			}
			// Sessions waiting for a row lock: the gauge is read ten times a second.
			if r := scriptMonitor(t, tg, hotRowScript, 8).Avg["monitor.wait_readings"]; r < 5 {
				t.Errorf("hot row: %.1f row-lock readings a second, want about 10", r)
			}
		})
	}
}
