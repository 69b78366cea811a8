package replay

import (
	"context"
	"database/sql/driver"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbarena/dbarena/internal/workload"
)

// A replay ends within a bound after its server stops answering
// (docs/CLI.md, "Replay"):
//
//   - a session's connection attempt gives up after connectTimeout;
//   - when a statement or a connect has waited stallAfter without any
//     reply from the server on any connection, a watchdog opens a probe
//     connection; when that gets no answer within probeTimeout, every
//     statement in flight is abandoned as lost (the run's sockets are
//     closed, or, when it records none, the calls' contexts cancelled);
//   - a lost connection is the runner's to replace, for at most
//     --reconnect-timeout, after which the run fails (the server is gone)
//     or, if one came back, the run is degraded.
//
// So a replay whose server is killed or frozen ends within
// stallAfter + probeTimeout + 1 s + --reconnect-timeout.
const (
	connectTimeout = 10 * time.Second
	stallAfter     = 10 * time.Second
	probeTimeout   = 5 * time.Second
)

// stallError is a statement or connect abandoned because the server did
// not answer; it is a lost connection (driver.ErrBadConn) to the runner.
type stallError struct{ waited time.Duration }

func (e *stallError) Error() string {
	return fmt.Sprintf("replay: the server did not answer for %v (a probe connection got no answer either)", e.waited.Round(time.Second))
}

func (e *stallError) Unwrap() error { return driver.ErrBadConn }

// connectError is a connection attempt that timed out.
type connectError struct{ err error }

func (e *connectError) Error() string {
	return fmt.Sprintf("replay: no connection within %v: %v", connectTimeout, e.err)
}

func (e *connectError) Unwrap() []error { return []error{e.err, driver.ErrBadConn} }

// epoch is one period between stalls: its context is cancelled when the
// watchdog finds the server frozen.
type epoch struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// watchdog finds a frozen server. Workers mark each server call with
// begin/end; the watchdog looks once a second.
type watchdog struct {
	once     sync.Once
	last     atomic.Int64 // unix ns of the last reply from the server
	inflight atomic.Int64 // server calls in flight
	cur      atomic.Pointer[epoch]
	stalls   atomic.Int64

	mu      sync.Mutex
	workers map[*worker]struct{} // whose calls are watched (worker.callStart)
}

// watch registers w; forget undoes it.
func (d *watchdog) watch(w *worker) {
	d.mu.Lock()
	if d.workers == nil {
		d.workers = map[*worker]struct{}{}
	}
	d.workers[w] = struct{}{}
	d.mu.Unlock()
}

func (d *watchdog) forget(w *worker) {
	d.mu.Lock()
	delete(d.workers, w)
	d.mu.Unlock()
}

func newEpoch() *epoch {
	ctx, cancel := context.WithCancel(context.Background())
	return &epoch{ctx: ctx, cancel: cancel}
}

// current is the epoch in force, a new one after a stall once the
// server answers again (rearm).
func (d *watchdog) current() *epoch {
	if e := d.cur.Load(); e != nil {
		return e
	}
	d.cur.CompareAndSwap(nil, newEpoch())
	return d.cur.Load()
}

// rearm starts a new epoch after a stall: the server answered again.
func (d *watchdog) rearm() {
	if e := d.cur.Load(); e != nil && e.ctx.Err() != nil {
		d.cur.CompareAndSwap(e, newEpoch())
	}
	d.last.Store(time.Now().UnixNano())
}

// begin marks a server call of w in flight.
func (d *watchdog) begin(w *worker) {
	w.callStart.Store(time.Now().UnixNano())
	d.inflight.Add(1)
}

// end marks w's call done; answered says the server replied (with a
// result or an error of its own).
func (d *watchdog) end(w *worker, answered bool) {
	w.callStart.Store(0)
	d.inflight.Add(-1)
	if answered {
		d.last.Store(time.Now().UnixNano())
	}
}

// start runs the watchdog until stop is closed or ctx is done.
func (d *watchdog) start(ctx context.Context, stop <-chan struct{}, env workload.Env) {
	d.once.Do(func() {
		d.last.Store(time.Now().UnixNano())
		go d.run(ctx, stop, env)
	})
}

func (d *watchdog) run(ctx context.Context, stop <-chan struct{}, env workload.Env) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now().UnixNano()
		if d.inflight.Load() == 0 || now-d.last.Load() < int64(stallAfter) {
			continue
		}
		var waiting bool
		d.mu.Lock()
		for w := range d.workers {
			if at := w.callStart.Load(); at != 0 && now-at >= int64(stallAfter) {
				waiting = true
				break
			}
		}
		d.mu.Unlock()
		if !waiting {
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		answered := probe(pctx, env)
		cancel()
		if answered {
			d.last.Store(time.Now().UnixNano())
			continue
		}
		if ctx.Err() != nil {
			return
		}
		d.stalls.Add(1)
		d.current().cancel()
		if env.Sockets != nil {
			// Statements run under a context that is never cancelled:
			// closing the run's sockets ends them (the runner's pool
			// opens new connections as it needs them).
			env.Sockets.CloseAll()
		}
	}
}

// probe reports whether the server answers a new connection (a server
// error counts as an answer: too many connections is not a freeze).
func probe(ctx context.Context, env workload.Env) bool {
	return env.Dialect.Probe(ctx, env.Target)
}
