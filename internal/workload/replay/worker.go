package replay

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"sync/atomic"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/workload"
)

// slotState is where one slot is in its sessions; it outlives the Worker,
// so that a worker made again after a lost connection goes on from there.
type slotState struct {
	sessions []*session
	si, ei   int // current session, next event in it
	loop     int
	conn     conn
	opened   bool // the current session's connection was opened (and not yet quit)
	skip     bool // the current session could not connect: its statements are skipped
	started  bool // Next ran for this slot: a DialWorker after it replaces a lost connection

	// Counts kept across warm-up, read by Summarize once the workers are
	// done: statements sent to the server (run or failed), statements
	// skipped because their session could not connect, and account
	// statements skipped, by Capture.AcctKinds index.
	sent, noConn int64
	acct         []int64
}

// worker replays one slot.
type worker struct {
	wl    *Workload
	env   workload.Env
	st    *slotState
	stats *workerStats
	ev    *event    // the statement Next made ready
	due   time.Time // its due time (zero at --speed max)
	res   result
	// lost is a connection that could not be made because the server
	// is unreachable: Event returns it, and the runner replaces the
	// connection (DialWorker) or ends the run (--reconnect-timeout).
	lost error
	// parent, ep and octx: server calls run under octx, which a stall
	// (epoch ep) cancels.
	parent context.Context
	ep     *epoch
	octx   context.Context
	ostop  func() bool
	ocanc  context.CancelFunc
	// callStart is when the server call in flight began (unix ns; 0:
	// none), for the watchdog.
	callStart atomic.Int64
}

var (
	_ workload.Worker = (*worker)(nil)
	_ workload.Pacer  = (*worker)(nil)
)

// OwnsConns implements workload.Dialer: sessions open their own connections.
func (wl *Workload) OwnsConns(workload.Env) bool { return true }

// DialWorker implements workload.Dialer: worker id replays slot id; it
// connects when its first session does.
func (wl *Workload) DialWorker(ctx context.Context, env workload.Env, id int, _ int64) (workload.Worker, error) {
	wl.mu.Lock()
	slots := wl.plan()
	wl.mu.Unlock()
	if id >= len(slots) {
		return nil, errors.New("replay: more workers than slots")
	}
	w := &worker{wl: wl, env: env, st: slots[id], stats: wl.stats[id]}
	wl.watch.watch(w)
	st := w.st
	if st.started && st.conn == nil && st.si < len(st.sessions) && !st.skip {
		// The runner replaces a lost connection: the session goes on, on
		// a new one (its server-side state is gone). The server's errors
		// (an unknown database) skip the session; no answer is the
		// runner's to retry until --reconnect-timeout.
		c, err := dial(ctx, env, w.sessionDB(""))
		if err != nil {
			if env.Dialect.Classify(err).Kind == dialect.ConnLost {
				wl.watch.forget(w)
				return nil, err
			}
			w.stats.connectErr()
			st.skip = true
			return w, nil
		}
		wl.watch.rearm()
		st.conn, st.opened = c, true
		return w, nil
	}
	w.connectAhead(ctx)
	return w, nil
}

// sessionDB is the database the slot's current session works in: db (a
// connect event's), --db, or that of its first event that names one.
func (w *worker) sessionDB(db string) string {
	if w.wl.db != "" {
		return w.wl.db
	}
	if db == "" {
		return firstDB(w.st.sessions[w.st.si])
	}
	return db
}

// opctx is the context of a server call: ctx, cancelled by a stall.
func (w *worker) opctx(ctx context.Context) context.Context {
	ep := w.wl.watch.current()
	if ctx != w.parent || ep != w.ep {
		if w.ostop != nil {
			w.ostop()
			w.ocanc()
		}
		w.parent, w.ep = ctx, ep
		w.octx, w.ocanc = context.WithCancel(ctx)
		w.ostop = context.AfterFunc(ep.ctx, w.ocanc)
	}
	return w.octx
}

// callCtx is the context of a statement and the epoch it runs in. When
// the run records its sockets (env.Sockets), the watchdog aborts a stall
// by closing them, and statements run under ctx itself, which spares the
// drivers a cancellable context per statement; otherwise under opctx.
func (w *worker) callCtx(ctx context.Context) (context.Context, *epoch) {
	if w.env.Sockets != nil {
		return ctx, w.wl.watch.current()
	}
	octx := w.opctx(ctx)
	return octx, w.ep
}

// stalled turns the error of a call the watchdog abandoned (its epoch
// ended while it ran) into a stallError.
func (w *worker) stalled(ctx context.Context, ep *epoch, err error) error {
	if err != nil && ctx.Err() == nil && ep != nil && ep.ctx.Err() != nil {
		return &stallError{waited: stallAfter + probeTimeout}
	}
	return err
}

