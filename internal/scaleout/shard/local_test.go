package shard

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/store/storetest"
)

// shCommand runs a shell script as a shard: its arguments are the script's
// $1.., --shard I/N and --run-id KEY last.
func shCommand(script string) func(args []string) (*exec.Cmd, error) {
	return func(args []string) (*exec.Cmd, error) {
		return exec.Command("/bin/sh", append([]string{"-c", script, "sh"}, args...)...), nil
	}
}

// syncBuffer is a bytes.Buffer safe for the shards' concurrent lines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLocalRun: every shard gets its --shard I/N and --run-id, its output
// comes prefixed, and a shard that fails is named with its last lines.
func TestLocalRun(t *testing.T) {
	var out syncBuffer
	var started sync.Map
	l := Local{
		Command: shCommand(`echo "args $*"; echo "env $SHARD_TEST"; if [ "$4" = 1/3 ]; then echo one; echo two; echo last; exit 2; fi`),
		Env:     []string{"SHARD_TEST=yes"}, Output: &out,
		Started: func(key string, i, n, pid int) { started.Store(i, key) },
	}
	exits, err := l.Run(context.Background(), []string{"run", "x"}, "k-1", 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"", "shard 1: exit status 2: one | two | last", ""} {
		got := ""
		if exits[i] != nil {
			got = exits[i].Error()
		}
		if !strings.HasPrefix(got, want) || (want == "") != (got == "") {
			t.Errorf("shard %d exit %q, want %q", i, got, want)
		}
		if k, ok := started.Load(i); !ok || k != "k-1" {
			t.Errorf("shard %d: Started %v", i, k)
		}
	}
	for _, want := range []string{"[shard 0] args run x --shard 0/3 --run-id k-1", "[shard 2] args run x --shard 2/3 --run-id k-1",
		"[shard 1] env yes", "[shard 1] last"} {
		if !strings.Contains(out.String(), want+"\n") {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestLocalInterrupt: a done context interrupts every shard (SIGINT), and
// Run still waits for them.
func TestLocalInterrupt(t *testing.T) {
	var out syncBuffer
	ready := make(chan struct{}, 2)
	l := Local{Command: shCommand(`trap 'echo interrupted; exit 130' INT; echo up; while :; do sleep 0.05; done`), Output: &out,
		Started: func(string, int, int, int) { ready <- struct{}{} }}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-ready
		<-ready
		for !(strings.Count(out.String(), "up\n") == 2) { // both traps set
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	exits, err := l.Run(ctx, nil, "k", 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range exits {
		if e == nil || !strings.Contains(e.Error(), "interrupted") {
			t.Errorf("shard %d exit %v, want interrupted", i, e)
		}
	}
}

func TestLocalStartFails(t *testing.T) {
	l := Local{Command: func(args []string) (*exec.Cmd, error) { return exec.Command("/nonexistent/dbarena"), nil }}
	if _, err := l.Run(context.Background(), nil, "k", 2); err == nil || !strings.Contains(err.Error(), "start shard 0") {
		t.Errorf("Run = %v, want start shard 0", err)
	}
}

// TestLocalFailsBeforeStart: with Store, a shard that exits with an error
// before the run's common start is set interrupts the others (which would
// wait for it at the barrier), and their exits name it.
func TestLocalFailsBeforeStart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st := storetest.Temp(t)
	if err := st.JoinShard(ctx, "k-2", 0, 3, "h"); err != nil { // shard 0 waits at the barrier
		t.Fatal(err)
	}
	var out syncBuffer
	// Shards 0 and 2 wait (as at the barrier) until interrupted; shard 1
	// fails at once, once the others' traps are set.
	l := Local{Store: st, Output: &out, Command: shCommand(`
if [ "$3" = 1/3 ]; then
	while [ ! -f "$1/0" ] || [ ! -f "$1/2" ]; do sleep 0.05; done
	echo "cannot connect"; exit 1
fi
trap 'echo interrupted; exit 130' INT
touch "$1/${3%/3}"
while :; do sleep 0.05; done`)}
	exits, err := l.Run(ctx, []string{t.TempDir()}, "k-2", 3)
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the shards were not interrupted before the test's bound: %v", exits)
	}
	if exits[1] == nil || !strings.Contains(exits[1].Error(), "cannot connect") || strings.Contains(exits[1].Error(), "interrupted") {
		t.Errorf("shard 1 exit %v, want its own failure", exits[1])
	}
	for _, i := range []int{0, 2} {
		if e := exits[i]; e == nil || !errors.Is(e, ErrStopped) || !strings.Contains(e.Error(), "interrupted (shard 1 failed before the start)") {
			t.Errorf("shard %d exit %v, want interrupted as shard 1 failed", i, e)
		}
	}
}

// TestLocalFailsAfterStart: a shard that fails once the common start is
// set does not interrupt the others.
func TestLocalFailsAfterStart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st := storetest.Temp(t)
	for i := range 2 {
		if err := st.JoinShard(ctx, "k-3", i, 2, "h"); err != nil {
			t.Fatal(err)
		}
	}
	if at, err := st.ShardStart(ctx, "k-3", time.Millisecond); err != nil || at.IsZero() {
		t.Fatalf("ShardStart = %v, %v", at, err)
	}
	// Shard 1 fails; shard 0 ends well a while after it has (its trap
	// would say it was interrupted).
	dir := t.TempDir()
	l := Local{Store: st, Command: shCommand(`
if [ "$3" = 1/2 ]; then touch "$1/1.done"; echo degraded; exit 1; fi
trap 'echo interrupted; exit 130' INT
while [ ! -f "$1/1.done" ]; do sleep 0.05; done
sleep 1; echo done`)}
	exits, err := l.Run(ctx, []string{dir}, "k-3", 2)
	if err != nil {
		t.Fatal(err)
	}
	if exits[0] != nil || exits[1] == nil {
		t.Errorf("exits %v, want shard 0 well, shard 1 failed", exits)
	}
}

// TestLocalUnresponsive: a shard that stops beating (SIGSTOP) is killed
// once Unresponsive passed, the others are interrupted, and one that
// ignores the interrupt is killed Grace later; Run returns within that
// bound, naming the silent shard.
func TestLocalUnresponsive(t *testing.T) {
	script := `beat() { while :; do printf . >&${DBARENA_SHARD_HEARTBEAT%%:*} || exit 9; sleep 0.1; done; }
case "$2" in
0/3) trap 'exit 130' INT; beat ;;
1/3) printf . >&${DBARENA_SHARD_HEARTBEAT%%:*}; sleep 0.5; kill -STOP $$ ;;
2/3) trap '' INT; beat ;;
esac`
	l := Local{Command: shCommand(script), Unresponsive: time.Second, Grace: 2 * time.Second}
	t0 := time.Now()
	exits, err := l.Run(context.Background(), nil, "k-1", 3)
	took := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	if took > 20*time.Second {
		t.Errorf("Run took %v, want about 0.5 + 1 + 2 s", took)
	}
	var ue *UnresponsiveError
	if !errors.As(exits[1], &ue) || ue.Index != 1 || ue.PID == 0 || !errors.Is(exits[1], ErrUnresponsive) {
		t.Fatalf("shard 1: %v, want it unresponsive", exits[1])
	}
	if !strings.Contains(exits[1].Error(), "shard 1 stopped answering: no heartbeat for") {
		t.Errorf("shard 1: %v", exits[1])
	}
	for _, i := range []int{0, 2} {
		if !errors.Is(exits[i], ErrStopped) || !strings.Contains(exits[i].Error(), "shard 1 stopped answering") {
			t.Errorf("shard %d: %v, want stopped because of shard 1", i, exits[i])
		}
	}
	if !strings.Contains(exits[2].Error(), "killed") {
		t.Errorf("shard 2 ignored SIGINT, want it killed after the grace: %v", exits[2])
	}
}
