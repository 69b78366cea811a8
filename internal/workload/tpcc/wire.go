package tpcc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/wire/mysqlwire"
	"github.com/dbarena/dbarena/internal/wire/pgwire"
	"github.com/dbarena/dbarena/internal/workload"
)

var (
	_ workload.Dialer     = (*Workload)(nil)
	_ workload.Rollbacker = (*worker)(nil)
	_ executor            = (*myExecutor)(nil)
	_ executor            = (*pgExecutor)(nil)
	_ batcher             = (*myExecutor)(nil)
	_ batcher             = (*pgExecutor)(nil)
	_ batchPreparer       = (*pgExecutor)(nil)
)

// OwnsConns implements workload.Dialer: with --client auto, terminals talk
// to the server through a lean wire client where the target allows it.
func (wl *Workload) OwnsConns(env workload.Env) bool {
	if wl.cfg.Client != ClientAuto {
		return false
	}
	return dialect.WireSupported(env.Dialect, env.Target)
}

// DialWorker implements workload.Dialer. A server that asks for an
// authentication method the wire client does not speak gets a
// database/sql connection of the terminal's own instead.
func (wl *Workload) DialWorker(ctx context.Context, env workload.Env, id int, seed int64) (workload.Worker, error) {
	info, err := wl.poolInfo(ctx, env, seed-int64(id))
	if err != nil {
		return nil, err
	}
	var x executor
	var conn interface{ Close() error }
	opts := dialect.OpenOptions{Sockets: env.Sockets}
	switch d := env.Dialect.(type) {
	case flavor.MySQLWire:
		var wc *mysqlwire.Conn
		if wc, err = d.DialWire(ctx, env.Target, opts); err == nil {
			x, conn = &myExecutor{conn: wc}, wc
			if wl.cfg.Pipeline {
				// A deadlock rolls the transaction back; the writes
				// pipelined after it must not then commit one by one.
				if _, err = wc.Exec("SET autocommit = 0", nil); err != nil {
					wc.Close()
					return nil, err
				}
			}
		}
	case flavor.PostgresWire:
		var pc *pgwire.Conn
		if pc, err = d.DialWire(ctx, env.Target, opts); err == nil {
			x, conn = &pgExecutor{conn: pc}, pc
		}
	default:
		return nil, fmt.Errorf("flavor %s has no wire client", env.Target.Flavor)
	}
	switch {
	case err == nil:
	case errors.Is(err, mysqlwire.ErrUnsupportedAuth) || errors.Is(err, pgwire.ErrUnsupportedAuth):
		sc, err := env.DB.Conn(ctx)
		if err != nil {
			return nil, err
		}
		x, conn = &sqlExecutor{conn: sc}, sc
	default:
		return nil, err
	}
	w, err := wl.newWorker(ctx, env, x, info, id, seed)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	w.conn = conn
	if b, ok := x.(batcher); ok && wl.cfg.Pipeline {
		w.batch = b
	}
	return w, nil
}

// poolInfo reads the run's shared parameters (Workload.info) on a
// connection of the pool, given back at once.
func (wl *Workload) poolInfo(ctx context.Context, env workload.Env, runSeed int64) (*runInfo, error) {
	wl.mu.Lock()
	ri := wl.runInfo
	wl.mu.Unlock()
	if ri != nil {
		return ri, nil
	}
	conn, err := env.DB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return wl.info(ctx, env, conn, runSeed)
}

// myExecutor runs statements on a mysqlwire connection.
type myExecutor struct{ conn *mysqlwire.Conn }

func (x *myExecutor) prepare(_ context.Context, text string) (stmt, error) {
	st, err := x.conn.Prepare(text)
	if err != nil {
		return nil, err
	}
	s := &myStmt{st: st}
	s.cb = s.call
	return s, nil
}

func (x *myExecutor) run(_ context.Context, text string) error {
	_, err := x.conn.Exec(text, nil)
	return err
}

// batch implements batcher with a mysqlwire pipeline.
func (x *myExecutor) batch(sts []stmt, args [][]any) error {
	p := x.conn.StartPipeline()
	for i, st := range sts {
		if err := p.Exec(st.(*myStmt).st, args[i]); err != nil {
			_ = p.Sync(nil) // what is queued runs; the caller rolls back
			return err
		}
	}
	return p.Sync(nil)
}

// myStmt is a mysqlwire prepared statement.
type myStmt struct {
	st *mysqlwire.Stmt
	fn func(row) error            // the callback of the query in flight
	cb func(*mysqlwire.Row) error // s.call, made once
}

func (s *myStmt) call(r *mysqlwire.Row) error { return s.fn(r) }

func (s *myStmt) exec(_ context.Context, args []any) error {
	_, err := s.st.Exec(args)
	return err
}

func (s *myStmt) query(_ context.Context, args []any, fn func(row) error) error {
	s.fn = fn
	err := s.st.QueryFunc(args, s.cb)
	s.fn = nil
	return err
}

func (s *myStmt) close() error { return s.st.Close() }

// pgExecutor runs statements on a pgwire connection.
type pgExecutor struct{ conn *pgwire.Conn }

func (x *pgExecutor) prepare(_ context.Context, text string) (stmt, error) {
	st, err := x.conn.Prepare(text)
	if err != nil {
		return nil, err
	}
	return newPGStmt(st), nil
}

// prepareAll implements batchPreparer with pgwire's PrepareAll.
func (x *pgExecutor) prepareAll(_ context.Context, texts []string) ([]stmt, error) {
	pss, err := x.conn.PrepareAll(texts)
	if err != nil {
		return nil, err
	}
	sts := make([]stmt, len(pss))
	for i, ps := range pss {
		sts[i] = newPGStmt(ps)
	}
	return sts, nil
}

func (x *pgExecutor) run(_ context.Context, text string) error {
	_, err := x.conn.Exec(text, nil)
	return err
}

// batch implements batcher with a pgwire pipeline.
func (x *pgExecutor) batch(sts []stmt, args [][]any) error {
	p := x.conn.StartPipeline()
	for i, st := range sts {
		if err := p.Exec(st.(*pgStmt).st, pgArgs(args[i])); err != nil {
			_ = p.Sync(nil)
			return err
		}
	}
	return p.Sync(nil)
}

// pgStmt is a pgwire prepared statement.
type pgStmt struct {
	st *pgwire.Stmt
	fn func(row) error         // the callback of the query in flight
	cb func(*pgwire.Row) error // s.call, made once
}

func newPGStmt(st *pgwire.Stmt) *pgStmt {
	s := &pgStmt{st: st}
	s.cb = s.call
	return s
}

func (s *pgStmt) call(r *pgwire.Row) error { return s.fn(r) }

func (s *pgStmt) exec(_ context.Context, args []any) error {
	_, err := s.st.Exec(pgArgs(args))
	return err
}

func (s *pgStmt) query(_ context.Context, args []any, fn func(row) error) error {
	s.fn = fn
	err := s.st.QueryFunc(pgArgs(args), s.cb)
	s.fn = nil
	return err
}

func (s *pgStmt) close() error { return s.st.Close() }

// pgArgs replaces, in place, time.Time arguments, which pgwire does not
// encode, by their text (the server parses it as the timestamp the
// parameter is).
func pgArgs(args []any) []any {
	for i, a := range args {
		if t, ok := a.(time.Time); ok {
			args[i] = t.UTC().Format("2006-01-02 15:04:05.999999")
		}
	}
	return args
}
