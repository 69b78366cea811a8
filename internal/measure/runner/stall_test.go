package runner

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/workload"
)

// frozenAfter returns an event function whose workers all hang from their
// n-th event on, as on a frozen server, until Abort closes aborted.
func frozenAfter(n int64, aborted <-chan struct{}) eventFunc {
	return func(_ context.Context, w *fakeWorker, _ *workload.Event) error {
		if w.n >= n {
			<-aborted // a read the server never answers; Abort closes the socket
			return errLost
		}
		return nil
	}
}

// TestStallEndsRun: every worker waits for a server that stopped answering.
// With --events the run would never end; the stall watchdog fails it, and
// the stalled events are unfinished, not errors.
func TestStallEndsRun(t *testing.T) {
	for _, warm := range []bool{false, true} {
		name := map[bool]string{false: "measured", true: "warm-up"}[warm]
		t.Run(name, func(t *testing.T) {
			aborted := make(chan struct{})
			var once sync.Once
			h := newHarness(t, frozenAfter(20, aborted))
			c := testConfig(3, 1<<40)
			c.StopGrace = time.Hour // the watchdog does not wait for the grace
			c.StallTimeout = 300 * time.Millisecond
			c.Abort = func() { once.Do(func() { close(aborted) }) }
			var probes atomic.Int64
			c.Probe = func(ctx context.Context) error { // a ping the frozen server never answers
				probes.Add(1)
				<-ctx.Done()
				return ctx.Err()
			}
			if warm {
				c.Warmup = time.Hour
			}
			res := h.runBounded(t, context.Background(), c, nil)
			if !errors.Is(res.Err, ErrStalled) {
				t.Fatalf("Err %v, want ErrStalled", res.Err)
			}
			if res.Interrupted {
				t.Error("a stall is a failure, not an interruption")
			}
			if !warm && (res.Unfinished != 3 || res.Errors != 0) {
				t.Errorf("Unfinished %d Errors %d, want the 3 stalled events unfinished", res.Unfinished, res.Errors)
			}
			if want := "server stopped answering for 300ms"; !strings.HasPrefix(res.Err.Error(), want) {
				t.Errorf("error %q", res.Err)
			}
			if probes.Load() != 1 {
				t.Errorf("%d probes, want 1", probes.Load())
			}
		})
	}
}

// TestStallNotWhileProgress: one worker hangs, the others go on: the server
// answers, so there is no stall.
func TestStallNotWhileProgress(t *testing.T) {
	aborted := make(chan struct{})
	var once sync.Once
	h := newHarness(t, func(_ context.Context, w *fakeWorker, _ *workload.Event) error {
		if w.id == 0 && w.n == 2 {
			<-aborted
			return errLost
		}
		time.Sleep(time.Millisecond)
		return nil
	})
	c := testConfig(2, 0)
	c.Duration = time.Second
	c.StopGrace = 50 * time.Millisecond
	c.StallTimeout = 200 * time.Millisecond
	c.Abort = func() { once.Do(func() { close(aborted) }) }
	res := h.runBounded(t, context.Background(), c, nil)
	if res.Err != nil || res.Events == 0 || res.Unfinished < 1 {
		t.Errorf("Err %v Events %d Unfinished %d: want a complete run with the hung event unfinished", res.Err, res.Events, res.Unfinished)
	}
}

// TestStallNotWhenIdle: at a low --rate the workers wait for their next
// event longer than the stall timeout: waiting for nothing is no stall.
func TestStallNotWhenIdle(t *testing.T) {
	h := newHarness(t, nil)
	c := testConfig(2, 0)
	c.Duration = 1200 * time.Millisecond
	c.Rate = 2
	c.StallTimeout = 100 * time.Millisecond
	res := h.runBounded(t, context.Background(), c, nil)
	if res.Err != nil || res.Events < 2 {
		t.Errorf("Err %v Events %d: want a complete run", res.Err, res.Events)
	}
}

