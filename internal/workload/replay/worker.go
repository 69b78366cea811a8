package replay

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"time"

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
	w.connectAhead(ctx)
	return w, nil
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
			continue
		}
		switch e.kind {
		case kConnect:
			st.ei++
			w.closeConn()
			w.open(ctx, e.db)
			continue
		case kQuit:
			st.ei++
			w.endSession()
			continue
		}
		if st.conn == nil && !w.open(ctx, "") {
			st.ei++
			continue
		}
		switch e.kind {
		case kPrepare:
			st.ei++
			if wl.prepared == PreparedServer {
				if err := st.conn.prepare(ctx, e.name, e.sql); err != nil {
					w.stats.fail(e.fp, w.code(err), 0)
				}
			}
			continue
		case kClose:
			st.ei++
			if wl.prepared == PreparedServer {
				_ = st.conn.deallocate(ctx, e.name)
			}
			continue
		}
		w.ev, w.due = e, due
		return due, nil
	}
}

// open connects the slot for its current session; a failure is counted
// and the session's statements are skipped.
func (w *worker) open(ctx context.Context, db string) bool {
	st := w.st
	if w.wl.db != "" {
		db = w.wl.db
	} else if db == "" {
		// A session without a connect event: the database of its first event that names one.
		db = firstDB(st.sessions[st.si])
	}
	c, err := dial(ctx, w.env, db)
	if err != nil {
		w.stats.connectErr()
		st.skip = true
		return false
	}
	st.conn, st.opened, st.skip = c, true, false
	return true
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
	start := time.Now()
	var err error
	switch {
	case e.kind == kExecute && e.params != nil && wl.prepared == PreparedServer:
		err = st.conn.execPrepared(ctx, e.name, e.sql, e.params, &w.res, hash, e.ordered)
	case e.kind == kExecute && e.params != nil:
		err = st.conn.exec(ctx, inline(e.sql, e.params, wl.pg), &w.res, hash, e.ordered)
	case e.kind == kExecute && e.sql == "" && wl.prepared == PreparedServer:
		err = st.conn.execPrepared(ctx, e.name, "", nil, &w.res, hash, e.ordered)
	default:
		err = st.conn.exec(ctx, e.sql, &w.res, hash, e.ordered)
	}
	end := time.Now()
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
	w.closeConn()
	return nil
}
