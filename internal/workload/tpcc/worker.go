package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/workload"
)

// runInfo is what every terminal of a run shares: the database's
// warehouses and the C constants (clause 2.1.6).
type runInfo struct {
	warehouses int
	seed       uint64
	load, run  Constants
	// schema and fk are the schema as found: its variant and whether its
	// tables have foreign keys.
	schema string
	fk     bool
}

// info reads the run's shared parameters once, from dbarena_tpcc_meta when
// dbarena prepared the tables, else from the warehouse table (tables loaded
// by tpcc-mysql: the load's C_LAST is then unknown, and C_RUN arbitrary).
func (wl *Workload) info(ctx context.Context, env workload.Env, conn *sql.Conn, runSeed int64) (*runInfo, error) {
	wl.mu.Lock()
	defer wl.mu.Unlock()
	if wl.runInfo != nil {
		return wl.runInfo, nil
	}
	if ok, err := tableExists(ctx, env, conn, "warehouse"); err != nil {
		return nil, err
	} else if !ok {
		return nil, errNotPrepared
	}
	m, err := readMeta(ctx, env, conn)
	if err != nil {
		return nil, err
	}
	ri := &runInfo{schema: SchemaStandard}
	if ri.fk, err = hasForeignKeys(ctx, env, conn); err != nil {
		return nil, fmt.Errorf("look for foreign keys: %w", err)
	}
	if m != nil {
		ri.warehouses, ri.seed, ri.load, ri.schema = m.warehouses, m.seed, m.c, m.schema
	} else {
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM warehouse").Scan(&ri.warehouses); err != nil {
			return nil, err
		}
		ri.load = loadConstants(0)
	}
	if wl.fs != nil && wl.fs.Changed("warehouses") {
		ri.warehouses = wl.cfg.Warehouses
	}
	if ri.warehouses < 1 {
		return nil, errNotPrepared
	}
	if wl.cfg.Shape == ShapeProcedures {
		if err := createProcs(ctx, env, conn); err != nil {
			return nil, err
		}
	}
	ri.run = runConstants(ri.load, uint64(runSeed))
	wl.runInfo = ri
	return ri, nil
}

// ResponseLimits implements workload.ResponseLimiter: the limits beyond
// which a transaction counts as late: tpcc-mysql's (milliseconds) with its
// shape, the 90th percentile response-time limits of clause 5.2.5.3 with
// the batched one, or --rt-limitN.
func (wl *Workload) ResponseLimits() map[string]time.Duration {
	lim := wl.cfg.limits()
	out := make(map[string]time.Duration, len(txTypes))
	for i, t := range txTypes {
		out[t] = lim[i]
	}
	return out
}

// Keying times and mean think times of clause 5.2.5.7, by transaction.
var (
	keyingTime = [5]time.Duration{18 * time.Second, 3 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second}
	thinkTime  = [5]time.Duration{12 * time.Second, 12 * time.Second, 10 * time.Second, 5 * time.Second, 5 * time.Second}
)

// worker is one terminal (clause 5.2.1), drawing its transactions from
// its own deck. Its home warehouse is drawn per transaction, or fixed with
// Config.BindWarehouse.
type worker struct {
	wl *Workload
	x  executor
	// conn is the connection the worker owns (workload.Dialer), closed
	// with it; nil when the runner owns it.
	conn interface{ Close() error }
	info *runInfo
	// classify tells a conflict the runner retries from other errors.
	classify func(error) dialect.Class
	r        rng
	// bound: the home warehouse and Stock-Level district are the
	// terminal's for its whole life (clause 2.8.1.1: constant per
	// terminal); else both are drawn per transaction.
	bound bool
	// w is the home warehouse of the current transaction; slDistrict the
	// district of Stock-Level.
	w, slDistrict int
	// homeLo..homeHi are the home warehouses: all, or a shard's part.
	homeLo, homeHi int
	deck           []uint8
	pos            int
	// cur is the transaction of the last card; retry says it lost a
	// conflict, so that the runner's retry reruns the same type without
	// keying again. Any other failure advances the deck, so failures do
	// not bias the mix.
	cur     int
	retry   bool
	retries int // reruns of the current card
	// live is the runner's context of the current event.
	live context.Context
	st   *stmts
	// row's state: the callback of the first row and the rows seen.
	rowFn   func(row) error
	rows    int
	firstCB func(row) error // w.firstRow
	// Row callbacks of New-Order, made once (method values allocate).
	itemCB, stockCB func(row) error
	stockDist       int // the district whose S_DIST_xx stockRow keeps
	// rowShape: the transactions are tpcc-mysql's (rowshape.go); proc:
	// stored routine calls (procs.go), pg on PostgreSQL.
	rowShape, proc, pg bool
	// batch, with --pipeline, sends the writes pending of a transaction.
	batch   batcher
	pending queue
	// scratch
	items  []orderItem
	args   []any
	prices []itemPrice
	stock  stockRows
	ids    []int
	buf    []byte
}

