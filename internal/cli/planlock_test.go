package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Two `plan run` of one plan at once: the second fails at once (exit 2,
// one line naming the first's pid) and stores nothing; with --wait it runs
// once the first ended. Neither breaks the other's cells.
func TestPlanRunLocked(t *testing.T) {
	needServers(t)
	results := filepath.Join(t.TempDir(), "r.db")
	path := dsnPlan(t, "locked", 2, false) // 2 cells x 2 rounds
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "DBARENA_HOME="+suite.home,
		childEnv+"="+strings.Join([]string{"plan", "run", path, "--results", results}, "\x1f"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		<-done
	}()
	pid := strconv.Itoa(cmd.Process.Pid)
	deadline := time.Now().Add(time.Minute)
	for held := false; !held; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first plan run did not take the plan's lock")
		}
		files, _ := filepath.Glob(filepath.Join(suite.home, "locks", "plan-locked-*.lock"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			held = held || strings.TrimSpace(string(b)) == pid
		}
	}

	r := dbarena(t, "plan", "run", path, "--results", results)
	if r.code != ExitUsage {
		t.Fatalf("second plan run: exit %d, want 2\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "process "+pid) {
		t.Errorf("second plan run: want one line naming pid %s, got %q", pid, r.stderr)
	}

	// --wait: runs once the first ended, in a session of its own.
	r = dbarena(t, "plan", "run", path, "--results", results, "--wait", "3m").mustSucceed(t)
	if !strings.Contains(r.stderr, "process "+pid+"; waiting up to 3m0s") {
		t.Errorf("plan run --wait: stderr %q", r.stderr)
	}
	select {
	case err := <-done:
		done <- err
		if err != nil {
			t.Errorf("first plan run: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("first plan run still running after the second ended")
	}
	sessions := map[string]int{}
	for _, row := range planRuns(t, results, "locked") {
		if row.Status != "complete" {
			t.Errorf("run %d %s", row.ID, row.Status)
		}
		sessions[row.Tags["plan.session"]]++
	}
	if len(sessions) != 2 {
		t.Errorf("runs by session %v, want 2 sessions of 4 runs", sessions)
	}
	for s, n := range sessions {
		if n != 4 {
			t.Errorf("session %s: %d runs, want 4", s, n)
		}
	}
}
