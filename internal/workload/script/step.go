package script

import (
	"time"

	"github.com/dbarena/dbarena/internal/wire/pgwire"
	"github.com/dbarena/dbarena/internal/workload"
	"github.com/dbarena/dbarena/internal/workload/script/pgscript"
)

var _ workload.Stepper = (*worker)(nil)

// stepping is the state of an event run in steps (workload.Stepper):
// where its script is, and the clock readings Event keeps in locals.
type stepping struct {
	sc    *weighted
	pc    int           // the command running, or the next one
	start time.Duration // the statement's start, since clockBase
	ended time.Duration // the last statement's end; 0 after anything else
}

// CanStep implements workload.Stepper: scripts of statements (with or
// without \gset and \aset), \set and \if, on a wire connection that can
// be polled. \sleep and pipelines run through Event.
func (w *worker) CanStep() bool {
	if w.pw == nil || !w.pw.CanStep() {
		return false
	}
	for _, sc := range w.wl.scripts {
		for _, c := range sc.s.Cmds {
			switch c.Kind {
			case pgscript.SQL, pgscript.Set, pgscript.If, pgscript.Elif, pgscript.Else, pgscript.Endif:
			default:
				return false
			}
		}
	}
	return true
}

// Start implements workload.Stepper: it picks a script and runs it up to
// its first statement, which it sends.
func (w *worker) Start(ev *workload.Event) (bool, error) {
	sc := w.pick()
	ev.Type = sc.s.Name
	w.step = stepping{sc: sc}
	return w.advance(ev)
}

// Resume implements workload.Stepper: it reads what came of the
// statement's reply and, once the reply is complete, runs the script on up
// to its next statement, which it sends, or to its end.
func (w *worker) Resume(ev *workload.Event) (bool, error) {
	done, _, err := w.pw.Poll()
	if !done {
		return true, nil
	}
	st := &w.step
	w.total = w.pw.Results()
	err = copyErr(&st.sc.s.Cmds[st.pc], err)
	if err == nil {
		err = w.store(&st.sc.s.Cmds[st.pc])
	}
	if err != nil {
		return false, w.failed(st.sc, st.pc, err)
	}
	st.ended = sinceBase()
	w.stats.record(st.sc.base+st.pc, st.ended-st.start, "")
	st.pc++
	return w.advance(ev)
}

// advance runs the script from w.step.pc: up to a statement, which it
// sends (pending), or to the end. Its statements are timed as Event times
// them.
func (w *worker) advance(ev *workload.Event) (bool, error) {
	st := &w.step
	s := st.sc.s
	for st.pc < len(s.Cmds) {
		c := &s.Cmds[st.pc]
		if c.Err != "" { // accepted by pgbench, refused when run
			if c.Kind == pgscript.SQL {
				return false, w.failed(st.sc, st.pc, &pgscript.Error{Line: c.Line, Msg: c.Err})
			}
			return false, &pgscript.Error{File: s.Name, Line: c.Line, Msg: c.Err}
		}
		switch c.Kind {
		case pgscript.SQL:
			w.count(ev, c)
			st.start = st.ended
			if st.start == 0 {
				st.start = sinceBase()
			}
			if err := w.sendStep(st.sc.base+st.pc, c); err != nil {
				return false, w.failed(st.sc, st.pc, err)
			}
			return true, nil
		case pgscript.Set:
			w.st.Command = st.pc // debug() names it
			if err := w.set(s, c); err != nil {
				return false, err
			}
			st.pc++
		default: // \if and its branches
			next, err := s.Branch(st.pc, w.st)
			if err != nil {
				return false, err
			}
			st.pc = next
		}
		st.ended = 0
	}
	return false, w.endOfScript(s)
}

// sendStep sends c on the wire connection as execWire would, without
// reading the reply (Resume does; rows are kept for \gset and \aset).
func (w *worker) sendStep(idx int, c *pgscript.Cmd) error {
	w.resetKept()
	q, args, err := w.wireRequest(idx, c)
	if err != nil {
		return err
	}
	var fn func(r *pgwire.Row) error
	if w.keep(c) {
		fn = w.keepRow
	}
	if w.wl.protocol != Prepared {
		return w.pw.SendFunc(q, args, fn)
	}
	st, err := w.wireStmt(idx, c) // prepared on first use, waiting for the reply
	if err != nil {
		return err
	}
	return st.SendFunc(args, fn)
}
