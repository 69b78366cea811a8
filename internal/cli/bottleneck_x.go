package cli

import (
	"fmt"
	"io"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// printBottleneck prints the bottleneck section of a run summary (the
// verdict, its evidence and the top wait events), after the monitor's.
func (a *App) printBottleneck(r *summary.Run) { writeBottleneck(a.Stdout, r.Bottleneck) }

// writeBottleneck writes b in the console layout; nothing when b is nil.
func writeBottleneck(w io.Writer, b *summary.Bottleneck) {
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
