package script

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/wire/pgwire"
	"github.com/dbarena/dbarena/internal/wire/poller"
	"github.com/dbarena/dbarena/internal/workload"
	"github.com/dbarena/dbarena/internal/workload/script/pgscript"
)

// worker runs scripts on one connection, as one pgbench client.
type worker struct {
	wl    *Workload
	conn  *sql.Conn
	pg    *pgconn.PgConn // PostgreSQL: the connection's wire level
	mysql bool
	d     dialect.Dialect
	st    *pgscript.State
	stats *workerStats

	prepared map[int]*sql.Stmt // MySQL --protocol prepared, by command index
	pgNames  map[int]string    // PostgreSQL --protocol prepared
	buf      []byte
	name     []byte   // a \gset variable's name being built
	psql     []string // paramSQL by command index
	args     []any
	pgArgs   [][]byte
	cols     []string
	vals     []pgscript.Value
	rows     int
	res      int            // the result of the reply cols and vals belong to (results.go)
	total    int            // the results of the last reply
	kept     []keptResult   // earlier results' last rows, for \aset
	choose   *pgscript.PRNG // the script choice stream (pgbench's ts_choose_rs)

	pipe    *pgconn.Pipeline // between \startpipeline and \endpipeline
	pending []sent           // statements sent in the pipeline
	syncs   int              // \syncpipeline points in the pipeline
	nprep   int              // prepared statement names used so far

	// PostgreSQL with --client auto: the worker's own lean connection
	// (package pgwire), its prepared statements by command index, and its
	// pipeline between \startpipeline and \endpipeline.
	pw      *pgwire.Conn
	pwStmts []*pgwire.Stmt // by command index
	pwPipe  *pgwire.Pipeline
	step    stepping // the event run in steps (Start, Resume)
	// debug, when set, is told of each statement sent and its reply
	// received (dbarena pgbench -d).
	debug func(string)
	// undefinedNull sends an undefined :variable as a NULL parameter
	// (extended and prepared protocols) as pgbench does, rather than
	// failing; prepareFailed, when set, is told of a statement the server
	// would not prepare, which then runs unprepared to the server's error,
	// as in pgbench (dbarena pgbench sets both).
	undefinedNull bool
	prepareFailed func(error)

	// run sends one SQL command and reads its reply: execWire, execPG or
	// execMySQL, as the worker's connection is.
	run func(ctx context.Context, idx int, c *pgscript.Cmd) error
}

// sent is a statement sent in a pipeline, awaiting its result.
type sent struct {
	idx   int
	start time.Time
}

var _ workload.Worker = (*worker)(nil)

// NewWorker implements workload.Runner. The first worker runs --create.
func (wl *Workload) NewWorker(ctx context.Context, env workload.Env, conn *sql.Conn, id int, seed int64) (workload.Worker, error) {
	return wl.newWorker(ctx, env, conn, id, seed)
}

// mysqlSyntax reports whether d's server takes the MySQL family's SQL:
// pgbench scripts are then adapted to it (mysqlText) and prepare loads
// pgbench's tables with generic rows; PostgreSQL gets pgbench's own
// statements and initialisation (Init). The script's SQL comes in one
// variant per protocol family.
func mysqlSyntax(d dialect.Dialect) bool { return d.Family() == target.MySQL }

