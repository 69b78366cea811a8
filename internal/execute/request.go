package execute

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// Request is one run as it was asked for: by `dbarena run` and `run
// http`, a plan step, one shard of either (--shard I/N, a Kubernetes pod,
// a local shard process). Every one goes the same way: Configure applies
// the workload's capabilities and the shard's part, then Rounds joins the
// shard's start barrier, and runs and stores each round through Run.
type Request struct {
	// Workload is what to run (a workload.Runner), its flags set.
	Workload workload.Workload
	// Config is the runner's configuration as given: Configure completes it.
	Config runner.Config
	// Given says which run settings the user set.
	Given Given
	// Monitor is the --monitor mode; Home is DBARENA_HOME.
	Monitor, Home string
	// Tags, Plan and Host are stored with each run; a run of several
	// Rounds is also tagged round=N.
	Tags [][2]string
	Plan *summary.PlanRef
	Host summary.Host
	// Version is dbarena's; Command is the command line stored with the
	// run, for the target it ran on (its password masked); nil for none.
	Version string
	Command func(target.Target) []string
	// Shard makes the run one shard of a run spread over client hosts;
	// nil for a whole run.
	Shard *Shard
	// Rounds is how many times to run (at least 1; a shard runs once).
	Rounds int
	// Judge, when set, judges each finished run before it is stored.
	Judge func(*summary.Run)
	// Open opens the session a round runs on: a fresh pool a round, so
	// that closing it ends the server sessions and the server's own
	// counters are complete when they are read.
	Open func(context.Context) (*Session, error)

	// threadsPicked: the workload picked the threads (Configure).
	threadsPicked bool
}

// Shard is the part of a sharded run this process runs.
type Shard struct {
	// Index and Count: shard Index (from 0) of Count.
	Index, Count int
	// Key is the run ID every shard of the run shares (--run-id).
	Key string
	// BarrierTimeout bounds the wait at the start barrier for the other
	// shards (shard.DefaultTimeout if 0).
	BarrierTimeout time.Duration
	// Heartbeat, when set, is where a local shard tells its coordinator
	// that it still runs ($DBARENA_SHARD_HEARTBEAT, shard.HeartbeatEnv).
	Heartbeat string
	// Waiting, if set, is told which shards the barrier still waits for.
	Waiting func(missing []int)
}

// Configure applies the workload's capabilities to the request, in the
// one order every run takes them: the thread count it is told
// (workload.ThreadSetter), its event limit and the settings it picks where
// the user set none (Configure), then, for a shard, the shard's part: its
// threads, events and rate (shard.Config) and the workload's own part
// (workload.Sharder). Errors are BadInput.
func (r *Request) Configure() error {
	w := r.Workload
	SetThreads(w, r.Config.Threads)
	picked, err := Configure(w, &r.Config, r.Given)
	if err != nil {
		return err
	}
	r.threadsPicked = picked
	SetThreads(w, r.Config.Threads)
	if r.Rounds < 1 {
		r.Rounds = 1
	}
	if r.Shard == nil {
		return nil
	}
	return r.shardPart()
}

// ShardConfig is cfg's part for shard i of n. Threads the workload picked
// are not split: each shard's workload picks its own after Shard, so the
// check is only that every shard can have one.
func ShardConfig(cfg runner.Config, i, n int, threadsPicked bool) (runner.Config, error) {
	if threadsPicked {
		cfg.Threads = max(cfg.Threads, n)
	}
	return shard.Config(cfg, i, n)
}

// ThreadsPicked reports whether the workload picked the run's threads
// (a replay: one per session open at once); valid after Configure.
func (r *Request) ThreadsPicked() bool { return r.threadsPicked }

