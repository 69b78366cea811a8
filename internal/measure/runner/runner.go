// Package runner runs a workload: one worker per connection, closed loop or
// fixed arrival rate, warm-up, report intervals, stop on time, event count
// or interruption, retries, reconnects (with a deadline, and the outages
// they reveal) and ignored errors by the dialect's error classes.
//
// Concurrency: each worker appends a small fixed record per event to its
// own buffer (a mutex taken once per event, contended only by the
// coordinator's swap). A single coordinator goroutine drains every buffer
// on its own timer (drainEvery) and at each interval end, and counts each
// record in the interval its end time falls in and in the run's histograms
// (full precision, total and per type), so memory is O(types), not
// O(workers x histogram). Intervals and checkpoints go to a second
// goroutine that calls the callbacks in order, so a slow callback never
// delays collection. There is no lock shared by workers on the hot path.
package runner

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/measure/cpusched"
	"github.com/dbarena/dbarena/internal/measure/hist"
	"github.com/dbarena/dbarena/internal/wire/poller"
	"github.com/dbarena/dbarena/internal/wire/rawsock"
	"github.com/dbarena/dbarena/internal/workload"
)

// Interval is one report interval. Start and End are offsets from the start
// of the measured period: negative for warm-up intervals, the last of which
// ends at 0. It counts what completed in [Start, End) by its end time, plus
// what was reported too late for the interval before.
type Interval struct {
	Start, End time.Duration
	// Warmup marks intervals of the warm-up; they are passed to onInterval
	// but are not part of Result.Intervals.
	Warmup bool
	// Threads is the number of workers connected when the interval was
	// closed.
	Threads int
	// Events counts successful events; Queries every statement, including
	// those of failed events.
	Events  int64
	Queries workload.Queries
	// Errors, Retries, Reconnects, Late and Dropped are as in Result.
	Errors, Retries, Reconnects, Late, Dropped int64
	// Connects and ConnectErrors are as in Result: with them, the
	// interval's connect success rate.
	Connects, ConnectErrors int64
	// Latency percentiles of the interval's successful events (1%
	// precision).
	P50, P95, P99, Max time.Duration
	// PerType holds figures by Event.Type, for workloads that set it.
	PerType map[string]workload.TypeInterval
	// Histogram is the interval's latency histogram (1% precision),
	// encoded as hist.Encode does, with Config.IntervalHistograms; the
	// shards of a run merge their intervals' percentiles with it.
	Histogram string
	// TypeHistograms are the interval's per-type latency histograms of
	// successful events (1% precision), encoded likewise, with
	// Config.IntervalHistograms; the shards merge per-type p90 and max.
	TypeHistograms map[string]string
	// Latency is a copy of the interval's latency histogram of successful
	// events (1% precision), with Config.IntervalLatency; nil otherwise.
	Latency *hist.Histogram
	// ErrorsByCode counts the interval's errors and retries by server
	// error code, as Result.ErrorsByCode; nil when there were none.
	ErrorsByCode map[string]int64
}

// TypeResult is one transaction type's statistics over the measured period.
type TypeResult struct {
	Count, Errors, Retries int64
	// Late counts successes slower than the type's response-time limit
	// (workload.ResponseLimiter).
	Late    int64
	Latency *hist.Histogram
}

// Outage is a window of the measured period during which the target could
// not be reached, as offsets from its start. It starts when a worker loses
// its connection and its first reconnect attempt fails, and ends when any
// reconnect succeeds; Recovered is false when none did before the end.
type Outage struct {
	Start, End time.Duration
	Recovered  bool
}

// ErrUnreachable is wrapped by Result.Err when a worker could not reconnect
// within Config.ReconnectTimeout.
var ErrUnreachable = errors.New("target unreachable")

// ErrStalled is wrapped by Result.Err when the run was ended by
// Config.StallTimeout: events were running and none ended for that long.
var ErrStalled = errors.New("server stopped answering")

