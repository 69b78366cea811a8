package runner

import (
	"context"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// coordinator is the state of Run's coordinating goroutine: the phases
// (warm-up, measured period, stop), the intervals and checkpoints it
// closes, and the stall watchdog. Its times are ns since the run's t0.
type coordinator struct {
	r          *run
	cfg        Config
	cb         *callbacks
	onInterval func(Interval)
	col        *collector
	dog        watchdog
	work       TickWork

	warm           bool       // the warm-up is under way
	warmEnd        int64      // when the warm-up ends
	m0             int64      // start of the measured period
	endAt          int64      // planned end of the measured period
	nextCheckpoint int64      // when Config.OnCheckpoint is next due
	measuredIvs    []Interval // the measured period's intervals so far
	warmSeries     []Interval // warm-up intervals, for Config.WarmupUntil
}

// coordinate starts the workers and the pacer, drives the phases and
// intervals, stops the run and gathers the result.
func (r *run) coordinate(ctx context.Context, cb *callbacks, onInterval func(Interval)) *Result {
	c := r.newCoordinator(cb, onInterval)
	workersDone, pacerDone := r.startWorkers()
	interrupted := c.loop(ctx, workersDone)
	return c.finish(ctx, interrupted, workersDone, pacerDone)
}

// newCoordinator sets the clock going and enters the first phase: warm-up,
// or the measured period when there is none.
func (r *run) newCoordinator(cb *callbacks, onInterval func(Interval)) *coordinator {
	cfg := r.cfg
	c := &coordinator{r: r, cfg: cfg, cb: cb, onInterval: onInterval,
		col: newCollector(cfg.ReportInterval, &r.names, r.limits), dog: r.newWatchdog(),
		warm: cfg.Warmup > 0, endAt: math.MaxInt64, nextCheckpoint: math.MaxInt64}
	c.col.encode, c.col.copyLat = cfg.IntervalHistograms, cfg.IntervalLatency
	if !c.warm && cfg.OnMeasure != nil {
		cfg.OnMeasure()
	}
	r.t0 = time.Now()
	c.warmEnd = int64(cfg.Warmup)
	if c.warm {
		c.col.phase(false, 0, c.warmEnd, c.warmEnd)
		return c
	}
	if cfg.Duration > 0 {
		c.endAt = int64(cfg.Duration)
	}
	c.col.phase(true, 0, 0, c.endAt)
	r.measured.Store(true)
	if cfg.OnCheckpoint != nil {
		c.nextCheckpoint = int64(cfg.Checkpoint)
	}
	return c
}

// startWorkers starts every worker (or its poller group) and the pacer;
// the channels close when they have all returned.
func (r *run) startWorkers() (workersDone, pacerDone <-chan struct{}) {
	var wg sync.WaitGroup
	for _, g := range r.groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.Run()
		}()
	}
	for _, wk := range r.workers {
		if wk.waiter != nil {
			continue // its group runs it
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r.lockWorkers {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
			}
			wk.loop()
		}()
	}
	wd := make(chan struct{})
	if r.holdSpare {
		go holdSpare(wd)
	}
	go func() {
		wg.Wait()
		close(wd)
	}()
	pd := make(chan struct{})
	if r.queue != nil {
		go r.pace(pd)
	} else {
		close(pd)
	}
	return wd, pd
}

// loop ticks until the run stops: it collects the workers' records,
// watches for a stall, moves from warm-up to the measured period, ends it
// on time and makes the checkpoints. It reports whether ctx interrupted
// the run.
func (c *coordinator) loop(ctx context.Context, workersDone <-chan struct{}) (interrupted bool) {
	r := c.r
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := r.since()
		stalled := c.dog.check(now, c.collect(now))
		switch {
		case r.stopped.Load():
			return false
		case stalled > 0:
			r.stall(stalled)
			return false
		case c.warm && now >= c.warmEnd:
			c.endWarmup()
			continue
		case !c.warm && now >= c.endAt:
			r.stop(c.endAt)
			return false
		case now >= c.nextCheckpoint:
			c.checkpoint(now)
			c.nextCheckpoint = now + int64(c.cfg.Checkpoint)
		}
		timer.Reset(time.Duration(max(c.nextWake(now)-r.since(), 0)))
		select {
		case <-timer.C:
		case <-ctx.Done():
			r.stop(r.since())
			return true
		case <-r.stopCh: // a fatal error, or the last event
			return false
		case <-workersDone: // every worker gave up
			r.stop(r.since())
			return false
		}
	}
}

// slack is how long after its end an interval is closed.
func (c *coordinator) slack() int64 {
	return min(closeSlack, time.Duration(c.col.ri)/4).Nanoseconds()
}

// nextWake is when the loop must tick next.
func (c *coordinator) nextWake(now int64) int64 {
	next := min(now+int64(drainEvery), c.col.nextEnd()+c.slack(), c.nextCheckpoint, c.endAt)
	if c.warm {
		next = min(next, c.warmEnd)
	}
	return next
}

// collect drains the workers' records and closes the intervals that ended;
// in a warm-up that ends at steady state (Config.WarmupUntil), the first
// steady interval ends it. It reports whether the workers made records.
func (c *coordinator) collect(now int64) (progressed bool) {
	r := c.r
	// The tick keeps its thread, so that its work is measured in the
	// thread's own CPU time: on a saturated machine the wall time of a
	// tick is mostly waiting for a core. Between ticks the coordinator is
	// free to run on any thread: locked to one, each wake-up would hand
	// its P to that thread (a futex and a context switch).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tickStart := threadCPU()
	progressed = r.drain(c.col, false) > 0
	upTo := now - c.slack()
	if r.stopped.Load() {
		upTo = min(upTo, r.stopAt.Load()-1)
	}
	steady := false
	c.col.closeUpTo(upTo, func(iv Interval) {
		iv.Threads = int(r.active.Load())
		c.emit(iv)
		if c.warm && c.cfg.WarmupUntil != nil && !steady {
			c.warmSeries = append(c.warmSeries, iv)
			if c.cfg.WarmupUntil(c.warmSeries) {
				// Steady: the warm-up ends at this interval's end.
				steady = true
				c.warmEnd += int64(iv.End) // iv.End is an offset from the planned end
				c.col.setLimit(c.warmEnd)
			}
		}
	})
	c.work.add(threadCPU() - tickStart)
	return progressed
}