// shardPart narrows the run to its shard.
func (r *Request) shardPart() error {
	sh, w := r.Shard, r.Workload
	if sh.Heartbeat != "" {
		// A local shard: tell the coordinator this process still runs.
		if err := shard.StartHeartbeat(sh.Heartbeat); err != nil {
			return wrap(BadInput, err)
		}
	}
	cfg, err := ShardConfig(r.Config, sh.Index, sh.Count, r.threadsPicked)
	if err != nil {
		return wrap(BadInput, err)
	}
	r.Config = cfg
	if s, ok := w.(workload.Sharder); ok {
		if err := s.Shard(sh.Index, sh.Count); err != nil {
			return wrap(BadInput, err)
		}
	} else if sh.Count > 1 {
		return wrap(BadInput, fmt.Errorf("workload %s cannot be split in shards", w.Name()))
	}
	if d, ok := w.(workload.Defaulter); ok && d.RunDefaults().Threads > 0 {
		// A workload that picks its threads (a replay) plays its own
		// part of the work on them, numbered from 0: its threads, once
		// it knows its part, or the shard's share of --threads.
		if r.threadsPicked {
			r.Config.Threads = d.RunDefaults().Threads
		}
		r.Config.FirstWorker = 0
		SetThreads(w, r.Config.Threads)
	}
	return nil
}

// RoundObserver is told what a request's rounds do, for presentation.
type RoundObserver interface {
	Observer
	// Round is called before each round, i of n.
	Round(i, n int)
	// Ran is called with each round's outcome once it is stored, to
	// present and keep it (--json); an error stops the rounds and is
	// returned by Rounds.
	Ran(out *Outcome) error
}

// Rounds runs a configured request: a shard first joins its run's start
// barrier in st (which must then be a *store.Store or another
// shard.Barrierer), then each round opens its session and runs through
// Run. It returns the first error of Open, Run or the observer.
func Rounds(ctx context.Context, st Store, r *Request, obs RoundObserver) error {
	var barrier *shard.Barrier
	if sh := r.Shard; sh != nil {
		b, ok := st.(shard.Barrierer)
		if !ok {
			return wrap(Failed, errors.New("this results store holds no shard barrier"))
		}
		barrier = &shard.Barrier{St: b, Key: sh.Key, Index: sh.Index, Count: sh.Count, Host: r.Host.Hostname,
			Timeout: sh.BarrierTimeout, Waiting: sh.Waiting}
		if err := barrier.Join(ctx); err != nil {
			if errors.Is(err, store.ErrShardStarted) {
				return wrap(BadInput, err)
			}
			return wrap(Failed, err)
		}
	}
	for round := 1; round <= r.Rounds; round++ {
		obs.Round(round, r.Rounds)
		s, err := r.Open(ctx)
		if err != nil {
			return err
		}
		out, err := Run(ctx, st, s, r.spec(s, round, barrier), obs)
		s.Close()
		if err != nil {
			return err
		}
		if err := obs.Ran(out); err != nil {
			return err
		}
	}
	return nil
}

// spec is the Spec of a round on s.
func (r *Request) spec(s *Session, round int, barrier *shard.Barrier) Spec {
	tags := map[string]string{}
	for _, kv := range r.Tags {
		tags[kv[0]] = kv[1]
	}
	if r.Rounds > 1 {
		tags["round"] = strconv.Itoa(round)
	}
	spec := Spec{Workload: r.Workload, Config: r.Config, Monitor: r.Monitor, Home: r.Home, Tags: tags,
		Plan: r.Plan, Host: r.Host, Dbarena: summary.Dbarena{Version: r.Version}, Judge: r.Judge}
	if r.Command != nil {
		spec.Dbarena.Command = r.Command(s.Target)
	}
	if sh := r.Shard; sh != nil {
		spec.RunKey = sh.Key
		spec.Shard = &summary.Shard{Index: sh.Index, Count: sh.Count}
		spec.Config.Barrier = barrier.Wait
		spec.Config.IntervalHistograms = true
		spec.Tags[shard.TagRun] = sh.Key
		spec.Tags[shard.TagIndex] = strconv.Itoa(sh.Index)
	}
	return spec
}
