// Package runner runs a workload: one worker per connection, closed loop or
// fixed arrival rate, warm-up, report intervals, stop on time, event count
// or interruption, and retries, reconnects and ignored errors by the
// dialect's error classes.
//
// Concurrency: each worker records into its own slot (a mutex taken once per
// event, uncontended but for one swap per interval); a single coordinator
// goroutine swaps the slots' intervals out, merges them, and calls the
// onInterval callback. There is no lock shared by workers on the hot path.
package runner

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbarena/dbarena/internal/hist"
	"github.com/dbarena/dbarena/internal/workload"
)

// Interval is one report interval. Start and End are offsets from the start
// of the measured period: negative for warm-up intervals, the last of which
// ends at 0.
type Interval struct {
	Start, End time.Duration
	// Warmup marks intervals of the warm-up; they are passed to onInterval
	// but are not part of Result.Intervals.
	Warmup bool
	// Threads is the number of workers connected at the end of the interval.
	Threads int
	// Events counts successful events; Queries every statement, including
	// those of failed events.
	Events  int64
	Queries workload.Queries
	// Errors, Retries, Reconnects, Late and Dropped are as in Result.
	Errors, Retries, Reconnects, Late, Dropped int64
	// Latency percentiles of the interval's successful events.
	P50, P95, P99, Max time.Duration
	// PerType holds figures by Event.Type, for workloads that set it.
	PerType map[string]workload.TypeInterval
}

// TypeResult is one transaction type's statistics over the measured period.
type TypeResult struct {
	Count, Errors, Retries int64
	// Late counts successes slower than the type's response-time limit
	// (workload.ResponseLimiter).
	Late    int64
	Latency *hist.Histogram
}

// Result is the outcome of Run. Every figure covers the measured period
// only: warm-up is excluded.
type Result struct {
	// Started and Ended bound the measured period. Ended is when the last
	// worker stopped, so events still running at the stop are included.
	Started, Ended time.Time
	// Elapsed is Ended-Started: the measured time, excluding warm-up.
	Elapsed time.Duration
	// Warmup is the warm-up actually done.
	Warmup time.Duration
	// Events counts successful events; Queries every statement issued,
	// including those of failed and retried attempts.
	Events  int64
	Queries workload.Queries
	// Errors counts failed events: ignored errors, lost connections, and
	// the fatal error that stopped the run, if any.
	Errors int64
	// Retries counts reruns after retryable errors.
	Retries int64
	// Reconnects counts lost connections that were reopened.
	Reconnects int64
	// Late counts rate-mode events started more than 1ms after their
	// intended time; Dropped those that found the queue full and never ran.
	Late, Dropped int64
	// ErrorsByCode counts errors and retries by server error code.
	ErrorsByCode map[string]int64
	// Latency holds the latency of every successful event: from its start
	// (closed loop) or intended start (Rate mode) to its end, retries
	// included.
	Latency *hist.Histogram
	// PerType holds statistics by Event.Type, for workloads that set it.
	PerType map[string]*TypeResult
	// Intervals are the measured report intervals; their counts add up to
	// the totals above (the last one may be short).
	Intervals []Interval
	// Interrupted is set when Run's context was cancelled: a clean stop,
	// and the partial result is valid.
	Interrupted bool
	// Err is the fatal error that stopped the run, if any, as
	// "worker N: error CODE: ..." wrapping the driver's error.
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

// lateAfter is how far behind its intended start a rate-mode event may begin
// before it counts as late.
const lateAfter = time.Millisecond

// connectParallel caps how many connections are opened at once at setup.
const connectParallel = 16

// Run runs w with cfg against env until cfg.Duration or cfg.Events is
// reached, a fatal error occurs, or ctx is cancelled.
//
// Every worker is connected before the clock starts. Run returns an error
// only when the run could not start: an invalid cfg, or a worker that could
// not connect (a *ConnectError) or be set up. Everything that happens once
// the run has started is in the Result: a fatal error ends the run early
// with the partial result and Result.Err; cancelling ctx ends it with
// Result.Interrupted and no error.
//
// onInterval, if not nil, is called on Run's own goroutine (never
// concurrently with itself) after each interval, warm-up ones included, and
// once for the last, partial interval. Workers keep running while it runs,
// so a slow callback delays reporting, not the workload; it should still
// return promptly.
func Run(ctx context.Context, cfg Config, env workload.Env, w workload.Runner, onInterval func(Interval)) (*Result, error) {
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("runner: %w", errors.Join(errs...))
	}
	if env.DB == nil || env.Dialect == nil || w == nil {
		return nil, errors.New("runner: env.DB, env.Dialect and the workload must be set")
	}
	r := newRun(cfg, env, w)
	if r.dialer != nil {
		defer setProcs(cfg.Threads)()
	}
	if err := r.connectAll(ctx); err != nil {
		if ctx.Err() != nil {
			now := time.Now()
			return &Result{Started: now, Ended: now, Interrupted: true, ErrorsByCode: map[string]int64{},
				Latency: hist.New(), PerType: map[string]*TypeResult{}}, nil
		}
		return nil, err
	}
	return r.coordinate(ctx, onInterval), nil
}

