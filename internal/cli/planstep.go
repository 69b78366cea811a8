package cli

import (
	"context"
	"errors"

	"github.com/dbarena/dbarena/internal/lab"
	"github.com/dbarena/dbarena/internal/measure/hostinfo"
	"github.com/dbarena/dbarena/internal/server/target"
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
	o.results = d.Results
	req := j.Request(w)
	req.Monitor, req.Home, req.Version = o.monitor, a.home(), Version
	req.Command = func(t target.Target) []string { return maskArgs(a.Args, t) }
	req.Judge = nil // a shard's run is not judged: its merged run is
	req.Shard = a.shardPart(&o)
	if err := req.Configure(); err != nil {
		return usagef("%w", err)
	}
	if errs := req.Config.Validate(); len(errs) > 0 {
		return usagef("%w", errors.Join(errs...))
	}
	st, err := a.openRunStore(ctx, &o)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx, stop := a.Interrupts(ctx)
	defer stop()
	req.Host = hostinfo.Collect()
	return a.runRounds(ctx, st, req, &o)
}