// Result is the outcome of Run. Every figure covers the measured period
// only: warm-up is excluded.
type Result struct {
	// Started and Ended bound the measured period. Ended is when the run
	// stopped (time up, last event, fatal error, interrupt), not when the
	// last worker returned: events still running then are Unfinished.
	Started, Ended time.Time
	// Elapsed is Ended-Started: the measured time, excluding warm-up and
	// the stop.
	Elapsed time.Duration
	// Warmup is the warm-up actually done.
	Warmup time.Duration
	// Events counts events that succeeded within the measured period;
	// Queries every statement of the events counted (successful or
	// failed), retried attempts included.
	Events  int64
	Queries workload.Queries
	// Errors counts failed events: ignored errors, lost connections, and
	// the fatal error that stopped the run, if any.
	Errors int64
	// Retries counts reruns after retryable errors.
	Retries int64
	// Reconnects counts connections made again after one was lost.
	Reconnects int64
	// Sched is the scheduling policy dbarena's threads ran under (see
	// Config.Sched): the one asked for, or the one the process was
	// started under (chrt), or normal when batch was refused.
	Sched string
	// SchedErr says why the policy asked for could not be set, if so.
	SchedErr error
	// Placement is PlacementFollow when the workers' threads followed
	// their server processes (Config.Placement), with the moves they
	// made; empty when the kernel placed them.
	Placement string
	Moves     int64
	// Connects counts the new connections Config.Connect made (not the
	// first of each worker); ConnectErrors the attempts refused (too many
	// connections, refused, timed out), which are also in ErrorsByCode
	// but not in Errors, and are retried.
	Connects, ConnectErrors int64
	// Connect holds the time of each of Connects: connect, authentication
	// and the Worker's set-up. It is never part of Latency.
	Connect *hist.Histogram
	// Late counts rate-mode events started more than 1ms after their
	// intended time; Dropped those that found the queue full and never ran.
	Late, Dropped int64
	// Unfinished counts events still in flight at the stop: those that
	// ended after it, were cut short, or never returned. Their latency so
	// far is in Latency; they are not in Events or Errors.
	Unfinished int64
	// ErrorsByCode counts errors and retries by server error code.
	ErrorsByCode map[string]int64
	// Latency holds the latency of every successful event, from its start
	// (closed loop) or intended start (Rate mode) to its end, retries
	// included, and of every unfinished event up to when it ended or was
	// given up. Full precision (hist.SignificantDigits).
	Latency *hist.Histogram
	// PerType holds statistics by Event.Type, for workloads that set it.
	PerType map[string]*TypeResult
	// Intervals are the measured report intervals; their counts add up to
	// the totals above (the last one may be short).
	Intervals []Interval
	// Outages are the windows when the target could not be reached.
	Outages []Outage
	// Uptime is Elapsed minus the outages.
	Uptime time.Duration
	// TickWork is the coordinator's own work per tick (draining the
	// workers' records into intervals and histograms), warm-up included.
	TickWork TickWork
	// Interrupted is set when Run's context was cancelled: a clean stop,
	// and the partial result is valid.
	Interrupted bool
	// Err is the first fatal error not caused by the runner's own stop, if
	// any, as "worker N: error CODE: ..." wrapping the driver's error, or
	// wrapping ErrUnreachable.
	Err error
}

// ConnectError reports that a worker could not get its connection when the
// run was set up (the target is unreachable or refuses dbarena): Run's
// caller tells it apart from other setup errors with errors.As.
type ConnectError struct {
	Worker int
	Err    error
}

// Error implements error.
func (e *ConnectError) Error() string {
	return fmt.Sprintf("worker %d: connect: %v", e.Worker, e.Err)
}

// Unwrap returns the driver's error.
func (e *ConnectError) Unwrap() error { return e.Err }

