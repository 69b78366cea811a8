package shard

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
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
