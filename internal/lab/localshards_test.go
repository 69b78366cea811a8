package lab

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
	"github.com/dbarena/dbarena/internal/server/target"
)

// TestLocalShardsUnresponsive: a plan step's shard that stops answering
// (SIGSTOP) ends the step within the bound, its sharded run stored failed
// with an error naming the shard.
func TestLocalShardsUnresponsive(t *testing.T) {
	p := mustParse(t, `name: j
servers: [{name: m, flavor: mariadb}]
workloads:
  - name: toy
    shards: 2
axes:
  threads: [2]
`)
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Each shard finds its index after --shard; shard 1 stops itself, shard
	// 0 beats until interrupted.
	script := `while [ $# -gt 0 ]; do [ "$1" = --shard ] && idx=$2; shift; done
fd=${DBARENA_SHARD_HEARTBEAT%%:*}
case "$idx" in
1/2) printf . >&$fd; kill -STOP $$ ;;
*) trap 'exit 130' INT; while :; do printf . >&$fd || exit 9; sleep 0.1; done ;;
esac`
	ls := LocalShards{
		Local: shard.Local{Command: func(args []string) (*exec.Cmd, error) {
			return exec.Command("/bin/sh", append([]string{"-c", script, "sh"}, args...)...), nil
		}, Unresponsive: 500 * time.Millisecond, Grace: time.Second},
		Store: st,
	}
	j := Job{Plan: p, Step: p.Schedule()[0], Session: "s", Target: target.Target{Flavor: target.FlavorMariaDB, Sandbox: "m"}}
	t0 := time.Now()
	run, err := ls.Run(context.Background(), j, "plan-j-s-1")
	if took := time.Since(t0); took > 20*time.Second {
		t.Errorf("the step took %v after its shard stopped", took)
	}
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != summary.StatusFailed || !strings.Contains(run.Error, "shard 1 stopped answering") {
		t.Errorf("sharded run %s: %q; want failed naming shard 1", run.Status, run.Error)
	}
}