var _ workload.Worker = (*worker)(nil)

// NewWorker implements workload.Runner. With Config.BindWarehouse,
// terminal id gets home warehouse id % W + 1 (terminals are spread evenly
// over the warehouses).
func (wl *Workload) NewWorker(ctx context.Context, env workload.Env, conn *sql.Conn, id int, seed int64) (workload.Worker, error) {
	info, err := wl.info(ctx, env, conn, seed-int64(id))
	if err != nil {
		return nil, err
	}
	w, err := wl.newWorker(ctx, env, &sqlExecutor{conn: conn}, info, id, seed)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// newWorker prepares a terminal's statements on x.
func (wl *Workload) newWorker(ctx context.Context, env workload.Env, x executor, info *runInfo, id int, seed int64) (*worker, error) {
	lo, hi, err := wl.homes(info.warehouses)
	if err != nil {
		return nil, err
	}
	st, err := prepareStmts(ctx, x, wl.texts(env.Dialect))
	if err != nil {
		return nil, err
	}
	homes := hi - lo + 1
	w := &worker{
		wl: wl, x: x, info: info, st: st,
		classify:   env.Dialect.Classify,
		r:          newRNG(uint64(seed), 0x7e),
		bound:      wl.cfg.BindWarehouse,
		homeLo:     lo,
		homeHi:     hi,
		w:          lo + id%homes,
		slDistrict: (id/homes)%nDist + 1,
		deck:       newDeck(wl.cfg.Weights),
		items:      make([]orderItem, 0, maxLines),
		args:       make([]any, 0, maxArgs),
		prices:     make([]itemPrice, 0, maxLines),
		stock:      make(stockRows, 0, maxLines),
		rowShape:   wl.cfg.Shape == ShapeTpccMySQL,
		proc:       wl.cfg.Shape == ShapeProcedures,
		pg:         pgSQL(env.Dialect),
	}
	w.pos = len(w.deck)
	w.firstCB, w.itemCB, w.stockCB = w.firstRow, w.itemRow, w.stockRow
	return w, nil
}

// maxArgs is the most arguments a statement takes: the one-statement
// stock update (stockUpdateSQL).
const maxArgs = 8*maxLines + 1 + maxLines

// newDeck returns the cards of one deck: weights[t] cards of type t.
func newDeck(weights [5]int) []uint8 {
	var deck []uint8
	for t, n := range weights {
		for i := 0; i < n; i++ {
			deck = append(deck, uint8(t))
		}
	}
	return deck
}

// draw returns the next card of the deck, shuffling a fresh deck when the
// last one is used up, so the mix holds exactly over every deck (clause
// 5.2.4.2).
func (w *worker) draw() int {
	if w.pos >= len(w.deck) {
		w.r.Shuffle(len(w.deck), func(i, j int) { w.deck[i], w.deck[j] = w.deck[j], w.deck[i] })
		w.pos = 0
	}
	c := w.deck[w.pos]
	w.pos++
	return int(c)
}

// next picks the transaction of the coming event: the same as the last
// after a conflict the runner retries, else the deck's next card and,
// unless bound, a home warehouse drawn uniformly over 1..W and a
// Stock-Level district over 1..10, as go-tpc and tpcc-mysql draw them
// (clause 2.8.1.1 fixes the district per terminal, which an unbound
// terminal is not). It reports whether the event is a retry.
func (w *worker) next() bool {
	if w.retry && w.retries < maxRetries {
		w.retries++
		return true
	}
	w.retries = 0
	w.cur = w.draw()
	if !w.bound {
		w.w = w.r.between(w.homeLo, w.homeHi)
		w.slDistrict = w.r.between(1, nDist)
	}
	return false
}

// maxRetries is how often the runner reruns an event after conflicts
// before it gives up (runner.Config.MaxRetries, by default): the event
// after that draws a new card.
const maxRetries = 100

// settle records how the event ended: only a conflict the runner retries
// (deadlock, lock-wait timeout, serialization failure) keeps its card.
func (w *worker) settle(err error) {
	w.retry = err != nil && w.classify(err).Kind == dialect.Retry
}

// Event implements workload.Worker: one transaction of the deck's next type.
func (w *worker) Event(ctx context.Context, ev *workload.Event) error {
	retry := w.next()
	ev.Type = txTypes[w.cur]
	think := w.wl.cfg.Think
	if think && !retry {
		if err := w.pause(ctx, ev, keyingTime[w.cur]); err != nil {
			return err
		}
	}
	// Statements run on a context that is never cancelled: go-sql-driver
	// hands every statement with a cancellable context to a watcher
	// goroutine (two goroutine wake-ups per statement, a third of the
	// client's CPU here). Cancellation is still honoured between
	// statements (see live), so an interrupted run stops after the
	// statement in flight.
	w.live = ctx
	ctx = context.WithoutCancel(ctx)
	var err error
	switch {
	case w.proc:
		err = w.procEvent(ctx, ev)
	case w.cur == 1:
		err = w.payment(ctx, ev)
	case w.rowShape && w.cur == 0:
		err = w.rowNewOrder(ctx, ev)
	case w.rowShape && w.cur == 2:
		err = w.rowOrderStatus(ctx, ev)
	case w.rowShape && w.cur == 3:
		err = w.rowDelivery(ctx, ev)
	case w.rowShape:
		err = w.rowStockLevel(ctx, ev)
	case w.cur == 0:
		err = w.newOrder(ctx, ev)
	case w.cur == 2:
		err = w.orderStatus(ctx, ev)
	case w.cur == 3:
		err = w.delivery(ctx, ev)
	default:
		err = w.stockLevel(ctx, ev)
	}
	w.settle(err)
	if err == nil && think {
		// Negative exponential think time, at most 10 times its mean
		// (clause 5.2.5.4).
		mean := float64(thinkTime[w.cur])
		t := -math.Log(1-w.r.Float64()) * mean
		t = math.Min(t, 10*mean)
		if err := w.pause(w.live, ev, time.Duration(t)); !errors.Is(err, workload.ErrStopped) {
			return err
		}
		return nil // the transaction is done; the run's end cut its think time short
	}
	return err
}

// pause sleeps d (scaled) and reports it as left out of the latency. The
// run's end wakes it (workload.ErrStopped), so a think time does not hold
// the run past --time.
func (w *worker) pause(ctx context.Context, ev *workload.Event, d time.Duration) error {
	d = time.Duration(float64(d) * w.wl.cfg.ThinkScale)
	if d <= 0 {
		return nil
	}
	start := time.Now()
	err := workload.Sleep(ctx, d) // under --jobs the thread serves others meanwhile
	ev.Pause += time.Since(start)
	return err
}

// Close implements workload.Worker: it closes the prepared statements,
// and the connection if the worker owns it.
func (w *worker) Close() error {
	err := w.st.close()
	if w.conn != nil {
		err = errors.Join(err, w.conn.Close())
		w.conn = nil
	}
	return err
}

// Rollback implements workload.Rollbacker: it ends the transaction a
// failed event left open on the worker's own connection.
func (w *worker) Rollback(ctx context.Context) error {
	w.pending.reset()
	return w.x.run(ctx, "ROLLBACK")
}

// otherWarehouse returns a random warehouse other than the home one, or the
// home one when there is no other.
func (w *worker) otherWarehouse() int {
	n := w.info.warehouses
	if n == 1 {
		return w.w
	}
	o := w.r.between(1, n-1)
	if o >= w.w {
		o++
	}
	return o
}

// customerNumber draws C_ID = NURand(1023, 1, 3000) (clause 2.1.6).
func (w *worker) customerNumber() int { return w.r.nurand(cIDA, 1, nCust, w.info.run.CID) }

// pickCustomer draws how a Payment or Order-Status finds its customer
// (clauses 2.5.1.2, 2.6.1.2): 60% by last name, 40% by number.
func (w *worker) pickCustomer() (byName bool, cLast string, cID int) {
	if w.r.between(1, 100) <= 60 {
		return true, w.customerLast(), 0
	}
	return false, "", w.customerNumber()
}

// customerLast draws C_LAST from NURand(255, 0, 999) with C_RUN (clause 2.1.6).
func (w *worker) customerLast() string {
	w.buf = appendLastName(w.buf[:0], w.r.nurand(cLastA, 0, 999, w.info.run.CLast))
	return string(w.buf)
}

// Statement helpers count what they send.

func (w *worker) begin(ctx context.Context, ev *workload.Event) error {
	if err := w.live.Err(); err != nil {
		return err
	}
	ev.Queries.Other++
	w.pending.reset()
	return w.x.run(ctx, "BEGIN")
}

func (w *worker) commit(ctx context.Context, ev *workload.Event) error {
	if err := w.live.Err(); err != nil {
		return err
	}
	if err := w.flush(); err != nil {
		return err
	}
	ev.Queries.Other++
	return w.x.run(ctx, "COMMIT")
}

func (w *worker) rollback(ctx context.Context, ev *workload.Event) error {
	ev.Queries.Other++
	w.pending.reset()
	return w.x.run(ctx, "ROLLBACK")
}

// exec runs a write of the transaction; with --pipeline it queues it
// until the commit, which sends the queued writes in one round trip
// (flush). Every write of a transaction can wait: no later statement of a
// transaction reads what its writes change (the profiles' later reads take
// other columns or rows). Their row locks are then taken at the commit.
func (w *worker) exec(ctx context.Context, ev *workload.Event, st stmt, args ...any) error {
	if err := w.live.Err(); err != nil {
		return err
	}
	ev.Queries.Write++
	if w.batch != nil {
		w.pending.add(st, args)
		return nil
	}
	return st.exec(ctx, args)
}

// flush sends the queued writes (--pipeline).
func (w *worker) flush() error {
	if w.pending.len() == 0 {
		return nil
	}
	if err := w.live.Err(); err != nil {
		return err
	}
	sts, args := w.pending.take()
	return w.batch.batch(sts, args)
}

// queue is the writes a pipelining terminal holds until the commit; their
// arguments are copied, as the worker's scratch is reused.
type queue struct {
	sts   []stmt
	ends  []int // args of sts[i] end at ends[i] in arena
	arena []any
	args  [][]any
}

func (q *queue) add(st stmt, args []any) {
	q.sts = append(q.sts, st)
	q.arena = append(q.arena, args...)
	q.ends = append(q.ends, len(q.arena))
}

func (q *queue) len() int { return len(q.sts) }

// take returns the queued statements and their arguments, valid until the
// next add, and empties the queue.
func (q *queue) take() ([]stmt, [][]any) {
	q.args = q.args[:0]
	start := 0
	for _, end := range q.ends {
		q.args = append(q.args, q.arena[start:end:end])
		start = end
	}
	sts := q.sts
	q.reset()
	return sts, q.args
}

func (q *queue) reset() { q.sts, q.ends, q.arena = q.sts[:0], q.ends[:0], q.arena[:0] }

// query calls fn for each row.
func (w *worker) query(ctx context.Context, ev *workload.Event, st stmt, fn func(row) error, args ...any) error {
	if err := w.live.Err(); err != nil {
		return err
	}
	ev.Queries.Read++
	return st.query(ctx, args, fn)
}

// row calls fn for the first row; no row is errNoRows.
func (w *worker) row(ctx context.Context, ev *workload.Event, st stmt, fn func(row) error, args ...any) error {
	w.rowFn, w.rows = fn, 0
	err := w.query(ctx, ev, st, w.firstCB, args...)
	w.rowFn = nil
	if err == nil && w.rows == 0 {
		return errNoRows
	}
	return err
}

// firstRow hands the first row of a query to w.rowFn (a method value made
// once: row allocates no closure of its own).
func (w *worker) firstRow(r row) error {
	w.rows++
	if w.rows > 1 {
		return nil
	}
	return w.rowFn(r)
}

// cols reads a row's numbers with one error check at the end.
type cols struct {
	r   row
	err error
}

func (c *cols) int(i int) int { return int(c.int64(i)) }

func (c *cols) int64(i int) int64 {
	v, err := c.r.Int64(i)
	if err != nil && c.err == nil {
		c.err = err
	}
	return v
}

func (c *cols) float(i int) float64 {
	v, err := c.r.Float64(i)
	if err != nil && c.err == nil {
		c.err = err
	}
	return v
}

// cents parses a decimal read from the server into cents.
func cents(f float64) int64 { return int64(math.Round(f * 100)) }

// decimal formats cents for a decimal parameter.
func decimal(c int64) string { return string(appendCents(nil, c)) }

// nowSecond is the current time to the second, for the DATETIME columns.
func nowSecond() time.Time { return time.Now().UTC().Truncate(time.Second) }
