package cli

// Fault cases of `dbarena run` for each workload family (OLTP, TPC-C,
// pgbench-style scripts) on both flavors: the server is frozen (SIGSTOP)
// or killed (SIGKILL) during a long timed run. The run must end within the
// documented bound after the fault (--stall-timeout for a frozen server,
// --reconnect-timeout for a dead one), fail (exit 1), and be stored
// failed.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
)

// Short bounds, so the suite stays within a few minutes of CI: the run
// itself is set to last a minute, far longer than either bound.
const (
	faultStall     = 3 * time.Second // --stall-timeout
	faultReconnect = 2 * time.Second // --reconnect-timeout
	// faultMargin is what ending a run may take after its bound: the stop,
	// abandoning the stuck workers, the last interval, storing the run. It
	// bounds a hang, it does not time dbarena.
	faultMargin = 15 * time.Second
)

// faultWorkload is one workload family of the run fault cases.
type faultWorkload struct {
	name    string
	prepare []string // after "prepare"; nil: faultSandbox's oltp tables
	run     []string // after "run"
	pgRun   []string // more run arguments on PostgreSQL
}

func faultWorkloads() []faultWorkload {
	return []faultWorkload{
		{"oltp", nil, []string{"oltp_read_write", "--tables", "1", "--table-size", "2000"}, nil},
		{"tpcc", []string{"tpcc", "--warehouses", "1", "--threads", "2"}, []string{"tpcc", "--warehouses", "1"}, nil},
		// On PostgreSQL the script's workers share poller groups (--jobs),
		// whose parked workers the stop must reach too.
		{"script", []string{"script", "--scale", "1", "--threads", "2"}, []string{"script", "--builtin", "tpcb-like"},
			[]string{"--jobs", "2"}},
	}
}

// faultRun starts a one-minute run of w on tg, signals the server with sig
// after a few seconds and returns the run's result, its --json summary, its
// stored run and how long it took to end after the signal.
func faultRun(t *testing.T, tg, name string, w faultWorkload, sig syscall.Signal) (result, *summary.Run, *summary.Run, time.Duration) {
	t.Helper()
	results, js := filepath.Join(t.TempDir(), "r.db"), jsonPath(t)
	args := append([]string{"run"}, w.run...)
	if sb, err := suite.mgr.Get(name); err == nil && sb.Flavor == target.FlavorPostgres {
		args = append(args, w.pgRun...)
	}
	args = append(args, tg, "--threads", "4", "--time", "60", "--report-interval", "1", "--results", results,
		"--json", js, "--stall-timeout", faultStall.String(), "--reconnect-timeout", faultReconnect.String())
	ar := startRun(t, args...)
	time.Sleep(3 * time.Second)
	signalServer(t, name, sig)
	at := time.Now()
	r := ar.wait(t)
	took := time.Since(at)
	run := readSummary(t, js)
	t.Logf("%s: ended %.1f s after the signal, exit %d, %s: %s", w.name, took.Seconds(), r.code, run.Status, run.Error)
	return r, run, storedRun(t, results), took
}

