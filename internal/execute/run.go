// Package execute is dbarena's one run pipeline: target session, readiness
// and server-limit checks, the runner with the monitor and the server's
// counters, the run summary, checkpoints into the results store as the run
// goes, and the final status. `dbarena run`, plan steps and every workload
// go through Run; presentation (progress lines, the final summary, --json)
// is the caller's, fed through an Observer.
package execute

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/dbarena/dbarena/internal/measure/monitor"
	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/workload"
)

// Store is where a run is kept as it goes (package store implements it).
type Store interface {
	// BeginRun stores the run's identity and parameters as running.
	BeginRun(ctx context.Context, run *summary.Run) (int64, error)
	// AppendIntervals adds intervals and monitor samples as they end.
	AppendIntervals(ctx context.Context, id int64, ivs []summary.Interval, samples []summary.Sample) error
	// Checkpoint replaces the run's figures with those so far.
	Checkpoint(ctx context.Context, id int64, run *summary.Run) error
	// FinishRun stores the final run and status.
	FinishRun(ctx context.Context, id int64, run *summary.Run) error
	// SaveRun stores a whole run at once.
	SaveRun(ctx context.Context, run *summary.Run) (int64, error)
}

// Observer is told what happens, for presentation. Its methods are called
// from one goroutine at a time and should return promptly.
type Observer interface {
	// Begin is called before the run starts, with lines the user must read
	// first ("Monitor: ..." limitations, "Note: ..." limits raised).
	Begin(s *Session, spec *Spec, notes []string)
	// Interval is called after each report interval, warm-up ones
	// included, with the monitor's figures for it.
	Interval(iv runner.Interval, figures map[string]float64)
}

// StoredObserver is an Observer that also hears the run's ID in the
// store, once the run is stored as running and before its first interval
// (0 when the store refused it).
type StoredObserver interface {
	Observer
	Stored(id int64)
}

// Spec is one run to do.
type Spec struct {
	// Workload is what to run; it must be a workload.Runner.
	Workload workload.Workload
	// Config is the runner's configuration (threads, time, rate...).
	Config runner.Config
	// Monitor is the --monitor mode.
	Monitor string
	// Home is DBARENA_HOME, where sandboxes are recorded.
	Home string
	// Tags, Plan, Host and Dbarena are stored with the run.
	Tags    map[string]string
	Plan    *summary.PlanRef
	Host    summary.Host
	Dbarena summary.Dbarena
	// RunKey and Shard make the run one shard of a run spread over client
	// hosts (dbarena run --shard): stored with the run, with its per-type
	// histograms so that the shards merge exactly. The runner's
	// Config.FirstWorker and Config.Barrier are the caller's to set.
	RunKey string
	Shard  *summary.Shard
	// Judge, when set, is called with the finished run before it is
	// stored, to add what is judged of it (its Thresholds).
	Judge func(*summary.Run)
	// Checkpoint is how often the run's figures are written to the store
	// while it goes; 0 means every minute. Intervals are written as they end.
	Checkpoint time.Duration
}

// DefaultCheckpoint is how often a run's figures are checkpointed.
const DefaultCheckpoint = time.Minute

// extraConns are the connections a run opens beside its workers: the
// counter probe, the monitor's server sampler and one to spare.
const extraConns = 3

// answerTimeout is how long the server may take to answer a ping after
// the run before its counters and settings are left unread.
const answerTimeout = 2 * time.Second

// readyTimeout bounds the readiness check of a workload's data.
const readyTimeout = time.Minute

// Outcome is a finished run.
type Outcome struct {
	Run *summary.Run
	// StoreErr is set when the run could not be stored, or only in part:
	// the caller must keep Run elsewhere (--json) and say where.
	StoreErr error
}