// newWorker builds a worker on conn, or, when conn is nil, one whose
// caller gives it a wire connection.
func (wl *Workload) newWorker(ctx context.Context, env workload.Env, conn *sql.Conn, id int, seed int64) (*worker, error) {
	w := &worker{wl: wl, conn: conn, d: env.Dialect, mysql: mysqlSyntax(env.Dialect),
		prepared: map[int]*sql.Stmt{}, pgNames: map[int]string{}}
	wl.createOnce.Do(func() {
		for _, q := range wl.createSQL {
			var err error
			if conn != nil {
				_, err = conn.ExecContext(ctx, q)
			} else {
				_, err = env.DB.ExecContext(ctx, q)
			}
			if err != nil {
				wl.createErr = fmt.Errorf("--create %s: %w", wl.create, err)
				return
			}
		}
	})
	if wl.createErr != nil {
		return nil, wl.createErr
	}
	if !w.mysql && conn != nil {
		err := conn.Raw(func(dc any) error {
			c, ok := dc.(*stdlib.Conn)
			if !ok {
				return errors.New("script: not a pgx connection")
			}
			w.pg = c.Conn().PgConn()
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	// The random streams are pgbench's, derived from --random-seed
	// (seed.go); every client shares :default_seed.
	fn, choose, defaultSeed := wl.clientStreams(id)
	runSeed, _ := wl.runSeed()
	w.st = pgscript.NewState(wl.vars, fn, defaultSeed)
	w.choose = choose
	w.st.Set("default_seed", pgscript.IntV(defaultSeed))
	w.st.Set("random_seed", pgscript.IntV(int64(runSeed)))
	w.st.Set("scale", pgscript.IntV(int64(wl.scale)))
	w.st.Set("client_id", pgscript.IntV(int64(id)))
	for k, v := range wl.predefined { // -D overrides, as in pgbench
		w.st.Set(k, v)
	}
	w.stats = wl.stats.newWorker(poller.GroupOf(ctx))
	if w.mysql {
		w.run = w.execMySQL
	} else {
		w.run = w.execPG
	}
	return w, nil
}

// pick chooses the script of the next event, by weight.
func (w *worker) pick() *weighted {
	sc := &w.wl.scripts[0]
	w.st.Script = 0
	if len(w.wl.scripts) > 1 {
		r := int(w.choose.Range(0, uint64(w.wl.totalW-1)))
		for i := range w.wl.scripts {
			if r < w.wl.scripts[i].weight {
				sc = &w.wl.scripts[i]
				w.st.Script = i // debug() names it
				break
			}
			r -= w.wl.scripts[i].weight
		}
	}
	return sc
}

// Event implements workload.Worker: one run of a script chosen by weight.
func (w *worker) Event(ctx context.Context, ev *workload.Event) error {
	return w.eventScript(ctx, w.pick(), ev)
}

// eventScript runs one event of script sc.
func (w *worker) eventScript(ctx context.Context, sc *weighted, ev *workload.Event) error {
	s := sc.s
	ev.Type = s.Name
	defer w.endPipe()
	// A statement that follows another starts when that one ended, as
	// pgbench -r reuses its clock reading: tpcb-like reads the clock 8
	// times a transaction instead of 21 (time.Now reads two clocks).
	var ended time.Duration // since clockBase; 0 after anything but a statement
	for pc := 0; pc < len(s.Cmds); {
		c := &s.Cmds[pc]
		if c.Kind != pgscript.SQL {
			ended = 0
			w.st.Command = pc // debug() names it
		}
		if c.Err != "" { // accepted by pgbench, refused when run
			if c.Kind == pgscript.SQL {
				return w.failed(sc, pc, &pgscript.Error{Line: c.Line, Msg: c.Err})
			}
			return &pgscript.Error{File: s.Name, Line: c.Line, Msg: c.Err}
		}
		switch c.Kind {
		case pgscript.SQL:
			if w.pipe != nil || w.pwPipe != nil {
				w.count(ev, c)
				send := w.send
				if w.pw != nil {
					send = func(_ context.Context, idx int, c *pgscript.Cmd) error { return w.sendWire(idx, c) }
				}
				if err := send(ctx, sc.base+pc, c); err != nil {
					return &pgscript.Error{File: s.Name, Line: c.Line, Msg: err.Error()}
				}
				pc++
				continue
			}
			w.count(ev, c)
			start := ended
			if start == 0 {
				start = sinceBase()
			}
			if w.debug != nil {
				w.debug("sending " + w.text(c))
			}
			if err := w.exec(ctx, sc.base+pc, c); err != nil {
				return w.failed(sc, pc, err)
			}
			if w.debug != nil {
				w.debug("receiving")
			}
			ended = sinceBase()
			w.stats.record(sc.base+pc, ended-start, "")
			pc++
		case pgscript.Set:
			if err := w.set(s, c); err != nil {
				return err
			}
			pc++
		case pgscript.Sleep:
			d, err := c.SleepDuration(w.st)
			if err != nil {
				return &pgscript.Error{File: s.Name, Line: c.Line, Msg: err.Error()}
			}
			// As in pgbench, the sleep is part of the script's latency
			// (not an Event.Pause).
			if err := workload.Sleep(ctx, d); err != nil {
				return err
			}
			pc++
		case pgscript.If, pgscript.Elif, pgscript.Else, pgscript.Endif:
			next, err := s.Branch(pc, w.st)
			if err != nil {
				return err
			}
			pc = next
		case pgscript.Shell, pgscript.SetShell:
			if err := w.shell(ctx, s, c); err != nil {
				return err
			}
			pc++
		case pgscript.StartPipeline:
			switch {
			case w.pw != nil:
				if err := w.startWirePipe(s, sc.base, pc); err != nil {
					return fmt.Errorf("%s:%d: %w", s.Name, c.Line, err)
				}
			case w.pg != nil:
				w.pipe, w.pending, w.syncs = w.pg.StartPipeline(ctx), w.pending[:0], 0
			default:
				return &pgscript.Error{File: s.Name, Line: c.Line, Msg: "\\startpipeline needs PostgreSQL"}
			}
			pc++
		case pgscript.SyncPipeline:
			// A sync point, sent with the rest (at \endpipeline or once
			// the send buffer fills), as pgbench's PQsendPipelineSync.
			if w.pwPipe != nil {
				if err := w.pwPipe.SyncPoint(); err != nil {
					return fmt.Errorf("%s:%d: %w", s.Name, c.Line, err)
				}
			} else {
				w.pipe.SendPipelineSync()
				w.syncs++
			}
			pc++
		case pgscript.EndPipeline:
			sync := w.sync
			if w.pw != nil {
				sync = w.syncWire
			}
			if err := sync(); err != nil {
				return fmt.Errorf("%s:%d: %w", s.Name, c.Line, err)
			}
			pc++
		}
	}
	return w.endOfScript(s)
}

// failed records the failure of statement pc of sc and returns its error,
// naming the script's file and line.
func (w *worker) failed(sc *weighted, pc int, err error) error {
	var se *pgscript.Error
	if errors.As(err, &se) {
		w.stats.record(sc.base+pc, 0, "script")
		se.File = sc.s.Name
		return se
	}
	w.stats.record(sc.base+pc, 0, w.d.Classify(err).Code)
	return fmt.Errorf("%s:%d: %w", sc.s.Name, sc.s.Cmds[pc].Line, err)
}

// set runs c, a \set of s.
func (w *worker) set(s *pgscript.Script, c *pgscript.Cmd) error {
	v, err := c.Expr.Eval(w.st)
	if err != nil {
		return &pgscript.Error{File: s.Name, Line: c.Line, Msg: err.Error()}
	}
	w.st.SetSlot(c.Slot, v)
	return nil
}

// clockBase is the origin of sinceBase's monotonic readings.
var clockBase = time.Now()

// sinceBase reads the monotonic clock alone (time.Now reads the wall
// clock too); never 0.
func sinceBase() time.Duration { return time.Since(clockBase) + 1 }

func (w *worker) count(ev *workload.Event, c *pgscript.Cmd) {
	switch c.Class {
	case pgscript.Read:
		ev.Queries.Read++
	case pgscript.Write:
		ev.Queries.Write++
	default:
		ev.Queries.Other++
	}
}

// send queues one statement in the pipeline (PostgreSQL's extended
// protocol; with --protocol prepared, its Parse goes first the first time).
func (w *worker) send(ctx context.Context, idx int, c *pgscript.Cmd) error {
	if err := w.params(c); err != nil {
		return err
	}
	w.pending = append(w.pending, sent{idx, time.Now()})
	if w.wl.protocol == Extended {
		w.pipe.SendQueryParams(w.paramSQL(idx, c), w.pgArgs, nil, nil, nil)
		return nil
	}
	name, ok := w.pgNames[idx]
	if !ok {
		w.nprep++
		name = "dbarena_p" + strconv.Itoa(w.nprep)
		w.pipe.SendPrepare(name, w.paramSQL(idx, c), nil)
		w.pgNames[idx] = name
	}
	w.pipe.SendQueryPrepared(name, w.pgArgs, nil, nil)
	return nil
}

// sync ends the pipeline (\endpipeline): it waits for every statement's
// result, through each \syncpipeline's, and records each statement's
// latency from its sending.
func (w *worker) sync() error {
	p := w.pipe
	if err := p.Sync(); err != nil {
		return err
	}
	k := 0
	for {
		res, err := p.GetResults()
		if err != nil {
			if k < len(w.pending) {
				w.stats.record(w.pending[k].idx, 0, w.d.Classify(err).Code)
			}
			return err
		}
		switch r := res.(type) {
		case *pgconn.ResultReader:
			_, err := r.Close()
			if k < len(w.pending) {
				code := ""
				if err != nil {
					code = w.d.Classify(err).Code
				}
				w.stats.record(w.pending[k].idx, time.Since(w.pending[k].start), code)
				k++
			}
			if err != nil {
				return err
			}
		case *pgconn.PipelineSync:
			if w.syncs > 0 { // a \syncpipeline's: the next segment follows
				w.syncs--
				continue
			}
			w.pipe = nil
			return p.Close()
		case nil:
			w.pipe = nil
			return p.Close()
		}
	}
}

// endPipe closes a pipeline an event left open (it failed inside it); a
// sync first keeps the connection usable.
func (w *worker) endPipe() {
	if w.pwPipe != nil {
		_ = w.pwPipe.Sync(nil)
		w.pwPipe = nil
	}
	if w.pipe == nil {
		return
	}
	_ = w.pipe.Sync()
	_ = w.pipe.Close()
	w.pipe = nil
	// Statements prepared in a failed pipeline may not exist.
	for k, n := range w.pgNames {
		if strings.HasPrefix(n, "dbarena_p") {
			delete(w.pgNames, k)
		}
	}
}

// text renders c with :variables as pgbench's simple protocol does:
// substituted as text, or left as written when undefined.
func (w *worker) text(c *pgscript.Cmd) string {
	if len(c.Parts) == 1 && c.Parts[0].Var == "" {
		return c.Parts[0].Lit
	}
	return string(w.render(c))
}

// textView is text without a copy: valid until the next render, for a
// client that copies the text into its request at once (pgwire).
func (w *worker) textView(c *pgscript.Cmd) string {
	if len(c.Parts) == 1 && c.Parts[0].Var == "" {
		return c.Parts[0].Lit
	}
	b := w.render(c)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// render builds text's bytes in w.buf.
func (w *worker) render(c *pgscript.Cmd) []byte {
	b := w.buf[:0]
	for i := range c.Parts {
		p := &c.Parts[i]
		if p.Var == "" {
			b = append(b, p.Lit...)
		} else if v, ok := w.st.GetSlot(p.Slot); !ok {
			b = append(append(b, ':'), p.Var...)
		} else if v.K == pgscript.Int {
			b = strconv.AppendInt(b, v.I, 10)
		} else {
			b = v.AppendText(b)
		}
	}
	w.buf = b
	return b
}

// paramSQL is c's text with a placeholder per :variable ($n or ?), built
// once per command idx.
func (w *worker) paramSQL(idx int, c *pgscript.Cmd) string {
	if w.psql == nil {
		w.psql = make([]string, w.wl.stmts)
	}
	if q := w.psql[idx]; q != "" {
		return q
	}
	var b strings.Builder
	n := 0
	for _, p := range c.Parts {
		if p.Var == "" {
			b.WriteString(p.Lit)
			continue
		}
		n++
		if w.mysql {
			b.WriteByte('?')
		} else {
			b.WriteString("$" + strconv.Itoa(n))
		}
	}
	w.psql[idx] = w.mysqlText(b.String())
	return w.psql[idx]
}

// mysqlText maps pgbench's END (the built-in scripts' commit) to COMMIT,
// which the MySQL family has no synonym for.
func (w *worker) mysqlText(q string) string {
	if w.mysql && strings.EqualFold(strings.TrimRight(q, "; \t\r\n"), "end") {
		return "COMMIT"
	}
	return q
}

// params collects the values of c's :variables; an undefined one is an
// error, as in pgbench's extended and prepared protocols.
func (w *worker) params(c *pgscript.Cmd) error {
	w.args, w.pgArgs = w.args[:0], w.pgArgs[:0]
	for _, p := range c.Parts {
		if p.Var == "" {
			continue
		}
		v, ok := w.st.GetSlot(p.Slot)
		if !ok && w.undefinedNull && w.pg != nil {
			// pgbench sends an undefined variable as a NULL parameter.
			w.pgArgs = append(w.pgArgs, nil)
			continue
		}
		if !ok {
			return fmt.Errorf("undefined variable :%s", p.Var)
		}
		if w.pg != nil { // pgx takes text; a NULL is the text NULL, as pgbench sends it
			w.pgArgs = append(w.pgArgs, v.AppendText(nil))
			continue
		}
		switch v.K {
		case pgscript.Null:
			if !w.mysql { // pgbench sends the text NULL (getVariable)
				w.args = append(w.args, "NULL")
				continue
			}
			w.args = append(w.args, nil)
		case pgscript.Int:
			w.args = append(w.args, v.I)
		case pgscript.Double:
			w.args = append(w.args, v.F)
		default:
			w.args = append(w.args, v.Text())
		}
	}
	return nil
}

// exec runs one SQL command and stores its result row for \gset/\aset.
func (w *worker) exec(ctx context.Context, idx int, c *pgscript.Cmd) error {
	w.resetKept()
	if err := w.run(ctx, idx, c); err != nil {
		return err
	}
	return w.store(c)
}

func (w *worker) keep(c *pgscript.Cmd) bool { return c.Gset || c.Aset }

func (w *worker) execPG(ctx context.Context, idx int, c *pgscript.Cmd) error {
	if pgscript.IsClientCopy(c.Text) { // pgx would wait for COPY data
		return &pgscript.Error{Line: c.Line, Msg: "COPY is not supported in pgbench, aborting"}
	}
	var rr *pgconn.ResultReader
	switch w.wl.protocol {
	case Simple:
		mrr := w.pg.Exec(ctx, w.text(c))
		k := 0
		for mrr.NextResult() {
			w.readPG(mrr.ResultReader(), c, k)
			k++
		}
		w.total = k
		return mrr.Close()
	case Extended:
		if err := w.params(c); err != nil {
			return &pgscript.Error{Line: c.Line, Msg: err.Error()}
		}
		rr = w.pg.ExecParams(ctx, w.paramSQL(idx, c), w.pgArgs, nil, nil, nil)
	default:
		if err := w.params(c); err != nil {
			return &pgscript.Error{Line: c.Line, Msg: err.Error()}
		}
		name, ok := w.pgNames[idx]
		if !ok {
			name = "dbarena_s" + strconv.Itoa(idx)
			if _, err := w.pg.Prepare(ctx, name, w.paramSQL(idx, c), nil); err != nil {
				if w.prepareFailed == nil {
					return err
				}
				// As pgbench: the failure is reported and the statement
				// executed anyway, which the server refuses.
				w.prepareFailed(err)
			} else {
				w.pgNames[idx] = name
			}
		}
		rr = w.pg.ExecPrepared(ctx, name, w.pgArgs, nil, nil)
	}
	w.readPG(rr, c, 0)
	_, err := rr.Close()
	return err
}

// readPG keeps the rows of result k of a reply for \gset and \aset
// (results.go).
func (w *worker) readPG(rr *pgconn.ResultReader, c *pgscript.Cmd, k int) {
	keep := w.keep(c)
	for rr.NextRow() {
		if !keep {
			continue
		}
		if w.res != k || w.rows == 0 {
			w.newResult(k)
			for _, f := range rr.FieldDescriptions() {
				w.cols = append(w.cols, f.Name)
			}
		}
		w.rows++
		w.vals = w.vals[:0]
		for _, v := range rr.Values() {
			w.vals = append(w.vals, pgscript.StringV(string(v))) // NULL: "", as pgbench
		}
	}
}

func (w *worker) execMySQL(ctx context.Context, idx int, c *pgscript.Cmd) error {
	var rows *sql.Rows
	var err error
	switch w.wl.protocol {
	case Simple:
		rows, err = w.conn.QueryContext(ctx, w.mysqlText(w.text(c)))
	case Extended:
		if err := w.params(c); err != nil {
			return &pgscript.Error{Line: c.Line, Msg: err.Error()}
		}
		rows, err = w.conn.QueryContext(ctx, w.paramSQL(idx, c), w.args...)
	default:
		if err := w.params(c); err != nil {
			return &pgscript.Error{Line: c.Line, Msg: err.Error()}
		}
		st, ok := w.prepared[idx]
		if !ok {
			if st, err = w.conn.PrepareContext(ctx, w.paramSQL(idx, c)); err != nil {
				return err
			}
			w.prepared[idx] = st
		}
		rows, err = st.QueryContext(ctx, w.args...)
	}
	if err != nil {
		return err
	}
	defer rows.Close()
	keep := w.keep(c)
	var raw []sql.RawBytes
	var dest []any
	if keep {
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		w.cols = append(w.cols[:0], cols...)
		w.res = 0
		raw = make([]sql.RawBytes, len(cols))
		dest = make([]any, len(cols))
		for i := range raw {
			dest[i] = &raw[i]
		}
	}
	for rows.Next() {
		if !keep {
			continue
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		w.rows++
		w.vals = w.vals[:0]
		for _, v := range raw {
			if v == nil {
				w.vals = append(w.vals, pgscript.Value{})
			} else {
				w.vals = append(w.vals, pgscript.StringV(string(v)))
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return rows.Close()
}

// Close implements workload.Worker: it releases prepared statements, and
// closes the worker's own connection.
func (w *worker) Close() error {
	if w.pw != nil {
		return w.pw.Close() // its statements go with the session
	}
	for _, st := range w.prepared {
		_ = st.Close()
	}
	if w.pg != nil && len(w.pgNames) > 0 && !w.pg.IsClosed() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, n := range w.pgNames {
			_ = w.pg.Deallocate(ctx, n)
		}
	}
	return nil
}
