package tpcc

import (
	"context"
	"fmt"

	"github.com/dbarena/dbarena/internal/workload"
)

// orderItem is one line of a New-Order's input (clause 2.4.1.5) and what
// the transaction learns about it.
type orderItem struct {
	number, iid, supplyW, qty int
	price                     int64 // cents
	dist                      string
}

// stockRow is a stock row read by New-Order, updated in memory as its
// lines are processed (an item may appear on several lines).
type stockRow struct {
	iid, qty int
	// dist is S_DIST_xx of the order's district.
	dist string
	// ytd and lines are what this order adds to S_YTD and S_ORDER_CNT.
	ytd, lines int
}

// stockRows are the stock rows of one supplying warehouse's lines.
type stockRows []stockRow

// find returns the row of item iid, nil if none was read.
func (s stockRows) find(iid int) *stockRow {
	for i := range s {
		if s[i].iid == iid {
			return &s[i]
		}
	}
	return nil
}

// itemPrice is the price of an item, in cents.
type itemPrice struct {
	iid   int
	price int64
}

// newOrder is the New-Order transaction (clause 2.4). Items are read with
// one statement, and stock rows read and updated with one statement each
// per supplying warehouse, in (warehouse, item) order so that New-Orders
// lock stock rows in one global order; OL_NUMBER keeps the input order.
func (w *worker) newOrder(ctx context.Context, ev *workload.Event) error {
	// Input data (clause 2.4.1).
	dID, cID, olCnt, allLocal := w.newOrderInput()
	entry := nowSecond()

	// The transaction profile (clause 2.4.2.2).
	if err := w.begin(ctx, ev); err != nil {
		return err
	}
	st := w.st
	var discount, wTax, dTax float64
	if err := w.row(ctx, ev, st.noCustomer, func(r row) error {
		// C_LAST and C_CREDIT are read, as the profile asks, and dropped.
		c := cols{r: r}
		discount, wTax = c.float(0), c.float(3)
		return c.err
	}, w.w, dID, cID); err != nil {
		return err
	}
	var oID int
	if err := w.row(ctx, ev, st.noDistrict, func(r row) error {
		c := cols{r: r}
		oID, dTax = c.int(0), c.float(1)
		return c.err
	}, w.w, dID); err != nil {
		return err
	}
	if err := w.exec(ctx, ev, st.noDistrictUpd, oID+1, w.w, dID); err != nil {
		return err
	}
	if err := w.exec(ctx, ev, st.noOrder, oID, dID, w.w, cID, entry, olCnt, allLocal); err != nil {
		return err
	}
	if err := w.exec(ctx, ev, st.noNewOrder, oID, dID, w.w); err != nil {
		return err
	}

	// Items: an unused item number rolls the transaction back, which
	// counts as a completed New-Order (clause 2.4.2.3).
	if err := w.readItems(ctx, ev); err != nil {
		return err
	}
	for i := range w.items {
		p, ok := w.price(w.items[i].iid)
		if !ok {
			return w.rollback(ctx, ev)
		}
		w.items[i].price = p
	}

	// Stock, one supplying warehouse at a time, in order.
	for lo := 0; lo < len(w.items); {
		hi := lo
		for hi < len(w.items) && w.items[hi].supplyW == w.items[lo].supplyW {
			hi++
		}
		if err := w.updateStock(ctx, ev, w.items[lo:hi], dID); err != nil {
			return err
		}
		lo = hi
	}

	lines, err := w.st.lines(ctx, len(w.items))
	if err != nil {
		return err
	}
	args := w.args[:0]
	var total int64
	for _, it := range w.items {
		amount := int64(it.qty) * it.price
		total += amount
		args = append(args, oID, dID, w.w, it.number, it.iid, it.supplyW, it.qty, decimal(amount), it.dist)
	}
	w.args = args
	if err := w.exec(ctx, ev, lines, args...); err != nil {
		return err
	}
	// The total, SUM(OL_AMOUNT) * (1 - C_DISCOUNT) * (1 + W_TAX + D_TAX),
	// is for the terminal's screen only.
	_ = float64(total) * (1 - discount) * (1 + wTax + dTax)
	return w.commit(ctx, ev)
}

