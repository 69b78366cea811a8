package tpcc

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dbarena/dbarena/internal/workload"
)

// deliveryCount counts the districts of committed Deliveries: those
// delivered an order and those skipped for want of one (clause 2.7.4.2).
// It is shared by a run's terminals.
type deliveryCount struct {
	delivered, skipped atomic.Int64
}

// take returns the counts and starts over.
func (c *deliveryCount) take() (delivered, skipped int64) {
	return c.delivered.Swap(0), c.skipped.Swap(0)
}

// delivery is the Delivery transaction (clause 2.7), run as one database
// transaction over the ten districts of the home warehouse. The oldest
// undelivered order of each district is found and locked district by
// district; the orders found are then deleted from NEW-ORDER, stamped and
// summed with one statement per table (their (district, order) pairs
// listed, padded with repeats of the last to ten), and each customer is
// credited. A district without an undelivered order is skipped and
// counted (Workload.delivery) once the transaction commits.
func (w *worker) delivery(ctx context.Context, ev *workload.Event) error {
	found, err := w.deliver(ctx, ev)
	if err != nil {
		return err
	}
	w.wl.delivery.delivered.Add(int64(found))
	w.wl.delivery.skipped.Add(int64(nDist - found))
	return nil
}

// oldestNewOrder finds and locks the oldest undelivered order of district
// d, 0 when there is none. When a concurrent Delivery took the row this one
// waited for, both engines move on to the district's next row (InnoDB's
// locking read skips the delete-marked record, PostgreSQL's LockRows the
// deleted tuple): the district is skipped only when it has no undelivered
// order left.
func (w *worker) oldestNewOrder(ctx context.Context, ev *workload.Event, d int) (int, error) {
	var o int
	err := w.row(ctx, ev, w.st.dlNewOrder, func(r row) error {
		c := cols{r: r}
		o = c.int(0)
		return c.err
	}, w.w, d)
	if errors.Is(err, errNoRows) {
		return 0, nil
	}
	return o, err
}

// deliver runs the transaction and returns how many districts had an
// order to deliver.
func (w *worker) deliver(ctx context.Context, ev *workload.Event) (int, error) {
	// Input data (clause 2.7.1).
	carrier := w.r.between(1, 10)
	now := time.Now().UTC().Truncate(time.Second)

	// The transaction profile (clause 2.7.4.2).
	if err := w.begin(ctx, ev); err != nil {
		return 0, err
	}
	st := w.st
	var orders [nDist + 1]int // by district; 0: none to deliver
	found := 0
	for d := 1; d <= nDist; d++ {
		o, err := w.oldestNewOrder(ctx, ev, d)
		if err != nil {
			return 0, err
		}
		if o == 0 {
			continue // None: the district is skipped (clause 2.7.4.2).
		}
		orders[d] = o
		found++
	}
	if found == 0 {
		return 0, w.commit(ctx, ev)
	}
	// pairs lists (district, order) of the found orders, padded to ten.
	pairs := func(head ...any) []any {
		args := append(w.args[:0], head...)
		var lastD, lastO int
		for d := 1; d <= nDist; d++ {
			if orders[d] != 0 {
				lastD, lastO = d, orders[d]
				args = append(args, d, orders[d])
			}
		}
		for n := found; n < nDist; n++ {
			args = append(args, lastD, lastO)
		}
		w.args = args
		return args
	}
	if err := w.exec(ctx, ev, st.dlDelete, pairs(w.w)...); err != nil {
		return 0, err
	}
	if err := w.exec(ctx, ev, st.dlOrderUpd, pairs(carrier, w.w)...); err != nil {
		return 0, err
	}
	if err := w.exec(ctx, ev, st.dlLinesUpd, pairs(now, w.w)...); err != nil {
		return 0, err
	}
	var customers [nDist + 1]int
	if err := w.query(ctx, ev, st.dlOrders, func(r row) error {
		c := cols{r: r}
		d, cust := c.int(0), c.int(1)
		if c.err == nil && d >= 1 && d <= nDist {
			customers[d] = cust
		}
		return c.err
	}, pairs(w.w)...); err != nil {
		return 0, err
	}
	var sums [nDist + 1]float64
	if err := w.query(ctx, ev, st.dlSums, func(r row) error {
		c := cols{r: r}
		d := c.int(0)
		var sum float64
		if !r.IsNull(1) {
			sum = c.float(1)
		}
		if c.err == nil && d >= 1 && d <= nDist {
			sums[d] = sum
		}
		return c.err
	}, pairs(w.w)...); err != nil {
		return 0, err
	}
	for d := 1; d <= nDist; d++ {
		if orders[d] == 0 {
			continue
		}
		if err := w.exec(ctx, ev, st.dlCustomerUpd, decimal(cents(sums[d])), w.w, d, customers[d]); err != nil {
			return 0, err
		}
	}
	return found, w.commit(ctx, ev)
}

// pairList is "(dcol = ? AND ocol = ?) OR ..." for the ten districts.
func pairList(dcol, ocol string) string {
	one := "(" + dcol + " = ? AND " + ocol + " = ?)"
	return "(" + strings.Repeat(one+" OR ", nDist-1) + one + ")"
}
