package cli

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/dialect"
	"github.com/dbarena/dbarena/internal/sandbox"
	"github.com/dbarena/dbarena/internal/target"
	"github.com/dbarena/dbarena/internal/workload"
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

// session is an open connection to a target.
type session struct {
	target  target.Target
	dialect dialect.Dialect
	db      *sql.DB
	// sockets are the pool's connections, closed to abort a run at once.
	sockets *dialect.Sockets
}

// env is the workload environment of the session.
func (s *session) env() workload.Env {
	return workload.Env{DB: s.db, Dialect: s.dialect, Target: s.target, Sockets: s.sockets}
}

// Close closes the pool.
func (s *session) Close() error { return s.db.Close() }

// connect opens a pool on t, checks that the server answers and fills in
// its flavor and version.
func connect(ctx context.Context, t target.Target, o dialect.OpenOptions) (*session, error) {
	d, err := dialect.For(t.Family())
	if err != nil {
		return nil, usagef("--target: %w", err)
	}
	o.Sockets = dialect.NewSockets()
	db, err := d.Open(t, o)
	if err != nil {
		return nil, usagef("--target %s: %s", t.MaskedDSN(), t.Mask(err.Error()))
	}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	flavor, version, err := d.ServerVersion(pctx, db)
	if err != nil {
		db.Close()
		return nil, unreachable(fmt.Errorf("cannot reach %s: %s", t.MaskedDSN(), t.Mask(err.Error())))
	}
	t.Flavor, t.Version = flavor, version
	return &session{target: t, dialect: d, db: db, sockets: o.Sockets}, nil
}
