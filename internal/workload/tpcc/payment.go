package tpcc

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/dbarena/dbarena/internal/workload"
)

// maxCData is the length of C_DATA.
const maxCData = 500

// payment is the Payment transaction (clause 2.5), in both shapes: one
// row at a time; tpcc-mysql's counts the customers of the last name first.
func (w *worker) payment(ctx context.Context, ev *workload.Event) error {
	// Input data (clause 2.5.1).
	dID := w.r.between(1, nDist)
	cW, cD := w.w, dID
	// 85% of customers pay through their home warehouse, 15% through a
	// remote one (clause 2.5.1.2).
	if w.r.between(1, 100) > 85 {
		cD = w.r.between(1, nDist)
		cW = w.otherWarehouse()
	}
	// 60% are selected by last name, 40% by number (clause 2.5.1.2).
	byName, cLast, cID := w.pickCustomer()
	amount := int64(w.r.between(100, 500000)) // H_AMOUNT [1.00 .. 5,000.00]
	now := time.Now().UTC().Truncate(time.Second)

	// The transaction profile (clause 2.5.2.2).
	if err := w.begin(ctx, ev); err != nil {
		return err
	}
	st := w.st
	amt := decimal(amount)
	if err := w.exec(ctx, ev, st.payWarehouseUpd, amt, w.w); err != nil {
		return err
	}
	// The addresses are read, as the profile asks, and dropped; the
	// names go into H_DATA.
	var wName, dName string
	if err := w.row(ctx, ev, st.payWarehouse, func(r row) error { wName = string(r.Bytes(5)); return nil }, w.w); err != nil {
		return err
	}
	if err := w.exec(ctx, ev, st.payDistrictUpd, amt, w.w, dID); err != nil {
		return err
	}
	if err := w.row(ctx, ev, st.payDistrict, func(r row) error { dName = string(r.Bytes(5)); return nil }, w.w, dID); err != nil {
		return err
	}
	if byName {
		if w.rowShape {
			if err := w.countByName(ctx, ev, cW, cD, cLast); err != nil {
				return err
			}
		}
		id, err := w.customerByName(ctx, ev, cW, cD, cLast)
		if err != nil {
			return err
		}
		cID = id
	}
	var badCredit bool
	if err := w.row(ctx, ev, st.payCustomer, func(r row) error {
		c := cols{r: r}
		_, _, _ = c.float(10), c.float(11), c.float(12) // C_CREDIT_LIM, C_DISCOUNT, C_BALANCE
		badCredit = string(r.Bytes(9)) == "BC"
		return c.err
	}, cW, cD, cID); err != nil {
		return fmt.Errorf("payment: customer %d/%d/%d: %w", cW, cD, cID, err)
	}
	if badCredit {
		// Bad credit: C_DATA gets the payment's ids and amount in front,
		// truncated to 500 characters (clause 2.5.2.2).
		b := w.buf[:0]
		for _, v := range []int{cID, cD, cW, dID, w.w} {
			b = strconv.AppendInt(b, int64(v), 10)
			b = append(b, ' ')
		}
		b = appendCents(b, amount)
		b = append(b, " | "...)
		if err := w.row(ctx, ev, st.payCustomerData, func(r row) error { b = append(b, r.Bytes(0)...); return nil },
			cW, cD, cID); err != nil {
			return err
		}
		if len(b) > maxCData {
			b = b[:maxCData]
		}
		w.buf = b
		if err := w.exec(ctx, ev, st.payCustomerUpdBC, amt, amt, string(b), cW, cD, cID); err != nil {
			return err
		}
	} else if err := w.exec(ctx, ev, st.payCustomerUpd, amt, amt, cW, cD, cID); err != nil {
		return err
	}
	// H_DATA is W_NAME and D_NAME separated by 4 spaces.
	if err := w.exec(ctx, ev, st.payHistory, cD, cW, cID, dID, w.w, now, amt, wName+"    "+dName); err != nil {
		return err
	}
	return w.commit(ctx, ev)
}

// customerByName returns the customer at position n/2 rounded up of those
// with last name cLast, sorted by C_FIRST (clauses 2.5.2.2 and 2.6.2.2).
func (w *worker) customerByName(ctx context.Context, ev *workload.Event, cW, cD int, cLast string) (int, error) {
	var ids [64]int
	n := 0
	if err := w.query(ctx, ev, w.st.byName, func(r row) error {
		id, err := r.Int64(0)
		if n < len(ids) {
			ids[n] = int(id)
		}
		n++
		return err
	}, cW, cD, cLast); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, fmt.Errorf("no customer named %s in warehouse %d district %d", cLast, cW, cD)
	}
	pos := (n+1)/2 - 1
	if pos >= len(ids) {
		pos = len(ids) - 1
	}
	return ids[pos], nil
}