// Run runs spec on s, storing the run in st as it goes. It returns an
// error (with its Kind) only when the run could not start; a run that
// started always comes back as an Outcome whose Run.Status says how it
// ended: complete, degraded (the target was unreachable for part of the
// measured period), failed, or interrupted.
func Run(ctx context.Context, st Store, s *Session, spec Spec, obs Observer) (*Outcome, error) {
	w := spec.Workload
	r, ok := w.(workload.Runner)
	if !ok {
		return nil, wrap(BadInput, fmt.Errorf("workload %s cannot be run", w.Name()))
	}
	notes, err := runNotes(ctx, s, &spec)
	if err != nil {
		return nil, err
	}
	cfg := spec.Config
	// Closing the pool's sockets stops statements in flight, so they can
	// run under a context the drivers need not watch.
	if _, detached := w.(workload.Detached); !detached {
		cfg.Abort = s.Sockets.CloseAll
		probe, closeProbe := newStallProbe(s)
		defer closeProbe()
		cfg.Probe = probe
	}
	mctx := context.WithoutCancel(ctx) // sampling has its own time limits
	mon := StartMonitor(mctx, spec.Home, s, spec.Monitor)
	defer mon.Stop()
	// The server's counters are read as the measured period begins, after
	// the workers have connected and prepared their statements.
	sv := newServerSide(s)
	defer sv.close()
	mb, _ := w.(workload.MeasureBeginner)
	cfg.OnMeasure = func() {
		if mb != nil {
			mb.BeginMeasure()
		}
		sv.begin(ctx)
		mon.begin(mctx)
	}
	obs.Begin(s, &spec, announce(mon, notes))

	run := newRun(s, &spec)
	run.Target.TLS = sessionTLS(ctx, s)
	run.Notes = append(run.Notes, notes...)
	rec := beginRecord(context.WithoutCancel(ctx), st, run)
	if so, ok := obs.(StoredObserver); ok {
		so.Stored(rec.id)
	}
	cfg.Checkpoint = spec.Checkpoint
	if cfg.Checkpoint <= 0 {
		cfg.Checkpoint = DefaultCheckpoint
	}
	cfg.OnCheckpoint = func(partial *runner.Result) { rec.checkpoint(run, partial, spec.Shard != nil) }
	res, err := runner.Run(ctx, cfg, s.Env(), r, func(iv runner.Interval) {
		// Sampled under ctx: after Ctrl-C a frozen server must not hold
		// the end of the run for the sampler's time limit.
		figures := mon.interval(ctx, iv)
		obs.Interval(iv, figures)
		if !iv.Warmup {
			rec.interval(iv, mon.lastSample())
		}
	})
	if err != nil {
		err = setupError(s, w, err)
		rec.failed(run, err)
		return nil, err
	}

	res.Fill(run)
	if spec.Shard != nil {
		run.TypeHistograms = res.TypeHistograms()
	}
	run.EndedAt = time.Now().UTC()
	if rep, ok := w.(workload.Reporter); ok {
		rep.Summarize(run)
	}
	setStatus(run, res, s)
	// Read the server's side after the workers' connections are gone.
	s.Close()
	sv.read(rec.bg, s, run, res)
	if mon != nil {
		sctx, cancel := context.WithTimeout(rec.bg, sampleTimeout)
		run.Monitor, run.Host.Storage = mon.summary(sctx, res.Elapsed, res.Events), mon.Storage
		run.Bottleneck = monitor.VerdictCPUs(run, monitor.LocalCPUs())
		cancel()
	}
	if spec.Judge != nil {
		spec.Judge(run)
	}
	rec.finish(run)
	return &Outcome{Run: run, StoreErr: rec.err}, nil
}

// runNotes checks that the workload's data is ready and the server's
// limits allow the run, and returns the notes the run carries: limits
// raised, tables smaller than asked, the workload's own.
func runNotes(ctx context.Context, s *Session, spec *Spec) ([]string, error) {
	w := spec.Workload
	warning, err := checkReady(ctx, s, w)
	if err != nil {
		return nil, err
	}
	var notes []string
	if _, detached := w.(workload.Detached); !detached { // its workers use no database connection
		if notes, err = checkLimits(ctx, s, w, spec.Config.Threads, spec.Home); err != nil {
			return nil, err
		}
	}
	if warning != "" {
		notes = append(notes, warning)
	}
	if n, ok := w.(workload.Noter); ok {
		notes = append(notes, n.Notes(spec.Config.Threads)...)
	}
	return notes, nil
}

