package cli

import (
	"context"
	"errors"

	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload/script/pgbench"
)

func (a *App) pgbenchCmd(ctx context.Context, args []string) error {
	if code := a.pgbench(ctx, args); code != 0 {
		return &exitError{code: code, err: errors.New("pgbench failed")}
	}
	return nil
}

// pgbench is `dbarena pgbench ARGS...`: pgbench's own command line, output
// and exit statuses (package pgbench), on this process.
func (a *App) pgbench(ctx context.Context, argv []string) int {
	return pgbench.Main(ctx, pgbench.Env{Stdout: a.Stdout, Stderr: a.Stderr, Getenv: a.Getenv, Version: Version,
		Interrupts: a.Interrupts,
		Resolve: func(ctx context.Context, spec string) (target.Target, error) {
			return a.resolveTarget(ctx, spec, credentialFlags{})
		}}, argv)
}
