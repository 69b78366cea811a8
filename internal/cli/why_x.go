package cli

import (
	"fmt"
	"io"
	"math"

	"github.com/dbarena/dbarena/internal/measure/monitor"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// printWhy prints compare's "where the difference comes from" table: the
// per-transaction costs and wait shares of A's and B's rounds.
func (a *App) printWhy(sides [2][]*summary.Run) { writeWhy(a.Stdout, monitor.Why(sides[0], sides[1])) }

// writeWhy writes rows in the console layout; nothing without rows.
func writeWhy(w io.Writer, rows []monitor.WhyRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nWhere the difference comes from (mean over rounds; costs by ratio, waits by points):")
	fmt.Fprintf(w, "    %-22s %12s %12s %10s\n", "", "A", "B", "B/A")
	for _, r := range rows {
		rel := "-"
		switch {
		case r.Share:
			rel = fmt.Sprintf("%+.1f pts", r.B-r.A)
		case !math.IsNaN(r.Ratio):
			rel = fmt.Sprintf("%.2fx", r.Ratio)
		}
		fmt.Fprintf(w, "    %-22s %12.3f %12.3f %10s\n", r.Name, r.A, r.B, rel)
	}
	fmt.Fprintf(w, "    reading: %s\n", monitor.WhyReading(rows))
}
