package runner

import (
	"context"
	"database/sql/driver"
	"errors"
	"math"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dbarena/dbarena/internal/measure/hist"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/workload"
)

func TestValidate(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		if errs := DefaultConfig().Validate(); len(errs) != 0 {
			t.Errorf("DefaultConfig is invalid: %v", errs)
		}
	})
	t.Run("all problems at once", func(t *testing.T) {
		c := Config{Threads: 0, Duration: -time.Second, Events: -1, Warmup: -1, ReportInterval: -1,
			Rate: math.NaN(), QueueSize: -1, IgnoreErrors: []string{"1062", " "}, MaxRetries: -1, StopGrace: -1,
			ReconnectTimeout: -1, Checkpoint: -1}
		errs := c.Validate()
		var all []string
		for _, e := range errs {
			all = append(all, e.Error())
		}
		msg := strings.Join(all, "\n")
		for _, want := range []string{"--threads", "--time", "--events", "--warmup", "--report-interval",
			"--rate ", "--rate-queue", "--ignore-errors", "max retries", "stop grace", "--reconnect-timeout",
			"checkpoint"} {
			if !strings.Contains(msg, want) {
				t.Errorf("no error names %q; got:\n%s", want, msg)
			}
		}
		if len(errs) != 12 {
			t.Errorf("got %d errors, want 12:\n%s", len(errs), msg)
		}
	})
	t.Run("no stop condition", func(t *testing.T) {
		c := DefaultConfig()
		c.Duration = 0
		errs := c.Validate()
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), "--time") || !strings.Contains(errs[0].Error(), "--events") {
			t.Errorf("Validate = %v, want one error naming --time and --events", errs)
		}
	})
	t.Run("Run rejects", func(t *testing.T) {
		h := newHarness(t, nil)
		c := testConfig(0, 10)
		if _, err := Run(context.Background(), c, h.env, h.runner, nil); err == nil || !strings.Contains(err.Error(), "--threads") {
			t.Errorf("Run with 0 threads: err = %v, want one naming --threads", err)
		}
	})
}

func TestEventsLimitExact(t *testing.T) {
	for _, tc := range []struct {
		name    string
		threads int
		events  int64
	}{
		{"one thread", 1, 500},
		{"four threads", 4, 1000},
		{"more threads than events", 16, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			res := h.run(t, context.Background(), testConfig(tc.threads, tc.events))
			if res.Events != tc.events {
				t.Errorf("Events = %d, want %d", res.Events, tc.events)
			}
			if got := h.runner.succeeded.Load(); got != tc.events {
				t.Errorf("workers ran %d events, want exactly %d", got, tc.events)
			}
			if want := (workload.Queries{Read: 2 * tc.events, Write: tc.events, Other: tc.events}); res.Queries != want {
				t.Errorf("Queries = %+v, want %+v", res.Queries, want)
			}
			if res.Latency.Count() != tc.events {
				t.Errorf("Latency.Count = %d, want %d", res.Latency.Count(), tc.events)
			}
			if res.Interrupted || res.Err != nil || res.Errors != 0 {
				t.Errorf("Interrupted %v, Err %v, Errors %d; want a clean run", res.Interrupted, res.Err, res.Errors)
			}
			if n := h.runner.closed.Load(); n != int64(tc.threads) {
				t.Errorf("%d Workers closed, want %d", n, tc.threads)
			}
		})
	}
}

func TestDurationStop(t *testing.T) {
	h := newHarness(t, func(context.Context, *fakeWorker, *workload.Event) error {
		time.Sleep(time.Millisecond)
		return nil
	})
	c := testConfig(2, 0)
	c.Duration = 200 * time.Millisecond
	res := h.run(t, context.Background(), c)
	if res.Elapsed < c.Duration {
		t.Errorf("Elapsed = %v, want >= %v", res.Elapsed, c.Duration)
	}
	if res.Events == 0 || res.Interrupted || res.Err != nil {
		t.Errorf("Events %d, Interrupted %v, Err %v; want events and a clean stop", res.Events, res.Interrupted, res.Err)
	}
	if !res.Ended.After(res.Started) || res.Ended.Sub(res.Started) != res.Elapsed {
		t.Errorf("Started %v, Ended %v, Elapsed %v disagree", res.Started, res.Ended, res.Elapsed)
	}
	if len(res.Intervals) != 0 {
		t.Errorf("%d intervals without --report-interval", len(res.Intervals))
	}
}

