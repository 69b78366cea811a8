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

	"github.com/dbarena/dbarena/internal/results/store"
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
	g := &processes{l: l, out: out, cmds: make([]*exec.Cmd, n), exits: make([]error, n), tails: make([]*tail, n),
		lastBeat: make(beats, n), exited: make([]atomic.Bool, n), failed: make(chan int, n),
		cause: -1, silent: -1}
	for i := range n {
		a := append(append([]string(nil), args...), "--shard", fmt.Sprintf("%d/%d", i, n), "--run-id", key)
		if err := g.start(i, a, key); err != nil {
			for _, c := range g.cmds[:i] {
				_ = c.Process.Kill()
			}
			g.wg.Wait()
			return nil, fmt.Errorf("start shard %d: %w", i, err)
		}
	}
	g.supervise(ctx, key)
	return g.exitErrors(), nil
}

// processes are the shards' processes of one Local.Run.
type processes struct {
	l        Local
	out      io.Writer
	mu       sync.Mutex // one line at a time on out
	cmds     []*exec.Cmd
	exits    []error
	tails    []*tail
	lastBeat beats
	exited   []atomic.Bool
	wg       sync.WaitGroup // output copiers and waiters
	failed   chan int       // shards that exited with an error
	// cause is the shard whose failure before the start interrupted the
	// others; silent the first shard that stopped answering, silentFor
	// how long it had been silent; -1 when none.
	cause, silent int
	silentFor     time.Duration
}

// start starts shard i with args, its output copier, heartbeat reader and
// waiter.
func (g *processes) start(i int, args []string, key string) error {
	l := g.l
	cmd, err := l.Command(args)
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
		return err
	}
	g.lastBeat.beat(i)
	if beatR != nil {
		go func() {
			defer beatR.Close()
			readBeats(beatR, g.lastBeat, i)
		}()
	}
	g.cmds[i], g.tails[i] = cmd, &tail{}
	if l.Started != nil {
		l.Started(key, i, len(g.cmds), cmd.Process.Pid)
	}
	g.wg.Add(2)
	go func() {
		defer g.wg.Done()
		copyLines(g.out, &g.mu, pr, fmt.Sprintf("[shard %d] ", i), g.tails[i])
	}()
	go func() {
		defer g.wg.Done()
		err := cmd.Wait()
		g.exits[i] = err
		g.exited[i].Store(true)
		pw.Close()
		if err != nil {
			g.failed <- i
		}
	}()
	return nil
}

// supervise waits until every shard has exited, interrupting them on ctx,
// when one fails before the start (Store) or stops answering (then it is
// killed, and the others after the grace).
func (g *processes) supervise(ctx context.Context, key string) {
	done := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(done)
	}()
	ctxDone := ctx.Done()
	var (
		watch  <-chan time.Time // looks for a shard without heartbeat
		killAt <-chan time.Time // the end of the others' grace
	)
	if g.l.Unresponsive > 0 {
		t := time.NewTicker(heartbeatEvery(g.l.Unresponsive))
		defer t.Stop()
		watch = t.C
	}
	for {
		select {
		case <-done:
			return
		case <-watch:
			if g.killSilent() {
				watch = nil
				grace := g.l.Grace
				if grace <= 0 {
					grace = DefaultGrace
				}
				killAt = time.After(grace)
			}
		case <-killAt:
			killAt = nil
			for i, c := range g.cmds {
				if !g.exited[i].Load() {
					_ = c.Process.Kill()
				}
			}
		case i := <-g.failed:
			if g.cause < 0 && ctx.Err() == nil && g.l.beforeStart(ctx, key) {
				g.cause = i
				g.interrupt(-1)
			}
		case <-ctxDone:
			ctxDone = nil
			g.interrupt(-1)
		}
	}
}

// killSilent kills the first shard silent for longer than Unresponsive and
// interrupts the others; it reports whether it found one.
func (g *processes) killSilent() bool {
	for i := range g.cmds {
		if d := g.lastBeat.since(i); !g.exited[i].Load() && d > g.l.Unresponsive {
			g.silent, g.silentFor = i, d.Round(time.Second)
			_ = g.cmds[i].Process.Kill()
			g.interrupt(i)
			return true
		}
	}
	return false
}

// interrupt sends SIGINT to every shard but except.
func (g *processes) interrupt(except int) {
	for j, c := range g.cmds {
		if j != except {
			_ = c.Process.Signal(syscall.SIGINT)
		}
	}
}

// exitErrors are the shards' exit errors, each with its last lines of
// output and why it was stopped.
func (g *processes) exitErrors() []error {
	for i, err := range g.exits {
		if err == nil {
			continue
		}
		if t := g.tails[i].String(); t != "" {
			err = fmt.Errorf("%w: %s", err, t)
		}
		switch {
		case i == g.silent:
			err = fmt.Errorf("%w: %w", &UnresponsiveError{Index: i, PID: g.cmds[i].Process.Pid, Silent: g.silentFor}, err)
		case g.silent >= 0:
			err = fmt.Errorf("%w (shard %d stopped answering): %w", ErrStopped, g.silent, err)
		case g.cause >= 0 && i != g.cause:
			err = fmt.Errorf("%w (shard %d failed before the start): %w", ErrStopped, g.cause, err)
		}
		g.exits[i] = fmt.Errorf("shard %d: %w", i, err)
	}
	return g.exits
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
