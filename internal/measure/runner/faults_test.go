package runner

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dbarena/dbarena/internal/workload"
)

// hangBound is how long a test waits for a Run that must end before it
// calls it a hang. It bounds the test, it does not time the runner.
const hangBound = 30 * time.Second

// runBounded runs cfg in the background and fails the test if Run has not
// returned within hangBound.
func (h *harness) runBounded(t *testing.T, ctx context.Context, cfg Config, w workload.Runner) *Result {
	t.Helper()
	if w == nil {
		w = h.runner
	}
	type out struct {
		res *Result
		err error
	}
	ch := make(chan out, 1)
	go func() {
		res, err := Run(ctx, cfg, h.env, w, h.onInterval)
		ch <- out{res, err}
	}()
	select {
	case o := <-ch:
		if o.err != nil {
			t.Fatalf("Run: %v", o.err)
		}
		return o.res
	case <-time.After(hangBound):
		t.Fatalf("Run did not return within %v", hangBound)
		return nil
	}
}

var errLost = &mysql.MySQLError{Number: 2013, Message: "Lost connection to server during query"}

func TestOutageRecovered(t *testing.T) {
	var h *harness
	h = newHarness(t, func(_ context.Context, w *fakeWorker, _ *workload.Event) error {
		if w.gen == 0 && w.n == 20 {
			// The server goes away for a while: the first reconnect fails.
			h.db.down.Store(true)
			time.AfterFunc(150*time.Millisecond, func() { h.db.down.Store(false) })
			return errLost
		}
		return nil
	})
	c := testConfig(1, 100)
	res := h.runBounded(t, context.Background(), c, nil)
	if res.Err != nil || res.Events != 100 {
		t.Fatalf("Err %v, Events %d; want the run to go on after the outage", res.Err, res.Events)
	}
	if res.Reconnects != 1 {
		t.Errorf("Reconnects = %d, want 1", res.Reconnects)
	}
	if len(res.Outages) != 1 {
		t.Fatalf("Outages = %+v, want one", res.Outages)
	}
	o := res.Outages[0]
	if !o.Recovered || o.Start < 0 || o.End <= o.Start || o.End > res.Elapsed {
		t.Errorf("outage %+v in a %v run: want a recovered window inside it", o, res.Elapsed)
	}
	if want := res.Elapsed - (o.End - o.Start); res.Uptime != want {
		t.Errorf("Uptime = %v, want Elapsed - outage = %v", res.Uptime, want)
	}
}

func TestUnreachableEndsRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func(Config) Config
	}{
		{"events", func(c Config) Config { c.Events = 1_000_000; return c }},
		{"time", func(c Config) Config { c.Events, c.Duration = 0, time.Hour; return c }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h *harness
			h = newHarness(t, func(_ context.Context, w *fakeWorker, _ *workload.Event) error {
				if h.db.down.Load() || w.n == 5 { // the server dies for good
					h.db.down.Store(true)
					return errLost
				}
				return nil
			})
			c := tc.cfg(testConfig(3, 0))
			c.ReconnectTimeout = 200 * time.Millisecond
			c.ReportInterval = 50 * time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), hangBound)
			defer cancel()
			res := h.runBounded(t, ctx, c, nil)
			if res.Interrupted {
				t.Fatal("the run only ended when its context expired: it hung")
			}
			if !errors.Is(res.Err, ErrUnreachable) {
				t.Fatalf("Err = %v, want one wrapping ErrUnreachable", res.Err)
			}
			if !errors.Is(res.Err, errRefused) || !strings.HasPrefix(res.Err.Error(), "worker ") ||
				strings.Count(res.Err.Error(), "worker ") != 1 {
				t.Errorf("Err = %q, want the worker once and the driver's reason", res.Err)
			}
			if res.Reconnects != 0 {
				t.Errorf("Reconnects = %d, want 0: no connection was made again", res.Reconnects)
			}
			if len(res.Outages) != 1 || res.Outages[0].Recovered || res.Outages[0].End != res.Elapsed {
				t.Errorf("Outages = %+v (elapsed %v), want one unrecovered to the end", res.Outages, res.Elapsed)
			}
			checkSums(t, res)
		})
	}
}

func TestReconnectTimeoutDefault(t *testing.T) {
	if got := DefaultConfig().ReconnectTimeout; got != 30*time.Second {
		t.Errorf("DefaultConfig().ReconnectTimeout = %v, want 30s", got)
	}
	c := DefaultConfig()
	c.ReconnectTimeout = 0
	if errs := c.Validate(); len(errs) != 1 {
		t.Errorf("Validate with ReconnectTimeout 0 = %v, want one error", errs)
	}
}

