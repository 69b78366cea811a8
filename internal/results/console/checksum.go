package console

import (
	"fmt"
	"io"

	"github.com/dbarena/dbarena/internal/data/checksum"
)

// Checksums prints the per-table checksums of `dbarena checksum`, one
// line a table.
func Checksums(w io.Writer, list []checksum.Table) {
	fmt.Fprintf(w, "%-32s %-8s %12s %10s %10s  %-17s %s\n", "table", "engine", "rows", "data MB", "index MB", "sum", "portable")
	for _, t := range list {
		port := "no"
		if t.Portable {
			port = "yes"
		}
		fmt.Fprintf(w, "%-32s %-8s %12d %10.2f %10.2f  %-17s %s\n", t.Name, t.Engine, t.Rows,
			float64(t.DataBytes)/(1<<20), float64(t.IndexBytes)/(1<<20), t.Sum, port)
	}
	if len(list) == 0 {
		fmt.Fprintln(w, "(no tables)")
	}
}
