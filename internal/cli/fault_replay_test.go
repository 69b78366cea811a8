package cli

// Replay faults (issue 33, items 4 and 5): a paced replay whose server is
// killed or frozen ends within its documented bound, failed, with the
// statements it could not send counted; account statements in a capture
// are never sent, so the sandbox's own account survives a replay.

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/target"
)

// pacedCapture is sessions sessions of n statements each, one every
// span/n, all open at once.
func pacedCapture(t *testing.T, flavor string, sessions, n int, span time.Duration) string {
	t.Helper()
	step := span.Microseconds() / int64(n)
	var evs []capture.Event
	for s := 0; s < sessions; s++ {
		evs = append(evs, capture.Event{Session: fmt.Sprint(s + 1), TUS: int64(s), Kind: capture.KindConnect})
	}
	for i := 0; i < n; i++ {
		for s := 0; s < sessions; s++ {
			evs = append(evs, capture.Event{Session: fmt.Sprint(s + 1), TUS: 1000 + int64(i)*step + int64(s),
				Kind: capture.KindQuery, SQL: fmt.Sprintf("SELECT c FROM sbtest1 WHERE id = %d", i%2000+1)})
		}
	}
	for s := 0; s < sessions; s++ {
		evs = append(evs, capture.Event{Session: fmt.Sprint(s + 1), TUS: 2000 + int64(n)*step + int64(s), Kind: capture.KindQuit})
	}
	return writeCaptureFile(t, "paced.capture", flavor, evs)
}

// replayFaultBound is how long after its server stops answering a replay
// may go on: stall detection (10 s + 5 s probe + 1 s tick), then
// --reconnect-timeout (2 s here), with room for a loaded machine.
const replayFaultBound = 45 * time.Second

// TestFaultReplayServerGone: 4 sessions x 800 statements over 8 s; the
// server is killed (SIGKILL) or frozen (SIGSTOP) at 3 s. The replay ends
// within replayFaultBound, exit 1, stored failed (never complete), says it
// did not keep up and counts the statements it could not send.
func TestFaultReplayServerGone(t *testing.T) {
	for _, fl := range faultFlavors() {
		for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGSTOP} {
			t.Run(fmt.Sprintf("%s/%s", fl, map[syscall.Signal]string{syscall.SIGKILL: "kill", syscall.SIGSTOP: "stop"}[sig]), func(t *testing.T) {
				tg, sb := faultSandbox(t, fl)
				flavor := "mysql"
				if fl.Family() == target.Postgres {
					flavor = "postgres"
				}
				file := pacedCapture(t, flavor, 4, 800, 8*time.Second)
				results, js := filepath.Join(t.TempDir(), "r.db"), jsonPath(t)
				ar := startRun(t, "run", "replay", "--capture", file, tg, "--reconnect-timeout", "2",
					"--report-interval", "1", "--results", results, "--json", js, "--monitor", "none")
				time.Sleep(3 * time.Second)
				if sig == syscall.SIGSTOP {
					t.Cleanup(func() { signalServer(t, sb.Name, syscall.SIGCONT) })
				}
				signalServer(t, sb.Name, sig)
				at := time.Now()
				r := ar.wait(t)
				took := time.Since(at)
				if sig == syscall.SIGSTOP {
					signalServer(t, sb.Name, syscall.SIGCONT)
				}
				t.Logf("replay ended %.1f s after the server was signalled\n%s", took.Seconds(), tail(r.stdout, 2500))
				if took > replayFaultBound {
					t.Errorf("replay ended %v after its server stopped answering, want within %v", took, replayFaultBound)
				}
				if r.code != ExitFailed {
					t.Errorf("exit %d, want %d\n%s\n%s", r.code, ExitFailed, tail(r.stdout, 3000), r.stderr)
				}
				if strings.Contains(r.stdout, "(complete)") || strings.Contains(r.stdout, "): yes") {
					t.Errorf("a replay that lost its server says complete or kept up:\n%s", tail(r.stdout, 3000))
				}
				run := readSummary(t, js)
				if run.Status != summary.StatusFailed && run.Status != summary.StatusDegraded {
					t.Errorf("status %s, want failed or degraded", run.Status)
				}
				if got := storedRun(t, results); got.Status != run.Status {
					t.Errorf("stored status %s, --json %s", got.Status, run.Status)
				}
				rp := run.Replay
				if rp == nil {
					t.Fatal("no replay figures")
				}
				if rp.KeptUp {
					t.Errorf("kept_up true after losing the server")
				}
				if rp.Skipped["not run: the server stopped answering"] == 0 || rp.Sent+rp.Skipped["not run: the server stopped answering"] < 3200-int64(4) {
					t.Errorf("sent %d skipped %v: want the statements not run counted", rp.Sent, rp.Skipped)
				}
				if !strings.Contains(r.stdout, "Statements not sent:") {
					t.Errorf("the summary does not say what was not sent:\n%s", tail(r.stdout, 3000))
				}
			})
		}
	}
}