// announce is what the user reads before the run starts: the monitor's
// limitations and the run's notes.
func announce(mon *Monitor, notes []string) []string {
	var said []string
	for _, l := range mon.announce() {
		said = append(said, "Monitor: "+l)
	}
	for _, n := range notes {
		if !strings.HasPrefix(n, "WARNING:") {
			n = "Note: " + n
		}
		said = append(said, n)
	}
	return said
}

// setStatus says how the run ended.
func setStatus(run *summary.Run, res *runner.Result, s *Session) {
	switch {
	case res.Interrupted:
		run.Status = summary.StatusInterrupted
	case res.Err != nil:
		run.Status = summary.StatusFailed
		run.Error = s.Target.Mask(oneLine(res.Err.Error()))
	case len(res.Outages) > 0:
		run.Status = summary.StatusDegraded
		run.Notes = append(run.Notes, fmt.Sprintf("the target was unreachable for %.1f s of %.1f s: TPS %.2f over the whole period, %.2f over the up-time",
			run.DurationS-run.UptimeS, run.DurationS, run.Throughput.TPS, run.Throughput.UpTPS))
	default:
		run.Status = summary.StatusComplete
	}
}

// record stores one run as it goes. The first store error is kept and
// stops further writes; the run goes on, and the caller keeps it
// elsewhere (Outcome.StoreErr).
type record struct {
	st  Store
	bg  context.Context // not cancelled by Ctrl-C: what was measured is stored
	id  int64
	err error
}

// beginRecord stores run as running.
func beginRecord(bg context.Context, st Store, run *summary.Run) *record {
	rec := &record{st: st, bg: bg}
	id, err := st.BeginRun(bg, run)
	if err != nil {
		rec.err = fmt.Errorf("store run: %w", err)
	}
	rec.id = id
	return rec
}

// keep keeps the first store error.
func (rec *record) keep(err error) {
	if err != nil && rec.err == nil {
		rec.err = fmt.Errorf("store run %d: %w", rec.id, err)
	}
}

// checkpoint replaces the stored figures with the partial result's.
func (rec *record) checkpoint(run *summary.Run, partial *runner.Result, shard bool) {
	if rec.err != nil {
		return
	}
	cp := *run
	partial.Fill(&cp)
	if shard {
		cp.TypeHistograms = partial.TypeHistograms()
	}
	cp.EndedAt = time.Now().UTC()
	rec.keep(rec.st.Checkpoint(rec.bg, rec.id, &cp))
}

// interval adds a measured interval, with the monitor's sample when it is
// the interval's.
func (rec *record) interval(iv runner.Interval, smp *summary.Sample) {
	if rec.err != nil {
		return
	}
	var samples []summary.Sample
	if smp != nil && smp.TS == iv.End.Seconds() {
		samples = []summary.Sample{*smp}
	}
	rec.keep(rec.st.AppendIntervals(rec.bg, rec.id, []summary.Interval{iv.Summary()}, samples))
}

// failed ends a run that could not start: nothing was measured, so the
// running row becomes a failed one.
func (rec *record) failed(run *summary.Run, err error) {
	if rec.err == nil {
		run.Status, run.Error, run.EndedAt = summary.StatusFailed, oneLine(err.Error()), time.Now().UTC()
		rec.keep(rec.st.FinishRun(rec.bg, rec.id, run))
	}
}

