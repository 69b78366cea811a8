package console

import (
	"fmt"
	"io"
	"math"

	"github.com/dbarena/dbarena/internal/measure/monitor"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// Bottleneck writes a run summary's bottleneck section (the verdict, its
// evidence and the top wait events) in the console layout; nothing when b is nil.
func Bottleneck(w io.Writer, b *summary.Bottleneck) {
	if b == nil {
		return
	}
	fmt.Fprintf(w, "\nBottleneck: %s\n", b.Reason)
	for _, e := range b.Evidence {
		fmt.Fprintf(w, "    %s\n", e)
	}
	if len(b.TopWaits) > 0 {
		fmt.Fprintln(w, "    top waits:")
		for _, t := range b.TopWaits {
			unit := "%"
			if t.Unit != "pct" {
				unit = " " + t.Unit
			}
			fmt.Fprintf(w, "      %-40s %6.1f%s\n", t.Event, t.Value, unit)
		}
	}
}

// Why writes compare's "where the difference comes from" table: the
// per-transaction costs and wait shares of A's and B's rounds (rows from monitor.Why) in the console layout; nothing without rows.
func Why(w io.Writer, rows []monitor.WhyRow) {
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
