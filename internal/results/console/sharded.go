package console

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// Sharded prints a merged sharded run: the summary, its notes, then a line
// for each shard.
func Sharded(w io.Writer, run *summary.Run) {
	Summary(w, run)
	if len(run.Notes) > 0 {
		fmt.Fprintln(w, "\nNotes:")
		for _, n := range run.Notes {
			fmt.Fprintln(w, "    "+n)
		}
	}
	fmt.Fprintln(w, "\nShards:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "    SHARD\tHOST\tSTATUS\tRUN\tTHREADS\tEVENTS\tTPS\tP95 MS\tSTART SKEW MS")
	for _, s := range run.Shards {
		var events int64
		var p95 float64
		if s.Totals != nil {
			events = s.Totals.Events
		}
		if s.LatencyMS != nil {
			p95 = s.LatencyMS.P95
		}
		fmt.Fprintf(tw, "    %d/%d\t%s\t%s\t%d\t%d\t%d\t%.2f\t%.2f\t%.1f\n", s.Index, s.Count, s.Host, s.Status, s.Run,
			s.Threads, events, s.TPS, p95, s.StartSkewMS)
	}
	tw.Flush()
}
