package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/dialect"
	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/hostinfo"
	"github.com/dbarena/dbarena/internal/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// origin is a Detached workload that names what its workers talk to (the
// first URL's scheme and host), for a run without a database.
type origin interface{ Origin() string }

// runDetached runs a workload.Detached (`dbarena run http`): --target is
// refused (the URLs are the target); --db-target names the database behind
// the application, which the monitor samples and the run is stored
// against. Without it the run has a host-only monitor and a target of the
// workload's name.
func (a *App) runDetached(ctx context.Context, w workload.Workload, args []string) error {
	var o runOptions
	var dbTarget string
	fs := newFlagSet("run " + w.Name())
	o.flags(fs)
	detachedFlags(w, fs, &dbTarget)
	w.Flags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if fs.Changed("target") {
		return usagef("--target: a %s run's target is its URLs; name the database behind the application with --db-target", w.Name())
	}
	if fs.Changed("connect") {
		return usagef("--connect: a %s run has no database connection (use --keep-alive off for a connection per request)", w.Name())
	}
	if err := validate(o.validate(fs), w.Validate()); err != nil {
		return err
	}
	if err := limitEvents(w, fs, &o.cfg); err != nil {
		return err
	}
	if err := o.shard.resolve(a.Getenv, o.rounds); err != nil {
		return err
	}
	if o.shard.local {
		return a.runLocalShards(ctx, &o)
	}
	setThreads(w, o.cfg.Threads)
	if err := a.prepareShard(w, &o); err != nil {
		return err
	}
	if o.jsonPath != "" {
		if err := checkWritable(o.jsonPath); err != nil {
			return usagef("--json: %w", err)
		}
	}
	st, err := a.openRunStore(ctx, &o)
	if err != nil {
		return err
	}
	defer st.Close()
	var t target.Target
	if dbTarget != "" {
		if t, err = a.resolveTarget(ctx, dbTarget, o.cred); err != nil {
			return fmt.Errorf("--db-target: %w", err)
		}
	}
	ctx, stop := a.Interrupts(ctx)
	defer stop()
	host := hostinfo.Collect()
	if err := a.joinShard(ctx, st, &o, host.Hostname); err != nil {
		return err
	}
	return a.runRounds(ctx, st, w, &o, host, func() (*execute.Session, error) {
		if dbTarget == "" {
			addr := w.Name()
			if or, ok := w.(origin); ok {
				addr = or.Origin()
			}
			return execute.Standalone(w.Name(), addr), nil
		}
		return execute.Connect(ctx, t, dialect.OpenOptions{MaxConns: 2})
	})
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

// targetLabel is how the run's opening line names s: the masked DSN, or
// the address of a Standalone session.
func targetLabel(s *execute.Session) string {
	if s.NoDatabase {
		return strings.TrimSpace(s.Target.Host)
	}
	return s.Target.MaskedDSN()
}
