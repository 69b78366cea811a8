package tpcc

import (
	"context"

	"github.com/dbarena/dbarena/internal/workload"
)

// stockLevel is the Stock-Level transaction (clause 2.8), read-only: the
// number of distinct items of the district's last 20 orders whose stock is
// below a threshold.
func (w *worker) stockLevel(ctx context.Context, ev *workload.Event) error {
	// Input data (clause 2.8.1): the terminal's district, threshold [10..20].
	threshold := w.r.between(10, 20)

	// The transaction profile (clause 2.8.2.2).
	if err := w.begin(ctx, ev); err != nil {
		return err
	}
	st := w.st
	var next int
	if err := w.row(ctx, ev, st.slDistrict, func(r row) error {
		c := cols{r: r}
		next = c.int(0)
		return c.err
	}, w.w, w.slDistrict); err != nil {
		return err
	}
	if err := w.row(ctx, ev, st.slCount, func(r row) error {
		_, err := r.Int64(0) // the number of items with low stock, for the screen
		return err
	}, w.w, w.slDistrict, next, next-20, w.w, threshold); err != nil {
		return err
	}
	return w.commit(ctx, ev)
}
