package micro

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// Pseudo event types: instances a capped test left out, and a finished
// worker's waits. Summarize leaves them out of the run's figures.
const (
	skipType = "(skipped)"
	idleType = "(idle)"
)

// idleWait is how long an idle event waits once every worker is done.
const idleWait = 50 * time.Millisecond

// worker runs the selected tests one after another, one operation instance
// per Event.
type worker struct {
	wl    *Workload
	env   workload.Env
	conn  *sql.Conn
	id    int
	fam   target.Family
	tests []*test

	ti      int           // current test
	i       int           // next instance of it
	started bool          // its setup ran
	elapsed time.Duration // its timed work so far
	skip    int           // instances of a capped test still to report
	done    bool          // the suite is over for this worker
	// usr0 and sys0 are the process's CPU times when the test's timed
	// work began.
	usr0, sys0 time.Duration

	stmt   *sql.Stmt // once_prepared_select's statement
	txOpen bool      // a *_commit test's transaction is open
}

// Event implements workload.Worker.
func (w *worker) Event(ctx context.Context, ev *workload.Event) error {
	if w.skip > 0 {
		w.skip--
		ev.Type = skipType
		return nil
	}
	if w.ti >= len(w.tests) {
		w.finishSuite()
		ev.Type = idleType
		t0 := time.Now()
		w.wl.waitIdle(ctx)
		ev.Pause = time.Since(t0)
		return nil
	}
	t := w.tests[w.ti]
	n := w.wl.count(t)
	if !w.started {
		t0 := time.Now()
		if t.setup != nil {
			if err := t.setup(ctx, w); err != nil {
				return fmt.Errorf("%s: set up: %w", t.op, err)
			}
		}
		ev.Pause += time.Since(t0)
		w.started, w.i, w.elapsed = true, 0, 0
		w.usr0, w.sys0 = cpuTimes()
	}
	ev.Type = t.op
	start := time.Now()
	q, err := t.run(ctx, w, w.i)
	ev.Queries.Add(q)
	if err != nil {
		return fmt.Errorf("%s: %w", t.op, err)
	}
	w.elapsed += time.Since(start)
	w.i++
	capped := w.wl.timeLimit > 0 && w.elapsed >= w.wl.timeLimit && w.i < n
	if w.i < n && !capped {
		w.wl.track(w, &cut{op: t.op, done: int64(w.i), planned: int64(n), elapsed: w.elapsed, notRun: len(w.tests) - w.ti - 1})
		return nil
	}
	usr, sys := cpuTimes()
	t0 := time.Now()
	if w.txOpen { // a capped *_commit test: its transaction still ends
		if err := w.exec(ctx, "COMMIT"); err != nil {
			return fmt.Errorf("%s: commit: %w", t.op, err)
		}
		w.txOpen = false
	}
	if t.verify != nil {
		what, err := t.verify(ctx, w)
		if err != nil {
			return fmt.Errorf("%s: check: %w", t.op, err)
		}
		if what != "" {
			w.wrong(t.op, w.i-1, what)
		}
	}
	w.wl.record(t.op, int64(w.i), int64(n), w.elapsed, usr-w.usr0, sys-w.sys0, capped)
	w.skip = n - w.i
	w.ti++
	w.started = false
	if w.ti < len(w.tests) {
		w.wl.track(w, &cut{notRun: len(w.tests) - w.ti})
	} else {
		w.wl.track(w, nil)
	}
	if t.teardown != nil && !w.wl.keep {
		if err := t.teardown(ctx, w); err != nil {
			return fmt.Errorf("%s: clean up: %w", t.op, err)
		}
	}
	ev.Pause += time.Since(t0)
	return nil
}

// cut is where a worker's suite stands, for a run that ends before it:
// the operation under way (none between tests) and how many tests after
// it have not run.
type cut struct {
	op            string
	done, planned int64
	elapsed       time.Duration
	notRun        int
}

// track records where w's suite stands; nil when it is complete.
func (wl *Workload) track(w *worker, c *cut) {
	wl.mu.Lock()
	defer wl.mu.Unlock()
	if c == nil {
		delete(wl.cuts, w)
		return
	}
	if wl.cuts == nil {
		wl.cuts = map[*worker]*cut{}
	}
	wl.cuts[w] = c
}

// finishSuite marks this worker's suite as over, once.
func (w *worker) finishSuite() {
	if !w.done {
		w.done = true
		w.wl.leave()
	}
}

// Close implements workload.Worker.
func (w *worker) Close() error {
	w.finishSuite()
	return w.closeStmt()
}

// exec runs one statement on the worker's connection.
func (w *worker) exec(ctx context.Context, q string) error {
	_, err := w.conn.ExecContext(ctx, q)
	return err
}

// table names a table of this worker's own.
func (w *worker) table(base string) string { return fmt.Sprintf("micro_%s_%d", base, w.id) }

// join is the worker's work the suite is waiting for.
func (wl *Workload) join() {
	wl.mu.Lock()
	wl.active++
	wl.mu.Unlock()
}

func (wl *Workload) leave() {
	wl.mu.Lock()
	wl.active--
	wl.mu.Unlock()
}

// waitIdle returns once every worker finished its suite (then after
// idleWait, so that a run bounded by time idles cheaply) or ctx ends.
func (wl *Workload) waitIdle(ctx context.Context) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		wl.mu.Lock()
		n := wl.active
		wl.mu.Unlock()
		if n <= 0 {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
	select {
	case <-ctx.Done():
	case <-time.After(idleWait):
	}
}
