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
	"strings"
	"syscall"

	"github.com/go-sql-driver/mysql"

	"github.com/dbarena/dbarena/internal/cli"
)

func main() {
	preemptOff()
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

// preemptOff runs the program again (execve, same process) with the Go
// runtime's asynchronous preemption off, GODEBUG=asyncpreemptoff=1, unless
// GODEBUG already says either way; it returns only if it cannot. The lean
// wire clients' workers wait in raw read system calls (package rawsock),
// which the scheduler counts as running: with asynchronous preemption on,
// sysmon signals each worker every 10-20 ms and the signal interrupts its
// read (EINTR), at dozens of workers a large share of the client's CPU
// (oltp_point_select, 64 threads, same sandbox and seconds: 4.9 -> 2.7
// context switches and about 28% less client CPU per query). Workers still
// yield at each return to Go code, at least every rawsock.WaitSlice. The
// setting cannot be changed once the runtime has started, nor set by a
// //go:debug directive, hence the exec.
func preemptOff() {
	g := os.Getenv("GODEBUG")
	if strings.Contains(g, "asyncpreemptoff=") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	if g != "" {
		g += ","
	}
	if os.Setenv("GODEBUG", g+"asyncpreemptoff=1") != nil {
		return
	}
	_ = syscall.Exec(exe, os.Args, os.Environ())
	// Still here: run as we are, and leave the environment of the
	// programs we start as it was.
	if g == "" {
		os.Unsetenv("GODEBUG")
	} else {
		os.Setenv("GODEBUG", strings.TrimSuffix(g, ","))
	}
}
