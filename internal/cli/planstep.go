package cli

import (
	"context"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/lab"
	"github.com/dbarena/dbarena/internal/measure/hostinfo"
	"github.com/dbarena/dbarena/internal/server/dialect"
)

// planStep runs one shard of a plan's sharded step (hidden: plan run starts
// it, lab.LocalShards): the step comes as data in $DBARENA_PLAN_STEP, the
// shard as --shard I/N --run-id KEY. It runs as `dbarena run --shard`
// does: the shard's part, the start barrier, the run stored in the plan's
// results store.
func (a *App) planStep(ctx context.Context, args []string) error {
	var o runOptions
	fs := newFlagSet("plan step")
	o.shard.flags(fs)
	monitorFlag(fs, &o.monitor)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	d, err := lab.ParseStepData(a.Getenv(lab.StepEnv))
	if err != nil {
		return usagef("%w", err)
	}
	if err := o.shard.resolve(a.Getenv, 1); err != nil {
		return err
	}
	if !o.shard.sharded() {
		return usagef("plan step runs one shard of a plan's sharded step: give --shard I/N and --run-id")
	}
	t, err := a.resolveTarget(ctx, d.Target, o.cred)
	if err != nil {
		return err
	}
	j := d.Job(t)
	w, err := j.Workload(a.Registry)
	if err != nil {
		return usagef("%w", err)
	}
	if o.cfg, err = j.RunConfig(w); err != nil {
		return usagef("%w", err)
	}
	o.rounds, o.tags, o.plan, o.results = 1, j.Tags(), j.Ref(), d.Results
	if err := a.prepareShard(w, &o); err != nil {
		return err
	}
	st, err := a.openRunStore(ctx, &o)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx, stop := a.Interrupts(ctx)
	defer stop()
	host := hostinfo.Collect()
	if err := a.joinShard(ctx, st, &o, host.Hostname); err != nil {
		return err
	}
	return a.runRounds(ctx, st, w, &o, host, func() (*execute.Session, error) {
		return execute.Connect(ctx, t, dialect.OpenOptions{MaxConns: execute.Conns(w, o.cfg.Threads)})
	})
}
