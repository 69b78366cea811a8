package runner

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/wire/rawsock"
	"github.com/dbarena/dbarena/internal/workload"
)

// Reconnect back-off: the first wait and the longest.
const (
	backoffMin = 50 * time.Millisecond
	backoffMax = 2 * time.Second
)

// open gives wk a new connection and Worker. Its seed is Seed+id for the
// first, then Seed+id+k*Threads after the k-th reconnect, so no two Workers
// of a run share a seed.
func (wk *worker) open(ctx context.Context) error {
	r := wk.r
	seed := r.cfg.Seed + int64(wk.id) + int64(wk.opens)*int64(r.cfg.Threads)
	var conn *sql.Conn // nil when the Worker owns its connection
	var w workload.Worker
	var err error
	if wk.waiter != nil {
		ctx = rawsock.WithWaiter(ctx, wk.waiter)
	}
	if r.dialer != nil {
		w, err = r.dialer.DialWorker(ctx, r.env, wk.id, seed)
	} else {
		if conn, err = r.env.DB.Conn(ctx); err != nil {
			return &ConnectError{Worker: wk.id, Err: err}
		}
		if w, err = r.w.NewWorker(ctx, r.env, conn, wk.id, seed); err != nil {
			conn.Close()
		}
	}
	if err != nil {
		if r.classify(err).Kind == flavor.ConnLost {
			return &ConnectError{Worker: wk.id, Err: err}
		}
		return fmt.Errorf("worker %d: set up: %w", wk.id, err)
	}
	wk.conn, wk.w, wk.steps = conn, w, wk.stepperOf(w)
	wk.opens++
	wk.used = 0
	return nil
}

