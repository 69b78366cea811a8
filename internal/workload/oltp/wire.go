package oltp

import (
	"context"
	"errors"
	"fmt"

	"github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/wire/mysqlwire"
	"github.com/dbarena/dbarena/internal/wire/pgwire"
	"github.com/dbarena/dbarena/internal/workload"
)

var (
	_ workload.Dialer     = (*Workload)(nil)
	_ workload.Rollbacker = (*worker)(nil)
	_ executor            = (*wireExecutor)(nil)
)

// wireExecutor runs statements on a lean wire connection. It ignores ctx:
// a run aborts statements in flight by shutting the socket down
// (workload.Env.Sockets), as with the pool's connections.
type wireExecutor struct {
	conn     *mysqlwire.Conn
	prepared bool // --ps-mode=auto
}

func (x *wireExecutor) prepare(_ context.Context, st *stmt) error {
	if !x.prepared {
		return nil
	}
	ps, err := x.conn.Prepare(st.text)
	if err != nil {
		return fmt.Errorf("prepare %q: %w", st.text, err)
	}
	st.wps, st.byRef = ps, true
	return nil
}

func (x *wireExecutor) query(_ context.Context, st *stmt) error {
	if st.wps != nil {
		return st.wps.Query(st.args)
	}
	return x.conn.Query(st.text, st.args)
}

func (x *wireExecutor) exec(_ context.Context, st *stmt) (int64, error) {
	if st.wps != nil {
		return st.wps.Exec(st.args)
	}
	return x.conn.Exec(st.text, st.args)
}

func (x *wireExecutor) close(st *stmt) error {
	if st.wps == nil {
		return nil
	}
	err := st.wps.Close()
	st.wps = nil
	return err
}

// OwnsConns implements workload.Dialer: with --client auto, workers talk
// to the server through package mysqlwire on the MySQL family and package
// pgwire on PostgreSQL.
func (wl *Workload) OwnsConns(env workload.Env) bool {
	if wl.cfg.Client != ClientAuto {
		return false
	}
	return dialect.WireSupported(env.Dialect, env.Target)
}

// DialWorker implements workload.Dialer. A server that asks for an
// authentication method the wire client does not speak gets a
// database/sql connection of the worker's own instead.
func (wl *Workload) DialWorker(ctx context.Context, env workload.Env, id int, seed int64) (workload.Worker, error) {
	var x executor
	var conn interface{ Close() error }
	var err error
	endsSession := true // false for a pooled database/sql connection
	switch d := env.Dialect.(type) {
	case flavor.PostgresWire:
		var pc *pgwire.Conn
		if pc, err = d.DialWire(ctx, env.Target, dialect.OpenOptions{Sockets: env.Sockets}); err == nil {
			x, conn = &pgExecutor{conn: pc, prepared: wl.cfg.PSMode == PSAuto}, pc
		}
	case flavor.MySQLWire:
		var wc *mysqlwire.Conn
		if wc, err = d.DialWire(ctx, env.Target, dialect.OpenOptions{Sockets: env.Sockets}); err == nil {
			x, conn = &wireExecutor{conn: wc, prepared: wl.cfg.PSMode == PSAuto}, wc
		}
	default:
		return nil, fmt.Errorf("flavor %s has no wire client", env.Target.Flavor)
	}
	switch {
	case err == nil:
	case errors.Is(err, mysqlwire.ErrUnsupportedAuth), errors.Is(err, pgwire.ErrUnsupportedAuth):
		sc, err := env.DB.Conn(ctx)
		if err != nil {
			return nil, err
		}
		x, conn = &sqlExecutor{conn: sc, prepared: wl.cfg.PSMode == PSAuto}, sc
		endsSession = false
	default:
		return nil, err
	}
	w, err := wl.newWorker(ctx, x, env.Dialect, id, seed)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	w.conn, w.endsSession = conn, endsSession
	return w, nil
}
