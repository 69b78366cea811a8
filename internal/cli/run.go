package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/dialect"
	"github.com/dbarena/dbarena/internal/hostinfo"
	"github.com/dbarena/dbarena/internal/monitor"
	"github.com/dbarena/dbarena/internal/runner"
	"github.com/dbarena/dbarena/internal/store"
	"github.com/dbarena/dbarena/internal/summary"
	"github.com/dbarena/dbarena/internal/workload"
)

// runOptions are the flags every workload's run takes (docs/CLI.md).
type runOptions struct {
	target       string
	results      string
	jsonPath     string
	rounds       int
	tags         [][2]string
	ignoreErrors []string
	monitor      string
	cfg          runner.Config
	// plan places the run in a plan (plan run); nil for `dbarena run`.
	plan *summary.PlanRef
	// quiet prints no interval lines, summary or "Stored as" line: plan
	// run prints one line per cell instead.
	quiet bool
}

func (o *runOptions) flags(fs *pflag.FlagSet) {
	o.cfg = runner.DefaultConfig()
	fs.StringVar(&o.target, "target", "", "DSN, sandbox:NAME, or empty for the default sandbox")
	fs.IntVar(&o.cfg.Threads, "threads", o.cfg.Threads, "number of workers, each with its own connection")
	durationFlag(fs, &o.cfg.Duration, "time", o.cfg.Duration, "measured run time (seconds or 30s, 5m); 0 = until --events")
	fs.Int64Var(&o.cfg.Events, "events", o.cfg.Events, "stop after this many measured events; 0 = until --time")
	durationFlag(fs, &o.cfg.Warmup, "warmup", o.cfg.Warmup, "warm-up before measuring, excluded from every figure")
	durationFlag(fs, &o.cfg.ReportInterval, "report-interval", time.Second, "print (and store) a line every interval; 0 = none")
	fs.Float64Var(&o.cfg.Rate, "rate", o.cfg.Rate, "fixed arrival rate in events/s shared by all workers (latency from the intended start); 0 = as fast as possible")
	fs.IntVar(&o.cfg.QueueSize, "rate-queue", o.cfg.QueueSize, "bound of the pending-event queue in --rate mode; overflow is counted as dropped")
	fs.StringSliceVar(&o.ignoreErrors, "ignore-errors", nil, "server error codes to count and go on (e.g. 1062,23505, or all)")
	fs.Int64Var(&o.cfg.Seed, "seed", o.cfg.Seed, "random seed; runs with the same seed make the same choices")
	fs.IntVar(&o.rounds, "rounds", 1, "run this many times, each stored as its own run tagged round=N")
	fs.Var(keyValues{&o.tags}, "tag", "KEY=VALUE label stored with the run (repeatable)")
	fs.StringVar(&o.jsonPath, "json", "", "write the run summary (dbarena.run/v1) to this file")
	fs.StringVar(&o.results, "results", "", "results store (SQLite file); default $DBARENA_HOME/results.db")
	monitorFlag(fs, &o.monitor)
}

func (o *runOptions) validate(fs *pflag.FlagSet) []error {
	// --events alone means "until N events", not "N events or 10 s".
	if fs.Changed("events") && !fs.Changed("time") {
		o.cfg.Duration = 0
	}
	o.cfg.IgnoreErrors = o.ignoreErrors
	errs := o.cfg.Validate()
	if o.rounds < 1 {
		errs = append(errs, errors.New("--rounds must be at least 1"))
	}
	errs = append(errs, validateMonitor(o.monitor)...)
	return errs
}

func (a *App) resultsPath(flag string) string {
	if flag != "" {
		return flag
	}
	return store.DefaultPath(a.Getenv)
}

func (a *App) run(ctx context.Context, args []string) error {
	w, rest, err := a.pickWorkload("run", args)
	if err != nil {
		return err
	}
	r, ok := w.(workload.Runner)
	if !ok {
		return missing(w, "run")
	}
	var o runOptions
	fs := newFlagSet("run " + w.Name())
	o.flags(fs)
	w.Flags(fs)
	if err := parseFlags(fs, rest); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if err := validate(o.validate(fs), w.Validate()); err != nil {
		return err
	}
	setThreads(w, o.cfg.Threads)
	if o.jsonPath != "" {
		if err := checkWritable(o.jsonPath); err != nil {
			return usagef("--json: %w", err)
		}
	}
	st, err := store.Open(ctx, a.resultsPath(o.results))
	if err != nil {
		return usagef("--results: %w", err)
	}
	defer st.Close()

	t, err := a.resolveTarget(ctx, o.target)
	if err != nil {
		return err
	}
	ctx, stop := a.Interrupts(ctx)
	defer stop()
	host := hostinfo.Collect()
	var runErr error
	for round := 1; round <= o.rounds; round++ {
		if o.rounds > 1 {
			fmt.Fprintf(a.Stdout, "\nRound %d of %d\n", round, o.rounds)
		}
		// A fresh pool per round: closing it ends the server sessions, so
		// the server's own counters are complete when they are read.
		s, err := connect(ctx, t, dialect.OpenOptions{MaxConns: o.cfg.Threads})
		if err != nil {
			return err
		}
		run, err := a.runOnce(ctx, st, s, w, r, &o, round, host)
		s.Close()
		if err != nil {
			return err
		}
		if run.Status == summary.StatusFailed && runErr == nil {
			runErr = failed(errors.New(run.Error))
		}
		if run.Status == summary.StatusInterrupted {
			return failed(fmt.Errorf("interrupted; partial result stored as run %d", run.ID))
		}
	}
	return runErr
}