// readItems reads the price of the order's items that exist into
// w.prices. I_NAME and I_DATA are read, as the profile asks, and dropped.
func (w *worker) readItems(ctx context.Context, ev *workload.Event) error {
	w.args = appendItemIDs(w.args[:0], w.items)
	w.prices = w.prices[:0]
	return w.query(ctx, ev, w.st.noItems, w.itemCB, w.args...)
}

// itemRow reads a row of readItems (w.itemCB).
func (w *worker) itemRow(r row) error {
	c := cols{r: r}
	w.prices = append(w.prices, itemPrice{iid: c.int(0), price: cents(c.float(1))})
	return c.err
}

// price returns the price of item iid, false when the item does not exist.
func (w *worker) price(iid int) (int64, bool) {
	for _, p := range w.prices {
		if p.iid == iid {
			return p.price, true
		}
	}
	return 0, false
}

// updateStock locks and updates the stock rows of items, which share one
// supplying warehouse (clause 2.4.2.2): S_QUANTITY goes down by
// OL_QUANTITY, or up by 91 less it when fewer than 10 would remain.
func (w *worker) updateStock(ctx context.Context, ev *workload.Event, items []orderItem, dID int) error {
	supplyW := items[0].supplyW
	w.args = appendItemIDs(append(w.args[:0], supplyW), items)
	// S_DATA and the other districts' S_DIST_xx are read, as the
	// profile asks, and dropped; only this district's is kept.
	w.stock = w.stock[:0]
	w.stockDist = dID
	if err := w.query(ctx, ev, w.st.noStock, w.stockCB, w.args...); err != nil {
		return err
	}
	remote := 0
	if supplyW != w.w {
		remote = 1
	}
	for i := range items {
		it := &items[i]
		sr := w.stock.find(it.iid)
		if sr == nil {
			return fmt.Errorf("new-order: no stock row for item %d in warehouse %d", it.iid, supplyW)
		}
		if sr.qty >= it.qty+10 {
			sr.qty -= it.qty
		} else {
			sr.qty = sr.qty - it.qty + 91
		}
		sr.ytd += it.qty
		sr.lines++
		it.dist = sr.dist
	}
	w.args = stockUpdateArgs(w.args[:0], items, w.stock, supplyW, remote)
	return w.exec(ctx, ev, w.st.noStockUpd, w.args...)
}

// stockRow reads a row of updateStock (w.stockCB).
func (w *worker) stockRow(r row) error {
	c := cols{r: r}
	sr := stockRow{iid: c.int(0), qty: c.int(1)}
	if c.err != nil {
		return c.err
	}
	sr.dist = string(r.Bytes(2 + w.stockDist))
	w.stock = append(w.stock, sr)
	return nil
}

// stockUpdateArgs appends the arguments of stockUpdateSQL for items, which
// share supplying warehouse supplyW: one UPDATE for all of them (an item on
// several lines once, with what all its lines add), its lists padded with
// the last item like the SELECT's.
func stockUpdateArgs(args []any, items []orderItem, stock stockRows, supplyW, remote int) []any {
	for _, col := range [...]func(*stockRow) int{
		func(sr *stockRow) int { return sr.qty },
		func(sr *stockRow) int { return sr.ytd },
		func(sr *stockRow) int { return sr.lines },
		func(sr *stockRow) int { return sr.lines * remote },
	} {
		for i := 0; i < maxLines; i++ {
			id := items[min(i, len(items)-1)].iid
			args = append(args, id, col(stock.find(id)))
		}
	}
	return appendItemIDs(append(args, supplyW), items)
}

// appendItemIDs appends the item ids of items padded to maxLines with the
// last one, the IN list that lets one statement serve every order.
func appendItemIDs(args []any, items []orderItem) []any {
	for i := 0; i < maxLines; i++ {
		args = append(args, items[min(i, len(items)-1)].iid)
	}
	return args
}
