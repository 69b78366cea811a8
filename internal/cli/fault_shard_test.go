package cli

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/target"
)

// shardArgs are the arguments of a sharded fault case's run: 3 local
// shards of oltp_read_write for up to a minute.
func shardArgs(tg, results, key string, extra ...string) []string {
	return append([]string{"run", "oltp_read_write", tg, "--tables", "1", "--table-size", "2000", "--threads", "3",
		"--time", "60", "--report-interval", "1", "--monitor", "none", "--results", results,
		"--shards", "3", "--local", "--run-id", key}, extra...)
}

// startedShards waits until every shard of run key started its clock and
// returns their members (with their pids).
func startedShards(t *testing.T, results, key string) []store.ShardMember {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for ; time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		st, err := store.Open(context.Background(), results)
		if err != nil {
			continue // not created yet
		}
		br, err := st.ShardRun(context.Background(), key)
		st.Close()
		if err != nil || len(br.Members) != 3 {
			continue
		}
		started := 0
		for _, m := range br.Members {
			if m.Started {
				started++
			}
		}
		if started == 3 {
			return br.Members
		}
	}
	t.Fatalf("the shards of run %s did not start", key)
	return nil
}

// TestFaultShardStopped: a shard process frozen by SIGSTOP used to hang
// `run --shards 3 --local` for ever, its run stored "running". The
// coordinator ends within --shard-timeout plus the grace, kills the shard,
// stops the others and stores the run failed, naming the shard.
func TestFaultShardStopped(t *testing.T) {
	tg, _ := faultSandbox(t, target.FlavorMariaDB)
	results := filepath.Join(t.TempDir(), "r.db")
	ar := startRun(t, shardArgs(tg, results, "stopped-3", "--shard-timeout", "3s")...)
	members := startedShards(t, results, "stopped-3")
	time.Sleep(2 * time.Second)
	pid := int(members[1].PID)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP shard 1 (pid %d): %v", pid, err)
	}
	stoppedAt := time.Now()
	defer syscall.Kill(pid, syscall.SIGCONT) //nolint:errcheck // gone when the test passes
	r := ar.wait(t)
	took := time.Since(stoppedAt)
	t.Logf("coordinator ended %v after the shard stopped", took.Round(time.Millisecond))
	// The bound: --shard-timeout 3 s + the grace (15 s), with room for a
	// loaded machine; a hang runs into --time 60 s or faultBound.
	if took > 40*time.Second {
		t.Errorf("coordinator ended %v after the shard stopped, want within 3 s + 15 s", took)
	}
	if r.code != ExitFailed {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, tail(r.stdout, 2000), tail(r.stderr, 3000))
	}
	if want := "shard 1 stopped answering: no heartbeat for"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, tail(r.stderr, 3000))
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the stopped shard (pid %d) still exists: %v", pid, err)
	}
	run, _ := loadSharded(t, results, "stopped-3")
	if run.Status != summary.StatusFailed || !strings.Contains(run.Error, "shard 1 stopped answering") {
		t.Errorf("stored sharded run: status %s, error %q; want failed naming shard 1", run.Status, run.Error)
	}
	if run.EndedAt.IsZero() || run.EndedAt.Before(stoppedAt.Add(-5*time.Second)) || run.EndedAt.After(time.Now()) {
		t.Errorf("stored end %v, want between the stop (%v) and now", run.EndedAt, stoppedAt)
	}
	for _, s := range run.Shards {
		if s.Status == summary.StatusRunning {
			t.Errorf("shard %d still stored running", s.Index)
		}
	}
}

// TestFaultShardServerKilled: the server of a sharded run is killed for
// good. Every shard fails once reconnecting timed out; the coordinator
// ends, stores the run failed and exits 1.
func TestFaultShardServerKilled(t *testing.T) {
	tg, sb := faultSandbox(t, target.FlavorMariaDB)
	results := filepath.Join(t.TempDir(), "r.db")
	ar := startRun(t, shardArgs(tg, results, "killed-3", "--reconnect-timeout", "2")...)
	startedShards(t, results, "killed-3")
	time.Sleep(2 * time.Second)
	signalServer(t, sb.Name, syscall.SIGKILL)
	killedAt := time.Now()
	r := ar.wait(t)
	took := time.Since(killedAt)
	t.Logf("coordinator ended %v after the server was killed", took.Round(time.Millisecond))
	if took > 40*time.Second {
		t.Errorf("coordinator ended %v after the server was killed", took)
	}
	if r.code != ExitFailed {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, tail(r.stdout, 2000), tail(r.stderr, 3000))
	}
	run, _ := loadSharded(t, results, "killed-3")
	if run.Status != summary.StatusFailed {
		t.Errorf("stored sharded run: status %s (%s), want failed", run.Status, run.Error)
	}
	if run.EndedAt.IsZero() || run.EndedAt.Before(killedAt) || run.EndedAt.After(time.Now()) {
		t.Errorf("stored end %v, want between the kill (%v) and now", run.EndedAt, killedAt)
	}
	for _, s := range run.Shards {
		if s.Status != summary.StatusFailed {
			t.Errorf("shard %d stored %s, want failed", s.Index, s.Status)
		}
	}
	if !strings.Contains(r.stdout, "Stored as run killed-3 (failed, 3 shards)") {
		t.Errorf("stdout:\n%s", tail(r.stdout, 2000))
	}
}