func TestWarmupExcluded(t *testing.T) {
	var began time.Time
	h := newHarness(t, func(_ context.Context, w *fakeWorker, ev *workload.Event) error {
		// Events that start well inside the warm-up are typed "early":
		// none of them may be counted.
		if time.Since(began) < 150*time.Millisecond {
			ev.Type = "early"
		} else {
			ev.Type = "late"
		}
		time.Sleep(time.Millisecond)
		return nil
	})
	c := testConfig(2, 0)
	c.Warmup = 300 * time.Millisecond
	c.Duration = 300 * time.Millisecond
	c.ReportInterval = 100 * time.Millisecond
	began = time.Now()
	res := h.run(t, context.Background(), c)

	if _, ok := res.PerType["early"]; ok {
		t.Errorf("warm-up events counted: PerType = %v", res.PerType)
	}
	if res.PerType["late"] == nil || res.PerType["late"].Count != res.Events {
		t.Errorf("PerType[late] = %+v, want Count = Events = %d", res.PerType["late"], res.Events)
	}
	if ran := h.runner.succeeded.Load(); ran <= res.Events {
		t.Errorf("ran %d events, counted %d: warm-up events should have run uncounted", ran, res.Events)
	}
	if res.Warmup < c.Warmup {
		t.Errorf("Warmup = %v, want >= %v", res.Warmup, c.Warmup)
	}
	if res.Latency.Count() != res.Events+res.Unfinished {
		t.Errorf("Latency.Count = %d, Events = %d, Unfinished = %d", res.Latency.Count(), res.Events, res.Unfinished)
	}
	if len(res.Intervals) == 0 || res.Intervals[0].Start != 0 {
		t.Fatalf("measured intervals %+v: want the first to start at 0", res.Intervals)
	}
	checkSums(t, res)

	var warm []Interval
	for _, iv := range h.intervals {
		if iv.Warmup {
			warm = append(warm, iv)
		}
	}
	if len(warm) == 0 {
		t.Fatal("onInterval got no warm-up interval")
	}
	if warm[0].Start != -c.Warmup || warm[len(warm)-1].End != 0 {
		t.Errorf("warm-up intervals run %v..%v, want %v..0", warm[0].Start, warm[len(warm)-1].End, -c.Warmup)
	}
	if !reflect.DeepEqual(h.intervals[len(warm)-1], warm[len(warm)-1]) {
		t.Error("warm-up intervals were not reported first")
	}
}

func TestRetry(t *testing.T) {
	h := newHarness(t, func(_ context.Context, w *fakeWorker, _ *workload.Event) error {
		if w.n%3 == 0 && w.attempts < 2 { // every third event fails twice
			return &mysql.MySQLError{Number: 1213, Message: "Deadlock found"}
		}
		return nil
	})
	const events = 300
	res := h.run(t, context.Background(), testConfig(3, events))
	if res.Events != events || res.Err != nil || res.Errors != 0 {
		t.Fatalf("Events %d, Errors %d, Err %v; want %d clean events", res.Events, res.Errors, res.Err, events)
	}
	if res.Retries < 2*(events/3)-6 || res.Retries > 2*(events/3)+6 {
		t.Errorf("Retries = %d, want about %d", res.Retries, 2*events/3)
	}
	if res.ErrorsByCode["1213"] != res.Retries {
		t.Errorf("ErrorsByCode[1213] = %d, want Retries = %d", res.ErrorsByCode["1213"], res.Retries)
	}
	if got := h.db.rollbacks.Load(); got != res.Retries {
		t.Errorf("%d ROLLBACKs, want one per retry (%d)", got, res.Retries)
	}
	// Queries of failed attempts count too: each attempt issues 4.
	if want := 4 * (events + res.Retries); res.Queries.Total() != want {
		t.Errorf("Queries = %d, want %d (failed attempts included)", res.Queries.Total(), want)
	}
}

func TestRetriesExhausted(t *testing.T) {
	h := newHarness(t, func(_ context.Context, w *fakeWorker, _ *workload.Event) error {
		if w.n == 10 {
			return &mysql.MySQLError{Number: 1205, Message: "Lock wait timeout exceeded"}
		}
		return nil
	})
	c := testConfig(1, 100)
	c.MaxRetries = 3
	res := h.run(t, context.Background(), c)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "worker 0: error 1205: gave up after 3 retries") {
		t.Fatalf("Err = %v, want worker 0's error 1205 after 3 retries", res.Err)
	}
	if res.Retries != 3 || res.Errors != 1 || res.Events != 9 {
		t.Errorf("Retries %d, Errors %d, Events %d; want 3, 1, 9", res.Retries, res.Errors, res.Events)
	}
}

func TestIgnoredErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ignore []string
	}{
		{"by code", []string{"1146", "1062"}},
		{"all", []string{"all"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(_ context.Context, w *fakeWorker, ev *workload.Event) error {
				ev.Type = "t"
				if w.n%10 == 0 {
					return &mysql.MySQLError{Number: 1062, Message: "Duplicate entry"}
				}
				return nil
			})
			const events = 200
			c := testConfig(2, events)
			c.IgnoreErrors = tc.ignore
			res := h.run(t, context.Background(), c)
			if res.Err != nil {
				t.Fatalf("Err = %v, want ignored", res.Err)
			}
			if res.Events != events {
				t.Errorf("Events = %d, want %d: a failed event does not count", res.Events, events)
			}
			if res.Errors == 0 || res.ErrorsByCode["1062"] != res.Errors {
				t.Errorf("Errors %d, ErrorsByCode %v; want every error as 1062", res.Errors, res.ErrorsByCode)
			}
			if pt := res.PerType["t"]; pt == nil || pt.Errors != res.Errors || pt.Count != events {
				t.Errorf("PerType[t] = %+v, want Count %d and Errors %d", pt, events, res.Errors)
			}
			if got := h.db.rollbacks.Load(); got != res.Errors {
				t.Errorf("%d ROLLBACKs, want one per ignored error (%d)", got, res.Errors)
			}
		})
	}
}

func TestFatalErrorStops(t *testing.T) {
	h := newHarness(t, func(_ context.Context, w *fakeWorker, _ *workload.Event) error {
		if w.n == 50 {
			return &mysql.MySQLError{Number: 1146, Message: "Table 'sbtest.sbtest1' doesn't exist"}
		}
		return nil
	})
	c := testConfig(1, 0)
	c.Duration = time.Hour
	c.IgnoreErrors = []string{"1062"}
	res, err := Run(context.Background(), c, h.env, h.runner, nil)
	if err != nil {
		t.Fatalf("Run returned %v; a mid-run error belongs in Result.Err", err)
	}
	var me *mysql.MySQLError
	if res.Err == nil || !errors.As(res.Err, &me) || me.Number != 1146 {
		t.Fatalf("Err = %v, want the wrapped MySQL error 1146", res.Err)
	}
	if !strings.HasPrefix(res.Err.Error(), "worker 0: error 1146: ") {
		t.Errorf("Err = %q, want it to start with worker and code", res.Err)
	}
	if res.Events != 49 || res.Errors != 1 || res.ErrorsByCode["1146"] != 1 {
		t.Errorf("Events %d, Errors %d, ErrorsByCode %v; want the partial result 49, 1, 1146=1",
			res.Events, res.Errors, res.ErrorsByCode)
	}
	if res.Interrupted {
		t.Error("a fatal error is not an interruption")
	}
}

func TestConnLostReconnects(t *testing.T) {
	h := newHarness(t, func(_ context.Context, w *fakeWorker, _ *workload.Event) error {
		if w.id == 0 && w.gen == 0 && w.n == 5 {
			return &mysql.MySQLError{Number: 2013, Message: "Lost connection to server during query"}
		}
		return nil
	})
	// One thread: with more, the others could finish every event before
	// worker 0 reaches its fifth on a loaded machine.
	const threads, events = 1, 300
	c := testConfig(threads, events)
	c.Seed = 42
	res := h.run(t, context.Background(), c)
	if res.Err != nil || res.Events != events {
		t.Fatalf("Err %v, Events %d; want the run to go on to %d events", res.Err, res.Events, events)
	}
	if res.Reconnects != 1 || res.Errors != 1 || res.ErrorsByCode["2013"] != 1 {
		t.Errorf("Reconnects %d, Errors %d, ErrorsByCode %v; want 1, 1, 2013=1", res.Reconnects, res.Errors, res.ErrorsByCode)
	}
	if n := h.runner.newWorkers.Load(); n != threads+1 {
		t.Errorf("%d Workers made, want %d", n, threads+1)
	}
	if n := h.db.connects.Load(); n != threads+1 {
		t.Errorf("%d connections opened, want %d: the lost one must be discarded, not pooled", n, threads+1)
	}
	if seeds := h.runner.seeds[0]; len(seeds) != 2 || seeds[0] != 42 || seeds[1] != 42+threads {
		t.Errorf("worker 0 seeds = %v, want [42 %d]", seeds, 42+threads)
	}
}

