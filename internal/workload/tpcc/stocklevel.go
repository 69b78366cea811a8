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
	if err := w.row(ctx, ev, st.slDistrict, w.w, w.slDistrict).Scan(&next); err != nil {
		return err
	}
	var lowStock int
	if err := w.row(ctx, ev, st.slCount, w.w, w.slDistrict, next, next-20, w.w, threshold).Scan(&lowStock); err != nil {
		return err
	}
	return w.commit(ctx, ev)
}