// TestStallRecordedAsUnfinished: an event stuck across the end of the run
// is not discarded: its latency so far is in the histogram, and it counts
// as unfinished, not as an event or an error.
func TestStallRecordedAsUnfinished(t *testing.T) {
	h := newHarness(t, func(ctx context.Context, w *fakeWorker, _ *workload.Event) error {
		if w.id == 1 && w.n == 3 { // stuck until cancelled
			<-ctx.Done()
			return &mysql.MySQLError{Number: 1317, Message: "Query execution was interrupted"}
		}
		time.Sleep(time.Millisecond)
		return nil
	})
	c := testConfig(2, 0)
	c.Duration = 100 * time.Millisecond
	c.StopGrace = 100 * time.Millisecond
	res := h.runBounded(t, context.Background(), c, nil)
	if res.Unfinished < 1 {
		t.Errorf("Unfinished = %d, want the stuck event", res.Unfinished)
	}
	if res.Latency.Max() < c.StopGrace {
		t.Errorf("latency max %v, want >= %v: the stuck event ran at least the stop grace", res.Latency.Max(), c.StopGrace)
	}
	if res.Errors != 0 || res.Err != nil {
		t.Errorf("Errors %d, Err %v: a cancelled event is not an error", res.Errors, res.Err)
	}
	if res.Latency.Count() != res.Events+res.Unfinished {
		t.Errorf("Latency.Count %d, want Events %d + Unfinished %d", res.Latency.Count(), res.Events, res.Unfinished)
	}
}

// TestInterruptAbandonsStuckWorkers: an interrupt ends Run even when workers
// are stuck in a call that ignores both the context and Abort.
func TestInterruptAbandonsStuckWorkers(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	h := newHarness(t, nil)
	var aborts atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := testConfig(4, 0)
	c.Duration = time.Hour
	c.StopGrace = time.Hour
	c.Abort = func() { aborts.Add(1) }
	stuck := make(chan struct{})
	var once sync.Once
	h.runner.ev = func(ctx context.Context, w *fakeWorker, ev *workload.Event) error {
		if w.n == 3 {
			once.Do(func() { close(stuck) })
			<-release // a blocking system call nothing interrupts
		}
		return nil
	}
	go func() {
		<-stuck
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	res := h.runBounded(t, ctx, c, nil)
	if !res.Interrupted || res.Err != nil {
		t.Errorf("Interrupted %v, Err %v; want an interruption", res.Interrupted, res.Err)
	}
	if aborts.Load() == 0 {
		t.Error("Abort was not called")
	}
	if res.Unfinished != 4 {
		t.Errorf("Unfinished = %d, want the 4 stuck events", res.Unfinished)
	}
	if res.Latency.Max() < abandonAfter {
		t.Errorf("latency max %v, want >= %v: stuck events are recorded with their latency so far", res.Latency.Max(), abandonAfter)
	}
}

// TestSetupFirstCause: when a worker's setup fails and the runner aborts
// the others, their "connection closed" errors must not hide the cause.
func TestSetupFirstCause(t *testing.T) {
	aborted := make(chan struct{})
	var once sync.Once
	var blocked sync.WaitGroup
	blocked.Add(3)
	h := newHarness(t, nil)
	h.runner.newWorker = func(id int) error {
		if id == 2 {
			blocked.Wait() // the others are dialling
			return &mysql.MySQLError{Number: 1461, Message: "Can't create more than max_prepared_stmt_count statements"}
		}
		blocked.Done()
		<-aborted // the runner's Abort closes their sockets
		return errLost
	}
	c := testConfig(4, 10)
	c.Abort = func() { once.Do(func() { close(aborted) }) }
	res, err := Run(context.Background(), c, h.env, h.runner, nil)
	var me *mysql.MySQLError
	if res != nil || !errors.As(err, &me) || me.Number != 1461 {
		t.Fatalf("Run = %v, %v; want worker 2's error 1461", res, err)
	}
}

// TestInterruptDuringConnect: an interrupt ends Run while workers are stuck
// connecting (a frozen server), and what they open later is closed.
func TestInterruptDuringConnect(t *testing.T) {
	release := make(chan struct{})
	h := newHarness(t, nil)
	var started sync.WaitGroup
	started.Add(1)
	var once sync.Once
	h.runner.newWorker = func(id int) error {
		if id == 1 {
			once.Do(started.Done)
			<-release // a dial nothing interrupts
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		started.Wait()
		cancel()
	}()
	res := h.runBounded(t, ctx, testConfig(4, 10), nil)
	if !res.Interrupted || res.Events != 0 {
		t.Errorf("Interrupted %v, Events %d; want an interrupted run with nothing counted", res.Interrupted, res.Events)
	}
	close(release)
	// The abandoned worker closes its own Worker once it returns.
	deadline := time.Now().Add(hangBound)
	for h.runner.closed.Load() < h.runner.newWorkers.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("%d Workers made, %d closed", h.runner.newWorkers.Load(), h.runner.closed.Load())
		}
		time.Sleep(time.Millisecond)
	}
}
