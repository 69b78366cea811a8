package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/dialect"
	"github.com/dbarena/dbarena/internal/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// runInfo is what every terminal of a run shares: the database's
// warehouses and the C constants (clause 2.1.6).
type runInfo struct {
	warehouses int
	seed       uint64
	load, run  Constants
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
	ri := &runInfo{}
	if m != nil {
		ri.warehouses, ri.seed, ri.load = m.warehouses, m.seed, m.c
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
	ri.run = runConstants(ri.load, uint64(runSeed))
	wl.runInfo = ri
	return ri, nil
}

// ResponseLimits implements workload.ResponseLimiter: the 90th percentile
// response-time limits of clause 5.2.5.3, beyond which tpcc-mysql counts a
// transaction as late.
func (wl *Workload) ResponseLimits() map[string]time.Duration {
	return map[string]time.Duration{
		NewOrder: 5 * time.Second, Payment: 5 * time.Second, OrderStatus: 5 * time.Second,
		Delivery: 80 * time.Second, StockLevel: 20 * time.Second,
	}
}

// Keying times and mean think times of clause 5.2.5.7, by transaction.
var (
	keyingTime = [5]time.Duration{18 * time.Second, 3 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second}
	thinkTime  = [5]time.Duration{12 * time.Second, 12 * time.Second, 10 * time.Second, 5 * time.Second, 5 * time.Second}
)

// worker is one terminal (clause 5.2.1): bound to a home warehouse and a
// Stock-Level district, drawing its transactions from its own deck.
type worker struct {
	wl   *Workload
	conn *sql.Conn
	info *runInfo
	r    rng
	// w is the home warehouse; slDistrict the district of Stock-Level
	// (clause 2.8.1.1: constant per terminal).
	w, slDistrict int
	deck          []int
	pos           int
	// cur is the transaction of the last card; failed says it failed, so
	// that the runner's retry reruns the same type without keying again.
	cur    int
	failed bool
	// live is the runner's context of the current event.
	live context.Context
	st   *stmts
	// scratch
	items  []orderItem
	args   []any
	prices map[int]int64
	stock  map[int]*stockRow
	buf    []byte
}

var _ workload.Worker = (*worker)(nil)

// NewWorker implements workload.Runner: terminal id gets home warehouse
// id % W + 1 (terminals are spread evenly over the warehouses).
func (wl *Workload) NewWorker(ctx context.Context, env workload.Env, conn *sql.Conn, id int, seed int64) (workload.Worker, error) {
	info, err := wl.info(ctx, env, conn, seed-int64(id))
	if err != nil {
		return nil, err
	}
	st, err := prepareStmts(ctx, conn, env.Dialect)
	if err != nil {
		return nil, err
	}
	w := &worker{
		wl: wl, conn: conn, info: info, st: st,
		r:          newRNG(uint64(seed), 0x7e),
		w:          id%info.warehouses + 1,
		slDistrict: (id/info.warehouses)%nDist + 1,
		items:      make([]orderItem, 0, maxLines),
		args:       make([]any, 0, 9*maxLines),
		prices:     make(map[int]int64, maxLines),
		stock:      make(map[int]*stockRow, maxLines),
	}
	for t, n := range wl.cfg.Weights {
		for i := 0; i < n; i++ {
			w.deck = append(w.deck, t)
		}
	}
	w.pos = len(w.deck)
	return w, nil
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
	return c
}

// Event implements workload.Worker: one transaction of the deck's next type.
func (w *worker) Event(ctx context.Context, ev *workload.Event) error {
	retry := w.failed
	if !retry {
		w.cur = w.draw()
	}
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
	switch w.cur {
	case 0:
		err = w.newOrder(ctx, ev)
	case 1:
		err = w.payment(ctx, ev)
	case 2:
		err = w.orderStatus(ctx, ev)
	case 3:
		err = w.delivery(ctx, ev)
	default:
		err = w.stockLevel(ctx, ev)
	}
	w.failed = err != nil
	if err == nil && think {
		// Negative exponential think time, at most 10 times its mean
		// (clause 5.2.5.4).
		mean := float64(thinkTime[w.cur])
		t := -math.Log(1-w.r.Float64()) * mean
		t = math.Min(t, 10*mean)
		return w.pause(w.live, ev, time.Duration(t))
	}
	return err
}

// pause sleeps d (scaled) and reports it as left out of the latency.
func (w *worker) pause(ctx context.Context, ev *workload.Event, d time.Duration) error {
	d = time.Duration(float64(d) * w.wl.cfg.ThinkScale)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	start := time.Now()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	ev.Pause += time.Since(start)
	return nil
}

// Close implements workload.Worker.
func (w *worker) Close() error { return w.st.close() }

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
	_, err := w.conn.ExecContext(ctx, "BEGIN")
	return err
}