const (
	// lateAfter is how far behind its intended start a rate-mode event may
	// begin before it counts as late.
	lateAfter = time.Millisecond
	// connectParallel caps how many connections are opened at once at setup.
	connectParallel = 16
	// drainEvery is the longest time between two drains of the workers'
	// buffers.
	drainEvery = 50 * time.Millisecond
	// closeSlack is how long after its end an interval is closed, at most,
	// so that records made just before the end are in it.
	closeSlack = 5 * time.Millisecond
	// abandonAfter is how long workers may take to return once they were
	// cancelled (interrupt, stop grace expired) before Run gives up on them.
	abandonAfter = 500 * time.Millisecond
)

// Run runs w with cfg against env until cfg.Duration or cfg.Events is
// reached, a fatal error occurs, or ctx is cancelled.
//
// Every worker is connected before the clock starts. Run returns an error
// only when the run could not start: an invalid cfg, or a worker that could
// not connect (a *ConnectError) or be set up. Everything that happens once
// the run has started is in the Result: a fatal error ends the run early
// with the partial result and Result.Err; cancelling ctx ends it with
// Result.Interrupted and no error, within about a second even when workers
// are stuck (Run calls cfg.Abort, then abandons them).
//
// onInterval, if not nil, is called after each interval, warm-up ones
// included, and once for the last, partial interval, on a goroutine of its
// own (never concurrently with itself, in order, interleaved with
// cfg.OnCheckpoint). A slow callback delays neither the workload nor the
// collection. Run returns after the last callback has returned.
func Run(ctx context.Context, cfg Config, env workload.Env, w workload.Runner, onInterval func(Interval)) (*Result, error) {
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("runner: %w", errors.Join(errs...))
	}
	_, detached := w.(workload.Detached)
	if w == nil || (!detached && (env.DB == nil || env.Dialect == nil)) {
		return nil, errors.New("runner: env.DB, env.Dialect and the workload must be set")
	}
	defer setGC()()
	r := newRun(cfg, env, w)
	// Workers that own their connections wait in raw system calls (the
	// lean clients), each keeping its P, or share poller groups (--jobs).
	_, sched := w.(workload.Scheduler)
	rawWaits := r.dialer != nil && r.detached == nil && !sched
	if cfg.Jobs > 0 && !rawWaits {
		return nil, fmt.Errorf("runner: --jobs: %w", ErrNotMultiplexed)
	}
	if rawWaits {
		defer setProcs(min(cfg.Threads, cmp.Or(cfg.Jobs, cfg.Threads)))()
	}
	var restoreSched func()
	r.sched, restoreSched, r.schedErr = cpusched.Apply(cfg.schedPolicy(env.Target.Flavor, rawWaits, sched))
	defer restoreSched()
	// Workers on threads of their own (no --jobs) in an unpaced run (the
	// pacer must wake on time) are placed one of two ways, by their
	// number per core.
	ownThreads := rawWaits && cfg.Jobs == 0 && r.queue == nil
	many := cfg.Threads >= holdSpareFrom*runtime.NumCPU()
	// Many: the spare P is held, only where it was measured to help:
	// under the batch policy (under the normal one it doubled MariaDB's
	// system time per query).
	r.holdSpare = ownThreads && many && r.sched == cpusched.Batch && runtime.GOMAXPROCS(0) == cfg.Threads+1
	// Fewer, each worker keeps its own OS thread. A worker goroutine
	// that sysmon preempts otherwise often resumes on another thread, and
	// a thread that serves one connection, then another, is one the
	// kernel cannot keep beside its server process: the server's replies
	// then wake it on the other core (an inter-processor interrupt, and
	// the cores idle between). sysbench's threads, one per connection,
	// sat each beside its backend. Locked, at 4 threads on 2 cores,
	// oltp_point_select's QPS rose 14-49% and its system time per query
	// fell 18-42% on MariaDB and PostgreSQL; from 16 threads the thread
	// hand-off that each preemption of a locked goroutine costs lost
	// more than that (docs/benchmarks.md, "One thread per worker").
	// Either way, each worker's thread also follows its server process
	// (--placement, below).
	r.lockWorkers = ownThreads && !many && cfg.Connect == 0
	if cfg.Jobs > 0 {
		if err := r.makeGroups(); err != nil {
			return nil, fmt.Errorf("runner: --jobs: %w", err)
		}
	}
	if err := r.connectAll(ctx); err != nil {
		r.closeGroups()
		if ctx.Err() != nil {
			now := time.Now()
			return &Result{Started: now, Ended: now, Interrupted: true, ErrorsByCode: map[string]int64{},
				Latency: hist.New(), Connect: hist.New(), PerType: map[string]*TypeResult{}}, nil
		}
		return nil, err
	}
	if err := r.checkGroups(); err != nil {
		r.release()
		return nil, fmt.Errorf("runner: --jobs: %w", err)
	}
	if cfg.Barrier != nil {
		if err := cfg.Barrier(ctx); err != nil {
			r.release()
			return nil, err
		}
	}
	var stopFollowing func() int64
	if ownThreads && cfg.Placement != PlacementKernel {
		var err error
		if stopFollowing, err = rawsock.Follow(); err != nil {
			r.release()
			return nil, fmt.Errorf("runner: --placement follow: %w", err)
		}
	}
	cb := startCallbacks()
	res := r.coordinate(ctx, cb, onInterval)
	cb.close()
	if stopFollowing != nil {
		res.Placement, res.Moves = PlacementFollow, stopFollowing()
	}
	return res, nil
}

