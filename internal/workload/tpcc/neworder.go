package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"sort"
	"time"

	"github.com/dbarena/dbarena/internal/workload"
)

// orderItem is one line of a New-Order's input (clause 2.4.1.5).
type orderItem struct {
	number, iid, supplyW, qty int
}

// newOrder is the New-Order transaction (clause 2.4).
func (w *worker) newOrder(ctx context.Context, ev *workload.Event) error {
	// Input data (clause 2.4.1).
	dID := w.r.between(1, nDist)
	cID := w.customerNumber()
	olCnt := w.r.between(5, 15)
	rbk := w.r.between(1, 100)
	w.items = w.items[:0]
	allLocal := 1
	for i := 1; i <= olCnt; i++ {
		it := orderItem{number: i, iid: w.r.nurand(olIIDA, 1, nItems, w.info.run.OLIID), supplyW: w.w}
		// 1% of New-Orders end with an unused item number and roll back
		// (clause 2.4.1.4).
		if i == olCnt && rbk == 1 {
			it.iid = nItems + 1
		}
		// 1% of items come from a remote warehouse (clause 2.4.1.5).
		if w.info.warehouses > 1 && w.r.between(1, 100) == 1 {
			it.supplyW = w.otherWarehouse()
			allLocal = 0
		}
		it.qty = w.r.between(1, 10)
		w.items = append(w.items, it)
	}
	// Stock rows are locked in (warehouse, item) order, so that two
	// New-Orders never wait on each other in a cycle; OL_NUMBER keeps the
	// input order.
	sort.Slice(w.items, func(i, j int) bool {
		a, b := w.items[i], w.items[j]
		return a.supplyW < b.supplyW || (a.supplyW == b.supplyW && a.iid < b.iid)
	})
	entry := time.Now().UTC().Truncate(time.Second)

	// The transaction profile (clause 2.4.2.2).
	if err := w.begin(ctx, ev); err != nil {
		return err
	}
	st := w.st
	var discount float64
	var last, credit string
	if err := w.row(ctx, ev, st.noCustomer, w.w, dID, cID).Scan(&discount, &last, &credit); err != nil {
		return err
	}
	var wTax float64
	if err := w.row(ctx, ev, st.noWarehouse, w.w).Scan(&wTax); err != nil {
		return err
	}
	var oID int
	var dTax float64
	if err := w.row(ctx, ev, st.noDistrict, w.w, dID).Scan(&oID, &dTax); err != nil {
		return err
	}
	if _, err := w.exec(ctx, ev, st.noDistrictUpd, oID+1, w.w, dID); err != nil {
		return err
	}
	if _, err := w.exec(ctx, ev, st.noOrder, oID, dID, w.w, cID, entry, olCnt, allLocal); err != nil {
		return err
	}
	if _, err := w.exec(ctx, ev, st.noNewOrder, oID, dID, w.w); err != nil {
		return err
	}
	var total int64
	for _, it := range w.items {
		var price float64
		var name, data string
		err := w.row(ctx, ev, st.noItem, it.iid).Scan(&price, &name, &data)
		if errors.Is(err, sql.ErrNoRows) {
			// The unused item: the transaction is rolled back, and counts
			// as a completed New-Order (clause 2.4.2.3).
			return w.rollback(ctx, ev)
		}
		if err != nil {
			return err
		}
		var sQty int
		var sData, dist string
		if err := w.row(ctx, ev, st.noStock[dID-1], it.iid, it.supplyW).Scan(&sQty, &sData, &dist); err != nil {
			return err
		}
		// S_QUANTITY goes down by OL_QUANTITY, or up by 91 less it when
		// fewer than 10 would remain (clause 2.4.2.2).
		if sQty >= it.qty+10 {
			sQty -= it.qty
		} else {
			sQty = sQty - it.qty + 91
		}
		remote := 0
		if it.supplyW != w.w {
			remote = 1
		}
		if _, err := w.exec(ctx, ev, st.noStockUpd, sQty, it.qty, remote, it.iid, it.supplyW); err != nil {
			return err
		}
		amount := int64(it.qty) * cents(price)
		total += amount
		if _, err := w.exec(ctx, ev, st.noLine, oID, dID, w.w, it.number, it.iid, it.supplyW, it.qty,
			decimal(amount), dist); err != nil {
			return err
		}
	}
	// The total, SUM(OL_AMOUNT) * (1 - C_DISCOUNT) * (1 + W_TAX + D_TAX),
	// is for the terminal's screen only.
	_ = float64(total) * (1 - discount) * (1 + wTax + dTax)
	return w.commit(ctx, ev)
}
