package console

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/capture/convert"
)

// Conversion says what a capture or a conversion did (to out, "" for
// standard output, in took when known), what it left out and why.
func Conversion(w io.Writer, res convert.Result, out string, took time.Duration) {
	if out == "" {
		out = "standard output"
	}
	rate := ""
	if took > 0 {
		rate = fmt.Sprintf(" in %.2fs, %.0f MB/s", took.Seconds(), float64(res.Bytes)/1e6/max(took.Seconds(), 1e-9))
	}
	fmt.Fprintf(w, "dbarena capture: %d events to %s (%d lines, %.1f MB of log%s)\n",
		res.Events, out, res.Stats.Lines, float64(res.Bytes)/1e6, rate)
	if res.Stats.Skipped > 0 {
		fmt.Fprintf(w, "dbarena capture: skipped %d malformed lines (--skip-bad); the first: %s\n", res.Stats.Skipped, res.Stats.FirstBad)
	}
	for _, n := range res.Stats.Notes {
		fmt.Fprintf(w, "dbarena capture: %s\n", n)
	}
	for _, warning := range res.Stats.Warnings {
		fmt.Fprintf(w, "dbarena capture: warning: %s\n", warning)
	}
	if res.Stats.Filtered > 0 {
		fmt.Fprintf(w, "dbarena capture: %d events left out by the filters\n", res.Stats.Filtered)
	}
	if res.Stats.Masked > 0 {
		fmt.Fprintf(w, "dbarena capture: masked the passwords of %d statements\n", res.Stats.Masked)
	}
	if len(res.Stats.Ignored) > 0 {
		keys := make([]string, 0, len(res.Stats.Ignored))
		for k := range res.Stats.Ignored {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s: %d", k, res.Stats.Ignored[k])
		}
		fmt.Fprintf(w, "dbarena capture: log entries that are not events: %s\n", strings.Join(parts, ", "))
	}
}
