// Package cli turns command lines into typed configurations and calls the
// library packages. It is the only package that prints or picks exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbarena/dbarena/internal/results/termsafe"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/workload"
	"github.com/dbarena/dbarena/internal/workload/micro"
	"github.com/dbarena/dbarena/internal/workload/oltp"
	"github.com/dbarena/dbarena/internal/workload/replay"
	"github.com/dbarena/dbarena/internal/workload/script"
	"github.com/dbarena/dbarena/internal/workload/tpcc"
	"github.com/dbarena/dbarena/internal/workload/web"
)

// Exit codes (docs/CLI.md).
const (
	ExitOK          = 0
	ExitFailed      = 1 // the run or check itself failed
	ExitUsage       = 2 // bad usage or bad input
	ExitUnreachable = 3 // the target could not be reached or started
)

// Version is dbarena's version, set at build time with -ldflags.
var Version = "dev"

// App holds every process-global thing a command may touch, so that tests
// can run the whole CLI in-process.
type App struct {
	Stdout, Stderr io.Writer
	// Getenv reads the environment.
	Getenv func(string) string
	// Args is the full command line, program name first (for the record).
	Args []string
	// Interrupts returns a context cancelled on Ctrl-C or SIGTERM, and its stop function.
	Interrupts func(context.Context) (context.Context, context.CancelFunc)
	// Registry lists the workloads.
	Registry *workload.Registry
}

// NewApp returns an App wired to the real process. Text it prints to a
// terminal (and all of stderr) shows control characters as escapes, so
// that nothing read from an input can drive the terminal (termsafe);
// stdout to a pipe or file goes out exactly as written.
func NewApp(stdout, stderr io.Writer, args []string, getenv func(string) string,
	interrupts func(context.Context) (context.Context, context.CancelFunc)) *App {
	return &App{
		Stdout:     termsafe.ForOutput(stdout),
		Stderr:     termsafe.New(stderr),
		Getenv:     getenv,
		Args:       args,
		Interrupts: interrupts,
		Registry:   workload.NewRegistry(append(append(append(oltp.All(), tpcc.All()...), script.All()...), micro.New, web.New, replay.New)...),
	}
}

// exitError carries an exit code with its message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usagef reports bad usage or input (exit 2).
func usagef(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// unreachable reports a target that could not be reached or started (exit 3).
func unreachable(err error) error {
	return &exitError{code: ExitUnreachable, err: err}
}

// failed reports a run or check that failed (exit 1).
func failed(err error) error {
	return &exitError{code: ExitFailed, err: err}
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(a *App, ctx context.Context, args []string) error
}

func (a *App) commands() []command {
	return []command{
		{"server", "start, stop, restart, remove, list and show sandboxed servers", (*App).server},
		{"prepare", "create and load a workload's tables", (*App).prepare},
		{"run", "run a workload and store the result", (*App).run},
		{"cleanup", "drop a workload's tables", (*App).cleanup},
		{"check", "check a workload's data consistency", (*App).check},
		{"checksum", "per-table rows, sizes and content checksums of a database", (*App).checksumCmd},
		{"load", "load SQL dumps (mysqldump, mydumper, pg_dump) into a server, engine rewrite included", (*App).loadCmd},
		{"workloads", "list the workloads", (*App).workloads},
		{"results", "list and show stored runs", (*App).results},
		{"report", "write an HTML, Markdown, CSV or JSON report of stored runs", (*App).report},
		{"compare", "compare two stored runs side by side, with significance", (*App).compare},
		{"k8s", "render (or apply) a run's shards as a Kubernetes Indexed Job", (*App).k8s},
		{"plan", "check and run experiment plans; per-cell statistics", (*App).plan},
		{"pgbench", "pgbench's own command line, output and exit statuses on dbarena's script engine", (*App).pgbenchCmd},
		{"capture", "capture a server's traffic for replay: convert its logs, or capture it live", (*App).capture},
		{"help", "show help for a command or workload", (*App).help},
		{"version", "print dbarena's version", (*App).version},
	}
}

// Main runs the command line and returns the process exit code.
func (a *App) Main(ctx context.Context) int {
	args := a.Args[1:]
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		a.usage(a.Stdout)
		return ExitOK
	}
	name := args[0]
	if name == "pgbench" { // its own messages and exit statuses (pgbench.go)
		return a.pgbench(ctx, args[1:])
	} else if name == "help" && len(args) == 2 && args[1] == "pgbench" {
		return a.pgbench(ctx, []string{"--help"})
	}
	for _, c := range a.commands() {
		if c.name == name {
			return a.exit(name, c.run(a, ctx, args[1:]))
		}
	}
	return a.exit("", usagef("unknown command %q (see `dbarena help`)", name))
}

// exit prints err as one line and maps it to an exit code.
func (a *App) exit(cmd string, err error) int {
	if err == nil {
		return ExitOK
	}
	code := ExitFailed
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	prefix := "dbarena"
	if cmd != "" {
		prefix += " " + cmd
	}
	msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "\n  ")
	fmt.Fprintf(a.Stderr, "%s: %s\n", prefix, msg)
	return code
}

func (a *App) usage(w io.Writer) {
	fmt.Fprintln(w, "dbarena: benchmark database servers side by side and keep trustworthy results.")
	fmt.Fprintln(w, "\nUsage: dbarena COMMAND [ARGS] [FLAGS]\n\nCommands:")
	for _, c := range a.commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun `dbarena help COMMAND` or `dbarena help run WORKLOAD` for flags.")
}

func (a *App) version(_ context.Context, _ []string) error {
	fmt.Fprintln(a.Stdout, "dbarena", Version)
	return nil
}

// home is $DBARENA_HOME, default ~/.local/share/dbarena.
func (a *App) home() string {
	if h := a.Getenv("DBARENA_HOME"); h != "" {
		return h
	}
	if h := a.Getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "share", "dbarena")
	}
	return filepath.Join(os.TempDir(), "dbarena")
}

// sandboxes is the sandbox manager of $DBARENA_HOME; what it does once
// (creating the OS user servers run as) is said on stderr.
func (a *App) sandboxes() *sandbox.Manager {
	m := sandbox.NewManager(a.home())
	m.Notify = func(msg string) { fmt.Fprintln(a.Stderr, "dbarena: "+msg) }
	return m
}