func (w *worker) commit(ctx context.Context, ev *workload.Event) error {
	if err := w.live.Err(); err != nil {
		return err
	}
	ev.Queries.Other++
	_, err := w.conn.ExecContext(ctx, "COMMIT")
	return err
}

func (w *worker) rollback(ctx context.Context, ev *workload.Event) error {
	ev.Queries.Other++
	_, err := w.conn.ExecContext(ctx, "ROLLBACK")
	return err
}

func (w *worker) exec(ctx context.Context, ev *workload.Event, st *sql.Stmt, args ...any) (sql.Result, error) {
	if err := w.live.Err(); err != nil {
		return nil, err
	}
	ev.Queries.Write++
	return st.ExecContext(ctx, args...)
}

// scanner is a *sql.Row, or the error that kept the query from being sent.
type scanner interface{ Scan(dest ...any) error }

type errRow struct{ err error }

func (e errRow) Scan(...any) error { return e.err }

func (w *worker) row(ctx context.Context, ev *workload.Event, st *sql.Stmt, args ...any) scanner {
	if err := w.live.Err(); err != nil {
		return errRow{err}
	}
	ev.Queries.Read++
	return st.QueryRowContext(ctx, args...)
}

func (w *worker) query(ctx context.Context, ev *workload.Event, st *sql.Stmt, args ...any) (*sql.Rows, error) {
	if err := w.live.Err(); err != nil {
		return nil, err
	}
	ev.Queries.Read++
	return st.QueryContext(ctx, args...)
}

// cents parses a decimal read from the server into cents.
func cents(f float64) int64 { return int64(math.Round(f * 100)) }

// decimal formats cents for a decimal parameter.
func decimal(c int64) string { return string(appendCents(nil, c)) }

// stmts are a terminal's prepared statements.
type stmts struct {
	all []*sql.Stmt

	// New-Order
	noCustomer, noDistrict, noDistrictUpd, noOrder, noNewOrder, noItems, noStock, noStockUpd *sql.Stmt
	// noLines[n] inserts n order lines, prepared on first use.
	noLines [maxLines + 1]*sql.Stmt
	conn    *sql.Conn
	rebind  func(string) string
	// Payment
	payWarehouseUpd, payWarehouse, payDistrictUpd, payDistrict, payByName, payCustomer, payCustomerData,
	payCustomerUpd, payCustomerUpdBC, payHistory *sql.Stmt
	// Order-Status
	osByName, osCustomer, osOrder, osLines *sql.Stmt
	// Delivery
	dlNewOrder, dlDelete, dlOrders, dlOrderUpd, dlLinesUpd, dlSums, dlCustomerUpd *sql.Stmt
	// Stock-Level
	slDistrict, slCount *sql.Stmt
}

