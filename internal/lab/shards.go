package lab

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
	"github.com/dbarena/dbarena/internal/workload"
)

// ShardRunner runs the steps of a plan that name shards: N > 1, each as one
// sharded run (shard.Load merges it). LocalShards is the real one.
type ShardRunner interface {
	// Run runs step j as sharded run key, its j.Shards() shards at once,
	// and returns the merged run; an error means it could not run (the
	// lab stores it as a failed run).
	Run(ctx context.Context, j Job, key string) (*summary.Run, error)
	// Load returns sharded run key merged; the error wraps
	// store.ErrNotFound when the store has no such run.
	Load(ctx context.Context, key string) (*summary.Run, error)
}

// Shards is how many shards run the job (1: one process, no sharding).
func (j Job) Shards() int { return max(j.Step.Shards, 1) }

// maxAttempts bounds the sharded runs of one step in one session (each
// degraded or failed one is rerun under a fresh run id on resume).
const maxAttempts = 1000

// sharded runs a step of more than one shard under the first run id of
// its session and step that the store does not hold yet.
func (l *Lab) sharded(ctx context.Context, j Job) (*summary.Run, error) {
	if l.Shards == nil {
		return nil, fmt.Errorf("shards %d: this lab runs no shards", j.Shards())
	}
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		key := shardKey(j.Plan.Name, j.Session, j.Step, attempt)
		_, err := l.Shards.Load(ctx, key)
		switch {
		case errors.Is(err, store.ErrNotFound):
			run, err := l.Shards.Run(ctx, j, key)
			if err == nil && ctx.Err() != nil && run.Status != summary.StatusComplete {
				run.Status = summary.StatusInterrupted
			}
			return run, err
		case err != nil:
			return nil, err
		}
	}
	return nil, fmt.Errorf("%d sharded runs of this step already in the session", maxAttempts)
}

// shardKey is the --run-id of attempt a of a sharded step in a session of
// plan name: readable (plan, session, attempt) and unique (a hash of them
// and the cell and round), within shard.CheckKey's 63 characters.
func shardKey(name, session string, step plan.Step, attempt int) string {
	sum := sha256.Sum256([]byte(name + "\x00" + session + "\x00" + step.ID + "\x00" + strconv.Itoa(step.Round)))
	clean := func(s string, n int) string {
		b := []byte(s[:min(len(s), n)])
		for i, c := range b {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
				b[i] = '-'
			}
		}
		return string(b)
	}
	return fmt.Sprintf("plan-%s-%s-%s-%d", clean(name, 20), clean(session, 16), hex.EncodeToString(sum[:4]), attempt)
}

// ErrShardsRunning is wrapped by a resume's error when a sharded run of
// the session is still running (an earlier plan run's shards, alive):
// resuming would start the step a second time beside it.
var ErrShardsRunning = errors.New("still running")

// shardedDone adds to done the cell rounds whose sharded runs (keys, by
// round key) merge into a complete run. A sharded run one of whose shards
// still runs (its process alive, as the store tells) is an error
// (ErrShardsRunning).
func (l *Lab) shardedDone(ctx context.Context, keys map[string][]string, done map[string]bool) error {
	if l.Shards == nil {
		return nil
	}
	for _, rk := range slices.Sorted(maps.Keys(keys)) {
		for _, key := range keys[rk] {
			run, err := l.Shards.Load(ctx, key)
			if err != nil {
				return fmt.Errorf("sharded run %s: %w", key, err)
			}
			var running []string
			for _, sh := range run.Shards {
				if sh.Status == summary.StatusRunning {
					where := fmt.Sprintf("%d (run %d", sh.Index, sh.Run)
					if sh.Host != "" {
						where += " on " + sh.Host
					}
					running = append(running, where+")")
				}
			}
			if len(running) > 0 {
				return fmt.Errorf("sharded run %s of this session is %w: shards %s; wait for it to end or interrupt it, then resume",
					key, ErrShardsRunning, strings.Join(running, ", "))
			}
			done[rk] = done[rk] || run.Status == summary.StatusComplete
		}
	}
	return nil
}

// TargetArg is the --target of a shard of the job, and the password it
// needs from the environment (DBARENA_PASSWORD), never on a command line:
// sandbox:NAME for a sandbox reached without TLS (the sandbox keeps its
// password), else the DSN with its parameters (TLS) and no password.
func (j Job) TargetArg() (arg, password string) {
	t := j.Target
	if t.Sandbox != "" && !j.Step.TLS {
		return "sandbox:" + t.Sandbox, ""
	}
	password, t.Password = t.Password, ""
	u, err := url.Parse(t.DSN())
	if err != nil { // DSN renders a URL: cannot happen
		return t.DSN(), password
	}
	q := u.Query()
	for _, k := range slices.Sorted(maps.Keys(t.Params)) {
		q.Set(k, t.Params[k])
	}
	u.RawQuery = q.Encode()
	return u.String(), password
}

// checkShards refuses a workload's shards: N > 1 that cannot run: a
// workload that cannot be split (no workload.Sharder), or a split that
// leaves a shard without work (fewer threads, events, tables or
// warehouses than shards: shard.Config, the workload's Shard), for the
// fixed parameters and each value of a parameter axis, at each thread
// count. newW makes the workload with its fixed parameters and extra set.
func checkShards(p *plan.Plan, wl plan.Workload, newW func(extra []plan.Param) (workload.Workload, error)) []error {
	n, line := p.ShardsOf(wl)
	if n <= 1 {
		return nil
	}
	bad := func(err error) []error {
		return []error{p.Errorf(line, "shards %d: workload %s: %s", n, wl.Name, oneLine(err.Error()))}
	}
	w, err := newW(nil)
	if err != nil {
		return nil // reported by Check
	}
	if _, ok := w.(workload.Sharder); !ok {
		return bad(errors.New("cannot be split in shards"))
	}
	threads := []int{1}
	extras := [][]plan.Param{nil} // the fixed parameters, then one axis value each
	for _, ax := range p.Axes {
		switch {
		case ax.Name == plan.AxisThreads:
			threads = threads[:0]
			for _, v := range ax.Values {
				t, _ := strconv.Atoi(v.Value) // checked by plan.Parse
				threads = append(threads, t)
			}
		case ax.Name == plan.AxisTLS || ax.Name == plan.AxisConnect || strings.HasPrefix(ax.Name, plan.ServerAxisPrefix):
		default:
			for _, v := range ax.Values {
				extras = append(extras, []plan.Param{{Key: ax.Name, Value: v.Value}})
			}
		}
	}
	for _, extra := range extras {
		for _, t := range threads {
			w, err := newW(extra)
			if err != nil {
				continue // reported by Check
			}
			if ta, ok := w.(workload.ThreadSetter); ok {
				ta.SetThreads(t)
			}
			cfg := runner.DefaultConfig()
			cfg.Threads, cfg.Duration = t, p.Duration
			Job{Plan: p}.LimitEvents(w, &cfg)
			_, err = shard.Config(cfg, 0, n)
			for i := 0; i < n && err == nil; i++ {
				err = w.(workload.Sharder).Shard(i, n)
			}
			if err != nil && len(extra) > 0 {
				err = fmt.Errorf("%s %s: %w", extra[0].Key, extra[0].Value, err)
			}
			if err != nil {
				return bad(err)
			}
		}
	}
	return nil
}
