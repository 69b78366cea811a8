// Command dbarena benchmarks database servers side by side and keeps
// trustworthy results. See README.md and docs/CLI.md.
package main

import (
	"context"
	"io"
	"log"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/go-sql-driver/mysql"

	"github.com/dbarena/dbarena/internal/cli"
)

func main() {
	// The MySQL driver logs lost connections itself; dbarena counts and
	// reports them, so its own log would only repeat them out of order.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	interrupts := func(ctx context.Context) (context.Context, context.CancelFunc) {
		return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	}
	app := cli.NewApp(os.Stdout, os.Stderr, os.Args, os.Getenv, interrupts)
	os.Exit(withProfile(os.Getenv("DBARENA_CPUPROFILE"), func() int { return app.Main(context.Background()) }))
}

// withProfile runs f under the CPU profiler when path is set (a developer
// aid: DBARENA_CPUPROFILE=cpu.out dbarena run ...).
func withProfile(path string, f func() int) int {
	if path == "" {
		return f()
	}
	out, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(out)
	}
	if err != nil {
		log.Printf("DBARENA_CPUPROFILE: %v", err)
		return f()
	}
	defer out.Close()
	defer pprof.StopCPUProfile()
	return f()
}