// connectAhead opens the connection of the slot's first session before the
// replay begins: the runner dials every worker before any starts, so the
// schedule's zero (the first Next) comes once all are connected and the
// first statements are not late by the time a connection takes. A failure
// is left for Next to meet (and count) at the session's connect.
func (w *worker) connectAhead(ctx context.Context) {
	st := w.st
	if st.loop != 0 || st.si != 0 || st.ei != 0 || st.conn != nil || len(st.sessions) == 0 {
		return
	}
	e := &st.sessions[0].events[0]
	db := e.db
	if w.wl.db != "" {
		db = w.wl.db
	} else if e.kind != kConnect {
		db = firstDB(st.sessions[0])
	}
	c, err := dial(ctx, w.env, db)
	if err != nil {
		return
	}
	st.conn, st.opened = c, true
	w.wl.watch.last.Store(time.Now().UnixNano())
	if e.kind == kConnect {
		st.ei++
	}
}

// firstDB is the database of s's first event that names one.
func firstDB(s *session) string {
	for i := range s.events {
		if s.events[i].db != "" {
			return s.events[i].db
		}
	}
	return ""
}

// NewWorker implements workload.Runner; it is not used, since the workload
// owns its connections.
func (wl *Workload) NewWorker(ctx context.Context, env workload.Env, _ *sql.Conn, id int, seed int64) (workload.Worker, error) {
	return wl.DialWorker(ctx, env, id, seed)
}

// wait waits until t or stop; it reports whether t came.
func wait(t time.Time, stop <-chan struct{}) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-stop:
		return false
	}
}

// Next implements workload.Pacer: it does the slot's connects, quits,
// prepares and deallocations up to the next statement, and waits until
// that is due.
func (w *worker) Next(ctx context.Context, stop <-chan struct{}) (time.Time, error) {
	wl, st := w.wl, w.st
	wl.start()
	wl.watch.start(ctx, stop, w.env)
	st.started = true
	for {
		if ctx.Err() != nil {
			return time.Time{}, ctx.Err()
		}
		if st.si >= len(st.sessions) {
			if !wl.loop || len(st.sessions) == 0 {
				return time.Time{}, workload.ErrDone
			}
			st.loop++
			st.si, st.ei = 0, 0
		}
		s := st.sessions[st.si]
		if st.ei >= len(s.events) {
			w.endSession()
			continue
		}
		e := &s.events[st.ei]
		if e.acct != 0 {
			// An account or privilege statement: never sent.
			st.ei++
			if e.ord >= 0 { // a statement (a prepare is counted at its executes)
				if st.acct == nil {
					st.acct = make([]int64, len(wl.capture.AcctKinds)+1)
				}
				st.acct[e.acct]++
			}
			continue
		}
		// Connects and quits are not paced: a session is connected as
		// soon as its slot is free (ahead of its first statement, which is
		// then not late by the connection's set-up), and leaves it after its
		// last statement (a logged quit can be long after).
		var due time.Time
		if wl.speed > 0 && e.kind != kConnect && e.kind != kQuit {
			due = wl.due(e.tus, st.loop)
			if !wait(due, stop) {
				return time.Time{}, workload.ErrDone
			}
		}
		if st.skip && e.kind != kQuit {
			st.ei++
			if e.ord >= 0 {
				st.noConn++
			}
			continue
		}
		switch e.kind {
		case kConnect:
			st.ei++
			w.closeConn()
			if !w.open(ctx, e.db) && w.lost != nil {
				return time.Time{}, nil // Event reports the lost connection
			}
			continue
		case kQuit:
			st.ei++
			w.endSession()
			continue
		}
		if st.conn == nil && !w.open(ctx, "") {
			if w.lost != nil {
				return time.Time{}, nil // Event reports the lost connection
			}
			continue // the session is skipped
		}
		switch e.kind {
		case kPrepare:
			st.ei++
			if wl.prepared == PreparedServer {
				octx, ep := w.callCtx(ctx)
				wl.watch.begin(w)
				err := st.conn.prepare(octx, e.name, e.sql)
				wl.watch.end(w, w.answered(err))
				if err = w.stalled(ctx, ep, err); err != nil {
					if w.env.Dialect.Classify(err).Kind == dialect.ConnLost {
						w.lost = err
						return time.Time{}, nil
					}
					w.stats.fail(e.fp, w.code(err), 0)
				}
			}
			continue
		case kClose:
			st.ei++
			if wl.prepared == PreparedServer {
				octx, ep := w.callCtx(ctx)
				wl.watch.begin(w)
				err := st.conn.deallocate(octx, e.name)
				wl.watch.end(w, w.answered(err))
				if err = w.stalled(ctx, ep, err); err != nil && w.env.Dialect.Classify(err).Kind == dialect.ConnLost {
					w.lost = err
					return time.Time{}, nil
				}
			}
			continue
		}
		w.ev, w.due = e, due
		return due, nil
	}
}

