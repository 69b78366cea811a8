package oltp

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"sync"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/workload"
)

// BulkInsert is sysbench's bulk_insert (bulk_insert.lua): each thread
// appends rows (n, n) to its own table sbtest<thread+1> through one
// multi-row INSERT buffer that is sent whenever it reaches sysbench's
// 512 KiB limit and when the worker closes. It has no options of its own;
// prepare creates one table per --threads.
type BulkInsert struct {
	fs      *pflag.FlagSet
	mu      sync.Mutex
	threads int
}

var (
	_ workload.Workload = (*BulkInsert)(nil)
	_ workload.Preparer = (*BulkInsert)(nil)
	_ workload.Cleaner  = (*BulkInsert)(nil)
	_ workload.Runner   = (*BulkInsert)(nil)
)

// NewBulkInsert returns bulk_insert.
func NewBulkInsert() *BulkInsert { return &BulkInsert{} }

// Name implements workload.Workload.
func (*BulkInsert) Name() string { return "bulk_insert" }

// Description implements workload.Workload.
func (*BulkInsert) Description() string {
	return "sysbench multi-row INSERTs, one table per thread"
}

// Flags implements workload.Workload; bulk_insert has no flags, but the
// flag set is kept to read the run's --threads at cleanup.
func (b *BulkInsert) Flags(fs *pflag.FlagSet) { b.fs = fs }

// Validate implements workload.Workload.
func (*BulkInsert) Validate() []error { return nil }

// Params implements workload.Workload.
func (*BulkInsert) Params() map[string]any { return map[string]any{} }

var _ workload.ThreadSetter = (*BulkInsert)(nil)

// SetThreads tells cleanup how many tables to drop (bulk_insert.lua's
// cleanup() drops sbtest1..threads). Without it the workload reads a
// --threads flag from the flag set given to Flags, or assumes 1.
func (b *BulkInsert) SetThreads(n int) {
	b.mu.Lock()
	b.threads = n
	b.mu.Unlock()
}

func (b *BulkInsert) runThreads() int {
	b.mu.Lock()
	n := b.threads
	b.mu.Unlock()
	return threadsOr1(n, b.fs)
}

// bulkCreateSQL is bulk_insert.lua's prepare() DDL, byte for byte.
func bulkCreateSQL(n int) string {
	return "        CREATE TABLE IF NOT EXISTS sbtest" + strconv.Itoa(n) + " (\n" +
		"          id INTEGER NOT NULL,\n" +
		"          k INTEGER DEFAULT '0' NOT NULL,\n" +
		"          PRIMARY KEY (id))"
}

// Prepare implements workload.Preparer: one empty table per thread.
func (b *BulkInsert) Prepare(ctx context.Context, env workload.Env, threads int, p workload.Progress) error {
	if threads < 1 {
		threads = 1
	}
	p.SetTotal(0)
	for i := 1; i <= threads; i++ {
		if _, err := env.DB.ExecContext(ctx, bulkCreateSQL(i)); err != nil {
			return fmt.Errorf("create table %s: %w", tableName(i), err)
		}
	}
	return nil
}

// Cleanup implements workload.Cleaner: DROP TABLE IF EXISTS sbtest1..threads.
func (b *BulkInsert) Cleanup(ctx context.Context, env workload.Env) error {
	return dropTables(ctx, env.DB, b.runThreads())
}

// NewWorker implements workload.Runner. Worker id writes to sbtest<id+1>.
func (b *BulkInsert) NewWorker(_ context.Context, _ workload.Env, conn *sql.Conn, id int, _ int64) (workload.Worker, error) {
	return newBulkWorker(&sqlExecutor{conn: conn}, id), nil
}

// bulkWorker is one thread of bulk_insert.lua.
type bulkWorker struct {
	x       executor
	st      stmt
	buf     []byte
	head    int   // length of "INSERT INTO sbtestN VALUES"
	cursize int64 // rows generated so far (cursize)
	pending int64 // rows in buf
}

func newBulkWorker(x executor, id int) *bulkWorker {
	w := &bulkWorker{x: x, buf: make([]byte, 0, bulkPacketSize)}
	// con:bulk_insert_init("INSERT INTO sbtest" .. thread_id+1 .. " VALUES")
	w.buf = append(w.buf, "INSERT INTO sbtest"...)
	w.buf = strconv.AppendInt(w.buf, int64(id+1), 10)
	w.buf = append(w.buf, " VALUES"...)
	w.head = len(w.buf)
	return w
}

// Event implements workload.Worker: con:bulk_insert_next("(n,n)"), which
// sends the buffered INSERT first when the row would not fit.
func (w *bulkWorker) Event(ctx context.Context, ev *workload.Event) error {
	w.cursize++
	var rb [48]byte
	row := append(rb[:0], '(')
	row = strconv.AppendInt(row, w.cursize, 10)
	row = append(row, ',')
	row = strconv.AppendInt(row, w.cursize, 10)
	row = append(row, ')')
	comma := 0
	if w.pending > 0 {
		comma = 1
	}
	if len(w.buf)+len(row)+1+comma > bulkPacketSize {
		if err := w.flush(ctx, ev); err != nil {
			return err
		}
		comma = 0
	}
	if comma == 1 {
		w.buf = append(w.buf, ',')
	}
	w.buf = append(w.buf, row...)
	w.pending++
	return nil
}

// flush sends the buffered rows (db_bulk_do_insert()).
func (w *bulkWorker) flush(ctx context.Context, ev *workload.Event) error {
	if w.pending == 0 {
		return nil
	}
	w.st.text = string(w.buf)
	n, err := w.x.exec(ctx, &w.st)
	w.buf, w.pending = w.buf[:w.head], 0
	if err != nil {
		return fmt.Errorf("bulk insert: %w", err)
	}
	if ev != nil {
		if n > 0 {
			ev.Queries.Write++
		} else {
			ev.Queries.Other++
		}
	}
	return nil
}

// Close implements workload.Worker: bulk_insert_done() sends what is left.
// That last INSERT belongs to no event, so no event counts it.
func (w *bulkWorker) Close() error {
	return w.flush(context.Background(), nil)
}
