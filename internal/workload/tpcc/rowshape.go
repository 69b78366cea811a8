package tpcc

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/dbarena/dbarena/internal/workload"
)

// rowStmts are tpcc-mysql's statements (main.c's stmt[t_num][0..34]) that
// the batched shape has no counterpart for; the others are shared.
type rowStmts struct {
	// New-Order: stmt 1, 2, 5, 6, 7, 8.
	district, districtUpd, item, stock, stockUpd, line stmt
	// Payment and Order-Status: stmt 13 and 20, the count of customers of
	// a last name; Order-Status's stmt 21 and 23.
	countByName, osByName, osOrder stmt
	// Delivery: stmt 26..30.
	dlDelete, dlCustomer, dlOrderUpd, dlLinesUpd, dlSum stmt
	// Stock-Level: stmt 33 and 34.
	slItems, slStock stmt
}

// rowDefs are the statements of tpcc-mysql's shape, in the order of
// main.c, with tpcc-mysql's texts. Where tpcc-mysql's statement breaks a
// consistency condition of clause 3.3.2 (dbarena check tpcc), dbarena's
// sends as many statements on the same rows, corrected:
//   - stock 7 also adds to S_YTD, S_ORDER_CNT and S_REMOTE_CNT;
//   - Payment's customer updates 17 and 18 also add to C_YTD_PAYMENT and
//     C_PAYMENT_CNT (C_BALANCE computed by the server under the row lock);
//   - Delivery's 25 locks the oldest new order (ORDER BY .. LIMIT 1 FOR
//     UPDATE, where tpcc-mysql reads MIN(no_o_id) unlocked, so that two
//     Deliveries can deliver one order twice);
//   - Order-Status's 21 also reads C_ID, which tpcc-mysql leaves out (it
//     then reads the orders of the customer number it drew).
func rowDefs(s *stmts) []stmtDef {
	r := &s.row
	return []stmtDef{
		// New-Order (neword.c)
		{&s.noCustomer, "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?"},
		{&r.district, "SELECT d_next_o_id, d_tax FROM district WHERE d_id = ? AND d_w_id = ? FOR UPDATE"},
		{&r.districtUpd, "UPDATE district SET d_next_o_id = ? + 1 WHERE d_id = ? AND d_w_id = ?"},
		{&s.noOrder, "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES(?, ?, ?, ?, ?, ?, ?)"},
		{&s.noNewOrder, "INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES (?,?,?)"},
		{&r.item, "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?"},
		{&r.stock, "SELECT s_quantity, s_data, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10 FROM stock WHERE s_i_id = ? AND s_w_id = ? FOR UPDATE"},
		{&r.stockUpd, "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?"},
		{&r.line, "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"},
		// Payment (payment.c)
		{&s.payWarehouseUpd, "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?"},
		{&s.payWarehouse, "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse WHERE w_id = ?"},
		{&s.payDistrictUpd, "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?"},
		{&s.payDistrict, "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district WHERE d_w_id = ? AND d_id = ?"},
		{&r.countByName, "SELECT count(c_id) FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?"},
		{&s.byName, "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first"},
		{&s.payCustomer, "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE"},
		{&s.payCustomerData, "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"},
		{&s.payCustomerUpdBC, "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"},
		{&s.payCustomerUpd, "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"},
		{&s.payHistory, "INSERT INTO history(h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES(?, ?, ?, ?, ?, ?, ?, ?)"},
		// Order-Status (ordstat.c); its count (stmt 20) is Payment's.
		{&r.osByName, "SELECT c_balance, c_first, c_middle, c_last, c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first"},
		{&s.osCustomer, "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"},
		{&r.osOrder, "SELECT o_id, o_entry_d, COALESCE(o_carrier_id,0) FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? AND o_id = (SELECT MAX(o_id) FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ?)"},
		{&s.osLines, "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"},
		// Delivery (delivery.c)
		{&s.dlNewOrder, "SELECT no_o_id FROM new_orders WHERE no_d_id = ? AND no_w_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE"},
		{&r.dlDelete, "DELETE FROM new_orders WHERE no_o_id = ? AND no_d_id = ? AND no_w_id = ?"},
		{&r.dlCustomer, "SELECT o_c_id FROM orders WHERE o_id = ? AND o_d_id = ? AND o_w_id = ?"},
		{&r.dlOrderUpd, "UPDATE orders SET o_carrier_id = ? WHERE o_id = ? AND o_d_id = ? AND o_w_id = ?"},
		{&r.dlLinesUpd, "UPDATE order_line SET ol_delivery_d = ? WHERE ol_o_id = ? AND ol_d_id = ? AND ol_w_id = ?"},
		{&r.dlSum, "SELECT SUM(ol_amount) FROM order_line WHERE ol_o_id = ? AND ol_d_id = ? AND ol_w_id = ?"},
		{&s.dlCustomerUpd, "UPDATE customer SET c_balance = c_balance + ? , c_delivery_cnt = c_delivery_cnt + 1 WHERE c_id = ? AND c_d_id = ? AND c_w_id = ?"},
		// Stock-Level (slev.c)
		{&s.slDistrict, "SELECT d_next_o_id FROM district WHERE d_id = ? AND d_w_id = ?"},
		{&r.slItems, "SELECT DISTINCT ol_i_id FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= (? - 20)"},
		{&r.slStock, "SELECT count(*) FROM stock WHERE s_w_id = ? AND s_i_id = ? AND s_quantity < ?"},
	}
}

