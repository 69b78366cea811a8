package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/execute"
	"github.com/dbarena/dbarena/internal/measure/hostinfo"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/console"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/secret"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// runOptions are the flags every workload's run takes (docs/CLI.md).
type runOptions struct {
	target       string
	cred         credentialFlags
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
	// shard makes the run one shard of a run spread over hosts (shard.go).
	shard shardOptions
	// gates are --threshold, --junit and --md-summary (gate_x.go).
	gates gateOptions
	// metrics are --metrics-listen and its companions (metrics_x.go).
	metrics metricsOptions
}

func (o *runOptions) flags(fs *pflag.FlagSet) {
	o.cfg = runner.DefaultConfig()
	fs.StringVar(&o.target, "target", "", "DSN, sandbox:NAME, or empty for the default sandbox")
	o.cred.flags(fs)
	fs.IntVar(&o.cfg.Threads, "threads", o.cfg.Threads, "number of workers, each with its own connection")
	fs.IntVar(&o.cfg.Jobs, "jobs", 0, "run the workers on this many threads, each waiting for all its connections at once, as pgbench -j (lean wire clients, closed loop); 0 = a thread per worker, as sysbench")
	fs.StringVar(&o.cfg.Placement, "placement", "follow", "where dbarena's worker threads run: follow (each thread that has a connection to a server on this machine moves now and then to the CPU its server process runs on) or kernel (where Linux puts them)")
	fs.StringVar(&o.cfg.Sched, "sched", "auto", "scheduling policy of dbarena's threads during the run: batch (a reply does not make the client preempt the server), normal, or auto: batch for the lean PostgreSQL client in a closed loop, normal elsewhere")
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
	fs.StringVar(&o.results, "results", "", "results store: a SQLite file (its directory must exist), or mysql://... or postgres://... for a shared store; default $DBARENA_HOME/results.db")
	fs.Var(&o.cfg.Connect, "connect", "persistent, per-event (a new connection for every event, as pgbench -C) or every=N (a new one every N events, as mysqlslap --detach=N); connect time is measured apart")
	durationFlag(fs, &o.cfg.ReconnectTimeout, "reconnect-timeout", o.cfg.ReconnectTimeout, "how long a worker tries to reconnect to a lost target before the run fails")
	durationFlag(fs, &o.cfg.StallTimeout, "stall-timeout", o.cfg.StallTimeout, "fail the run when events are running, none ended for this long and the server does not answer a ping (it stopped answering); 0 = never")
	fs.IntVar(&o.cfg.MaxRetries, "max-retries", o.cfg.MaxRetries, "rerun an event after a retryable error (serialization failure, deadlock) at most this many times; 0 = never (pgbench --max-tries N is N-1)")
	monitorFlag(fs, &o.monitor)
	o.shard.flags(fs)
	o.gates.flags(fs)
	o.metrics.flags(fs)
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
	if !execute.ValidMonitor(o.monitor) {
		errs = append(errs, validateMonitor(o.monitor)...)
	}
	errs = append(errs, o.gates.validate(fs)...)
	errs = append(errs, o.metrics.validate(fs)...)
	return errs
}

func (a *App) run(ctx context.Context, args []string) error {
	w, rest, err := a.pickWorkload("run", args)
	if err != nil {
		return err
	}
	if _, ok := w.(workload.Runner); !ok {
		return missing(w, "run")
	}
	_, detached := w.(workload.Detached)
	var o runOptions
	var dbTarget string
	fs := newFlagSet("run " + w.Name())
	o.flags(fs)
	detachedFlags(w, fs, &dbTarget)
	w.Flags(fs)
	if err := parseFlags(fs, rest); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if detached {
		if err := refuseDatabaseFlags(w, fs); err != nil {
			return err
		}
	}
	if err := validate(o.validate(fs), w.Validate()); err != nil {
		return err
	}
	req := a.runRequest(w, &o, execute.Given{Threads: fs.Changed("threads"),
		Time: fs.Changed("time"), Events: fs.Changed("events"), IgnoreErrors: fs.Changed("ignore-errors")})
	if err := o.shard.resolve(a.Getenv, o.rounds); err != nil {
		return err
	}
	if o.shard.local {
		if o.metrics.on() {
			return usagef("--metrics-listen: not with --shards N --local (each shard runs in a process of its own)")
		}
		if err := req.Configure(); err != nil {
			return exitFor(err)
		}
		if _, err := execute.ShardConfig(req.Config, 0, o.shard.count, req.ThreadsPicked()); err != nil {
			return usagef("%w", err)
		}
		return a.runLocalShards(ctx, &o)
	}
	req.Shard = a.shardPart(&o)
	if err := req.Configure(); err != nil {
		return exitFor(err)
	}
	if o.jsonPath != "" {
		if err := checkWritable(o.jsonPath); err != nil {
			return usagef("--json: %w", err)
		}
	}
	st, err := a.openRunStore(ctx, &o)
	if err != nil {
		return err
	}
	defer st.Close()
	if detached {
		if req.Open, err = a.detachedSessions(ctx, w, &o, dbTarget); err != nil {
			return err
		}
	} else {
		t, err := a.resolveTarget(ctx, o.target, o.cred)
		if err != nil {
			return err
		}
		req.Open = func(ctx context.Context) (*execute.Session, error) {
			return execute.Connect(ctx, t, dialect.OpenOptions{MaxConns: req.Config.Threads})
		}
	}
	ctx, stop := a.Interrupts(ctx)
	defer stop()
	req.Host = hostinfo.Collect()
	if err := o.metrics.start(a); err != nil {
		return err
	}
	err = a.runRounds(ctx, st, req, &o)
	o.metrics.l.End(ctx, a.Stderr)
	return err
}