// runOnce runs the workload once, prints and stores the result.
func (a *App) runOnce(ctx context.Context, st *store.Store, s *session, w workload.Workload, r workload.Runner,
	o *runOptions, round int, host summary.Host) (*summary.Run, error) {
	if !o.quiet {
		fmt.Fprintf(a.Stdout, "Running %s on %s %s (%s): %d threads", w.Name(), s.target.Flavor, s.target.Version,
			s.target.MaskedDSN(), o.cfg.Threads)
		if o.cfg.Rate > 0 {
			fmt.Fprintf(a.Stdout, ", fixed rate %g events/s", o.cfg.Rate)
		}
		fmt.Fprintln(a.Stdout)
	}

	cfg := o.cfg
	// Closing the pool's sockets stops statements in flight, so they can
	// run under a context the drivers need not watch.
	cfg.Abort = s.sockets.CloseAll
	// The monitor's samples line up with the measured intervals: its
	// baseline is reset as measuring begins, and each interval samples.
	mctx := context.WithoutCancel(ctx) // sampling has its own time limit
	mon := a.startMonitor(mctx, s, o.monitor)
	defer mon.close()
	if !o.quiet {
		for _, l := range mon.announce() {
			fmt.Fprintln(a.Stdout, "Monitor: "+l)
		}
	}
	// The server's counters are read as the measured period begins, after
	// the workers have connected and prepared their statements.
	counters, counterErr := newCounterProbe(s)
	var before dialect.Counters
	if counterErr == nil {
		defer counters.Close()
		counterErr = errors.New("measured period never began")
		cfg.OnMeasure = func() { before, counterErr = counters.read(ctx); mon.begin(mctx) }
	} else {
		cfg.OnMeasure = func() { mon.begin(mctx) }
	}
	// A workload with its own report (TPC-C) prints its own lines.
	rep, _ := w.(workload.Reporter)
	if rep != nil && o.cfg.ReportInterval > 0 && !o.quiet {
		fmt.Fprintln(a.Stdout, rep.IntervalHeader())
	}
	started := time.Now()
	res, err := runner.Run(ctx, cfg, s.env(), r, func(iv runner.Interval) {
		figure := hostFigure(mon.interval(mctx, iv))
		if o.quiet {
			return
		}
		if rep != nil {
			fmt.Fprintln(a.Stdout, rep.FormatInterval(workload.IntervalReport{Start: iv.Start, End: iv.End,
				Warmup: iv.Warmup, Threads: iv.Threads, PerType: iv.PerType})+figure)
			return
		}
		fmt.Fprintln(a.Stdout, formatInterval(iv, o.cfg.Warmup)+figure)
	})
	if err != nil {
		return nil, unreachable(fmt.Errorf("run %s: %s", w.Name(), s.target.Mask(err.Error())))
	}
	monitored := mon.summary(mctx, res.Elapsed, res.Events)

	run := &summary.Run{
		Schema:    summary.Schema,
		Status:    summary.StatusComplete,
		StartedAt: started.UTC(),
		EndedAt:   time.Now().UTC(),
		Workload:  w.Name(),
		Target: summary.Target{
			Flavor: string(s.target.Flavor), Version: s.target.Version,
			DSN: s.target.MaskedDSN(), Sandbox: s.target.Sandbox,
		},
		Params:  w.Params(),
		Threads: o.cfg.Threads,
		Rate:    o.cfg.Rate,
		Tags:    map[string]string{},
		Host:    host,
		Dbarena: summary.Dbarena{Version: Version, Command: maskArgs(a.Args, s.target)},
	}
	res.Fill(run)
	run.Plan = o.plan
	if rep != nil {
		rep.Summarize(run)
	}
	for _, kv := range o.tags {
		run.Tags[kv[0]] = kv[1]
	}
	if o.rounds > 1 {
		run.Tags["round"] = strconv.Itoa(round)
	}
	switch {
	case res.Interrupted:
		run.Status = summary.StatusInterrupted
	case res.Err != nil:
		run.Status = summary.StatusFailed
		run.Error = s.target.Mask(res.Err.Error())
	}
	// Read the server's side after the workers' connections are gone.
	bg := context.WithoutCancel(ctx)
	s.Close()
	if counterErr == nil {
		if delta, err := counters.delta(bg, before); err == nil {
			run.ServerCounters = delta
		}
		if settings, err := s.dialect.Settings(bg, counters.db); err == nil {
			run.Settings = settings
		}
		if all, err := monitor.Snapshot(bg, s.target, counters.db); err == nil {
			run.SettingsAll = all
		}
	}
	if mon != nil {
		run.Monitor, run.Host.Storage = monitored, mon.storage
	}

	if !o.quiet {
		a.printSummary(run)
		if rep != nil {
			fmt.Fprint(a.Stdout, rep.FormatSummary(run))
		}
	}
	id, err := st.SaveRun(bg, run)
	if err != nil {
		return nil, failed(fmt.Errorf("store run: %w", err))
	}
	if !o.quiet {
		fmt.Fprintf(a.Stdout, "\nStored as run %d (%s) in %s\n", id, run.Status, a.resultsPath(o.results))
	}
	if o.jsonPath != "" {
		if err := writeJSON(o.jsonPath, run); err != nil {
			return nil, failed(fmt.Errorf("--json: %w", err))
		}
	}
	return run, nil
}

// writeJSON writes the summary without the encoded histogram.
func writeJSON(path string, run *summary.Run) error {
	out := *run
	out.Histogram = ""
	b, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// checkWritable fails early when a path cannot be written.
func checkWritable(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}
