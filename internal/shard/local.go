package shard

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dbarena/dbarena/internal/store"
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
	// Store, if set, is the results store the shards share. A shard that
	// exits with an error before the run's common start is set (it never
	// joined the start barrier, or left it early) then interrupts the
	// others, which would otherwise wait for it at the barrier until
	// --barrier-timeout. A shard that fails once the start is set does
	// not: the others run on, as they would without Store.
	Store interface {
		ShardRun(ctx context.Context, key string) (*store.ShardRun, error)
	}
	// Unresponsive, if > 0, bounds how long a shard may go without a
	// heartbeat (each shard beats through a pipe, HeartbeatEnv, from the
	// start of its process to its end, whatever its work): a shard
	// silent so long (stopped by SIGSTOP, frozen) is killed (SIGKILL),
	// the others are interrupted (SIGINT) and, Grace later, killed, so
	// that Run returns within Unresponsive + Grace (and the time the
	// kernel takes to end them) after a shard stopped answering. Its
	// exit error wraps ErrUnresponsive.
	Unresponsive time.Duration
	// Grace is how long the other shards have to end once one stopped
	// answering, before they are killed (DefaultGrace if 0).
	Grace time.Duration
}

// ErrStopped is wrapped by the exit error of a shard Run interrupted
// because another failed before the start (Store).
var ErrStopped = errors.New("interrupted")

// tailLines is how many of a shard's last output lines an exit error
// quotes.
const tailLines = 3

// Run starts the n shards of run key with args, waits until every one has
// exited, and returns each shard's exit error (nil when it exited with 0;
// otherwise with its last lines of output). When ctx is done the shards
// are interrupted (SIGINT), as Ctrl-C interrupts one run, and still waited
// for. With Store, a shard that fails before the common start interrupts
// the others so (their exit errors then name it). The error is for a
// shard that could not be started: the shards already started are then
// killed.
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
	lastBeat := make(beats, n)
	exited := make([]atomic.Bool, n)
	var wg sync.WaitGroup
	failed := make(chan int, n) // shards that exited with an error
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
		var beatR, beatW *os.File
		if err == nil && l.Unresponsive > 0 {
			if beatR, beatW, err = os.Pipe(); err == nil {
				cmd.ExtraFiles = append(cmd.ExtraFiles, beatW)
				cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d:%v", HeartbeatEnv, 2+len(cmd.ExtraFiles), heartbeatEvery(l.Unresponsive)))
			}
		}
		if err == nil {
			cmd.Stdout, cmd.Stderr = pw, pw
			err = cmd.Start()
		}
		if beatW != nil {
			beatW.Close() // the shard's copy is its own
		}
		if err != nil {
			if beatR != nil {
				beatR.Close()
			}
			for _, c := range cmds[:i] {
				_ = c.Process.Kill()
			}
			wg.Wait()
			return nil, fmt.Errorf("start shard %d: %w", i, err)
		}
		lastBeat.beat(i)
		if beatR != nil {
			go func() {
				defer beatR.Close()
				readBeats(beatR, lastBeat, i)
			}()
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
			err := cmd.Wait()
			exits[i] = err
			exited[i].Store(true)
			pw.Close()
			if err != nil {
				failed <- i
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	cause := -1 // the shard whose failure before the start interrupted the others
	ctxDone := ctx.Done()
	var (
		watch  <-chan time.Time // looks for a shard without heartbeat
		killAt <-chan time.Time // the end of the others' grace
	)
	silent := -1 // the first shard that stopped answering
	silentFor := time.Duration(0)
	if l.Unresponsive > 0 {
		t := time.NewTicker(heartbeatEvery(l.Unresponsive))
		defer t.Stop()
		watch = t.C
	}
wait:
	for {
		select {
		case <-done:
			break wait
		case <-watch:
			for i := range cmds {
				if d := lastBeat.since(i); !exited[i].Load() && d > l.Unresponsive {
					silent, silentFor, watch = i, d.Round(time.Second), nil
					_ = cmds[i].Process.Kill()
					for j, c := range cmds {
						if j != i {
							_ = c.Process.Signal(syscall.SIGINT)
						}
					}
					grace := l.Grace
					if grace <= 0 {
						grace = DefaultGrace
					}
					killAt = time.After(grace)
					break
				}
			}
		case <-killAt:
			killAt = nil
			for i, c := range cmds {
				if !exited[i].Load() {
					_ = c.Process.Kill()
				}
			}
		case i := <-failed:
			if cause < 0 && ctx.Err() == nil && l.beforeStart(ctx, key) {
				cause = i
				for _, c := range cmds {
					_ = c.Process.Signal(syscall.SIGINT)
				}
			}
		case <-ctxDone:
			ctxDone = nil
			for _, c := range cmds {
				_ = c.Process.Signal(syscall.SIGINT)
			}
		}
	}
	for i, err := range exits {
		if err != nil {
			if t := tails[i].String(); t != "" {
				err = fmt.Errorf("%w: %s", err, t)
			}
			switch {
			case i == silent:
				err = fmt.Errorf("%w: %w", &UnresponsiveError{Index: i, PID: cmds[i].Process.Pid, Silent: silentFor}, err)
			case silent >= 0:
				err = fmt.Errorf("%w (shard %d stopped answering): %w", ErrStopped, silent, err)
			case cause >= 0 && i != cause:
				err = fmt.Errorf("%w (shard %d failed before the start): %w", ErrStopped, cause, err)
			}
			exits[i] = fmt.Errorf("shard %d: %w", i, err)
		}
	}
	return exits, nil
}

// beforeStart reports whether run key has no common start yet (no shard
// joined its barrier, or not every one did), as Store says; false when
// Store is nil or cannot say.
func (l Local) beforeStart(ctx context.Context, key string) bool {
	if l.Store == nil {
		return false
	}
	r, err := l.Store.ShardRun(context.WithoutCancel(ctx), key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return true
	case err != nil:
		return false
	}
	return r.StartAt.IsZero()
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
