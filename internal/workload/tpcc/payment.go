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

// payment is the Payment transaction (clause 2.5).
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
	byName := w.r.between(1, 100) <= 60
	var cLast string
	cID := 0
	if byName {
		cLast = w.customerLast()
	} else {
		cID = w.customerNumber()
	}
	amount := int64(w.r.between(100, 500000)) // H_AMOUNT [1.00 .. 5,000.00]
	now := time.Now().UTC().Truncate(time.Second)

	// The transaction profile (clause 2.5.2.2).
	if err := w.begin(ctx, ev); err != nil {
		return err
	}
	st := w.st
	amt := decimal(amount)
	if _, err := w.exec(ctx, ev, st.payWarehouseUpd, amt, w.w); err != nil {
		return err
	}
	var s1, s2, city, state, zip, wName string
	if err := w.row(ctx, ev, st.payWarehouse, w.w).Scan(&s1, &s2, &city, &state, &zip, &wName); err != nil {
		return err
	}
	if _, err := w.exec(ctx, ev, st.payDistrictUpd, amt, w.w, dID); err != nil {
		return err
	}
	var dName string
	if err := w.row(ctx, ev, st.payDistrict, w.w, dID).Scan(&s1, &s2, &city, &state, &zip, &dName); err != nil {
		return err
	}
	if byName {
		id, err := w.customerByName(ctx, ev, cW, cD, cLast)
		if err != nil {
			return err
		}
		cID = id
	}
	var first, middle, last, phone, credit, since string
	var creditLim, discount, balance float64
	if err := w.row(ctx, ev, st.payCustomer, cW, cD, cID).Scan(&first, &middle, &last, &s1, &s2, &city, &state,
		&zip, &phone, &credit, &creditLim, &discount, &balance, &since); err != nil {
		return fmt.Errorf("payment: customer %d/%d/%d: %w", cW, cD, cID, err)
	}
	if credit == "BC" {
		// Bad credit: C_DATA gets the payment's ids and amount in front,
		// truncated to 500 characters (clause 2.5.2.2).
		var data string
		if err := w.row(ctx, ev, st.payCustomerData, cW, cD, cID).Scan(&data); err != nil {
			return err
		}
		b := w.buf[:0]
		for _, v := range []int{cID, cD, cW, dID, w.w} {
			b = strconv.AppendInt(b, int64(v), 10)
			b = append(b, ' ')
		}
		b = appendCents(b, amount)
		b = append(b, " | "...)
		b = append(b, data...)
		if len(b) > maxCData {
			b = b[:maxCData]
		}
		w.buf = b
		if _, err := w.exec(ctx, ev, st.payCustomerUpdBC, amt, amt, string(b), cW, cD, cID); err != nil {
			return err
		}
	} else if _, err := w.exec(ctx, ev, st.payCustomerUpd, amt, amt, cW, cD, cID); err != nil {
		return err
	}
	// H_DATA is W_NAME and D_NAME separated by 4 spaces.
	if _, err := w.exec(ctx, ev, st.payHistory, cD, cW, cID, dID, w.w, now, amt, wName+"    "+dName); err != nil {
		return err
	}
	return w.commit(ctx, ev)
}

// customerByName returns the customer at position n/2 rounded up of those
// with last name cLast, sorted by C_FIRST (clauses 2.5.2.2 and 2.6.2.2).
func (w *worker) customerByName(ctx context.Context, ev *workload.Event, cW, cD int, cLast string) (int, error) {
	rows, err := w.query(ctx, ev, w.st.byName, cW, cD, cLast)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var ids [64]int
	n := 0
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			return 0, err
		}
		if n < len(ids) {
			ids[n] = id
		}
		n++
	}
	if err := rows.Err(); err != nil {
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