// rowNewOrder is New-Order as neword.c sends it: the customer, the
// district (locked) and its update, the order and new-order rows, then per
// line, in (supplying warehouse, item) order, the item, the stock row
// (locked), its update and the order line. An unused item number rolls
// the transaction back (a completed New-Order, clause 2.4.2.3).
func (w *worker) rowNewOrder(ctx context.Context, ev *workload.Event) error {
	dID, cID, olCnt, allLocal := w.newOrderInput()
	// tpcc-mysql numbers the lines in the order it processes them.
	for i := range w.items {
		w.items[i].number = i + 1
	}
	entry := nowSecond()

	if err := w.begin(ctx, ev); err != nil {
		return err
	}
	st, r := w.st, &w.st.row
	var discount, wTax, dTax float64
	if err := w.row(ctx, ev, st.noCustomer, func(rw row) error {
		c := cols{r: rw}
		discount, wTax = c.float(0), c.float(3)
		return c.err
	}, w.w, dID, cID); err != nil {
		return err
	}
	var oID int
	if err := w.row(ctx, ev, r.district, func(rw row) error {
		c := cols{r: rw}
		oID, dTax = c.int(0), c.float(1)
		return c.err
	}, dID, w.w); err != nil {
		return err
	}
	if err := w.exec(ctx, ev, r.districtUpd, oID, dID, w.w); err != nil {
		return err
	}
	if err := w.exec(ctx, ev, st.noOrder, oID, dID, w.w, cID, entry, olCnt, allLocal); err != nil {
		return err
	}
	if err := w.exec(ctx, ev, st.noNewOrder, oID, dID, w.w); err != nil {
		return err
	}
	var total int64
	for i := range w.items {
		it := &w.items[i]
		var price int64
		err := w.row(ctx, ev, r.item, func(rw row) error {
			c := cols{r: rw}
			price = cents(c.float(0))
			return c.err
		}, it.iid)
		if errors.Is(err, errNoRows) {
			return w.rollback(ctx, ev)
		}
		if err != nil {
			return err
		}
		var qty int
		var dist string
		if err := w.row(ctx, ev, r.stock, func(rw row) error {
			c := cols{r: rw}
			qty = c.int(0)
			dist = string(rw.Bytes(1 + dID))
			return c.err
		}, it.iid, it.supplyW); err != nil {
			return fmt.Errorf("new-order: stock of item %d in warehouse %d: %w", it.iid, it.supplyW, err)
		}
		if qty >= it.qty+10 {
			qty -= it.qty
		} else {
			qty = qty - it.qty + 91
		}
		remote := 0
		if it.supplyW != w.w {
			remote = 1
		}
		if err := w.exec(ctx, ev, r.stockUpd, qty, it.qty, remote, it.iid, it.supplyW); err != nil {
			return err
		}
		amount := int64(it.qty) * price
		total += amount
		if err := w.exec(ctx, ev, r.line, oID, dID, w.w, it.number, it.iid, it.supplyW, it.qty,
			decimal(amount), dist); err != nil {
			return err
		}
	}
	_ = float64(total) * (1 - discount) * (1 + wTax + dTax) // for the screen only
	return w.commit(ctx, ev)
}

// newOrderInput draws New-Order's input (clause 2.4.1) into w.items,
// sorted by supplying warehouse and item (tpcc-mysql's and the batched
// shape's lock order); OL_NUMBER is the input order.
func (w *worker) newOrderInput() (dID, cID, olCnt, allLocal int) {
	dID = w.r.between(1, nDist)
	cID = w.customerNumber()
	olCnt = w.r.between(5, 15)
	rbk := w.r.between(1, 100)
	w.items = w.items[:0]
	allLocal = 1
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
	sort.Slice(w.items, func(i, j int) bool {
		a, b := w.items[i], w.items[j]
		return a.supplyW < b.supplyW || (a.supplyW == b.supplyW && a.iid < b.iid)
	})
	return dID, cID, olCnt, allLocal
}

// countByName is tpcc-mysql's count of the customers of a last name
// (payment.c stmt 13, ordstat.c stmt 20), sent before it reads them.
func (w *worker) countByName(ctx context.Context, ev *workload.Event, cW, cD int, cLast string) error {
	return w.row(ctx, ev, w.st.row.countByName, func(rw row) error {
		_, err := rw.Int64(0)
		return err
	}, cW, cD, cLast)
}

