package oltp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/dbarena/dbarena/internal/wire/mysqlwire"
	"github.com/dbarena/dbarena/internal/wire/pgwire"
	"github.com/dbarena/dbarena/internal/workload"
	"github.com/dbarena/dbarena/internal/workload/oltp/sbrand"
)

// stmt is one statement of a worker with its reusable argument slice.
type stmt struct {
	text  string          // SQL in the dialect's placeholder style
	ps    *sql.Stmt       // server-side prepared statement; nil with --ps-mode=disable
	wps   *mysqlwire.Stmt // the same on a lean MySQL connection
	pps   *pgwire.Stmt    // the same on a lean PostgreSQL connection
	args  []any
	read  bool // returns rows (sysbench counts it as a read)
	other bool // BEGIN/COMMIT: always "other"
	// byRef: the executor reads *int64 and *[]byte arguments through
	// (pgwire, mysqlwire), so setInt and setStr change args in place instead of
	// boxing a new value on every call (an allocation each).
	byRef bool
}

// setInt sets argument i to v.
func (st *stmt) setInt(i int, v int64) {
	if p, ok := st.args[i].(*int64); ok {
		*p = v
		return
	}
	if st.byRef {
		p := new(int64) // once: later calls write through it
		*p = v
		st.args[i] = p
		return
	}
	st.args[i] = v
}

// setStr sets argument i to a string built from template by rnd
// (sysbench.rand.string); buf is the scratch buffer of a boxed string.
func (st *stmt) setStr(i int, rnd *sbrand.Rand, template string, buf *[]byte) {
	if p, ok := st.args[i].(*[]byte); ok {
		*p = rnd.AppendStr((*p)[:0], template)
		return
	}
	if st.byRef {
		p := new([]byte) // once: later calls write through it
		*p = rnd.AppendStr(nil, template)
		st.args[i] = p
		return
	}
	*buf = rnd.AppendStr((*buf)[:0], template)
	st.args[i] = string(*buf)
}

// executor runs a worker's statements. sqlExecutor talks to a database;
// tests substitute a recorder.
type executor interface {
	// prepare makes st a server-side prepared statement where the
	// executor prepares statements at all.
	prepare(ctx context.Context, st *stmt) error
	// query runs st and reads every row of its result.
	query(ctx context.Context, st *stmt) error
	// exec runs st and returns the number of rows it changed.
	exec(ctx context.Context, st *stmt) (int64, error)
	// close releases st's server-side statement.
	close(st *stmt) error
}

// sqlExecutor runs statements on one connection.
type sqlExecutor struct {
	conn     *sql.Conn
	prepared bool // --ps-mode=auto
}

func (x *sqlExecutor) prepare(ctx context.Context, st *stmt) error {
	if !x.prepared {
		return nil
	}
	ps, err := x.conn.PrepareContext(ctx, st.text)
	if err != nil {
		return fmt.Errorf("prepare %q: %w", st.text, err)
	}
	st.ps = ps
	return nil
}

func (x *sqlExecutor) query(ctx context.Context, st *stmt) error {
	var rows *sql.Rows
	var err error
	if st.ps != nil {
		rows, err = st.ps.QueryContext(ctx, st.args...)
	} else {
		rows, err = x.conn.QueryContext(ctx, st.text, st.args...)
	}
	if err != nil {
		return err
	}
	// sysbench stores (reads) the whole result set of every SELECT.
	for rows.Next() {
	}
	if err := rows.Close(); err != nil {
		return err
	}
	return rows.Err()
}