// maxProcs caps the Ps setProcs gives: each P keeps its own allocation
// caches (~150 KB each once used), so 2049 Ps cost ~330 MB of client memory
// at 2048 threads. Past the cap, workers share Ps: one whose reply came
// waits for a P at most until the scheduler preempts another (10 ms),
// small beside the server's own queueing at such thread counts.
const maxProcs = 256

// setProcs gives the Go scheduler one P per worker, and one more for the
// coordinator, the pacer and the monitor, while Workers that wait in raw
// system calls run (mysqlwire, pgwire): such a worker keeps its P while it
// waits, as a C client keeps its thread, so fewer Ps than workers would
// leave some workers without one for a scheduler time slice. While the
// workers run, holdSpare keeps the spare P busy between its turns (an idle
// P makes each preempted worker wake another thread); without it the
// coordinator and the monitor wait for a worker to yield (up to a rawsock
// wait slice, longer for a netpoller wake-up): the server counters read at
// the start and end of measuring then drift from the measured window (3.4%
// more Questions than measured queries in a 2-thread run). Ps are capped
// at maxProcs. It returns a function that restores the setting.
func setProcs(threads int) (restore func()) {
	prev := runtime.GOMAXPROCS(0)
	want := min(threads+1, max(maxProcs, prev))
	if want <= prev {
		return func() {}
	}
	runtime.GOMAXPROCS(want)
	return func() { runtime.GOMAXPROCS(prev) }
}

// gcPercent is the garbage collector's target during a run, unless the
// environment sets GOGC. The lean clients' hot path allocates nothing, so
// collections come from setting workers up (buffers, statements, stacks)
// and from the coordinator's ticks, and with a P per worker each costs
// more (a quarter of the Ps mark). At 400 they come 4 times less often
// than at Go's 100, for a heap up to 5 times the live one instead of 2
// (a few MB at 64 threads): a 64-thread oltp_read_write run of one event
// on PostgreSQL took 0.16 s of client CPU at 100, 0.095 s at 400.
const gcPercent = 400

// setGC sets gcPercent and returns a function that restores the setting.
func setGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	prev := debug.SetGCPercent(gcPercent)
	return func() { debug.SetGCPercent(prev) }
}