// rowOrderStatus is Order-Status as ordstat.c sends it: the customer by
// last name (a count, then the customers sorted by first name, the middle
// one taken) or by number, the customer's last order and its lines.
func (w *worker) rowOrderStatus(ctx context.Context, ev *workload.Event) error {
	dID := w.r.between(1, nDist)
	byName, cLast, cID := w.pickCustomer()

	if err := w.begin(ctx, ev); err != nil {
		return err
	}
	st, r := w.st, &w.st.row
	if byName {
		if err := w.countByName(ctx, ev, w.w, dID, cLast); err != nil {
			return err
		}
		var ids [64]int
		n := 0
		if err := w.query(ctx, ev, r.osByName, func(rw row) error {
			id, err := rw.Int64(4)
			if n < len(ids) {
				ids[n] = int(id)
			}
			n++
			return err
		}, w.w, dID, cLast); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("no customer named %s in warehouse %d district %d", cLast, w.w, dID)
		}
		cID = ids[min((n+1)/2-1, len(ids)-1)]
	} else if err := w.row(ctx, ev, st.osCustomer, func(rw row) error {
		_, err := rw.Float64(0)
		return err
	}, w.w, dID, cID); err != nil {
		return err
	}
	var oID int
	if err := w.row(ctx, ev, r.osOrder, func(rw row) error {
		c := cols{r: rw}
		oID = c.int(0)
		return c.err
	}, w.w, dID, cID, w.w, dID, cID); err != nil {
		return err
	}
	if err := w.query(ctx, ev, st.osLines, func(rw row) error {
		c := cols{r: rw}
		_, _, _, _ = c.int(0), c.int(1), c.int(2), c.float(3)
		return c.err
	}, w.w, dID, oID); err != nil {
		return err
	}
	return w.commit(ctx, ev)
}

// rowDelivery is Delivery as delivery.c sends it: district by district,
// the oldest new order (locked), its deletion, the order's customer, the
// order's and its lines' updates, the lines' sum and the customer's
// credit, each district committed on its own. A district without an
// undelivered order is skipped (clause 2.7.4.2) and counted.
func (w *worker) rowDelivery(ctx context.Context, ev *workload.Event) error {
	carrier := w.r.between(1, 10)
	now := nowSecond()
	st, r := w.st, &w.st.row
	open := false
	for d := 1; d <= nDist; d++ {
		if !open {
			if err := w.begin(ctx, ev); err != nil {
				return err
			}
			open = true
		}
		var o int
		err := w.row(ctx, ev, st.dlNewOrder, func(rw row) error {
			c := cols{r: rw}
			o = c.int(0)
			return c.err
		}, d, w.w)
		if errors.Is(err, errNoRows) {
			w.wl.delivery.skipped.Add(1)
			continue
		}
		if err != nil {
			return err
		}
		if err := w.exec(ctx, ev, r.dlDelete, o, d, w.w); err != nil {
			return err
		}
		var cust int
		if err := w.row(ctx, ev, r.dlCustomer, func(rw row) error {
			c := cols{r: rw}
			cust = c.int(0)
			return c.err
		}, o, d, w.w); err != nil {
			return err
		}
		if err := w.exec(ctx, ev, r.dlOrderUpd, carrier, o, d, w.w); err != nil {
			return err
		}
		if err := w.exec(ctx, ev, r.dlLinesUpd, now, o, d, w.w); err != nil {
			return err
		}
		var sum float64
		if err := w.row(ctx, ev, r.dlSum, func(rw row) error {
			if rw.IsNull(0) {
				return nil
			}
			c := cols{r: rw}
			sum = c.float(0)
			return c.err
		}, o, d, w.w); err != nil {
			return err
		}
		if err := w.exec(ctx, ev, st.dlCustomerUpd, decimal(cents(sum)), cust, d, w.w); err != nil {
			return err
		}
		if err := w.commit(ctx, ev); err != nil {
			return err
		}
		open = false
		w.wl.delivery.delivered.Add(1)
	}
	if open {
		return w.commit(ctx, ev)
	}
	return nil
}

// rowStockLevel is Stock-Level as slev.c sends it: the district's next
// order number, the distinct items of its last 20 orders, then for each
// item a count of its stock rows below the threshold.
func (w *worker) rowStockLevel(ctx context.Context, ev *workload.Event) error {
	threshold := w.r.between(10, 20)
	if err := w.begin(ctx, ev); err != nil {
		return err
	}
	st, r := w.st, &w.st.row
	var next int
	if err := w.row(ctx, ev, st.slDistrict, func(rw row) error {
		c := cols{r: rw}
		next = c.int(0)
		return c.err
	}, w.slDistrict, w.w); err != nil {
		return err
	}
	w.ids = w.ids[:0]
	if err := w.query(ctx, ev, r.slItems, func(rw row) error {
		c := cols{r: rw}
		w.ids = append(w.ids, c.int(0))
		return c.err
	}, w.w, w.slDistrict, next, next); err != nil {
		return err
	}
	for _, id := range w.ids {
		if err := w.row(ctx, ev, r.slStock, func(rw row) error {
			_, err := rw.Int64(0)
			return err
		}, w.w, id, threshold); err != nil {
			return err
		}
	}
	return w.commit(ctx, ev)
}
