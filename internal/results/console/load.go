package console

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/dbarena/dbarena/internal/data/dumpload"
)

// LoadProgress prints a dump load's progress lines and warnings
// (dumpload.Options.Progress and Warn).
type LoadProgress struct {
	mu sync.Mutex
	w  io.Writer
}

// Print prints one progress line (none for the final report).
func (p *LoadProgress) Print(pr dumpload.Progress) {
	if pr.Done {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf("[%5.0fs] %s", pr.Elapsed.Seconds(), Bytes(pr.Bytes))
	if pr.TotalBytes > 0 {
		line += fmt.Sprintf(" of %s (%.0f%%)", Bytes(pr.TotalBytes), 100*float64(pr.Bytes)/float64(pr.TotalBytes))
	}
	line += fmt.Sprintf(", %d statements, %d rows, %.1f MB/s", pr.Statements, pr.Rows, pr.Rate())
	pr.Table = dumpload.Printable(pr.Table)
	if eta := pr.ETA(); eta > 0 && pr.Phase == "schema+data" {
		line += fmt.Sprintf(", ETA %s", eta.Round(time.Second))
	}
	if pr.Phase != "schema+data" {
		line += ", " + pr.Phase
	} else if pr.Table != "" {
		line += ", table " + pr.Table
	}
	fmt.Fprintln(p.w, line)
}

// NewLoadProgress returns a LoadProgress printing to w.
func NewLoadProgress(w io.Writer) *LoadProgress { return &LoadProgress{w: w} }

// Warn prints a warning line.
func (p *LoadProgress) Warn(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, "warning: "+msg)
}

// Load prints a dump load's per-table summary and its first shown failed
// statements. Text from the dump is printed with control characters
// escaped (dumpload.Printable).
func Load(w io.Writer, r *dumpload.Result, shown int) {
	fmt.Fprintln(w)
	if len(r.Tables) > 0 {
		fmt.Fprintf(w, "%-32s %-8s %10s %10s %10s %10s %10s  %s\n", "table", "engine", "sent", "loaded", "rows", "data MB", "index MB", "checksum")
		for _, t := range r.Tables {
			name := t.Name
			if len(r.Databases) > 1 {
				name = t.Database + "." + t.Name
			}
			name = dumpload.Printable(name)
			rows, sent := fmt.Sprint(t.Rows), fmt.Sprint(t.Sent)
			if t.Rows < 0 {
				rows = "-"
			}
			if t.Sent < 0 {
				sent = "?"
			}
			fmt.Fprintf(w, "%-32s %-8s %10s %10d %10s %10.1f %10.1f  %s\n", name, t.Engine, sent, t.Loaded, rows,
				float64(t.DataBytes)/1e6, float64(t.IndexBytes)/1e6, t.Checksum)
		}
	}
	state := "loaded"
	if r.Interrupted {
		state = "interrupted"
	}
	rate := 0.0
	if s := r.Duration.Seconds(); s > 0 {
		rate = float64(r.Bytes) / 1e6 / s
	}
	fmt.Fprintf(w, "\n%s %s in %.1fs (%.1f MB/s): %d statements, %d rows, %d tables", state, Bytes(r.Bytes),
		r.Duration.Seconds(), rate, r.Statements, r.Rows, len(r.Tables))
	if len(r.Databases) > 0 {
		fmt.Fprintf(w, " in %s", dumpload.Printable(strings.Join(r.Databases, ", ")))
	}
	fmt.Fprintln(w)
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note: "+dumpload.Printable(n))
	}
	if r.ErrorCount > 0 {
		fmt.Fprintf(w, "%d statements failed", r.ErrorCount)
		if r.ErrorCount > shown {
			fmt.Fprintf(w, " (first %d; all in --json)", shown)
		}
		fmt.Fprintln(w, ":")
		for i, e := range r.Errors {
			if i == shown {
				break
			}
			fmt.Fprintf(w, "  %s: %s\n", dumpload.Printable(e.Where()), dumpload.Printable(e.Error))
		}
	}
}

// Bytes renders a size in B, KB, MB or GB (decimal).
func Bytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
