// Command dbarena benchmarks database servers side by side and keeps
// trustworthy results. See README.md and docs/CLI.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/dbarena/dbarena/internal/cli"
)

func main() {
	interrupts := func(ctx context.Context) (context.Context, context.CancelFunc) {
		return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	}
	app := cli.NewApp(os.Stdout, os.Stderr, os.Args, os.Getenv, interrupts)
	os.Exit(app.Main(context.Background()))
}