// setProcs gives the Go scheduler one P per worker, and one more for the
// coordinator, the pacer and the monitor, while Workers that wait in raw
// system calls run (mysqlwire): such a worker keeps its P while it waits,
// as a C client keeps its thread, so fewer Ps than workers would leave
// some workers without one for a scheduler time slice. It returns a
// function that restores the setting.
func setProcs(threads int) (restore func()) {
	prev := runtime.GOMAXPROCS(0)
	want := threads + 1
	if want <= prev {
		return func() {}
	}
	runtime.GOMAXPROCS(want)
	return func() { runtime.GOMAXPROCS(prev) }
}

// run is the state of one Run, shared by the coordinator, the workers and
// the pacer. Fields set before the workers start are read-only afterwards.
type run struct {
	cfg       Config
	env       workload.Env
	w         workload.Runner
	dialer    workload.Dialer // set when Workers own their connections
	ignore    map[string]bool
	ignoreAll bool
	limits    map[string]time.Duration // response-time limits by event type

	workers []*worker
	pacer   *slot              // rate mode: where drops are counted
	queue   chan time.Duration // rate mode: intended starts, as offsets from t0
	t0      time.Time          // start of the run (warm-up included)

	wctx          context.Context // workers' context: ctx, cancelled at interrupt or after the stop grace
	ectx          context.Context // events' context: wctx, or never cancelled when cfg.Abort is set
	cancelWorkers context.CancelFunc

	measured atomic.Bool   // the measured phase has begun
	stopped  atomic.Bool   // no new event may start
	stopCh   chan struct{} // closed with stopped
	stopOnce sync.Once
	tickets  atomic.Int64 // measured events claimed, in Events mode
	finished atomic.Int64 // measured events succeeded, in Events mode
	active   atomic.Int64 // workers holding a connection

	errMu sync.Mutex
	err   error // first fatal error
}

func newRun(cfg Config, env workload.Env, w workload.Runner) *run {
	r := &run{cfg: cfg, env: env, w: w, stopCh: make(chan struct{})}
	r.ignore, r.ignoreAll = cfg.ignoreSet()
	if d, ok := w.(workload.Dialer); ok && d.OwnsConns(env) {
		r.dialer = d
	}
	if rl, ok := w.(workload.ResponseLimiter); ok {
		r.limits = rl.ResponseLimits()
	}
	if cfg.Rate > 0 {
		r.queue = make(chan time.Duration, cfg.queueSize())
		r.pacer = newSlot(cfg.Warmup == 0)
	}
	return r
}

// slots lists every slot: the workers' and the pacer's.
func (r *run) slots() []*slot {
	s := make([]*slot, 0, len(r.workers)+1)
	for _, wk := range r.workers {
		s = append(s, wk.slot)
	}
	if r.pacer != nil {
		s = append(s, r.pacer)
	}
	return s
}

// stop lets no new event start.
func (r *run) stop() {
	r.stopOnce.Do(func() {
		r.stopped.Store(true)
		close(r.stopCh)
	})
}

// fail records the first fatal error and stops the run.
func (r *run) fail(err error) {
	r.errMu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.errMu.Unlock()
	r.stop()
}

