package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/results/console"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
)

// jobIndexEnv is the shard index Kubernetes gives each pod of an Indexed
// Job (0-based).
const jobIndexEnv = "JOB_COMPLETION_INDEX"

// resultsEnv is the results store a shard uses when --results is not
// given: a Kubernetes pod reads it from a Secret (dbarena k8s render).
const resultsEnv = "DBARENA_RESULTS"

// shardOptions are the flags of a run spread over client hosts.
type shardOptions struct {
	spec    string // --shard I/N
	shards  int    // --shards N
	local   bool   // --local
	key     string // --run-id
	timeout time.Duration
	// unresponsive bounds a local shard's silence (--shard-timeout).
	unresponsive time.Duration

	// index and count, once resolved; count is 0 for an ordinary run.
	index, count int
	// resultsFromEnv: the store came from $DBARENA_RESULTS (a pod's
	// Secret), so its password is not on the command line.
	resultsFromEnv bool
}

func (o *shardOptions) flags(fs *pflag.FlagSet) {
	fs.StringVar(&o.spec, "shard", "", "run shard I of N (0-based, e.g. 0/4) of the run named by --run-id, spread over client hosts sharing --results")
	fs.IntVar(&o.shards, "shards", 0, "split the run in N shards: with --local, N processes on this machine; else shard $JOB_COMPLETION_INDEX of N (a Kubernetes Indexed Job)")
	fs.BoolVar(&o.local, "local", false, "with --shards N: start the N shards as processes of this machine and print the merged summary")
	fs.StringVar(&o.key, "run-id", "", "the name every shard of one run shares (letters, digits, . _ -; starts with a letter); default with --local: a new one")
	durationFlag(fs, &o.timeout, "barrier-timeout", shard.DefaultTimeout, "how long a shard waits at the start barrier for the others")
	durationFlag(fs, &o.unresponsive, "shard-timeout", shard.DefaultUnresponsive, "with --local: a shard that sends no heartbeat this long (stopped, frozen) is killed and the run stopped and stored failed")
}

// resolve works out which shard this process runs, if any.
func (o *shardOptions) resolve(getenv func(string) string, rounds int) error {
	var errs []error
	switch {
	case o.spec != "" && o.shards != 0:
		errs = append(errs, errors.New("--shard I/N and --shards N exclude each other"))
	case o.spec != "":
		i, n, err := shard.ParseIndex(o.spec)
		if err != nil {
			errs = append(errs, err)
		}
		o.index, o.count = i, n
	case o.shards != 0:
		if o.shards < 1 || o.shards > shard.MaxShards {
			errs = append(errs, fmt.Errorf("--shards %d: want 1 to %d", o.shards, shard.MaxShards))
			break
		}
		o.count = o.shards
		if o.local {
			break
		}
		v := getenv(jobIndexEnv)
		i, err := strconv.Atoi(v)
		if v == "" || err != nil || i < 0 || i >= o.shards {
			errs = append(errs, fmt.Errorf("--shards %d: add --local to run every shard here, or set %s to this shard's index (0 to %d; Kubernetes does in an Indexed Job), got %q",
				o.shards, jobIndexEnv, o.shards-1, v))
		}
		o.index = i
	case o.local:
		errs = append(errs, errors.New("--local needs --shards N"))
	case o.key != "":
		errs = append(errs, errors.New("--run-id needs --shard I/N or --shards N"))
	}
	if o.local && o.spec != "" {
		errs = append(errs, errors.New("--local needs --shards N, not --shard"))
	}
	if o.count > 0 {
		if o.key == "" && !o.local {
			errs = append(errs, errors.New("--shard needs --run-id, the name every shard of the run shares"))
		}
		if o.key != "" {
			if err := shard.CheckKey(o.key); err != nil {
				errs = append(errs, err)
			}
		}
		if rounds > 1 {
			errs = append(errs, errors.New("--rounds: a sharded run has one round; run it again with a new --run-id"))
		}
	}
	if len(errs) > 0 {
		return usagef("%w", errors.Join(errs...))
	}
	return nil
}

// sharded reports whether this process runs one shard of a run.
func (o *shardOptions) sharded() bool { return o.count > 0 && !o.local }

