package cli

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/workload"
)

// detachedSessions opens the sessions of a workload.Detached (`dbarena run
// http`): --target is refused (the URLs are the target); --db-target names
// the database behind the application, which the monitor samples and the
// run is stored against. Without it the run has a host-only monitor and a
// target of the workload's name.
func (a *App) detachedSessions(ctx context.Context, w workload.Workload, o *runOptions, dbTarget string) (func(context.Context) (*execute.Session, error), error) {
	if dbTarget == "" {
		return execute.DetachedOpener(w, nil), nil
	}
	t, err := a.resolveTarget(ctx, dbTarget, o.cred)
	if err != nil {
		return nil, fmt.Errorf("--db-target: %w", err)
	}
	return execute.DetachedOpener(w, &t), nil
}

// refuseDatabaseFlags refuses the flags a Detached workload has no use for.
func refuseDatabaseFlags(w workload.Workload, fs *pflag.FlagSet) error {
	if fs.Changed("target") {
		return usagef("--target: a %s run's target is its URLs; name the database behind the application with --db-target", w.Name())
	}
	if fs.Changed("connect") {
		return usagef("--connect: a %s run has no database connection (use --keep-alive off for a connection per request)", w.Name())
	}
	return nil
}

// detachedFlags adds --db-target to a Detached workload's run flags and
// hides --target and --connect, which it refuses.
func detachedFlags(w workload.Workload, fs *pflag.FlagSet, dbTarget *string) {
	if _, ok := w.(workload.Detached); !ok {
		return
	}
	fs.StringVar(dbTarget, "db-target", "", "the database behind the application: sandbox:NAME or a DSN; its server is monitored and the run stored against it")
	_ = fs.MarkHidden("target")
	_ = fs.MarkHidden("connect")
}