// finish stores the final run, or, when it never began, tries once more
// to store it whole.
func (rec *record) finish(run *summary.Run) {
	switch {
	case rec.err == nil:
		rec.keep(rec.st.FinishRun(rec.bg, rec.id, run))
		run.ID = rec.id
	case rec.id == 0:
		if nid, err := rec.st.SaveRun(rec.bg, run); err == nil {
			run.ID, rec.err = nid, nil
		}
	}
}

// serverSide is the server's view of the run: its counters at the start
// of the measured period and, after the run, their change and the
// settings in effect.
type serverSide struct {
	counters *counterProbe
	err      error // why the counters cannot be read
	before   dialect.Counters
}

func newServerSide(s *Session) *serverSide {
	sv := &serverSide{}
	sv.counters, sv.err = newCounterProbe(s)
	if sv.err == nil {
		sv.err = errors.New("measured period never began")
	} else {
		sv.counters = nil
	}
	return sv
}

// begin reads the counters as the measured period begins.
func (sv *serverSide) begin(ctx context.Context) {
	if sv.counters != nil {
		sv.before, sv.err = sv.counters.read(ctx)
	}
}

func (sv *serverSide) close() {
	if sv.counters != nil {
		sv.counters.Close()
	}
}

// read stores the counters' change and the settings in run. An interrupted
// run ends at once: the user asked to stop; so does a stalled one: the
// server does not answer (each read would wait for its time limit).
func (sv *serverSide) read(bg context.Context, s *Session, run *summary.Run, res *runner.Result) {
	stalled := errors.Is(res.Err, runner.ErrStalled)
	if !stalled && sv.err == nil && !res.Interrupted {
		// A server frozen as the run ended (its events cut after the stop
		// grace) would hold each read for counterTimeout.
		pctx, cancel := context.WithTimeout(bg, answerTimeout)
		stalled = sv.counters.db.PingContext(pctx) != nil && pctx.Err() != nil
		cancel()
	}
	if stalled {
		run.Notes = append(run.Notes, "server counters and settings not read: the server stopped answering")
	}
	if sv.err != nil || res.Interrupted || stalled {
		return
	}
	delta, err := sv.counters.delta(bg, sv.before)
	switch {
	case err == nil:
		run.ServerCounters = delta
	case errors.Is(err, errRestarted):
		run.Notes = append(run.Notes, err.Error())
	}
	sctx, cancel := context.WithTimeout(bg, counterTimeout)
	defer cancel()
	if settings, err := s.Dialect.Settings(sctx, sv.counters.db); err == nil {
		run.Settings = settings
	}
	if all, err := monitor.Snapshot(sctx, s.Target, sv.counters.db); err == nil {
		run.SettingsAll = all
	}
}

// newRun is the run's identity and parameters, before it starts.
func newRun(s *Session, spec *Spec) *summary.Run {
	run := &summary.Run{
		Schema:    summary.Schema,
		Status:    summary.StatusRunning,
		StartedAt: time.Now().UTC(),
		Workload:  spec.Workload.Name(),
		Target: summary.Target{
			Flavor: string(s.Target.Flavor), Version: s.Target.Version,
			DSN: s.Target.MaskedDSN(), Sandbox: s.Target.Sandbox,
		},
		Params:  spec.Workload.Params(),
		Threads: spec.Config.Threads,
		Jobs:    spec.Config.Jobs,
		Rate:    spec.Config.Rate,
		Tags:    maps.Clone(spec.Tags),
		Host:    spec.Host,
		Dbarena: spec.Dbarena,
		Plan:    spec.Plan,
		RunKey:  spec.RunKey,
	}
	if spec.Shard != nil {
		sh := *spec.Shard
		run.Shard = &sh
	}
	if run.Tags == nil {
		run.Tags = map[string]string{}
	}
	if s.NoDatabase {
		run.Target.DSN = s.Target.Host
	}
	run.EndedAt = run.StartedAt
	return run
}