// TestFaultReplayAccountStatements: a capture that changes the replaying
// account's password (SET PASSWORD, masked or not, ALTER ROLE, GRANT,
// hidden in an executable comment or a multi-statement text) replays with
// those statements skipped and counted; a later run still connects.
func TestFaultReplayAccountStatements(t *testing.T) {
	for _, fl := range faultFlavors() {
		t.Run(string(fl), func(t *testing.T) {
			tg, _ := faultSandbox(t, fl)
			flavor, stmts := "mysql", []string{
				"SET PASSWORD = PASSWORD('x')",
				"SET PASSWORD = '***'",
				"/*!50000 SET PASSWORD = PASSWORD('y') */",
				"ALTER USER CURRENT_USER() IDENTIFIED BY 'z'",
				"GRANT ALL ON *.* TO CURRENT_USER",
			}
			if fl.Family() == target.Postgres {
				flavor, stmts = "postgres", []string{
					"ALTER ROLE CURRENT_USER PASSWORD 'x'",
					"SELECT 1; ALTER ROLE CURRENT_USER PASSWORD '***'",
					"ALTER USER CURRENT_USER WITH PASSWORD 'y'",
					"DO $$ BEGIN EXECUTE 'ALTER ROLE ' || current_user || ' PASSWORD ''z'''; END $$",
					"SET ROLE NONE",
				}
			}
			evs := []capture.Event{{Session: "1", TUS: 0, Kind: capture.KindConnect}}
			for i, q := range stmts {
				evs = append(evs, capture.Event{Session: "1", TUS: int64(10 * (i + 1)), Kind: capture.KindQuery, SQL: q})
			}
			evs = append(evs, capture.Event{Session: "1", TUS: 100, Kind: capture.KindQuery, SQL: "SELECT 1"},
				capture.Event{Session: "1", TUS: 110, Kind: capture.KindQuit})
			file := writeCaptureFile(t, "account.capture", flavor, evs)
			results := filepath.Join(t.TempDir(), "r.db")
			for i := range 2 { // the second replay must still connect
				js := jsonPath(t)
				r := dbarena(t, "run", "replay", "--capture", file, tg, "--speed", "max", "--results", results,
					"--json", js, "--monitor", "none")
				if r.code != ExitOK {
					t.Fatalf("replay %d: exit %d\n%s\n%s", i+1, r.code, tail(r.stdout, 2000), r.stderr)
				}
				run := readSummary(t, js)
				var acct int64
				for k, n := range run.Replay.Skipped {
					if strings.HasPrefix(k, "account statement: ") {
						acct += n
					}
				}
				if acct != int64(len(stmts)) || run.Replay.Sent != 1 || run.Totals.Errors != 0 {
					t.Errorf("replay %d: skipped %v sent %d errors %d; want the %d account statements skipped, 1 sent",
						i+1, run.Replay.Skipped, run.Replay.Sent, run.Totals.Errors, len(stmts))
				}
				if !strings.Contains(r.stdout, "account statement: ") {
					t.Errorf("the summary does not list the skipped account statements:\n%s", tail(r.stdout, 2000))
				}
			}
			dbarena(t, "run", "oltp_point_select", tg, "--tables", "1", "--table-size", "2000", "--time", "1",
				"--results", results, "--monitor", "none").mustSucceed(t)
		})
	}
}