// run is the state of one Run, shared by the coordinator, the workers and
// the pacer. Fields set before the workers start are read-only afterwards.
type run struct {
	cfg       Config
	env       workload.Env
	w         workload.Runner
	dialer    workload.Dialer   // set when Workers own their connections
	detached  workload.Detached // set when Workers use no database connection
	ignore    map[string]bool
	ignoreAll bool
	limits    map[string]time.Duration // response-time limits by event type
	names     names                    // event types and error codes

	workers     []*worker
	groups      []*poller.Group    // --jobs: the threads the workers share
	sched       string             // the scheduling policy in effect (Result.Sched)
	holdSpare   bool               // the workers' spare P is held while they run (holdSpare)
	lockWorkers bool               // each worker keeps one OS thread (see Run)
	schedErr    error              // why the policy asked for was refused
	outboxes    []*outbox          // the workers' records
	pacer       *slot              // rate mode: where drops are recorded
	queue       chan time.Duration // rate mode: intended starts, as offsets from t0
	t0          time.Time          // start of the run (warm-up included)

	wctx          context.Context // workers' context: ctx, cancelled at interrupt or after the stop grace
	ectx          context.Context // events' context: wctx, or never cancelled when cfg.Abort is set
	cancelWorkers context.CancelFunc

	measured atomic.Bool   // the measured phase has begun
	stopped  atomic.Bool   // no new event may start
	stopAt   atomic.Int64  // when the run stopped, ns since t0 (set before stopped)
	stopCh   chan struct{} // closed with stopped
	stopOnce sync.Once
	tickets  atomic.Int64 // measured events claimed, in Events mode
	finished atomic.Int64 // measured events succeeded, in Events mode
	active   atomic.Int64 // workers holding a connection

	errMu sync.Mutex
	err   error // first fatal error

	outMu   sync.Mutex
	outages []outage // closed ones, in order
	outOpen bool
	outFrom int64 // start of the open outage, ns since t0
}

func newRun(cfg Config, env workload.Env, w workload.Runner) *run {
	r := &run{cfg: cfg, env: env, w: w, stopCh: make(chan struct{})}
	r.ignore, r.ignoreAll = cfg.ignoreSet()
	if d, ok := w.(workload.Dialer); ok && d.OwnsConns(env) {
		r.dialer = d
	}
	if d, ok := w.(workload.Detached); ok {
		r.dialer, r.detached = d, d
	}
	if rl, ok := w.(workload.ResponseLimiter); ok {
		r.limits = rl.ResponseLimits()
	}
	if cfg.Rate > 0 {
		r.queue = make(chan time.Duration, cfg.queueSize())
		r.pacer = &slot{}
		r.pacer.join(&outbox{})
	}
	return r
}

// classify classifies a Worker's error: by the workload when it is
// Detached, else by the target's dialect.
func (r *run) classify(err error) flavor.Class {
	if r.detached != nil {
		return r.detached.Classify(err)
	}
	return r.env.Dialect.Classify(err)
}

// since is now in ns since t0.
func (r *run) since() int64 { return int64(time.Since(r.t0)) }

// stop lets no new event start; the measured period ends at, ns since t0,
// unless the run had stopped before.
func (r *run) stop(at int64) {
	r.stopOnce.Do(func() {
		r.stopAt.Store(at)
		r.stopped.Store(true)
		close(r.stopCh)
	})
}

// fail records the first fatal error and stops the run. An error that
// comes once the runner cancelled the workers is its own doing and is
// ignored.
func (r *run) fail(err error) {
	r.errMu.Lock()
	if r.err == nil && r.wctx.Err() == nil {
		r.err = err
	}
	r.errMu.Unlock()
	r.stop(r.since() + 1) // after the failed event's record
}

