package tpcc

import (
	"context"

	"github.com/dbarena/dbarena/internal/workload"
)

// orderStatus is the Order-Status transaction (clause 2.6), read-only.
func (w *worker) orderStatus(ctx context.Context, ev *workload.Event) error {
	// Input data (clause 2.6.1): 60% by last name, 40% by number.
	dID := w.r.between(1, nDist)
	byName, cLast, cID := w.pickCustomer()

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
	if err := w.row(ctx, ev, st.osCustomer, func(r row) error {
		// C_FIRST, C_MIDDLE and C_LAST are read, as the profile asks, and dropped.
		_, err := r.Float64(0)
		return err
	}, w.w, dID, cID); err != nil {
		return err
	}
	var oID int
	if err := w.row(ctx, ev, st.osOrder, func(r row) error {
		// O_ENTRY_D and O_CARRIER_ID (NULL until delivered) are dropped.
		c := cols{r: r}
		oID = c.int(0)
		return c.err
	}, w.w, dID, cID); err != nil {
		return err
	}
	if err := w.query(ctx, ev, st.osLines, func(r row) error {
		// OL_DELIVERY_D is NULL until delivered.
		c := cols{r: r}
		_, _, _, _ = c.int(0), c.int(1), c.int(2), c.float(3)
		return c.err
	}, w.w, dID, oID); err != nil {
		return err
	}
	return w.commit(ctx, ev)
}
