package tpcc

import (
	"context"
	"database/sql"

	"github.com/dbarena/dbarena/internal/workload"
)

// orderStatus is the Order-Status transaction (clause 2.6), read-only.
func (w *worker) orderStatus(ctx context.Context, ev *workload.Event) error {
	// Input data (clause 2.6.1): 60% by last name, 40% by number.
	dID := w.r.between(1, nDist)
	byName := w.r.between(1, 100) <= 60
	var cLast string
	cID := 0
	if byName {
		cLast = w.customerLast()
	} else {
		cID = w.customerNumber()
	}

	// The transaction profile (clause 2.6.2.2).
	if err := w.begin(ctx, ev); err != nil {
		return err
	}
	st := w.st
	if byName {
		id, err := w.customerByName(ctx, ev, w.w, dID, cLast)
		if err != nil {
			return err
		}
		cID = id
	}
	var balance float64
	var first, middle, last string
	if err := w.row(ctx, ev, st.osCustomer, w.w, dID, cID).Scan(&balance, &first, &middle, &last); err != nil {
		return err
	}
	var oID int
	var entry string
	var carrier sql.NullInt64
	if err := w.row(ctx, ev, st.osOrder, w.w, dID, cID).Scan(&oID, &entry, &carrier); err != nil {
		return err
	}
	rows, err := w.query(ctx, ev, st.osLines, w.w, dID, oID)
	if err != nil {
		return err
	}
	for rows.Next() {
		var iID, supplyW, qty int
		var amount float64
		var delivery sql.NullString
		if err := rows.Scan(&iID, &supplyW, &qty, &amount, &delivery); err != nil {
			rows.Close()
			return err
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return w.commit(ctx, ev)
}
