package script

import (
	"context"
	"time"

	"github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/wire/pgwire"
	"github.com/dbarena/dbarena/internal/workload"
	"github.com/dbarena/dbarena/internal/workload/script/pgscript"
)

// Clients of --client.
const (
	// ClientAuto runs PostgreSQL scripts on dbarena's lean wire client
	// (package pgwire); the MySQL family keeps database/sql.
	ClientAuto = "auto"
	// ClientSQL always uses database/sql and the Go drivers.
	ClientSQL = "sql"
)

var (
	_ workload.Dialer     = (*Workload)(nil)
	_ workload.Rollbacker = (*worker)(nil)
)

// OwnsConns implements workload.Dialer: with --client auto, PostgreSQL
// workers talk to the server through package pgwire.
func (wl *Workload) OwnsConns(env workload.Env) bool {
	_, ok := env.Dialect.(flavor.PostgresWire)
	return ok && wl.client == ClientAuto && env.Dialect.WireSupported(env.Target)
}

// DialWorker implements workload.Dialer. A server that asks for an
// authentication method pgwire does not speak gets a database/sql
// connection of the worker's own instead.
func (wl *Workload) DialWorker(ctx context.Context, env workload.Env, id int, seed int64) (workload.Worker, error) {
	pc, err := env.Dialect.(flavor.PostgresWire).DialWire(ctx, env.Target, dialect.OpenOptions{Sockets: env.Sockets})
	if err != nil {
		return nil, err
	}
	w, err := wl.newWorker(ctx, env, nil, id, seed)
	if err != nil {
		pc.Close()
		return nil, err
	}
	w.pw, w.pwStmts, w.run = pc, make([]*pgwire.Stmt, wl.stmts), w.execWire
	return w, nil
}

// Rollback implements workload.Rollbacker: it ends the transaction a
// failed event left open on the worker's own connection.
func (w *worker) Rollback(context.Context) error {
	if w.pw == nil || w.pw.TxStatus() == 'I' {
		return nil
	}
	_, err := w.pw.Exec("ROLLBACK", nil)
	return err
}

// wireStmt returns the statement of command idx prepared on the wire
// connection, preparing it the first time.
func (w *worker) wireStmt(idx int, c *pgscript.Cmd) (*pgwire.Stmt, error) {
	st := w.pwStmts[idx]
	if st == nil {
		var err error
		if st, err = w.pw.Prepare(w.paramSQL(idx, c)); err != nil {
			return nil, err
		}
		w.pwStmts[idx] = st
	}
	return st, nil
}

// execWire runs c on the wire connection as --protocol says: simple sends
// the text with :variables substituted (Query), extended an unnamed
// statement with the values as parameters, prepared a statement prepared
// once per connection. Rows are read only for \gset and \aset.
func (w *worker) execWire(_ context.Context, idx int, c *pgscript.Cmd) error {
	q, args, err := w.wireRequest(idx, c)
	if err != nil {
		return err
	}
	var fn func(r *pgwire.Row) error
	if w.keep(c) {
		fn = w.keepRow
	}
	if w.wl.protocol != Prepared {
		if fn != nil {
			err = w.pw.QueryFunc(q, args, fn)
		} else {
			err = w.pw.Query(q, args)
		}
	} else {
		st, err := w.wireStmt(idx, c)
		if err != nil {
			return copyErr(c, err)
		}
		if fn != nil {
			err = st.QueryFunc(args, fn)
		} else {
			err = st.Query(args)
		}
		w.total = w.pw.Results()
		return copyErr(c, err)
	}
	w.total = w.pw.Results()
	return copyErr(c, err)
}

// wireRequest is what execWire sends for c: the text with :variables
// substituted and nil arguments (simple), the text with placeholders and
// the values (extended), or the values only (prepared).
func (w *worker) wireRequest(idx int, c *pgscript.Cmd) (string, []any, error) {
	if w.wl.protocol == Simple {
		return w.textView(c), nil, nil
	}
	if err := w.params(c); err != nil {
		return "", nil, &pgscript.Error{Line: c.Line, Msg: err.Error()}
	}
	if w.wl.protocol == Extended {
		return w.paramSQL(idx, c), w.wireArgs(), nil
	}
	return "", w.args, nil
}

// wireArgs is w.args, never nil: an unprepared statement without
// parameters still goes through the extended protocol.
func (w *worker) wireArgs() []any {
	if w.args == nil {
		w.args = []any{}
	}
	return w.args
}

// startWirePipe opens a pipeline (\startpipeline at command pc of s); with
// --protocol prepared, the pipeline's statements are prepared first, as
// pgbench does.
func (w *worker) startWirePipe(s *pgscript.Script, base, pc int) error {
	if w.wl.protocol == Prepared {
		for i := pc + 1; i < len(s.Cmds) && s.Cmds[i].Kind != pgscript.EndPipeline; i++ {
			if s.Cmds[i].Kind == pgscript.SQL {
				if _, err := w.wireStmt(base+i, &s.Cmds[i]); err != nil {
					return err
				}
			}
		}
	}
	w.pwPipe, w.pending = w.pw.StartPipeline(), w.pending[:0]
	return nil
}

// sendWire queues c in the pipeline.
func (w *worker) sendWire(idx int, c *pgscript.Cmd) error {
	if err := w.params(c); err != nil {
		return err
	}
	w.pending = append(w.pending, sent{idx, time.Now()})
	if w.wl.protocol == Extended {
		return w.pwPipe.ExecQuery(w.paramSQL(idx, c), w.wireArgs())
	}
	st, err := w.wireStmt(idx, c)
	if err != nil {
		return err
	}
	return w.pwPipe.Exec(st, w.args)
}

// syncWire ends the pipeline (\endpipeline): every statement's latency
// runs from its sending to its result.
func (w *worker) syncWire() error {
	p := w.pwPipe
	w.pwPipe = nil
	return p.Sync(func(i int, _ int64, err error) {
		if i >= len(w.pending) {
			return
		}
		code := ""
		if err != nil {
			code = w.d.Classify(err).Code
		}
		w.stats.record(w.pending[i].idx, time.Since(w.pending[i].start), code)
	})
}