// TestFaultRunServerGone: a frozen server and a killed one, during OLTP,
// TPC-C and script runs, on MariaDB and PostgreSQL. (OLTP under kill -9 is
// TestFaultServerKilledMidRun.)
func TestFaultRunServerGone(t *testing.T) {
	for _, fl := range faultFlavors() {
		t.Run(string(fl), func(t *testing.T) {
			tg, sb := faultSandbox(t, fl)
			for _, w := range faultWorkloads() {
				if w.prepare != nil {
					dbarena(t, append(append([]string{"prepare"}, w.prepare...), tg, "--monitor", "none")...).mustSucceed(t)
				}
			}
			// Not a fault, but the same bound on the same data: TPC-C's
			// keying and think times (up to 10 x 12 s) wake at the run's
			// end instead of holding it for the stop grace.
			t.Run("think/tpcc", func(t *testing.T) {
				js := jsonPath(t)
				start := time.Now()
				r := dbarena(t, "run", "tpcc", "--warehouses", "1", "--think", tg, "--threads", "2", "--time", "2",
					"--json", js, "--results", filepath.Join(t.TempDir(), "r.db"))
				took := time.Since(start)
				t.Logf("--time 2 with think times: ended after %.1f s", took.Seconds())
				r.mustSucceed(t)
				if took > 8*time.Second { // the stop grace is 10 s
					t.Errorf("run took %v: think times held it past --time 2", took)
				}
				if run := readSummary(t, js); run.Status != summary.StatusComplete || run.Totals.Errors != 0 {
					t.Errorf("status %s errors %d: want complete", run.Status, run.Totals.Errors)
				}
			})
			for _, w := range faultWorkloads() {
				t.Run("SIGSTOP/"+w.name, func(t *testing.T) {
					t.Cleanup(func() { signalServer(t, sb.Name, syscall.SIGCONT) })
					r, run, stored, took := faultRun(t, tg, sb.Name, w, syscall.SIGSTOP)
					signalServer(t, sb.Name, syscall.SIGCONT)
					// The stall, then the probe's wait (5 s, or the stall timeout if shorter).
					if bound := faultStall + min(5*time.Second, faultStall); took > bound+faultMargin {
						t.Errorf("ended %v after the freeze, want within --stall-timeout and its probe %v + %v", took, bound, faultMargin)
					}
					if r.code != ExitFailed || run.Status != summary.StatusFailed || stored.Status != summary.StatusFailed {
						t.Fatalf("exit %d, status %s, stored %s: want 1 and failed\n%s\n%s", r.code, run.Status, stored.Status,
							tail(r.stdout, 2000), r.stderr)
					}
					if !strings.Contains(run.Error, "server stopped answering for 3s") || !strings.Contains(r.stderr+r.stdout, "stopped answering") {
						t.Errorf("error %q, stderr %q: want the stall named", run.Error, r.stderr)
					}
					if run.Totals.Unfinished == 0 {
						t.Errorf("no unfinished events: the stalled ones are lost")
					}
				})
			}
			for _, w := range faultWorkloads()[1:] {
				t.Run("SIGKILL/"+w.name, func(t *testing.T) {
					r, run, stored, took := faultRun(t, tg, sb.Name, w, syscall.SIGKILL)
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					if _, err := suite.mgr.Start(ctx, sandbox.Spec{Name: sb.Name}); err != nil {
						t.Fatalf("restart: %v", err)
					}
					if took > faultReconnect+faultMargin {
						t.Errorf("ended %v after the kill, want within --reconnect-timeout %v + %v", took, faultReconnect, faultMargin)
					}
					if r.code != ExitFailed || run.Status != summary.StatusFailed || stored.Status != summary.StatusFailed {
						t.Fatalf("exit %d, status %s, stored %s: want 1 and failed\n%s\n%s", r.code, run.Status, stored.Status,
							tail(r.stdout, 2000), r.stderr)
					}
					if !strings.Contains(run.Error, "target unreachable") || len(run.Outages) == 0 || run.Outages[len(run.Outages)-1].Recovered {
						t.Errorf("error %q outages %+v: want the target unreachable, an unrecovered outage", run.Error, run.Outages)
					}
				})
			}
		})
	}
}

// TestFaultRunLongStatementNoStall: statements longer than --stall-timeout
// on a server that answers are no stall: the watchdog's probe gets its
// answer and the run completes.
func TestFaultRunLongStatementNoStall(t *testing.T) {
	needServers(t)
	for _, f := range flavors() {
		t.Run(f.name, func(t *testing.T) {
			sql := "SELECT SLEEP(5);\n"
			if f.target == pgTarget {
				sql = "SELECT pg_sleep(5);\n"
			}
			script := filepath.Join(t.TempDir(), "long.sql")
			if err := os.WriteFile(script, []byte(sql), 0o644); err != nil {
				t.Fatal(err)
			}
			js := jsonPath(t)
			r := dbarena(t, withTarget(f.target, "run", "script", "--file", script, "--threads", "2", "--time", "7",
				"--stall-timeout", "1", "--json", js, "--results", filepath.Join(t.TempDir(), "r.db"))...)
			run := readSummary(t, js)
			if r.code != ExitOK || run.Status != summary.StatusComplete || run.Totals.Events < 2 {
				t.Fatalf("exit %d, status %s, %d events, error %q: want a complete run", r.code, run.Status,
					run.Totals.Events, run.Error)
			}
		})
	}
}