// connectAll opens every worker's connection and Worker, a few at a time.
// The error returned is the first that happened; those that follow the
// runner's own abort of the others are not. Once the context is cancelled
// or a worker failed, workers still connecting get abandonAfter to return;
// those that do not are abandoned and close what they open themselves.
func (r *run) connectAll(ctx context.Context) error {
	r.wctx, r.cancelWorkers = context.WithCancel(ctx)
	r.ectx = r.wctx
	if r.cfg.Abort != nil {
		r.ectx = context.WithoutCancel(r.wctx)
		context.AfterFunc(r.wctx, r.cfg.Abort)
	}
	// Workers that wait for time alone (a script's \sleep) wake at the stop.
	r.ectx = workload.WithStop(r.ectx, r.stopCh)
	r.workers = make([]*worker, r.cfg.Threads)
	var mu sync.Mutex // guards first, returned and abandoned
	var first error
	returned := make([]bool, r.cfg.Threads)
	abandoned := false
	sem := make(chan struct{}, connectParallel)
	var wg sync.WaitGroup
	groupOut := make([]*outbox, len(r.groups))
	for id := range r.workers {
		wk := r.newWorker(r.cfg.FirstWorker + id)
		r.workers[id] = wk
		wk.ectx = r.ectx
		if r.groups != nil {
			g := id % len(r.groups)
			wk.waiter = r.groups[g].Add(wk.loop)
			wk.ectx = rawsock.WithWaiter(r.ectx, wk.waiter) // poller.Sleep yields through it
			if groupOut[g] == nil {
				groupOut[g] = r.newOutbox()
			}
			wk.join(groupOut[g])
		} else {
			wk.join(r.newOutbox())
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			var err error
			if r.wctx.Err() == nil {
				err = wk.open(r.wctx)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil && r.wctx.Err() == nil {
				first = err
			}
			if err != nil {
				r.cancelWorkers() // no point in opening the others
			}
			if abandoned {
				wk.close(false)
			}
			returned[id] = true
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-r.wctx.Done():
		t := time.NewTimer(abandonAfter)
		select {
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
	mu.Lock()
	defer mu.Unlock()
	if first == nil && r.wctx.Err() != nil {
		first = r.wctx.Err()
	}
	if first != nil {
		abandoned = true
		for id, wk := range r.workers {
			if returned[id] {
				wk.close(false)
			}
		}
		r.cancelWorkers()
		return first
	}
	r.active.Store(int64(r.cfg.Threads))
	return nil
}

// drain counts every record the workers and the pacer made so far, and
// returns how many the workers made (the pacer's drops are no sign of
// life from the server). With final, the buffers are closed and the
// events still running are counted as unfinished, with their latency up
// to now.
func (r *run) drain(col *collector, final bool) (n int) {
	now := r.since()
	one := func(ob *outbox) {
		recs, run := ob.take(final)
		if ob != r.pacerOut() {
			n += len(recs)
		}
		for i := range recs {
			col.add(&recs[i])
		}
		for _, e := range run {
			if e.measured {
				col.add(&record{end: now, lat: now - e.start, kind: kAborted, flags: fMeasured})
			}
		}
	}
	for _, ob := range r.outboxes {
		one(ob)
	}
	if r.pacer != nil {
		one(r.pacer.out)
	}
	return n
}

// pacerOut is the pacer's outbox, or nil.
func (r *run) pacerOut() *outbox {
	if r.pacer == nil {
		return nil
	}
	return r.pacer.out
}

// newWorker returns worker id of r, not yet in an outbox.
func (r *run) newWorker(id int) *worker {
	return &worker{id: id, r: r, ids: map[string]uint16{}}
}

// newOutbox adds an outbox to the run's.
func (r *run) newOutbox() *outbox {
	ob := &outbox{}
	r.outboxes = append(r.outboxes, ob)
	return ob
}

// worker is one connection and the workload's Worker on it.
type worker struct {
	id    int
	r     *run
	slot  // its place in its outbox
	conn  *sql.Conn
	w     workload.Worker
	opens int               // connections opened so far, for seeds
	used  int               // events started on the current connection
	ids   map[string]uint16 // cache of r.names
	// lastName and lastID: the last string interned, and its id.
	lastName string
	lastID   uint16
	// waiter is the worker's place in its poller group (--jobs), through
	// which its connections wait; nil when it has a thread of its own.
	waiter *poller.Member
	// ectx is the context of its events: the run's (r.ectx), carrying
	// waiter when it has one.
	ectx context.Context
	cur  current // the event under way
	// steps is w when the worker steps it (step.go), with its step
	// function and the error that ended the last steps.
	steps   workload.Stepper
	stepFn  func() bool
	stepErr error
}
