// Command genlog writes a synthetic server log for bench/capture-convert:
// genlog FORMAT MEGABYTES > FILE.
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/dbarena/dbarena/internal/capture/capturetest"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: genlog FORMAT MEGABYTES")
		os.Exit(2)
	}
	mb, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "genlog:", err)
		os.Exit(2)
	}
	if err := capturetest.GenerateLog(os.Stdout, os.Args[1], int64(mb)<<20); err != nil {
		fmt.Fprintln(os.Stderr, "genlog:", err)
		os.Exit(1)
	}
}
