package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dbarena/dbarena/internal/sandbox"
	"github.com/dbarena/dbarena/internal/target"
)

// resolveTarget turns a --target value into connection settings: a DSN,
// sandbox:NAME, or "" for the default sandbox (started if needed).
func (a *App) resolveTarget(ctx context.Context, spec string) (target.Target, error) {
	m := sandbox.NewManager(a.home())
	switch {
	case spec == "":
		sb, err := m.Default(ctx)
		if err != nil {
			return target.Target{}, unreachable(fmt.Errorf("default sandbox: %w", err))
		}
		return sb.Target(), nil
	case strings.HasPrefix(spec, "sandbox:"):
		name := strings.TrimPrefix(spec, "sandbox:")
		sb, err := m.Get(name)
		if errors.Is(err, sandbox.ErrNotFound) {
			return target.Target{}, usagef("--target %s: no such sandbox (see `dbarena server list`)", spec)
		}
		if err != nil {
			return target.Target{}, unreachable(fmt.Errorf("--target %s: %w", spec, err))
		}
		if sb.State != sandbox.StateRunning {
			if sb, err = m.Start(ctx, sandbox.Spec{Name: name}); err != nil {
				return target.Target{}, unreachable(fmt.Errorf("--target %s: %w", spec, err))
			}
		}
		return sb.Target(), nil
	}
	t, err := target.ParseDSN(spec)
	if err != nil {
		return target.Target{}, usagef("--target: %w", err)
	}
	return t, nil
}
