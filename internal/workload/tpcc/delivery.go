package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/dbarena/dbarena/internal/workload"
)

// delivery is the Delivery transaction (clause 2.7), run as one database
// transaction over the ten districts of the home warehouse.
func (w *worker) delivery(ctx context.Context, ev *workload.Event) error {
	// Input data (clause 2.7.1).
	carrier := w.r.between(1, 10)
	now := time.Now().UTC().Truncate(time.Second)

	// The transaction profile (clause 2.7.4.2).
	if err := w.begin(ctx, ev); err != nil {
		return err
	}
	st := w.st
	for d := 1; d <= nDist; d++ {
		// The oldest undelivered order of the district; none: the
		// district is skipped (clause 2.7.4.2).
		var oID int
		err := w.row(ctx, ev, st.dlNewOrder, w.w, d).Scan(&oID)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return err
		}
		res, err := w.exec(ctx, ev, st.dlDelete, w.w, d, oID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			continue // delivered meanwhile by another terminal
		}
		var cID int
		if err := w.row(ctx, ev, st.dlOrder, w.w, d, oID).Scan(&cID); err != nil {
			return err
		}
		if _, err := w.exec(ctx, ev, st.dlOrderUpd, carrier, w.w, d, oID); err != nil {
			return err
		}
		if _, err := w.exec(ctx, ev, st.dlLinesUpd, now, w.w, d, oID); err != nil {
			return err
		}
		var sum sql.NullFloat64
		if err := w.row(ctx, ev, st.dlSum, w.w, d, oID).Scan(&sum); err != nil {
			return err
		}
		if _, err := w.exec(ctx, ev, st.dlCustomerUpd, decimal(cents(sum.Float64)), w.w, d, cID); err != nil {
			return err
		}
	}
	return w.commit(ctx, ev)
}