// close releases the Worker and the connection; with discard, the
// connection is closed rather than returned to the pool. A Worker that
// owns its connection closes it itself.
func (wk *worker) close(discard bool) {
	if wk.w != nil {
		wk.w.Close()
		wk.w, wk.steps = nil, nil
	}
	if wk.conn != nil {
		if discard {
			// database/sql closes a connection whose Raw callback reports
			// it bad, instead of pooling it.
			_ = wk.conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		wk.conn.Close()
		wk.conn = nil
	}
}

// outcome is how an event ended.
type outcome int

const (
	succeeded outcome = iota
	failed            // counted as an error; the worker goes on
	connLost          // counted as an error; the worker reconnects
	fatal             // counted as an error; the run stops
	aborted           // cut short by the stop: counted as unfinished
	done              // the Worker has no more events (workload.ErrDone): not counted
	noEvent           // no event began (a stepping worker's next found the run over)
)

// intern interns s (an event type or an error code) through the worker's cache.
func (wk *worker) intern(s string) uint16 {
	if s == "" {
		return 0
	}
	// Most workloads repeat one type: the last one saves hashing it
	// (3.4% of a select-only script run's client CPU).
	if s == wk.lastName {
		return wk.lastID
	}
	i, ok := wk.ids[s]
	if !ok {
		i = wk.r.names.id(s)
		wk.ids[s] = i
	}
	wk.lastName, wk.lastID = s, i
	return i
}

// current is the event a worker runs.
type current struct {
	start  int64 // ns since t0: when it started, or was due
	flags  uint8 // of its record
	ticket bool  // it holds one of the Events tickets
	ev     workload.Event
}

// result is how an event ended: the statements of every attempt, the time
// the workload paused on purpose (left out of the latency), its outcome
// and, on failure, the error and its code.
type result struct {
	q     workload.Queries
	pause time.Duration
	out   outcome
	code  string
	err   error
}

// loop runs events until the run stops. It owns wk.
func (wk *worker) loop() {
	defer wk.close(false)
	for wk.next() {
		if !wk.finish(wk.event()) {
			return
		}
	}
}

// next begins the worker's next event (wk.cur), or reports false when the
// worker is done: the run stopped, every event of an Events run is
// claimed, the pacer has no more, or a new connection could not be made.
// For a stepping worker it never waits.
func (wk *worker) next() bool {
	r := wk.r
	if r.stopped.Load() {
		return false
	}
	if n := int(r.cfg.Connect); n > 0 && wk.used >= n && !r.allClaimed() {
		// Before the queue, so that in rate mode the connect is not
		// in the next event's latency either.
		if !wk.reopen() {
			return false
		}
	}
	var intended int64 // rate mode: the event's intended start, ns since t0
	if r.queue != nil {
		select {
		case off := <-r.queue:
			intended = int64(off)
		case <-r.stopCh:
			return false
		}
		if r.stopped.Load() {
			return false
		}
	}
	var due time.Time
	if p, ok := wk.w.(workload.Pacer); ok {
		d, err := p.Next(r.wctx, r.stopCh)
		if err != nil || r.stopped.Load() { // done, or the run stopped
			return false
		}
		due = d
	}
	measured := r.measured.Load()
	ticket := measured && r.cfg.Events > 0
	if ticket && r.tickets.Add(1) > r.cfg.Events {
		r.tickets.Add(-1)
		return false
	}

	// Times are ns since t0 on the monotonic clock (r.since): half
	// the cost of time.Now, which reads the wall clock too.
	start := r.since()
	var flags uint8
	if measured {
		flags |= fMeasured
	}
	if r.queue != nil {
		if start-intended > int64(lateAfter) {
			flags |= fLate
		}
		start = intended
	}
	if !due.IsZero() {
		d := int64(due.Sub(r.t0))
		if start-d > int64(lateAfter) {
			flags |= fLate
		}
		start = d
	}
	wk.used++
	wk.begin(start, measured)
	wk.cur.start, wk.cur.flags, wk.cur.ticket = start, flags, ticket
	return true
}

// finish records how wk.cur ended and reports whether the worker goes on.
func (wk *worker) finish(res result) bool {
	r := wk.r
	c := &wk.cur
	if res.out == noEvent {
		return false
	}
	end := r.since()
	rec := record{end: end, lat: end - int64(res.pause) - c.start, q: res.q, typ: wk.intern(c.ev.Type), flags: c.flags}
	switch res.out {
	case succeeded:
		rec.kind = kSuccess
		wk.put(rec, true)
		if c.ticket && r.finished.Add(1) == r.cfg.Events {
			r.stop(r.since() + 1) // the last event (every success ended before): wake up workers waiting for the queue
		}
		return true
	case aborted:
		rec.kind = kAborted
		wk.put(rec, true)
		return false
	case done:
		wk.inflight.Store(0) // no event ran
		if c.ticket {
			r.tickets.Add(-1)
		}
		return false
	}
	rec.kind, rec.code = kError, wk.intern(res.code)
	wk.put(rec, true)
	if c.ticket { // the event did not happen: let another one run
		r.tickets.Add(-1)
	}
	switch res.out {
	case fatal:
		r.fail(fmt.Errorf("worker %d: error %s: %w", wk.id, res.code, res.err))
		return false
	case connLost:
		return wk.reconnect(r.t0.Add(time.Duration(end)))
	}
	return true
}

// event runs wk.cur's event, rerunning it after retryable errors. A
// stepping worker runs its first attempt in steps, which may finish it and
// run the following events too: the result is then that of the event
// that ended the steps (wk.cur), or noEvent.
func (wk *worker) event() (res result) {
	r := wk.r
	ev := &wk.cur.ev
	for attempt := 0; ; attempt++ {
		var err error
		if attempt == 0 && wk.steps != nil {
			if err = wk.stepped(); err == errNoEvent {
				return result{out: noEvent}
			}
		} else {
			*ev = workload.Event{}
			err = wk.w.Event(wk.ectx, ev)
		}
		res.q.Add(ev.Queries)
		res.pause += ev.Pause
		if err == nil {
			res.out = succeeded
			return res
		}
		if errors.Is(err, workload.ErrDone) {
			res.out = done
			return res
		}
		if r.wctx.Err() != nil || (errors.Is(err, workload.ErrStopped) && r.stopped.Load()) {
			res.out = aborted
			return res
		}
		c := r.classify(err)
		res.code, res.err = c.Code, err
		if res.code == "" {
			res.code = "unknown"
		}
		_, paced := wk.w.(workload.Pacer)
		switch {
		case c.Kind == flavor.ConnLost:
			res.out = connLost
			return res
		case paced: // replayed as given: no retry, no rollback
		case c.Kind == flavor.Retry:
			wk.rollback()
			if attempt < r.cfg.MaxRetries {
				wk.put(record{end: int64(time.Since(r.t0)), kind: kRetry, typ: wk.intern(ev.Type),
					code: wk.intern(res.code), flags: wk.cur.flags &^ fLate}, false)
				continue
			}
			res.err = fmt.Errorf("gave up after %d retries: %w", attempt, err)
		default:
			wk.rollback()
		}
		if r.ignoreAll || r.ignore[res.code] || r.detached != nil {
			res.out = failed
			return res
		}
		res.out = fatal
		return res
	}
}

// rollback ends the transaction the failed event may have left open. Its
// own error does not matter: a broken connection shows on the next event.
func (wk *worker) rollback() {
	if wk.conn != nil {
		_, _ = wk.conn.ExecContext(wk.r.wctx, "ROLLBACK")
	} else if rb, ok := wk.w.(workload.Rollbacker); ok {
		_ = rb.Rollback(wk.ectx)
	}
}

// reconnect replaces a connection lost at lost, and its Worker, retrying
// with exponential back-off until it succeeds, the run stops, or
// cfg.ReconnectTimeout has passed since the loss (then the run fails with
// ErrUnreachable). It reports whether the worker may go on. A failed first
// attempt begins an outage; a success ends it and counts as a reconnect.
func (wk *worker) reconnect(lost time.Time) bool {
	r := wk.r
	r.active.Add(-1)
	wk.close(true)
	deadline := lost.Add(r.cfg.ReconnectTimeout)
	wait := backoffMin
	var cause error // why the last attempt failed
	for attempt := 0; !r.stopped.Load(); attempt++ {
		ctx, cancel := context.WithDeadline(r.wctx, deadline)
		err := wk.open(ctx)
		timedOut := ctx.Err() != nil
		cancel()
		if err == nil {
			now := time.Now()
			r.active.Add(1)
			r.outageEnd(int64(now.Sub(r.t0)))
			var flags uint8
			if r.measured.Load() {
				flags = fMeasured
			}
			wk.put(record{end: int64(now.Sub(r.t0)), kind: kReconnect, flags: flags}, false)
			return true
		}
		if r.wctx.Err() != nil {
			return false
		}
		var ce *ConnectError
		if !errors.As(err, &ce) && !timedOut { // connected, but the Worker cannot be set up
			r.fail(err)
			return false
		}
		if attempt == 0 {
			r.outageBegin(int64(lost.Sub(r.t0)))
		}
		if !timedOut || cause == nil { // the driver's reason, rather than our deadline
			cause = err
			if ce != nil {
				cause = ce.Err
			}
		}
		left := time.Until(deadline)
		if left <= 0 {
			r.fail(fmt.Errorf("worker %d: %w: no new connection within %v: %w", wk.id, ErrUnreachable, r.cfg.ReconnectTimeout, cause))
			return false
		}
		t := time.NewTimer(min(wait, left))
		select {
		case <-t.C:
		case <-r.stopCh:
			t.Stop()
			return false
		}
		wait = min(2*wait, backoffMax)
	}
	return false
}

// allClaimed reports whether every measured event of an Events run has
// been claimed, so that no new connection is opened for nothing.
func (r *run) allClaimed() bool {
	return r.cfg.Events > 0 && r.measured.Load() && r.tickets.Load() >= r.cfg.Events
}

// reopen replaces the worker's connection and Worker for Config.Connect,
// recording the time it took (kConnect). A refused attempt is recorded
// (kConnectErr, with its code) and retried with exponential back-off until
// it succeeds, the run stops, or cfg.ReconnectTimeout has passed (then the
// run fails with ErrUnreachable). It reports whether the worker may go on.
func (wk *worker) reopen() bool {
	r := wk.r
	wk.close(true) // closed, not pooled: the next one must be new
	deadline := time.Now().Add(r.cfg.ReconnectTimeout)
	wait := backoffMin
	for !r.stopped.Load() {
		var flags uint8
		if r.measured.Load() {
			flags = fMeasured
		}
		ctx, cancel := context.WithDeadline(r.wctx, deadline)
		start := time.Now()
		err := wk.open(ctx)
		timedOut := ctx.Err() != nil
		cancel()
		now := time.Now()
		if err == nil {
			wk.put(record{end: int64(now.Sub(r.t0)), lat: int64(now.Sub(start)), kind: kConnect, flags: flags}, false)
			return true
		}
		if r.wctx.Err() != nil {
			break
		}
		var ce *ConnectError
		if !errors.As(err, &ce) && !timedOut { // connected, but the Worker cannot be set up
			r.fail(err)
			break
		}
		code := r.classify(err).Code
		if code == "" {
			code = "unknown"
		}
		wk.put(record{end: int64(now.Sub(r.t0)), kind: kConnectErr, code: wk.intern(code), flags: flags}, false)
		left := time.Until(deadline)
		if left <= 0 {
			r.fail(fmt.Errorf("worker %d: %w: no new connection within %v: %w", wk.id, ErrUnreachable, r.cfg.ReconnectTimeout, err))
			break
		}
		t := time.NewTimer(min(wait, left))
		select {
		case <-t.C:
		case <-r.stopCh:
			t.Stop()
		}
		wait = min(2*wait, backoffMax)
	}
	r.active.Add(-1)
	return false
}