// TestStallDisabled: --stall-timeout 0 lets a long event run: the run ends
// at its time, the event unfinished.
func TestStallDisabled(t *testing.T) {
	aborted := make(chan struct{})
	var once sync.Once
	h := newHarness(t, frozenAfter(5, aborted))
	c := testConfig(1, 0)
	c.Duration = 600 * time.Millisecond
	c.StopGrace = 50 * time.Millisecond
	c.StallTimeout = 0
	c.Abort = func() { once.Do(func() { close(aborted) }) }
	res := h.runBounded(t, context.Background(), c, nil)
	if res.Err != nil || res.Unfinished != 1 || res.Elapsed < c.Duration {
		t.Errorf("Err %v Unfinished %d Elapsed %v: want the run to its end", res.Err, res.Unfinished, res.Elapsed)
	}
}

// TestStopWakesSleeper: an event waiting on workload.Stop ends at the
// stop as unfinished, not as an error, and the run ends on time rather
// than after the stop grace.
func TestStopWakesSleeper(t *testing.T) {
	h := newHarness(t, func(ctx context.Context, w *fakeWorker, _ *workload.Event) error {
		if w.n < 3 {
			return nil
		}
		select {
		case <-workload.Stop(ctx):
			return workload.ErrStopped
		case <-time.After(time.Hour):
			return nil
		}
	})
	c := testConfig(2, 0)
	c.Duration = 300 * time.Millisecond
	c.StopGrace = time.Hour
	c.Abort = func() {}
	start := time.Now()
	res := h.runBounded(t, context.Background(), c, nil)
	if res.Err != nil || res.Errors != 0 || res.Unfinished != 2 || res.Events != 4 {
		t.Errorf("Err %v Errors %d Unfinished %d Events %d: want 4 events and the 2 sleepers unfinished",
			res.Err, res.Errors, res.Unfinished, res.Events)
	}
	if took := time.Since(start); took > 10*time.Second { // a bound on a hang, not a speed
		t.Errorf("run took %v: the sleepers held it past its end", took)
	}
}

// TestStallNotWhileServerAnswers: every worker runs a long statement, but
// the server answers the probe: the run goes on to its end, probing again
// after each further --stall-timeout.
func TestStallNotWhileServerAnswers(t *testing.T) {
	aborted := make(chan struct{})
	var once sync.Once
	h := newHarness(t, frozenAfter(5, aborted))
	c := testConfig(2, 0)
	c.Duration = 1100 * time.Millisecond
	c.StopGrace = 50 * time.Millisecond
	c.StallTimeout = 200 * time.Millisecond
	c.Abort = func() { once.Do(func() { close(aborted) }) }
	var probes atomic.Int64
	c.Probe = func(context.Context) error { probes.Add(1); return nil }
	res := h.runBounded(t, context.Background(), c, nil)
	if res.Err != nil || res.Unfinished != 2 || res.Elapsed < c.Duration {
		t.Errorf("Err %v Unfinished %d Elapsed %v: want the run to its end", res.Err, res.Unfinished, res.Elapsed)
	}
	if n := probes.Load(); n < 2 {
		t.Errorf("%d probes, want one per --stall-timeout without progress", n)
	}
}

// TestStallProbeIgnoresContext: a probe that never returns counts as no
// answer once its time is up.
func TestStallProbeIgnoresContext(t *testing.T) {
	aborted := make(chan struct{})
	var once sync.Once
	h := newHarness(t, frozenAfter(5, aborted))
	c := testConfig(1, 1<<40)
	c.StallTimeout = 100 * time.Millisecond
	c.Abort = func() { once.Do(func() { close(aborted) }) }
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	c.Probe = func(context.Context) error { <-block; return nil }
	if res := h.runBounded(t, context.Background(), c, nil); !errors.Is(res.Err, ErrStalled) {
		t.Errorf("Err %v, want ErrStalled", res.Err)
	}
}

// TestStallAtRate: at a fixed rate the queue of a frozen server's run
// overflows and the pacer counts drops: those are no sign of life, and the
// stall still ends the run.
func TestStallAtRate(t *testing.T) {
	aborted := make(chan struct{})
	var once sync.Once
	h := newHarness(t, frozenAfter(3, aborted))
	c := testConfig(2, 0)
	c.Duration = time.Hour
	c.Rate = 1000
	c.QueueSize = 4
	c.StallTimeout = 300 * time.Millisecond
	c.Abort = func() { once.Do(func() { close(aborted) }) }
	res := h.runBounded(t, context.Background(), c, nil)
	if !errors.Is(res.Err, ErrStalled) || res.Dropped == 0 {
		t.Errorf("Err %v, %d dropped: want ErrStalled after drops", res.Err, res.Dropped)
	}
}
