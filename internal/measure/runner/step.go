package runner

import (
	"errors"

	"github.com/dbarena/dbarena/internal/workload"
)

// Stepping (workload.Stepper). A worker of a poller group (--jobs) whose
// Worker can step runs its events on the group's thread's own stack: it
// parks in its group, which calls step at each signal of its socket; step
// finishes each event that succeeds and starts the next, and only an
// event that fails, or the end of the worker's events, resumes the
// worker's coroutine, which handles it as any event's (retry, reconnect,
// stop). A reply then costs no coroutine switch, which is most of what a
// coroutine per client costs a lean client (bench/coro-cost).

// errNoEvent ends the steps when the worker has no next event.
var errNoEvent = errors.New("runner: no next event")

// stepperOf returns w as a Stepper when wk may step it: a closed-loop
// worker of a poller group on a persistent connection.
func (wk *worker) stepperOf(w workload.Worker) workload.Stepper {
	r := wk.r
	st, ok := w.(workload.Stepper)
	if !ok || wk.waiter == nil || r.cfg.Connect != 0 || r.queue != nil {
		return nil
	}
	if _, paced := w.(workload.Pacer); paced || !st.CanStep() {
		return nil
	}
	return st
}

// stepped runs wk.cur's event, and the events that follow while they
// succeed, in steps on the group's stack. It returns the error of the
// event that ended the steps, now wk.cur, or errNoEvent.
func (wk *worker) stepped() error {
	wk.cur.ev = workload.Event{}
	if wk.chain(wk.steps.Start(&wk.cur.ev)) {
		if wk.stepFn == nil {
			wk.stepFn = wk.step
		}
		wk.waiter.Park(wk.stepFn)
	}
	err := wk.stepErr
	wk.stepErr = nil
	return err
}

// step is the group's call at a signal of the worker's socket.
func (wk *worker) step() bool { return wk.chain(wk.steps.Resume(&wk.cur.ev)) }

// chain takes what wk.cur's event reported: while it waits, true; once it
// succeeded, it is finished and the next one started; once it failed, or
// there is no next one, false, with the error in wk.stepErr.
func (wk *worker) chain(pending bool, err error) bool {
	for {
		if pending {
			return true
		}
		if err != nil {
			wk.stepErr = err
			return false
		}
		wk.finish(result{q: wk.cur.ev.Queries, pause: wk.cur.ev.Pause, out: succeeded})
		if !wk.next() {
			wk.stepErr = errNoEvent
			return false
		}
		wk.cur.ev = workload.Event{}
		pending, err = wk.steps.Start(&wk.cur.ev)
	}
}