// runRequest is the request of a run of w with the options o.
func (a *App) runRequest(w workload.Workload, o *runOptions, given execute.Given) *execute.Request {
	return &execute.Request{Workload: w, Config: o.cfg, Given: given, Monitor: o.monitor, Home: a.home(),
		Tags: o.tags, Plan: o.plan, Version: Version, Rounds: o.rounds, Judge: o.gates.judgeFunc(),
		Command: func(t target.Target) []string { return maskArgs(a.Args, t) }}
}

// runRounds runs a configured request through the run service, printing
// each round, and returns the first failure of a round.
func (a *App) runRounds(ctx context.Context, st *store.Store, req *execute.Request, o *runOptions) error {
	p := &runPrinter{RunProgress: &console.RunProgress{W: a.Stdout, Quiet: o.quiet, Workload: req.Workload}, a: a, o: o, st: st}
	obs := o.metrics.l.Rounds(p, &req.Config)
	err := execute.Rounds(ctx, st, req, obs)
	obs.End()
	if err != nil {
		if ee := (*exitError)(nil); errors.As(err, &ee) {
			return err
		}
		return exitFor(err)
	}
	return a.gateEnd(o, p.runErr)
}

// runPrinter prints a run as it goes (execute.RoundObserver): the opening
// line, notes and the interval lines (sysbench's, or the workload's own),
// then each round's summary; it writes --json and keeps each round's
// outcome.
type runPrinter struct {
	*console.RunProgress
	a      *App
	o      *runOptions
	st     *store.Store
	runErr error // the first failed or degraded round
}

func (p *runPrinter) Round(i, n int) {
	if n > 1 {
		fmt.Fprintf(p.a.Stdout, "\nRound %d of %d\n", i, n)
	}
}

// Ran prints the round's result and writes --json. A run that could not
// be stored is still written to --json (or a file in the working
// directory) and the error says where.
func (p *runPrinter) Ran(out *execute.Outcome) error {
	a, o, run := p.a, p.o, out.Run
	p.Ended(run)
	if err := out.Keep(o.jsonPath); err != nil {
		return failed(err)
	}
	if !o.quiet {
		fmt.Fprintf(a.Stdout, "\nStored as run %d (%s) in %s\n", run.ID, run.Status, p.st.Location())
		if o.shard.sharded() {
			fmt.Fprintf(a.Stdout, "Shard %d of %d of run %s: `dbarena results show %s` merges the shards\n",
				o.shard.index, o.shard.count, o.shard.key, o.shard.key)
		}
	}
	a.gateRound(o, run)
	switch run.Status {
	case summary.StatusInterrupted:
		return failed(fmt.Errorf("interrupted; partial result stored as run %d", run.ID))
	case summary.StatusFailed, summary.StatusDegraded:
		if p.runErr == nil {
			msg := run.Error
			if run.Status == summary.StatusDegraded {
				msg = "degraded: " + strings.Join(run.Notes, "; ")
			}
			p.runErr = failed(fmt.Errorf("run %d %s", run.ID, oneLine(msg)))
		}
	}
	return nil
}

// maskArgs returns the command line with passwords masked: whatever looks
// like one (secret.MaskCommand), and the target's own password wherever it
// appears.
func maskArgs(args []string, t target.Target) []string {
	out := secret.MaskCommand(args)
	for i := range out {
		out[i] = t.Mask(out[i])
	}
	return out
}

// exitFor maps an error of the run pipeline to its exit code.
func exitFor(err error) error {
	switch execute.KindOf(err) {
	case execute.BadInput:
		return usagef("%w", err)
	case execute.Unreachable:
		return unreachable(err)
	}
	return failed(err)
}

// checkWritable fails early when a path cannot be written.
func checkWritable(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}
