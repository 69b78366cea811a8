package shard

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
)

// Local runs the N shards of a run as processes of this machine: the same
// command line, each with --shard I/N --run-id KEY added, sharing the
// results store named in it. `dbarena run --shards N --local` and a plan
// step with shards: N both run their shards so.
type Local struct {
	// Command makes the command of one shard from its arguments (this
	// binary; tests replace it). Its Env, when set, is kept.
	Command func(args []string) (*exec.Cmd, error)
	// Env is added to each shard's environment.
	Env []string
	// Output receives each shard's output (standard output and error),
	// line by line, each prefixed "[shard I] "; nil discards it.
	Output io.Writer
	// Started, if set, is called with each shard's run, index and
	// process id (progress).
	Started func(key string, i, n, pid int)
}

// tailLines is how many of a shard's last output lines an exit error
// quotes.
const tailLines = 3

// Run starts the n shards of run key with args, waits until every one has
// exited, and returns each shard's exit error (nil when it exited with 0;
// otherwise with its last lines of output). When ctx is done the shards
// are interrupted (SIGINT), as Ctrl-C interrupts one run, and still waited
// for. The error is for a shard that could not be started: the shards
// already started are then killed.
func (l Local) Run(ctx context.Context, args []string, key string, n int) ([]error, error) {
	if n < 1 || n > MaxShards {
		return nil, fmt.Errorf("%d shards: want 1 to %d", n, MaxShards)
	}
	out := l.Output
	if out == nil {
		out = io.Discard
	}
	var mu sync.Mutex // one line at a time on out
	cmds := make([]*exec.Cmd, n)
	exits := make([]error, n)
	tails := make([]*tail, n)
	var wg sync.WaitGroup
	for i := range cmds {
		a := append(append([]string(nil), args...), "--shard", fmt.Sprintf("%d/%d", i, n), "--run-id", key)
		cmd, err := l.Command(a)
		if err == nil {
			if cmd.Env == nil {
				cmd.Env = cmd.Environ()
			}
			cmd.Env = append(cmd.Env, l.Env...)
			cmd.Stdin = nil
		}
		pr, pw := io.Pipe()
		if err == nil {
			cmd.Stdout, cmd.Stderr = pw, pw
			err = cmd.Start()
		}
		if err != nil {
			for _, c := range cmds[:i] {
				_ = c.Process.Kill()
			}
			wg.Wait()
			return nil, fmt.Errorf("start shard %d: %w", i, err)
		}
		cmds[i], tails[i] = cmd, &tail{}
		if l.Started != nil {
			l.Started(key, i, n, cmd.Process.Pid)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			copyLines(out, &mu, pr, fmt.Sprintf("[shard %d] ", i), tails[i])
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			exits[i] = cmd.Wait()
			pw.Close()
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		for _, c := range cmds {
			_ = c.Process.Signal(syscall.SIGINT)
		}
		<-done
	}
	for i, err := range exits {
		if err != nil {
			if t := tails[i].String(); t != "" {
				err = fmt.Errorf("%w: %s", err, t)
			}
			exits[i] = fmt.Errorf("shard %d: %w", i, err)
		}
	}
	return exits, nil
}

// copyLines copies r to w line by line, each with prefix, keeping the last
// lines in t.
func copyLines(w io.Writer, mu *sync.Mutex, r io.Reader, prefix string, t *tail) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		t.add(sc.Text())
		mu.Lock()
		fmt.Fprintln(w, prefix+sc.Text())
		mu.Unlock()
	}
	_, _ = io.Copy(io.Discard, r)
}

// tail keeps the last few non-empty lines of a shard's output.
type tail struct {
	mu    sync.Mutex
	lines []string
}

func (t *tail) add(s string) {
	if strings.TrimSpace(s) == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, s)
	if len(t.lines) > tailLines {
		t.lines = t.lines[1:]
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, " | ")
}
