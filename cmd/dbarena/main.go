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
//
// The exec also turns off glibc's restartable sequences for dbarena's own
// threads (GLIBC_TUNABLES=glibc.pthread.rseq=0; the binary links glibc for
// package net's resolver): the kernel updates each registered thread's
// rseq area after every context switch, 3.6% of the client's CPU at
// MariaDB oltp_point_select with 4 threads (perf cpu-clock), and Go does
// not use them. The programs dbarena starts (servers, peers) get the
// environment as it was: restoreEnv puts it back after the exec.
func preemptOff() {
	g := os.Getenv("GODEBUG")
	if strings.Contains(g, "asyncpreemptoff=") {
		restoreEnv()
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	tunables, had := os.LookupEnv("GLIBC_TUNABLES")
	saved := "-"
	if had {
		saved = "=" + tunables
	}
	set := func(k, v string) bool { return os.Setenv(k, v) == nil }
	if set("GODEBUG", strings.TrimPrefix(g+",asyncpreemptoff=1", ",")) &&
		set("GLIBC_TUNABLES", strings.TrimSuffix("glibc.pthread.rseq=0:"+tunables, ":")) &&
		set(restoreKey, saved+"|"+g) {
		_ = syscall.Exec(exe, os.Args, os.Environ())
	}
	// Still here: run as we are, and leave the environment of the
	// programs we start as it was.
	restoreEnv()
}

// restoreKey names the variable through which preemptOff's exec carries
// the environment as it was: GLIBC_TUNABLES ("-" for unset, or "=VALUE"),
// "|", then GODEBUG.
const restoreKey = "DBARENA_ENV_BEFORE_EXEC"

// restoreEnv puts GLIBC_TUNABLES and GODEBUG back as they were before
// preemptOff's exec, so that the programs dbarena starts inherit neither;
// the runtime and glibc have read them already.
func restoreEnv() {
	saved, ok := os.LookupEnv(restoreKey)
	if !ok {
		return
	}
	os.Unsetenv(restoreKey)
	tunables, godebug, _ := strings.Cut(saved, "|")
	if v, had := strings.CutPrefix(tunables, "="); had {
		os.Setenv("GLIBC_TUNABLES", v)
	} else {
		os.Unsetenv("GLIBC_TUNABLES")
	}
	if godebug == "" {
		os.Unsetenv("GODEBUG")
	} else {
		os.Setenv("GODEBUG", godebug)
	}
}