// open connects the slot for its current session. When the server does
// not answer, w.lost is set (the runner replaces the connection or ends
// the run); when it refuses (an unknown database, a bad password), the
// failure is counted and the session's statements are skipped.
func (w *worker) open(ctx context.Context, db string) bool {
	st := w.st
	db = w.sessionDB(db)
	dctx, cancel := context.WithTimeout(w.opctx(ctx), connectTimeout)
	ep := w.ep
	w.wl.watch.begin(w)
	c, err := dial(dctx, w.env, db)
	w.wl.watch.end(w, w.answered(err))
	timedOut := err != nil && errors.Is(dctx.Err(), context.DeadlineExceeded)
	cancel()
	if err = w.stalled(ctx, ep, err); err != nil {
		if timedOut {
			err = &connectError{err: err}
		}
		if ctx.Err() == nil && w.env.Dialect.Classify(err).Kind == dialect.ConnLost {
			w.lost = err
			return false
		}
		w.stats.connectErr()
		st.skip = true
		return false
	}
	st.conn, st.opened, st.skip = c, true, false
	return true
}

// answered reports whether err (nil included) is the server's answer
// rather than a lost or unanswered connection.
func (w *worker) answered(err error) bool {
	return err == nil || w.env.Dialect.Classify(err).Kind != dialect.ConnLost && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

func (w *worker) closeConn() {
	if w.st.conn != nil {
		w.st.conn.close()
		w.st.conn = nil
	}
}

// endSession closes the session's connection and moves to the next one.
func (w *worker) endSession() {
	w.closeConn()
	st := w.st
	st.si++
	st.ei, st.opened, st.skip = 0, false, false
}

// code is the dialect's error code of err.
func (w *worker) code(err error) string {
	c := w.env.Dialect.Classify(err).Code
	if c == "" {
		c = "unknown"
	}
	return c
}

// Event implements workload.Worker: it runs the statement Next made ready.
func (w *worker) Event(ctx context.Context, ev *workload.Event) error {
	e, st, wl := w.ev, w.st, w.wl
	if w.lost != nil {
		err := w.lost
		w.lost = nil
		wl.lost.Add(1)
		return err
	}
	if e == nil {
		return errors.New("replay: Event without Next")
	}
	w.ev = nil
	st.ei++
	switch e.class {
	case cRead:
		ev.Queries.Read = 1
	case cWrite:
		ev.Queries.Write = 1
	default:
		ev.Queries.Other = 1
	}
	hash := wl.digests != nil && st.loop == 0
	w.res = result{}
	st.sent++
	octx, ep := w.callCtx(ctx)
	wl.watch.begin(w)
	start := time.Now()
	var err error
	switch {
	case e.kind == kExecute && e.params != nil && wl.prepared == PreparedServer:
		err = st.conn.execPrepared(octx, e.name, e.sql, e.params, &w.res, hash, e.ordered)
	case e.kind == kExecute && e.params != nil:
		err = st.conn.exec(octx, inline(e.sql, e.params, wl.pg), &w.res, hash, e.ordered)
	case e.kind == kExecute && e.sql == "" && wl.prepared == PreparedServer:
		err = st.conn.execPrepared(octx, e.name, "", nil, &w.res, hash, e.ordered)
	default:
		err = st.conn.exec(octx, e.sql, &w.res, hash, e.ordered)
	}
	end := time.Now()
	wl.watch.end(w, w.answered(err))
	err = w.stalled(ctx, ep, err)
	if err != nil && w.env.Dialect.Classify(err).Kind == dialect.ConnLost {
		wl.lost.Add(1)
	}
	from := start
	if !w.due.IsZero() {
		from = w.due
		if wl.measured.Load() {
			wl.lag.record(start.Sub(w.due), start)
			w.stats.lag(start.Sub(w.due))
		}
	}
	code := ""
	if err != nil {
		code = w.code(err)
	}
	if wl.measured.Load() {
		w.stats.record(e, end.Sub(from), code, w.res.rows)
	}
	if hash {
		d := digest(w.res, code)
		wl.digests[e.ord] = d
		wl.lats[e.ord] = uint32(min(max(end.Sub(from).Microseconds(), 1), math.MaxUint32))
		w.stats.digest(e.fp, d)
	}
	return err
}

// Close implements workload.Worker: it closes the session's connection
// (the slot's place is kept for a worker made again after a lost one).
func (w *worker) Close() error {
	w.wl.watch.forget(w)
	w.closeConn()
	if w.ostop != nil {
		w.ostop()
		w.ocanc()
		w.ostop = nil
	}
	return nil
}