// connectAll opens every worker's connection and Worker, a few at a time.
func (r *run) connectAll(ctx context.Context) error {
	r.wctx, r.cancelWorkers = context.WithCancel(ctx)
	r.ectx = r.wctx
	if r.cfg.Abort != nil {
		r.ectx = context.WithoutCancel(r.wctx)
		context.AfterFunc(r.wctx, r.cfg.Abort)
	}
	r.workers = make([]*worker, r.cfg.Threads)
	errs := make([]error, r.cfg.Threads)
	sem := make(chan struct{}, connectParallel)
	var wg sync.WaitGroup
	for id := range r.workers {
		wk := &worker{id: id, r: r, slot: newSlot(r.cfg.Warmup == 0)}
		r.workers[id] = wk
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if r.wctx.Err() != nil {
				errs[id] = r.wctx.Err()
				return
			}
			if err := wk.open(r.wctx); err != nil {
				errs[id] = err
				r.cancelWorkers() // no point in opening the others
			}
		}()
	}
	wg.Wait()
	var first error
	for _, err := range errs {
		if err != nil && (first == nil || errors.Is(first, context.Canceled)) {
			first = err
		}
	}
	if first != nil {
		for _, wk := range r.workers {
			wk.close(false)
		}
		r.cancelWorkers()
		return first
	}
	r.active.Store(int64(r.cfg.Threads))
	return nil
}

// interval is what the coordinator gathers for one interval.
type interval struct {
	start time.Time
	c     counts
	codes map[string]int64
	lat   *hist.Histogram
	types map[string]*typeInterval
}

func (iv *interval) reset(start time.Time) {
	iv.start = start
	iv.c = counts{}
	clear(iv.codes)
	iv.lat.Reset()
	for _, t := range iv.types {
		t.reset()
	}
}

// collect swaps every slot's interval into iv.
func (r *run) collect(iv *interval, measure bool) {
	for _, s := range r.slots() {
		s.take(&iv.c, iv.codes, iv.lat, iv.types, measure)
	}
}

// report turns iv into an Interval with offsets from origin.
func (r *run) report(iv *interval, end, origin time.Time, warmup bool) Interval {
	var types map[string]workload.TypeInterval
	for name, t := range iv.types {
		if types == nil {
			types = make(map[string]workload.TypeInterval, len(iv.types))
		}
		types[name] = workload.TypeInterval{Count: t.count, Late: t.late, Errors: t.errors, Retries: t.retries,
			P90: t.lat.Quantile(90), Max: t.lat.Max()}
	}
	return Interval{
		PerType: types,
		Start:   iv.start.Sub(origin), End: end.Sub(origin), Warmup: warmup,
		Threads: int(r.active.Load()),
		Events:  iv.c.events, Queries: iv.c.queries,
		Errors: iv.c.errors, Retries: iv.c.retries, Reconnects: iv.c.reconnects,
		Late: iv.c.late, Dropped: iv.c.dropped,
		P50: iv.lat.Quantile(50), P95: iv.lat.Quantile(95), P99: iv.lat.Quantile(99), Max: iv.lat.Max(),
	}
}