// checkReady asks a Readier whether its data is there and complete. Data
// that is missing or half-loaded refuses the run (NotReady, with the
// command that fixes it); tables smaller than the flags say are a warning
// the run carries in its notes, unless the workload refuses them (Refuse:
// bad input, before the run starts and before anything is stored).
func checkReady(ctx context.Context, s *Session, w workload.Workload) (warning string, err error) {
	rd, ok := w.(workload.Readier)
	if !ok {
		return "", nil
	}
	rctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	err = rd.Ready(rctx, s.Env())
	var nr *workload.NotReadyError
	switch {
	case err == nil:
		return "", nil
	case errors.As(err, &nr):
		if nr.Hint != "" {
			nr.Hint += targetFlag(s)
		}
		if nr.Refuse {
			return "", wrap(BadInput, fmt.Errorf("%s: %s", w.Name(), s.Target.Mask(nr.Error())))
		}
		if nr.Short {
			return "WARNING: " + s.Target.Mask(nr.Error()) + "; the figures are for the smaller tables", nil
		}
		return "", wrap(NotReady, fmt.Errorf("%s: %s", w.Name(), s.Target.Mask(nr.Error())))
	case ctx.Err() != nil:
		return "", wrap(Failed, fmt.Errorf("%s: interrupted while checking its tables", w.Name()))
	}
	return "", wrap(Unreachable, fmt.Errorf("%s: check its tables on %s: %s", w.Name(), s.Target.MaskedDSN(), s.Target.Mask(err.Error())))
}

// targetFlag is the --target flag that names s in a suggested command, ""
// for the default sandbox.
func targetFlag(s *Session) string {
	switch s.Target.Sandbox {
	case "default":
		return ""
	case "":
		return " --target " + s.Target.MaskedDSN()
	}
	return " --target sandbox:" + s.Target.Sandbox
}

// setupError classifies an error from a run that could not start.
func setupError(s *Session, w workload.Workload, err error) error {
	msg := fmt.Errorf("run %s: %s", w.Name(), s.Target.Mask(err.Error()))
	if s.NoDatabase {
		return wrap(Failed, msg)
	}
	c := s.Dialect.Classify(err) // Classify looks through the wrapping
	switch {
	case isMissingTable(c.Code):
		return wrap(NotReady, fmt.Errorf("%w; run `dbarena prepare %s` first", msg, w.Name()))
	case errors.Is(err, runner.ErrNotMultiplexed):
		return wrap(BadInput, msg)
	case isServerLimit(c.Code):
		return wrap(BadInput, fmt.Errorf("%w (a server limit: see max_connections and max_prepared_stmt_count, or use fewer --threads)", msg))
	}
	var ce *runner.ConnectError
	if errors.As(err, &ce) {
		return wrap(Unreachable, msg)
	}
	return wrap(Failed, msg)
}

// isMissingTable: MySQL ER_NO_SUCH_TABLE, PostgreSQL undefined_table.
func isMissingTable(code string) bool { return code == "1146" || code == "42P01" }

// isServerLimit: MySQL too many connections (1040, 1203), prepared
// statement limit (1461); PostgreSQL too_many_connections.
func isServerLimit(code string) bool {
	return code == "1040" || code == "1203" || code == "1461" || code == "53300"
}

// oneLine folds s onto one line, as cli and lab do with errors they store
// or print.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// newStallProbe returns the runner's stall probe (runner.Config.Probe): a
// ping on a connection of its own, opened only when a stall is suspected
// (the workers hold the session's pool), and the function that closes it.
func newStallProbe(s *Session) (probe func(context.Context) error, closeProbe func()) {
	var db *sql.DB
	var openErr error
	var once sync.Once
	probe = func(ctx context.Context) error {
		once.Do(func() { db, openErr = s.Dialect.Open(s.Target, dialect.OpenOptions{MaxConns: 1}) })
		if openErr != nil {
			return openErr
		}
		return db.PingContext(ctx)
	}
	closeProbe = func() {
		once.Do(func() {}) // no probe after this
		if db != nil {
			db.Close()
		}
	}
	return probe, closeProbe
}