// emit passes a closed interval on, and keeps it when it is measured.
func (c *coordinator) emit(iv Interval) {
	iv.Threads = int(c.r.active.Load())
	if !iv.Warmup {
		c.measuredIvs = append(c.measuredIvs, iv)
	}
	if c.onInterval != nil {
		c.cb.post(func() { c.onInterval(iv) })
	}
}

// endWarmup discards everything so far and starts the measured period.
func (c *coordinator) endWarmup() {
	r, cfg := c.r, c.cfg
	c.col.closeAll(c.emit)
	if cfg.OnMeasure != nil {
		cfg.OnMeasure()
	}
	c.m0 = r.since()
	if cfg.Duration > 0 {
		c.endAt = c.m0 + int64(cfg.Duration)
	}
	c.col.phase(true, c.m0, c.m0, c.endAt)
	r.measured.Store(true)
	c.warm = false
	if cfg.OnCheckpoint != nil {
		c.nextCheckpoint = c.m0 + int64(cfg.Checkpoint)
	}
}

// checkpoint passes the measured period so far to Config.OnCheckpoint.
func (c *coordinator) checkpoint(now int64) {
	r := c.r
	p := &Result{Started: r.t0.Add(time.Duration(c.m0)), Ended: r.t0.Add(time.Duration(now)),
		Elapsed: time.Duration(now - c.m0), Warmup: time.Duration(c.m0), Sched: r.sched, SchedErr: r.schedErr}
	c.col.fill(p, true)
	p.Intervals = slices.Clone(c.measuredIvs)
	p.Outages = r.outagesIn(c.m0, now)
	p.Uptime = uptime(p.Elapsed, p.Outages)
	c.cb.post(func() { c.cfg.OnCheckpoint(p) })
}

// finish stops the run and gathers its result. Running events get the stop
// grace, unless the run was interrupted (then r.wctx is already
// cancelled). Workers that do not return once cancelled are abandoned:
// their buffers are closed and their events counted as unfinished.
func (c *coordinator) finish(ctx context.Context, interrupted bool, workersDone, pacerDone <-chan struct{}) *Result {
	r := c.r
	stopAt := r.stopAt.Load()
	if !c.warm {
		stopAt = c.col.setStop(stopAt)
	}
	if ctx.Err() != nil {
		interrupted = true
		r.cancelWorkers()
	}
	r.waitWorkers(ctx, c.col, workersDone, pacerDone)
	r.cancelWorkers()
	r.drain(c.col, true)
	if ctx.Err() != nil {
		interrupted = true
	}

	res := &Result{Interrupted: interrupted, Sched: r.sched, SchedErr: r.schedErr}
	if c.warm { // never got past warm-up
		ended := time.Now()
		res.Warmup = ended.Sub(r.t0)
		res.Started, res.Ended = ended, ended
		c.col.fill(res, false)
	} else {
		c.col.closeAll(c.emit)
		res.Started, res.Ended = r.t0.Add(time.Duration(c.m0)), r.t0.Add(time.Duration(stopAt))
		res.Elapsed, res.Warmup = time.Duration(stopAt-c.m0), time.Duration(c.m0)
		c.col.fill(res, false)
		res.Intervals = c.measuredIvs
		res.Outages = r.outagesIn(c.m0, stopAt)
		res.Uptime = uptime(res.Elapsed, res.Outages)
	}
	res.TickWork = c.work
	r.errMu.Lock()
	res.Err = r.err
	r.errMu.Unlock()
	return res
}

// waitWorkers waits for the workers and the pacer after the stop, draining
// meanwhile: up to the stop grace (none when interrupted), then up to
// abandonAfter once they were cancelled.
func (r *run) waitWorkers(ctx context.Context, col *collector, workersDone, pacerDone <-chan struct{}) {
	done := make(chan struct{})
	go func() {
		<-workersDone
		<-pacerDone
		close(done)
	}()
	grace := time.NewTimer(r.cfg.StopGrace)
	defer grace.Stop()
	var abandon <-chan time.Time
	cancel := func() {
		if abandon == nil {
			r.cancelWorkers()
			abandon = time.After(abandonAfter)
		}
	}
	if r.wctx.Err() != nil {
		cancel()
	}
	tick := time.NewTicker(drainEvery)
	defer tick.Stop()
	ctxDone := ctx.Done()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			r.drain(col, false)
		case <-grace.C:
			cancel()
		case <-ctxDone:
			ctxDone = nil
			cancel()
		case <-abandon:
			return
		}
	}
}

// TickWork sums the coordinator's work per tick: the CPU time each drain
// and interval close took on its thread, not counting the callbacks (they
// run apart) nor time spent waiting for a core.
type TickWork struct {
	Ticks      int64
	Total, Max time.Duration
}

func (t *TickWork) add(d time.Duration) {
	t.Ticks++
	t.Total += d
	t.Max = max(t.Max, d)
}

// Mean is the average work per tick.
func (t TickWork) Mean() time.Duration {
	if t.Ticks == 0 {
		return 0
	}
	return t.Total / time.Duration(t.Ticks)
}

// threadCPU is the CPU time the calling thread has used.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