// shardPart is the shard this process runs, for its request (nil for a
// whole run); a shard without --results takes its store from
// $DBARENA_RESULTS (a pod's Secret).
func (a *App) shardPart(o *runOptions) *execute.Shard {
	s := &o.shard
	if !s.sharded() {
		return nil
	}
	if o.results == "" && a.Getenv(resultsEnv) != "" {
		o.results, s.resultsFromEnv = a.Getenv(resultsEnv), true
	}
	return &execute.Shard{Index: s.index, Count: s.count, Key: s.key, BarrierTimeout: s.timeout,
		Heartbeat: a.Getenv(shard.HeartbeatEnv),
		Waiting: func(missing []int) {
			fmt.Fprintf(a.Stderr, "dbarena: shard %d of run %s waits for shards %s\n", s.index, s.key, joinInts(missing))
		}}
}

// openRunStore opens the run's results store. One named by
// $DBARENA_RESULTS is opened as given: a password in it came from the
// environment, not the command line, so there is nothing to warn about.
func (a *App) openRunStore(ctx context.Context, o *runOptions) (*store.Store, error) {
	if !o.shard.resultsFromEnv {
		return a.openStore(ctx, o.results)
	}
	st, err := store.Open(ctx, o.results)
	switch {
	case err == nil:
		return st, nil
	case errors.Is(err, store.ErrUnreachable):
		return nil, unreachable(fmt.Errorf("$%s: %w", resultsEnv, err))
	}
	return nil, usagef("$%s: %w", resultsEnv, err)
}

// shardCommand makes the command that runs one local shard: this binary
// with args (tests replace it).
var shardCommand = func(args []string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return exec.Command(exe, args...), nil
}

// localShards runs shards as processes of this binary on this machine, in
// the same $DBARENA_HOME, saying each one's process id.
func (a *App) localShards() shard.Local {
	return shard.Local{Command: shardCommand, Env: []string{"DBARENA_HOME=" + a.home()},
		Started: func(key string, i, n, pid int) {
			fmt.Fprintf(a.Stderr, "dbarena: shard %d of %d of run %s: pid %d\n", i, n, key, pid)
		}}
}

// runLocalShards runs the N shards of a run as processes of this binary
// on this machine, sharing the results store, then prints the merged run.
func (a *App) runLocalShards(ctx context.Context, o *runOptions) error {
	s := &o.shard
	if s.key == "" {
		s.key = shard.NewKey()
	}
	if s.unresponsive <= 0 {
		return usagef("--shard-timeout %v: want a positive duration", s.unresponsive)
	}
	st, err := a.openStore(ctx, o.results)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx, stop := a.Interrupts(ctx)
	defer stop()
	local := a.localShards()
	local.Output, local.Store, local.Unresponsive = a.Stderr, st, s.unresponsive
	exits, err := local.Run(ctx, shard.ChildArgs(a.Args[1:]), s.key, s.count)
	if err != nil {
		return failed(err)
	}
	if silent := shard.Unresponsive(exits); silent != nil {
		msg := silent.Error() + "; the other shards were stopped"
		fmt.Fprintf(a.Stderr, "dbarena: %s\n", msg)
		if err := st.FailShardRun(context.WithoutCancel(ctx), s.key, s.count, msg); err != nil {
			return failed(err)
		}
	} else if early := shard.StoppedBy(exits); early != nil {
		fmt.Fprintf(a.Stderr, "dbarena: %s; the other shards were stopped at the start barrier\n", oneLine(early.Error()))
	}
	run, err := shard.Load(context.WithoutCancel(ctx), st, s.key)
	if err != nil {
		return failed(err)
	}
	if o.jsonPath != "" {
		if err := summary.WriteFile(o.jsonPath, run); err != nil {
			return failed(fmt.Errorf("--json: %w", err))
		}
	}
	a.printSharded(run)
	fmt.Fprintf(a.Stdout, "\nStored as run %s (%s, %d shards) in %s\n", s.key, run.Status, s.count, st.Location())
	if ctx.Err() != nil {
		return failed(fmt.Errorf("interrupted; partial result stored as run %s", s.key))
	}
	if run.Status != summary.StatusComplete {
		return failed(fmt.Errorf("run %s %s: %s", s.key, run.Status, oneLine(strings.Join(append([]string{run.Error}, run.Notes...), "; "))))
	}
	return nil
}

// printSharded prints a merged sharded run (console.Sharded).
func (a *App) printSharded(run *summary.Run) { console.Sharded(a.Stdout, run) }

// loadRun reads a stored run by its number, or a sharded run by its
// --run-id, merged (shard.Find). Not found is a usage error.
func (a *App) loadRun(ctx context.Context, st *store.Store, arg string) (*summary.Run, error) {
	run, err := shard.Find(ctx, st, arg)
	if bad := (*shard.NoSuchRun)(nil); errors.As(err, &bad) {
		return nil, usagef("%w", err)
	} else if err != nil {
		return nil, failed(err)
	}
	return run, nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
