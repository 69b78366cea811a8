package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
)

// LocalShards runs a sharded step as `dbarena run ... --shards N --local`
// runs its shards: N processes of this binary on this machine (Local),
// each `dbarena plan step` given the step as data (StepData in StepEnv:
// its plan settings, cell, round, target and results store), sharing the
// start barrier; the merged run is read back from Store. A shard that sends no heartbeat for
// Local.Unresponsive (shard.DefaultUnresponsive if 0) stops the step.
type LocalShards struct {
	Local shard.Local
	// Store is the results store the shards write to.
	Store shard.Reader
	// Results is the --results the shards are given ("" for the default).
	Results string
}

var _ ShardRunner = LocalShards{}

// shardFailer stores a sharded run's error (*store.Store does).
type shardFailer interface {
	FailShardRun(ctx context.Context, key string, count int, msg string) error
}

// Run implements ShardRunner.
func (ls LocalShards) Run(ctx context.Context, j Job, key string) (*summary.Run, error) {
	data, password := j.Data(ls.Results)
	b, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	local := ls.Local
	if local.Store == nil && ls.Store != nil {
		local.Store = ls.Store // a shard failing before the start stops the others
	}
	local.Env = append(append([]string(nil), local.Env...), StepEnv+"="+string(b))
	if password != "" {
		local.Env = append(local.Env, "DBARENA_PASSWORD="+password)
	}
	if local.Unresponsive <= 0 {
		local.Unresponsive = shard.DefaultUnresponsive
	}
	exits, err := local.Run(ctx, []string{"plan", "step"}, key, j.Shards())
	if err != nil {
		return nil, err
	}
	for _, e := range exits {
		// A shard that stopped answering stopped the step: say so in
		// the sharded run, which then is failed.
		var ue *shard.UnresponsiveError
		if f, ok := ls.Store.(shardFailer); ok && errors.As(e, &ue) {
			if err := f.FailShardRun(context.WithoutCancel(ctx), key, j.Shards(), ue.Error()+"; the other shards were stopped"); err != nil {
				return nil, err
			}
		}
	}
	run, err := ls.Load(context.WithoutCancel(ctx), key)
	if errors.Is(err, store.ErrNotFound) {
		// No shard got as far as the barrier: their exits say why.
		if e := errors.Join(exits...); e != nil {
			return nil, fmt.Errorf("sharded run %s: %s", key, j.Target.Mask(oneLine(e.Error())))
		}
	}
	return run, err
}

// Load implements ShardRunner.
func (ls LocalShards) Load(ctx context.Context, key string) (*summary.Run, error) {
	return shard.Load(ctx, ls.Store, key)
}