// coordinate starts the workers and the pacer, drives the phases and
// intervals, stops the run and gathers the result.
func (r *run) coordinate(ctx context.Context, onInterval func(Interval)) *Result {
	res := &Result{ErrorsByCode: map[string]int64{}, Latency: hist.New(), PerType: map[string]*TypeResult{}}
	emit := func(iv Interval) {
		if onInterval != nil {
			onInterval(iv)
		}
	}
	cfg := r.cfg
	warm := cfg.Warmup > 0
	if !warm && cfg.OnMeasure != nil {
		cfg.OnMeasure()
	}
	r.t0 = time.Now()
	warmEnd := r.t0.Add(cfg.Warmup) // planned; origin of warm-up intervals
	mStart := r.t0                  // actual start of the measured period
	if !warm {
		r.measured.Store(true)
	}

	var wg sync.WaitGroup
	for _, wk := range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wk.loop()
		}()
	}
	workersDone := make(chan struct{})
	go func() {
		wg.Wait()
		close(workersDone)
	}()
	pacerDone := make(chan struct{})
	if r.queue != nil {
		go r.pace(pacerDone)
	} else {
		close(pacerDone)
	}

	iv := &interval{start: r.t0, codes: map[string]int64{}, lat: hist.New(), types: map[string]*typeInterval{}}
	measure := func(end time.Time) { // adds a measured interval to the result
		res.Events += iv.c.events
		res.Queries.Add(iv.c.queries)
		res.Errors += iv.c.errors
		res.Retries += iv.c.retries
		res.Reconnects += iv.c.reconnects
		res.Late += iv.c.late
		res.Dropped += iv.c.dropped
		for k, v := range iv.codes {
			res.ErrorsByCode[k] += v
		}
		res.Latency.Merge(iv.lat)
		if cfg.ReportInterval > 0 {
			rep := r.report(iv, end, mStart, false)
			res.Intervals = append(res.Intervals, rep)
			emit(rep)
		}
	}

	// nextTick is the first interval end after now, counted from origin,
	// or the zero time when there is none before limit.
	nextTick := func(origin, now, limit time.Time) time.Time {
		if cfg.ReportInterval <= 0 {
			return time.Time{}
		}
		k := now.Sub(origin)/cfg.ReportInterval + 1
		t := origin.Add(k * cfg.ReportInterval)
		if !limit.IsZero() && !t.Before(limit) {
			return time.Time{}
		}
		return t
	}
	var endAt, tick time.Time
	var warmSeries []Interval // warm-up intervals, for cfg.WarmupUntil
	if warm {
		tick = nextTick(r.t0, r.t0, warmEnd)
	} else {
		if cfg.Duration > 0 {
			endAt = mStart.Add(cfg.Duration)
		}
		tick = nextTick(mStart, mStart, endAt)
	}

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
loop:
	for {
		now := time.Now()
		switch {
		case warm && !now.Before(warmEnd):
			// End of warm-up: everything so far is discarded.
			if cfg.OnMeasure != nil {
				cfg.OnMeasure()
				now = time.Now()
			}
			mStart = now
			r.collect(iv, true)
			r.measured.Store(true)
			if cfg.ReportInterval > 0 {
				rep := r.report(iv, warmEnd, warmEnd, true)
				if rep.End > rep.Start {
					emit(rep)
				}
			}
			iv.reset(mStart)
			warm = false
			res.Warmup = mStart.Sub(r.t0)
			if cfg.Duration > 0 {
				endAt = mStart.Add(cfg.Duration)
			}
			tick = nextTick(mStart, mStart, endAt)
			continue
		case !warm && !endAt.IsZero() && !now.Before(endAt):
			break loop
		case !tick.IsZero() && !now.Before(tick):
			r.collect(iv, false)
			if warm {
				rep := r.report(iv, tick, warmEnd, true)
				emit(rep)
				iv.reset(tick)
				tick = nextTick(r.t0, now, warmEnd)
				if cfg.WarmupUntil != nil {
					warmSeries = append(warmSeries, rep)
					if cfg.WarmupUntil(warmSeries) {
						// Steady: the warm-up ends at this interval's end.
						warmEnd = now
					}
				}
			} else {
				measure(tick)
				iv.reset(tick)
				tick = nextTick(mStart, now, endAt)
			}
			continue
		}
		next := endAt
		if warm {
			next = warmEnd
		}
		if !tick.IsZero() && (next.IsZero() || tick.Before(next)) {
			next = tick
		}
		if next.IsZero() {
			next = now.Add(time.Hour)
		}
		timer.Reset(next.Sub(now))
		select {
		case <-timer.C:
		case <-ctx.Done():
			res.Interrupted = true
			break loop
		case <-r.stopCh: // a fatal error
			break loop
		case <-workersDone: // Events reached
			break loop
		}
	}

	// Stop: no new events; running ones get the grace period, unless the
	// run was interrupted (then r.wctx is already cancelled).
	r.stop()
	grace := time.AfterFunc(cfg.StopGrace, r.cancelWorkers)
	<-workersDone
	<-pacerDone
	grace.Stop()
	r.cancelWorkers()
	ended := time.Now()
	if ctx.Err() != nil {
		res.Interrupted = true
	}

	if warm { // never got past warm-up
		res.Warmup = ended.Sub(r.t0)
		res.Started, res.Ended = ended, ended
	} else {
		r.collect(iv, false)
		if ended.After(iv.start) || iv.c != (counts{}) {
			measure(ended)
		}
		res.Started, res.Ended, res.Elapsed = mStart, ended, ended.Sub(mStart)
		for _, wk := range r.workers {
			for name, t := range wk.slot.types {
				tr := res.PerType[name]
				if tr == nil {
					tr = &TypeResult{Latency: hist.New()}
					res.PerType[name] = tr
				}
				tr.Count += t.count
				tr.Errors += t.errors
				tr.Retries += t.retries
				tr.Late += t.late
				tr.Latency.Merge(t.lat)
			}
		}
	}
	r.errMu.Lock()
	res.Err = r.err
	r.errMu.Unlock()
	return res
}

// worker is one connection and the workload's Worker on it.
type worker struct {
	id    int
	r     *run
	slot  *slot
	conn  *sql.Conn
	w     workload.Worker
	opens int // connections opened so far, for seeds
}