func (x *sqlExecutor) exec(ctx context.Context, st *stmt) (int64, error) {
	var res sql.Result
	var err error
	if st.ps != nil {
		res, err = st.ps.ExecContext(ctx, st.args...)
	} else {
		res, err = x.conn.ExecContext(ctx, st.text, st.args...)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (x *sqlExecutor) close(st *stmt) error {
	if st.ps == nil {
		return nil
	}
	err := st.ps.Close()
	st.ps = nil
	return err
}

// worker runs one connection's events for the sysbench OLTP scripts. It is
// used by one goroutine.
type worker struct {
	cfg    *Config
	spec   *spec
	rnd    *sbrand.Rand
	x      executor
	tables [][numStmtKinds]*stmt // [table number][kind]; index 0 unused
	begin  stmt
	commit stmt
	// custom is the single statement of select_random_* and the scratch
	// statement of oltp_insert.
	custom stmt
	// rmin, rmax bound select_random_*'s draws to this thread's segment.
	rmin, rmax int64
	unique     *sbrand.Unique
	// part narrows tableNum and id to a shard's share (Workload.Shard).
	part part
	// pgAutoInc: oltp_insert leaves id out on PostgreSQL with --auto-inc.
	pgAutoInc bool
	buf       []byte
	cbuf      []byte
	// conn is the connection the worker owns (workload.Dialer), closed
	// with it; nil when the runner lends one.
	conn interface{ Close() error }
	// endsSession: closing conn ends the server session, which frees the
	// prepared statements with it (a wire connection, not a pooled one),
	// so Close does not close them one by one (a round trip each on
	// PostgreSQL: 36 per oltp_read_write worker).
	endsSession bool
}

// do runs st and counts it as sysbench's drivers do (drv_mysql.c,
// drv_pgsql.c): a statement with a result set is a read, one that changed
// rows a write, anything else (BEGIN, COMMIT, a DML that matched no row)
// "other". A failed statement is not counted.
func (w *worker) do(ctx context.Context, st *stmt, ev *workload.Event) error {
	if st.read {
		if err := w.x.query(ctx, st); err != nil {
			return stmtErr(st, err)
		}
		ev.Queries.Read++
		return nil
	}
	n, err := w.x.exec(ctx, st)
	if err != nil {
		return stmtErr(st, err)
	}
	if n > 0 && !st.other {
		ev.Queries.Write++
	} else {
		ev.Queries.Other++
	}
	return nil
}

// stmtErr adds the statement to err; callers classify with errors.As.
func stmtErr(st *stmt, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%s: %w", st.text, err)
}

// tableNum is oltp_common.lua's get_table_num(): sysbench.rand.uniform(1, tables).
func (w *worker) tableNum() int {
	if w.part.thi > 0 {
		return int(w.rnd.Uniform(int64(w.part.tlo), int64(w.part.thi)))
	}
	return int(w.rnd.Uniform(1, int64(w.cfg.Tables)))
}

// id is oltp_common.lua's get_id(): sysbench.rand.default(1, table_size).
func (w *worker) id() int64 {
	if w.part.isz > 0 {
		return w.part.ilo - 1 + w.rnd.Default(1, w.part.isz)
	}
	return w.rnd.Default(1, int64(w.cfg.TableSize))
}

func (w *worker) beginTrx(ctx context.Context, ev *workload.Event) error {
	if w.cfg.SkipTrx {
		return nil
	}
	return w.do(ctx, &w.begin, ev)
}

func (w *worker) commitTrx(ctx context.Context, ev *workload.Event) error {
	if w.cfg.SkipTrx {
		return nil
	}
	return w.do(ctx, &w.commit, ev)
}

// pointSelects is execute_point_selects(): one table, n lookups by id.
func (w *worker) pointSelects(ctx context.Context, ev *workload.Event, n int) error {
	st := w.tables[w.tableNum()][pointSelects]
	for i := 0; i < n; i++ {
		st.setInt(0, w.id())
		if err := w.do(ctx, st, ev); err != nil {
			return err
		}
	}
	return nil
}

// ranges is execute_range(key): one table, n ranges [id, id+range_size-1].
func (w *worker) ranges(ctx context.Context, ev *workload.Event, kind stmtKind, n int) error {
	st := w.tables[w.tableNum()][kind]
	for i := 0; i < n; i++ {
		id := w.id()
		st.setInt(0, id)
		st.setInt(1, id+int64(w.cfg.RangeSize)-1)
		if err := w.do(ctx, st, ev); err != nil {
			return err
		}
	}
	return nil
}

// rangeSelects runs the four range groups when --range-selects is on.
func (w *worker) rangeSelects(ctx context.Context, ev *workload.Event) error {
	if !w.cfg.RangeSelects {
		return nil
	}
	c := w.cfg
	for _, r := range [...]struct {
		kind stmtKind
		n    int
	}{{simpleRanges, c.SimpleRanges}, {sumRanges, c.SumRanges}, {orderRanges, c.OrderRanges}, {distinctRanges, c.DistinctRanges}} {
		if err := w.ranges(ctx, ev, r.kind, r.n); err != nil {
			return err
		}
	}
	return nil
}

// indexUpdates is execute_index_updates().
func (w *worker) indexUpdates(ctx context.Context, ev *workload.Event) error {
	st := w.tables[w.tableNum()][indexUpdates]
	for i := 0; i < w.cfg.IndexUpdates; i++ {
		st.setInt(0, w.id())
		if err := w.do(ctx, st, ev); err != nil {
			return err
		}
	}
	return nil
}

// nonIndexUpdates is execute_non_index_updates(): c first, then the id.
func (w *worker) nonIndexUpdates(ctx context.Context, ev *workload.Event) error {
	st := w.tables[w.tableNum()][nonIndexUpdates]
	for i := 0; i < w.cfg.NonIndexUpdates; i++ {
		st.setStr(0, w.rnd, cTemplate, &w.cbuf)
		st.setInt(1, w.id())
		if err := w.do(ctx, st, ev); err != nil {
			return err
		}
	}
	return nil
}

// deleteInserts is execute_delete_inserts(): delete a row by id and insert
// it again with a new k, c and pad.
func (w *worker) deleteInserts(ctx context.Context, ev *workload.Event) error {
	t := w.tables[w.tableNum()]
	del, ins := t[deletes], t[inserts]
	for i := 0; i < w.cfg.DeleteInserts; i++ {
		id := w.id()
		k := w.id()
		del.setInt(0, id)
		ins.setInt(0, id)
		ins.setInt(1, k)
		ins.setStr(2, w.rnd, cTemplate, &w.cbuf)
		ins.setStr(3, w.rnd, padTemplate, &w.cbuf)
		if err := w.do(ctx, del, ev); err != nil {
			return err
		}
		if err := w.do(ctx, ins, ev); err != nil {
			return err
		}
	}
	return nil
}

// Event implements workload.Worker.
func (w *worker) Event(ctx context.Context, ev *workload.Event) error {
	return w.spec.event(ctx, w, ev)
}

// Close implements workload.Worker: it closes the prepared statements
// (close_statements()).
func (w *worker) Close() error {
	if w.endsSession && w.conn != nil {
		err := w.conn.Close()
		w.conn = nil
		return err
	}
	var errs []error
	for _, t := range w.tables {
		for _, st := range t {
			if st != nil {
				errs = append(errs, w.x.close(st))
			}
		}
	}
	errs = append(errs, w.x.close(&w.custom), w.x.close(&w.begin), w.x.close(&w.commit))
	if w.conn != nil {
		errs = append(errs, w.conn.Close())
		w.conn = nil
	}
	return errors.Join(errs...)
}

// Rollback implements workload.Rollbacker: it ends the transaction a failed
// event left open on the worker's own connection.
func (w *worker) Rollback(ctx context.Context) error {
	_, err := w.x.exec(ctx, &stmt{text: "ROLLBACK", other: true})
	return err
}

// newStmt builds a statement in the dialect's placeholder style.
func newStmt(rebind func(string) string, text string, nargs int, read bool) *stmt {
	return &stmt{text: rebind(text), args: make([]any, nargs), read: read}
}

// argCount counts the '?' placeholders of a statement text.
func argCount(text string) int {
	n := 0
	for i := 0; i < len(text); i++ {
		if text[i] == '?' {
			n++
		}
	}
	return n
}

// prepareTables is thread_init() + prepare_statements(): every needed
// statement kind for every table, prepared on this worker's connection.
// texts are the workload's shared statement texts (Workload.stmtTexts);
// the statements and their arguments live in one allocation each.
func (w *worker) prepareTables(ctx context.Context, texts [][numStmtKinds]string, kinds []stmtKind) error {
	n := w.cfg.Tables
	w.tables = make([][numStmtKinds]*stmt, n+1)
	slab := make([]stmt, len(kinds)*n)
	nargs := 0
	for _, kind := range kinds {
		nargs += n * argCount(stmtDefs[kind].suffix)
	}
	args := make([]any, nargs)
	all := make([]*stmt, 0, len(slab))
	for _, kind := range kinds {
		def := stmtDefs[kind]
		na := argCount(def.suffix)
		for t := 1; t <= n; t++ {
			st := &slab[0]
			slab = slab[1:]
			st.text, st.read, st.args = texts[t][kind], def.read, args[:na:na]
			args = args[na:]
			w.tables[t][kind] = st
			all = append(all, st)
		}
	}
	if bp, ok := w.x.(batchPreparer); ok {
		return bp.prepareAll(ctx, all)
	}
	for _, st := range all {
		if err := w.x.prepare(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

// batchPreparer is an executor that prepares many statements in one round
// trip (pgExecutor): 36 per oltp_read_write worker at --tables 4.
type batchPreparer interface {
	prepareAll(ctx context.Context, sts []*stmt) error
}