func TestReconnectBackoff(t *testing.T) {
	// The first reconnect attempts fail: the worker keeps trying.
	var h *harness
	failures := 0
	h = newHarness(t, func(_ context.Context, w *fakeWorker, _ *workload.Event) error {
		if w.gen == 0 && w.n == 3 {
			return &mysql.MySQLError{Number: 2006, Message: "MySQL server has gone away"}
		}
		return nil
	})
	h.runner.newWorker = func(id int) error {
		if h.runner.newWorkers.Load() >= 1 && failures < 2 {
			failures++
			return &mysql.MySQLError{Number: 2013, Message: "Lost connection"}
		}
		return nil
	}
	res := h.run(t, context.Background(), testConfig(1, 20))
	if res.Err != nil || res.Events != 20 || res.Reconnects != 1 || failures != 2 {
		t.Errorf("Err %v, Events %d, Reconnects %d, failed attempts %d; want nil, 20, 1, 2",
			res.Err, res.Events, res.Reconnects, failures)
	}
}

func TestInterrupt(t *testing.T) {
	h := newHarness(t, func(ctx context.Context, _ *fakeWorker, _ *workload.Event) error {
		select {
		case <-time.After(time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := testConfig(2, 0)
	c.Duration = time.Hour
	c.ReportInterval = 50 * time.Millisecond
	c.StopGrace = time.Hour // an interrupt must not wait for it
	time.AfterFunc(200*time.Millisecond, cancel)
	res := h.run(t, ctx, c)
	if !res.Interrupted || res.Err != nil {
		t.Fatalf("Interrupted %v, Err %v; want an interruption without error", res.Interrupted, res.Err)
	}
	if res.Events == 0 || res.Errors != 0 {
		t.Errorf("Events %d, Errors %d; want a partial result, no errors from the cancellation", res.Events, res.Errors)
	}
	checkSums(t, res)
}

// TestInterruptAborts: with Config.Abort, events run under a context that
// is never cancelled; an interrupt calls Abort, which unblocks them.
func TestInterruptAborts(t *testing.T) {
	aborted := make(chan struct{})
	var once sync.Once
	h := newHarness(t, func(ctx context.Context, _ *fakeWorker, _ *workload.Event) error {
		if ctx.Done() != nil {
			return errors.New("event context is cancellable")
		}
		select {
		case <-time.After(time.Millisecond):
			return nil
		case <-aborted: // as a closed socket would fail the statement
			return driver.ErrBadConn
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := testConfig(2, 0)
	c.Duration = time.Hour
	c.StopGrace = time.Hour
	c.Abort = func() { once.Do(func() { close(aborted) }) }
	time.AfterFunc(100*time.Millisecond, cancel)
	res := h.run(t, ctx, c)
	if !res.Interrupted || res.Err != nil || res.Errors != 0 || res.Reconnects != 0 || res.Events == 0 {
		t.Fatalf("Interrupted %v, Err %v, Errors %d, Reconnects %d, Events %d",
			res.Interrupted, res.Err, res.Errors, res.Reconnects, res.Events)
	}
}

func TestInterruptDuringWarmup(t *testing.T) {
	h := newHarness(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	c := testConfig(1, 0)
	c.Duration = time.Hour
	c.Warmup = time.Hour
	res := h.run(t, ctx, c)
	if !res.Interrupted || res.Events != 0 || res.Warmup <= 0 || res.Latency == nil {
		t.Errorf("Interrupted %v, Events %d, Warmup %v; want an interrupted warm-up with nothing counted",
			res.Interrupted, res.Events, res.Warmup)
	}
}

func TestStopGraceCancelsStuckEvents(t *testing.T) {
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
	res := h.run(t, context.Background(), c)
	if res.Err != nil || res.Errors != 0 || res.Interrupted {
		t.Errorf("Err %v, Errors %d, Interrupted %v: an event cancelled at the stop is not an error",
			res.Err, res.Errors, res.Interrupted)
	}
}

func TestPerType(t *testing.T) {
	types := []string{"new_order", "payment", "delivery"}
	h := newHarness(t, func(_ context.Context, w *fakeWorker, ev *workload.Event) error {
		ev.Type = types[w.n%3]
		if ev.Type == "delivery" && w.attempts == 0 && w.n%2 == 0 {
			return &mysql.MySQLError{Number: 1213, Message: "Deadlock found"}
		}
		return nil
	})
	const events = 600
	res := h.run(t, context.Background(), testConfig(1, events))
	var sum int64
	for _, name := range types {
		pt := res.PerType[name]
		if pt == nil {
			t.Fatalf("no PerType[%s]", name)
		}
		if pt.Count != 200 || pt.Latency.Count() != pt.Count {
			t.Errorf("PerType[%s]: Count %d, Latency.Count %d; want 200", name, pt.Count, pt.Latency.Count())
		}
		sum += pt.Retries
		if name != "delivery" && pt.Retries != 0 {
			t.Errorf("PerType[%s].Retries = %d, want 0", name, pt.Retries)
		}
	}
	if sum != res.Retries || res.Retries != 100 {
		t.Errorf("per-type retries add up to %d, Retries = %d; want 100", sum, res.Retries)
	}
}

func TestIntervalsSumToTotals(t *testing.T) {
	ev := func(_ context.Context, w *fakeWorker, _ *workload.Event) error {
		switch {
		case w.n%17 == 0 && w.attempts == 0:
			return &mysql.MySQLError{Number: 1213, Message: "Deadlock found"}
		case w.n%29 == 0:
			return &mysql.MySQLError{Number: 1062, Message: "Duplicate entry"}
		}
		time.Sleep(100 * time.Microsecond)
		return nil
	}
	t.Run("duration", func(t *testing.T) {
		h := newHarness(t, ev)
		c := testConfig(4, 0)
		c.Duration = 400 * time.Millisecond
		c.ReportInterval = 50 * time.Millisecond
		c.IgnoreErrors = []string{"1062"}
		res := h.run(t, context.Background(), c)
		if len(res.Intervals) < 2 {
			t.Errorf("%d intervals, want about 8", len(res.Intervals))
		}
		if res.Retries == 0 || res.Errors == 0 {
			t.Errorf("Retries %d, Errors %d; the test wants some of both", res.Retries, res.Errors)
		}
		checkSums(t, res)
		if len(h.intervals) != len(res.Intervals) {
			t.Errorf("onInterval called %d times for %d intervals", len(h.intervals), len(res.Intervals))
		}
	})
	t.Run("events with a partial last interval", func(t *testing.T) {
		h := newHarness(t, ev)
		c := testConfig(3, 2000)
		c.ReportInterval = 20 * time.Millisecond
		c.IgnoreErrors = []string{"1062"}
		res := h.run(t, context.Background(), c)
		if res.Events != 2000 {
			t.Errorf("Events = %d, want 2000", res.Events)
		}
		checkSums(t, res)
	})
}

func TestRateThroughput(t *testing.T) {
	// Worker 0 loses its connection early on: the schedule goes on.
	h := newHarness(t, func(_ context.Context, w *fakeWorker, _ *workload.Event) error {
		if w.id == 0 && w.gen == 0 && w.n == 2 {
			return &mysql.MySQLError{Number: 2013, Message: "Lost connection to server during query"}
		}
		return nil
	})
	c := testConfig(2, 0)
	c.Rate = 200
	c.Duration = time.Second
	res := h.run(t, context.Background(), c)
	tps := float64(res.Events) / res.Elapsed.Seconds()
	if tps < 0.7*c.Rate || tps > 1.3*c.Rate {
		t.Errorf("throughput %.1f events/s, want about %v", tps, c.Rate)
	}
	if res.Dropped != 0 || res.Err != nil {
		t.Errorf("Dropped %d, Err %v; want 0 and nil with idle workers", res.Dropped, res.Err)
	}
	if res.Reconnects != 1 {
		t.Errorf("Reconnects = %d, want 1", res.Reconnects)
	}
}

func TestRateEventsLimit(t *testing.T) {
	// Many workers wait for the queue when the last event is done: the run
	// must stop then, not when each of them gets one more event.
	h := newHarness(t, nil)
	c := testConfig(8, 30)
	c.Rate = 300
	res := h.run(t, context.Background(), c)
	if res.Events != 30 || res.Err != nil {
		t.Errorf("Events %d, Err %v; want 30, nil", res.Events, res.Err)
	}
}

func TestRateLatencyFromIntendedStart(t *testing.T) {
	// One worker at 100 events/s; its 20th event stalls 300ms. The events
	// due meanwhile wait in the queue, and their latency must show it: a
	// closed-loop measurement would see one slow event out of 100.
	h := newHarness(t, func(_ context.Context, w *fakeWorker, _ *workload.Event) error {
		if w.n == 20 {
			time.Sleep(300 * time.Millisecond)
		}
		return nil
	})
	c := testConfig(1, 100)
	c.Rate = 100
	res := h.run(t, context.Background(), c)
	if res.Events != 100 {
		t.Fatalf("Events = %d, want 100", res.Events)
	}
	if p99 := res.Latency.Quantile(99); p99 < 250*time.Millisecond {
		t.Errorf("p99 = %v, want >= 250ms: queued events must carry the stall", p99)
	}
	if p90 := res.Latency.Quantile(90); p90 < 100*time.Millisecond {
		t.Errorf("p90 = %v, want >= 100ms: about 30 events were queued behind the stall", p90)
	}
	if res.Late < 20 {
		t.Errorf("Late = %d, want >= 20", res.Late)
	}
}

func TestRateDropped(t *testing.T) {
	h := newHarness(t, func(context.Context, *fakeWorker, *workload.Event) error {
		time.Sleep(10 * time.Millisecond)
		return nil
	})
	c := testConfig(1, 0)
	c.Rate = 2000
	c.QueueSize = 4
	c.Duration = 500 * time.Millisecond
	c.ReportInterval = 100 * time.Millisecond
	res := h.run(t, context.Background(), c)
	if res.Dropped < 500 {
		t.Errorf("Dropped = %d, want most of ~1000 scheduled events (capacity ~50)", res.Dropped)
	}
	if res.Late == 0 {
		t.Error("Late = 0, want the queued events late")
	}
	checkSums(t, res)
}

func TestRateWithWarmup(t *testing.T) {
	h := newHarness(t, nil)
	c := testConfig(2, 0)
	c.Rate = 500
	c.Warmup = 200 * time.Millisecond
	c.Duration = 400 * time.Millisecond
	c.ReportInterval = 100 * time.Millisecond
	res := h.run(t, context.Background(), c)
	tps := float64(res.Events) / res.Elapsed.Seconds()
	if tps < 0.6*c.Rate || tps > 1.4*c.Rate {
		t.Errorf("measured throughput %.1f events/s, want about %v", tps, c.Rate)
	}
	checkSums(t, res)
}

func TestConnectFailure(t *testing.T) {
	h := newHarness(t, nil)
	h.db.fail = errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	res, err := Run(context.Background(), testConfig(4, 10), h.env, h.runner, nil)
	var ce *ConnectError
	if err == nil || !errors.As(err, &ce) || res != nil {
		t.Fatalf("Run = %v, %v; want a *ConnectError and no result", res, err)
	}
	if !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("err = %q, want the driver's reason", err)
	}
}

func TestSetupFailure(t *testing.T) {
	h := newHarness(t, nil)
	h.runner.newWorker = func(id int) error {
		if id == 2 {
			return &mysql.MySQLError{Number: 1146, Message: "Table 'sbtest.sbtest1' doesn't exist"}
		}
		return nil
	}
	res, err := Run(context.Background(), testConfig(4, 10), h.env, h.runner, nil)
	var ce *ConnectError
	var me *mysql.MySQLError
	if err == nil || res != nil || errors.As(err, &ce) || !errors.As(err, &me) {
		t.Fatalf("Run = %v, %v; want the wrapped 1146, not a connection error", res, err)
	}
	if opened, closed := h.db.connects.Load(), h.db.closes.Load(); opened == 0 {
		t.Errorf("opened %d connections, closed %d", opened, closed)
	}
}

func TestFill(t *testing.T) {
	h := newHarness(t, func(_ context.Context, w *fakeWorker, ev *workload.Event) error {
		ev.Type = "a"
		if w.n%50 == 0 {
			return &mysql.MySQLError{Number: 1062, Message: "Duplicate entry"}
		}
		time.Sleep(50 * time.Microsecond)
		return nil
	})
	c := testConfig(2, 1000)
	c.ReportInterval = 20 * time.Millisecond
	c.IgnoreErrors = []string{"1062"}
	res := h.run(t, context.Background(), c)
	var run summary.Run
	res.Fill(&run)
	if run.DurationS != res.Elapsed.Seconds() || run.Totals.Events != 1000 || run.Totals.Errors != res.Errors {
		t.Errorf("Fill: duration %v, events %d, errors %d", run.DurationS, run.Totals.Events, run.Totals.Errors)
	}
	if q := run.Totals.Queries; q.Total != q.Read+q.Write+q.Other || q.Total != res.Queries.Total() {
		t.Errorf("Fill: queries %+v", q)
	}
	if math.Abs(run.Throughput.TPS-1000/run.DurationS) > 1e-6 {
		t.Errorf("Fill: TPS %v, want %v", run.Throughput.TPS, 1000/run.DurationS)
	}
	if run.LatencyMS.Max <= 0 || run.LatencyMS.P50 > run.LatencyMS.P99 {
		t.Errorf("Fill: latency %+v", run.LatencyMS)
	}
	if len(run.Intervals) != len(res.Intervals) {
		t.Errorf("Fill: %d intervals, want %d", len(run.Intervals), len(res.Intervals))
	}
	if pt := run.PerType["a"]; pt.Count != 1000 || pt.Errors != res.Errors {
		t.Errorf("Fill: per_type a = %+v", pt)
	}
	if run.Totals.ErrorsByCode["1062"] != res.Errors {
		t.Errorf("Fill: errors_by_code %v", run.Totals.ErrorsByCode)
	}
	d, err := hist.Decode(run.Histogram)
	if err != nil || d.Count() != 1000 {
		t.Errorf("Fill: histogram decodes to %v values, err %v; want 1000", d, err)
	}
	var empty summary.Run
	(&Result{Latency: hist.New()}).Fill(&empty)
	if empty.Intervals == nil || empty.Throughput.TPS != 0 {
		t.Errorf("Fill of an empty result: intervals %v, tps %v; want [] and 0", empty.Intervals, empty.Throughput.TPS)
	}
}

// BenchmarkRunnerOverhead measures what the runner adds to each event: a
// no-op worker, closed loop, one thread per CPU.
func BenchmarkRunnerOverhead(b *testing.B) {
	for _, tc := range []struct {
		name   string
		types  bool
		thread int
	}{{"1thread", false, 1}, {"1thread/types", true, 1}, {"4threads", false, 4}} {
		b.Run(tc.name, func(b *testing.B) {
			h := newHarness(b, func(_ context.Context, _ *fakeWorker, ev *workload.Event) error {
				if tc.types {
					ev.Type = "payment"
				}
				return nil
			})
			c := testConfig(tc.thread, int64(b.N))
			c.ReportInterval = 100 * time.Millisecond
			b.ReportAllocs()
			b.ResetTimer()
			res, err := Run(context.Background(), c, h.env, h.runner, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(res.Elapsed.Nanoseconds())/float64(b.N), "ns/event")
		})
	}
}

// limitedRunner is a fakeRunner with response-time limits.
type limitedRunner struct {
	*fakeRunner
	limits map[string]time.Duration
}

func (l limitedRunner) ResponseLimits() map[string]time.Duration { return l.limits }

func TestPerTypeIntervalsAndLate(t *testing.T) {
	h := newHarness(t, func(_ context.Context, w *fakeWorker, ev *workload.Event) error {
		ev.Type = []string{"fast", "slow"}[w.n%2]
		if ev.Type == "slow" && w.n%4 == 1 && w.attempts == 0 {
			return &mysql.MySQLError{Number: 1213, Message: "Deadlock found"}
		}
		return nil
	})
	// Every "slow" success is above its limit; no "fast" one is.
	lr := limitedRunner{h.runner, map[string]time.Duration{"slow": time.Nanosecond, "fast": time.Hour}}
	cfg := testConfig(2, 400)
	cfg.ReportInterval = time.Millisecond
	res, err := Run(context.Background(), cfg, h.env, lr, h.onInterval)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		late, retries bool
	}{{"fast", false, false}, {"slow", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			pt := res.PerType[tc.name]
			if pt == nil || pt.Count == 0 {
				t.Fatalf("PerType[%s] = %+v", tc.name, pt)
			}
			if want := map[bool]int64{true: pt.Count, false: 0}[tc.late]; pt.Late != want {
				t.Errorf("Late = %d, want %d", pt.Late, want)
			}
			var count, late, retries int64
			for _, iv := range res.Intervals {
				ti := iv.PerType[tc.name]
				count += ti.Count
				late += ti.Late
				retries += ti.Retries
				if ti.Count > 0 && (ti.Max <= 0 || ti.P90 > ti.Max) {
					t.Errorf("interval at %v: p90 %v, max %v", iv.End, ti.P90, ti.Max)
				}
			}
			if count != pt.Count || late != pt.Late || retries != pt.Retries {
				t.Errorf("intervals add up to count %d late %d retries %d; totals %d %d %d",
					count, late, retries, pt.Count, pt.Late, pt.Retries)
			}
			if tc.retries != (pt.Retries > 0) {
				t.Errorf("Retries = %d", pt.Retries)
			}
		})
	}
}

func TestPauseLeftOutOfLatency(t *testing.T) {
	const nap = 200 * time.Millisecond
	h := newHarness(t, func(_ context.Context, _ *fakeWorker, ev *workload.Event) error {
		start := time.Now()
		time.Sleep(nap)
		ev.Pause = time.Since(start)
		return nil
	})
	res := h.run(t, context.Background(), testConfig(2, 4))
	// What is left is the runner's own overhead, far below the pause.
	if max := res.Latency.Max(); max >= nap {
		t.Errorf("latency max %v includes the %v pause", max, nap)
	}
}

func TestWarmupUntil(t *testing.T) {
	h := newHarness(t, func(_ context.Context, _ *fakeWorker, _ *workload.Event) error {
		time.Sleep(time.Millisecond)
		return nil
	})
	tests := []struct {
		name   string
		steady int // intervals after which WarmupUntil says "steady"; 0 = never
		cap    time.Duration
		wantLo time.Duration // bounds of Result.Warmup
		wantHi time.Duration
	}{
		{"steady after two intervals", 2, 10 * time.Second, 200 * time.Millisecond, 5 * time.Second},
		{"never steady: the cap ends it", 0, 300 * time.Millisecond, 300 * time.Millisecond, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testConfig(1, 0)
			c.Warmup = tt.cap
			c.Duration = 100 * time.Millisecond
			c.ReportInterval = 100 * time.Millisecond
			var calls int
			c.WarmupUntil = func(ivs []Interval) bool {
				calls++
				if len(ivs) != calls {
					t.Errorf("call %d got %d intervals", calls, len(ivs))
				}
				for _, iv := range ivs {
					if !iv.Warmup {
						t.Errorf("measured interval passed to WarmupUntil: %+v", iv)
					}
				}
				return tt.steady > 0 && len(ivs) >= tt.steady
			}
			res := h.run(t, context.Background(), c)
			if res.Warmup < tt.wantLo || res.Warmup > tt.wantHi {
				t.Errorf("Warmup = %v, want in [%v, %v]", res.Warmup, tt.wantLo, tt.wantHi)
			}
			if tt.steady > 0 && calls != tt.steady {
				t.Errorf("WarmupUntil called %d times, want %d (it should stop being asked once steady)", calls, tt.steady)
			}
			if res.Events == 0 {
				t.Error("no measured events")
			}
		})
	}
	t.Run("validation", func(t *testing.T) {
		c := testConfig(1, 0)
		c.WarmupUntil = func([]Interval) bool { return true }
		if errs := c.Validate(); len(errs) == 0 {
			t.Error("WarmupUntil without a warm-up cap and report interval: want a validation error")
		}
	})
}

func TestDialer(t *testing.T) {
	h := newHarness(t, func(_ context.Context, w *fakeWorker, _ *workload.Event) error {
		if w.n%5 == 0 && w.attempts == 0 { // every fifth event fails once
			return &mysql.MySQLError{Number: 1213, Message: "Deadlock found"}
		}
		return nil
	})
	d := &dialingRunner{fakeRunner: h.runner}
	before := runtime.GOMAXPROCS(0)
	const threads = 40
	res, err := Run(context.Background(), testConfig(threads, 400), h.env, d, h.onInterval)
	if err != nil || res.Err != nil || res.Events != 400 {
		t.Fatalf("Run: %v, %+v", err, res)
	}
	if d.dials.Load() != threads || h.db.connects.Load() != 0 {
		t.Errorf("%d dialled workers, %d pool connections; want %d and none", d.dials.Load(), h.db.connects.Load(), threads)
	}
	if d.rollbacks.Load() != res.Retries || res.Retries == 0 {
		t.Errorf("%d Worker rollbacks, want one per retry (%d)", d.rollbacks.Load(), res.Retries)
	}
	if got := d.procs.Load(); got < threads+1 {
		t.Errorf("GOMAXPROCS during the run = %d, want at least %d", got, threads+1)
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS after the run = %d, was %d", after, before)
	}
	if h.runner.closed.Load() != threads {
		t.Errorf("%d Workers closed, want %d", h.runner.closed.Load(), threads)
	}
}

// TestGCPercent: events run with the garbage collector's target at
// gcPercent (GOGC unset), and the setting is restored after the run.
func TestGCPercent(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: the runner leaves the collector alone")
	}
	gcPercentNow := func() int {
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p
	}
	before := gcPercentNow()
	var during atomic.Int64
	h := newHarness(t, func(context.Context, *fakeWorker, *workload.Event) error {
		during.Store(int64(gcPercentNow()))
		return nil
	})
	h.run(t, context.Background(), testConfig(1, 10))
	if got := during.Load(); got != gcPercent {
		t.Errorf("GC percent during the run %d, want %d", got, gcPercent)
	}
	if after := gcPercentNow(); after != before {
		t.Errorf("GC percent after the run %d, want %d", after, before)
	}
}
