package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/results/console"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/workload"
)

// pickWorkload finds the workload named on the command line
// (workload.Registry.Pick); none is a usage error.
func (a *App) pickWorkload(cmd string, args []string) (workload.Workload, []string, error) {
	w, rest, err := a.Registry.Pick(cmd, args)
	if err != nil {
		return nil, nil, usagef("%w", err)
	}
	return w, rest, nil
}

// validate joins every configuration problem into one line.
func validate(errs ...[]error) error {
	var msgs []string
	for _, list := range errs {
		for _, e := range list {
			msgs = append(msgs, e.Error())
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return usagef("%s", strings.Join(msgs, "; "))
}

// capability names an optional workload interface for error messages.
func missing(w workload.Workload, what string) error {
	return usagef("workload %s has no %s step", w.Name(), what)
}

// workloadCommand is the shared shape of prepare, cleanup and check.
type workloadCommand struct {
	target  string
	cred    credentialFlags
	threads int
	monitor string // prepare only
}

func (c *workloadCommand) flags(fs *pflag.FlagSet, threads bool) {
	fs.StringVar(&c.target, "target", "", "DSN, sandbox:NAME, or empty for the default sandbox")
	c.cred.flags(fs)
	if threads { // prepare
		fs.IntVar(&c.threads, "threads", 1, "parallel loaders")
		monitorFlag(fs, &c.monitor)
	}
}

// open parses flags, validates and connects.
func (a *App) openWorkload(ctx context.Context, cmd string, args []string, threads bool) (workload.Workload, *execute.Session, *workloadCommand, error) {
	w, rest, err := a.pickWorkload(cmd, args)
	if err != nil {
		return nil, nil, nil, err
	}
	var c workloadCommand
	fs := newFlagSet(cmd + " " + w.Name())
	c.flags(fs, threads)
	w.Flags(fs)
	if err := parseFlags(fs, rest); err != nil {
		return nil, nil, nil, err
	}
	if fs.NArg() > 0 {
		return nil, nil, nil, usagef("unexpected argument %q", fs.Arg(0))
	}
	var own []error
	if threads && c.threads < 1 {
		own = append(own, errors.New("--threads must be at least 1"))
	}
	if threads {
		own = append(own, validateMonitor(c.monitor)...)
	}
	if err := validate(own, w.Validate()); err != nil {
		return nil, nil, nil, err
	}
	if threads {
		execute.SetThreads(w, c.threads)
	}
	t, err := a.resolveTarget(ctx, c.target, c.cred)
	if err != nil {
		return nil, nil, nil, err
	}
	s, err := execute.Connect(ctx, t, dialect.OpenOptions{MaxConns: c.threads + 1})
	if err != nil {
		return nil, nil, nil, exitFor(err)
	}
	return w, s, &c, nil
}

func (a *App) prepare(ctx context.Context, args []string) error {
	w, s, c, err := a.openWorkload(ctx, "prepare", args, true)
	if err != nil {
		return err
	}
	defer s.Close()
	p, ok := w.(workload.Preparer)
	if !ok {
		return missing(w, "prepare")
	}
	ctx, stop := a.Interrupts(ctx)
	defer stop()
	fmt.Fprintf(a.Stdout, "Preparing %s on %s %s (%s) with %d threads\n",
		w.Name(), s.Target.Flavor, s.Target.Version, s.Target.MaskedDSN(), c.threads)
	prog := console.NewProgress(a.Stdout)
	mon := execute.StartMonitor(context.WithoutCancel(ctx), a.home(), s, c.monitor)
	defer mon.Stop()
	prog.Suffix = func(elapsed time.Duration) string { return console.HostFigure(mon.ProgressSample(elapsed)) }
	prog.Start()
	err = p.Prepare(ctx, s.Env(), c.threads, prog)
	prog.Stop()
	a.printLoadMonitor(mon)
	if err != nil {
		if ctx.Err() != nil {
			return failed(fmt.Errorf("prepare %s interrupted: %s", w.Name(), s.Target.Mask(err.Error())))
		}
		return failed(fmt.Errorf("prepare %s: %s", w.Name(), s.Target.Mask(err.Error())))
	}
	return nil
}

func (a *App) cleanup(ctx context.Context, args []string) error {
	w, s, _, err := a.openWorkload(ctx, "cleanup", args, false)
	if err != nil {
		return err
	}
	defer s.Close()
	cl, ok := w.(workload.Cleaner)
	if !ok {
		return missing(w, "cleanup")
	}
	if err := cl.Cleanup(ctx, s.Env()); err != nil {
		return failed(fmt.Errorf("cleanup %s: %s", w.Name(), s.Target.Mask(err.Error())))
	}
	fmt.Fprintf(a.Stdout, "Cleaned up %s on %s\n", w.Name(), s.Target.MaskedDSN())
	return nil
}

func (a *App) check(ctx context.Context, args []string) error {
	w, s, _, err := a.openWorkload(ctx, "check", args, false)
	if err != nil {
		return err
	}
	defer s.Close()
	ch, ok := w.(workload.Checker)
	if !ok {
		return missing(w, "check")
	}
	ok, err = ch.Check(ctx, s.Env(), a.Stdout)
	if err != nil {
		return failed(fmt.Errorf("check %s: %s", w.Name(), s.Target.Mask(err.Error())))
	}
	if !ok {
		return failed(fmt.Errorf("check %s: consistency checks failed", w.Name()))
	}
	return nil
}

func (a *App) workloads(_ context.Context, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	for _, n := range a.Registry.Names() {
		w, _ := a.Registry.New(n)
		fmt.Fprintf(a.Stdout, "%-24s %s\n", n, w.Description())
	}
	return nil
}

func (a *App) help(_ context.Context, args []string) error {
	switch {
	case len(args) == 0:
		a.usage(a.Stdout)
		return nil
	case len(args) >= 2 && (args[0] == "run" || args[0] == "prepare" || args[0] == "cleanup" || args[0] == "check"):
		w, err := a.Registry.New(args[1])
		if err != nil {
			return usagef("%w", err)
		}
		fs := newFlagSet(args[0])
		if args[0] == "run" {
			var o runOptions
			o.flags(fs)
			detachedFlags(w, fs, new(string))
		} else {
			var c workloadCommand
			c.flags(fs, args[0] == "prepare")
		}
		w.Flags(fs)
		fmt.Fprintf(a.Stdout, "dbarena %s %s [flags]\n  %s\n\nFlags:\n%s", args[0], w.Name(), w.Description(), fs.FlagUsages())
		return nil
	case args[0] == "k8s":
		return a.k8sHelp(args[1:])
	case args[0] == "server":
		fmt.Fprint(a.Stdout, serverUsage)
		return nil
	case args[0] == "results":
		fmt.Fprint(a.Stdout, resultsUsage)
		return nil
	case args[0] == "compare":
		fmt.Fprint(a.Stdout, compareUsage)
		return nil
	case args[0] == "report":
		fmt.Fprint(a.Stdout, reportUsage)
		return nil
	case args[0] == "capture":
		fmt.Fprint(a.Stdout, captureUsage())
		return nil
	case args[0] == "plan":
		fmt.Fprint(a.Stdout, planUsage)
		return nil
	case args[0] == "run":
		fs := newFlagSet("run")
		var o runOptions
		o.flags(fs)
		fmt.Fprintf(a.Stdout, "dbarena run WORKLOAD [flags]\n\nRun flags (all workloads):\n%s\nWorkloads: %s\n",
			fs.FlagUsages(), strings.Join(a.Registry.Names(), ", "))
		return nil
	}
	return usagef("no help for %q: try `dbarena help run WORKLOAD`, `dbarena help server`", strings.Join(args, " "))
}