func prepareStmts(ctx context.Context, conn *sql.Conn, d dialect.Dialect) (*stmts, error) {
	rebind := d.Rebind
	pg := d.Family() == target.Postgres
	s := &stmts{conn: conn, rebind: rebind}
	var err error
	prep := func(dst **sql.Stmt, q string) {
		if err != nil {
			return
		}
		var st *sql.Stmt
		st, err = conn.PrepareContext(ctx, rebind(q))
		if err != nil {
			err = fmt.Errorf("prepare %q: %w", q, err)
			return
		}
		*dst = st
		s.all = append(s.all, st)
	}
	// New-Order (clause 2.4.2.2)
	prep(&s.noCustomer, "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?")
	prep(&s.noDistrict, "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE")
	prep(&s.noDistrictUpd, "UPDATE district SET d_next_o_id = ? WHERE d_w_id = ? AND d_id = ?")
	prep(&s.noOrder, "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, ?, ?, ?)")
	prep(&s.noNewOrder, "INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)")
	// Items and stock are read maxLines at a time, the list padded with
	// repeats of its last id, so that one statement serves every order.
	prep(&s.noItems, "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN ("+placeholders(maxLines)+")")
	prep(&s.noStock, "SELECT s_i_id, s_quantity, s_data, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10 FROM stock WHERE s_w_id = ? AND s_i_id IN ("+placeholders(maxLines)+") FOR UPDATE")
	prep(&s.noStockUpd, stockUpdateSQL(pg))
	// Payment (clause 2.5.2.2)
	prep(&s.payWarehouseUpd, "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?")
	prep(&s.payWarehouse, "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse WHERE w_id = ?")
	prep(&s.payDistrictUpd, "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?")
	prep(&s.payDistrict, "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district WHERE d_w_id = ? AND d_id = ?")
	prep(&s.payByName, "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first")
	prep(&s.payCustomer, "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE")
	prep(&s.payCustomerData, "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	prep(&s.payCustomerUpd, "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	prep(&s.payCustomerUpdBC, "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	prep(&s.payHistory, "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
	// Order-Status (clause 2.6.2.2)
	prep(&s.osByName, "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first")
	prep(&s.osCustomer, "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	prep(&s.osOrder, "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1")
	prep(&s.osLines, "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?")
	// Delivery (clause 2.7.4.2)
	prep(&s.dlNewOrder, "SELECT no_o_id FROM new_orders WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE")
	prep(&s.dlDelete, "DELETE FROM new_orders WHERE no_w_id = ? AND "+pairList("no_d_id", "no_o_id"))
	prep(&s.dlOrderUpd, "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND "+pairList("o_d_id", "o_id"))
	prep(&s.dlLinesUpd, "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND "+pairList("ol_d_id", "ol_o_id"))
	prep(&s.dlOrders, "SELECT o_d_id, o_c_id FROM orders WHERE o_w_id = ? AND "+pairList("o_d_id", "o_id"))
	prep(&s.dlSums, "SELECT ol_d_id, SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND "+pairList("ol_d_id", "ol_o_id")+" GROUP BY ol_d_id")
	prep(&s.dlCustomerUpd, "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	// Stock-Level (clause 2.8.2.2)
	prep(&s.slDistrict, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?")
	prep(&s.slCount, "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?")
	if err != nil {
		_ = s.close()
		return nil, err
	}
	return s, nil
}

// maxLines is the most order lines of a New-Order (clause 2.4.1.3).
const maxLines = 15

func placeholders(n int) string { return strings.Repeat("?, ", n-1) + "?" }

// stockUpdateSQL updates the stock rows of up to maxLines items of one
// supplying warehouse (clause 2.4.2.2) in one statement: per item the new
// S_QUANTITY and what S_YTD, S_ORDER_CNT and S_REMOTE_CNT gain, as CASE
// lists of (S_I_ID, value) pairs. PostgreSQL needs the values' type.
func stockUpdateSQL(pg bool) string {
	then := " THEN ?"
	if pg {
		then = " THEN ?::integer"
	}
	cases := "CASE s_i_id" + strings.Repeat(" WHEN ?"+then, maxLines) + " END"
	return "UPDATE stock SET s_quantity = " + cases + ", s_ytd = s_ytd + " + cases +
		", s_order_cnt = s_order_cnt + " + cases + ", s_remote_cnt = s_remote_cnt + " + cases +
		" WHERE s_w_id = ? AND s_i_id IN (" + placeholders(maxLines) + ")"
}

// lines returns the statement inserting n order lines.
func (s *stmts) lines(ctx context.Context, n int) (*sql.Stmt, error) {
	if st := s.noLines[n]; st != nil {
		return st, nil
	}
	q := "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES " +
		strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?), ", n-1) + "(?, ?, ?, ?, ?, ?, ?, ?, ?)"
	st, err := s.conn.PrepareContext(ctx, s.rebind(q))
	if err != nil {
		return nil, err
	}
	s.noLines[n] = st
	s.all = append(s.all, st)
	return st, nil
}

func (s *stmts) close() error {
	var first error
	for _, st := range s.all {
		if err := st.Close(); err != nil && first == nil {
			first = err
		}
	}
	s.all = nil
	return first
}
