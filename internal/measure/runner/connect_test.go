package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/workload"
)

func TestParseConnect(t *testing.T) {
	for in, want := range map[string]Connect{"persistent": 0, "per-event": 1, "every=1": 1, "every=7": 7, " every=3 ": 3} {
		got, err := ParseConnect(in)
		if err != nil || got != want {
			t.Errorf("ParseConnect(%q) = %v, %v; want %v", in, got, err, want)
		}
		if back, err := ParseConnect(got.String()); err != nil || back != got {
			t.Errorf("ParseConnect(%q.String() = %q) = %v, %v", in, got.String(), back, err)
		}
	}
	for _, in := range []string{"", "always", "every=", "every=0", "every=-2", "every=x", "per_event", "every=1.5"} {
		if _, err := ParseConnect(in); err == nil || !strings.Contains(err.Error(), "--connect") {
			t.Errorf("ParseConnect(%q) error = %v, want one naming --connect", in, err)
		}
	}
	c := DefaultConfig()
	c.Connect = -1
	if errs := c.Validate(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "--connect") {
		t.Errorf("Validate with Connect -1 = %v, want one error naming --connect", errs)
	}
}

func FuzzParseConnect(f *testing.F) {
	for _, s := range []string{"persistent", "per-event", "every=3", "every=0", "every=99999999999999999999", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseConnect(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--connect: ") || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line naming --connect", err)
			}
			return
		}
		if c < 0 {
			t.Fatalf("ParseConnect(%q) = %d", s, c)
		}
		if back, err := ParseConnect(c.String()); err != nil || back != c {
			t.Errorf("round trip of %q: %v, %v", s, back, err)
		}
	})
}

// TestConnectEvery checks that every=N opens exactly one connection per N
// events, each with its own Worker, closed rather than pooled, and that
// its connect time is recorded apart from the events.
func TestConnectEvery(t *testing.T) {
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprint("every=", n), func(t *testing.T) {
			const events = 12
			h := newHarness(t, func(_ context.Context, w *fakeWorker, _ *workload.Event) error {
				if w.n > int64(n) {
					return fmt.Errorf("worker %d gen %d: event %d on one connection, want at most %d", w.id, w.gen, w.n, n)
				}
				return nil
			})
			cfg := testConfig(1, events)
			cfg.Connect = Connect(n)
			cfg.ReportInterval = time.Hour
			res := h.run(t, context.Background(), cfg)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if res.Events != events {
				t.Fatalf("events = %d, want %d", res.Events, events)
			}
			want := int64(events / n) // the first is opened before the clock starts
			if got := h.db.connects.Load(); got != want {
				t.Errorf("driver connections = %d, want %d", got, want)
			}
			if got := h.runner.newWorkers.Load(); got != want {
				t.Errorf("Workers = %d, want %d", got, want)
			}
			if res.Connects != want-1 || res.Connect.Count() != want-1 {
				t.Errorf("Connects = %d, connect histogram holds %d, want %d", res.Connects, res.Connect.Count(), want-1)
			}
			if res.Latency.Count() != events {
				t.Errorf("latency histogram holds %d, want %d (the events only)", res.Latency.Count(), events)
			}
			var ivConnects int64
			for _, iv := range res.Intervals {
				ivConnects += iv.Connects
			}
			if ivConnects != res.Connects {
				t.Errorf("intervals' connects add up to %d, want %d", ivConnects, res.Connects)
			}
			checkSums(t, res)
		})
	}
}

// TestConnectTimeApart checks that the set-up of each new connection is
// timed in Result.Connect: the Worker's set-up takes at least 20ms.
func TestConnectTimeApart(t *testing.T) {
	const setup = 20 * time.Millisecond
	h := newHarness(t, nil)
	h.runner.newWorker = func(int) error { time.Sleep(setup); return nil }
	cfg := testConfig(1, 4)
	cfg.Connect = 1
	res := h.run(t, context.Background(), cfg)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.Connect.Count() != 3 {
		t.Fatalf("connect histogram holds %d, want 3", res.Connect.Count())
	}
	if m := res.Connect.Min(); m < setup {
		t.Errorf("shortest connect %v, want >= %v (the set-up)", m, setup)
	}
	if res.Latency.Count() != 4 {
		t.Errorf("latency histogram holds %d, want 4", res.Latency.Count())
	}
}

// TestConnectRefusedRetried checks that refused reconnects are counted
// apart, by code, not as failed events, and retried until one succeeds.
func TestConnectRefusedRetried(t *testing.T) {
	h := newHarness(t, nil)
	h.runner.ev = func(_ context.Context, w *fakeWorker, _ *workload.Event) error {
		if w.gen == 1 { // the second connection: refuse the next two
			h.db.refuse.CompareAndSwap(0, 2)
		}
		return nil
	}
	cfg := testConfig(1, 5)
	cfg.Connect = 1
	res := h.run(t, context.Background(), cfg)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.Events != 5 || res.Errors != 0 {
		t.Errorf("events %d, errors %d; want 5, 0", res.Events, res.Errors)
	}
	if res.ConnectErrors != 2 || res.ErrorsByCode["1040"] != 2 {
		t.Errorf("connect errors %d, by code %v; want 2 and 1040: 2", res.ConnectErrors, res.ErrorsByCode)
	}
	if res.Connects != 4 || h.db.connects.Load() != 5 {
		t.Errorf("connects %d (driver %d), want 4 (5)", res.Connects, h.db.connects.Load())
	}
}

// TestConnectRefusedDeadline checks that a worker that cannot get a new
// connection within ReconnectTimeout fails the run with ErrUnreachable.
func TestConnectRefusedDeadline(t *testing.T) {
	h := newHarness(t, nil)
	h.runner.ev = func(context.Context, *fakeWorker, *workload.Event) error {
		h.db.down.Store(true) // the server goes away after the first event
		return nil
	}
	cfg := testConfig(1, 5)
	cfg.Connect = 1
	cfg.ReconnectTimeout = 300 * time.Millisecond
	res := h.run(t, context.Background(), cfg)
	if res.Err == nil || !strings.Contains(res.Err.Error(), ErrUnreachable.Error()) {
		t.Fatalf("Err = %v, want %v", res.Err, ErrUnreachable)
	}
	if res.Events != 1 || res.ConnectErrors < 1 {
		t.Errorf("events %d, connect errors %d; want 1, >= 1", res.Events, res.ConnectErrors)
	}
}

// TestConnectWithRate checks --connect with a fixed rate: every event still
// gets its own connection.
func TestConnectWithRate(t *testing.T) {
	h := newHarness(t, func(_ context.Context, w *fakeWorker, _ *workload.Event) error {
		if w.n > 1 {
			return fmt.Errorf("event %d on one connection", w.n)
		}
		return nil
	})
	cfg := testConfig(2, 20)
	cfg.Connect = 1
	cfg.Rate = 200
	res := h.run(t, context.Background(), cfg)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.Events != 20 {
		t.Errorf("events %d, want 20", res.Events)
	}
	if got := h.db.connects.Load(); got < 20 {
		t.Errorf("driver connections %d, want >= 20", got)
	}
}

// TestConnectDialer checks Config.Connect with Workers that own their
// connections: each new connection is a new DialWorker, and the old Worker
// is closed.
func TestConnectDialer(t *testing.T) {
	h := newHarness(t, nil)
	d := &dialingRunner{fakeRunner: h.runner}
	cfg := testConfig(1, 6)
	cfg.Connect = 2
	res, err := Run(context.Background(), cfg, h.env, d, nil)
	if err != nil || res.Err != nil || res.Events != 6 {
		t.Fatalf("Run: %v, %+v", err, res)
	}
	if d.dials.Load() != 3 || res.Connects != 2 || h.db.connects.Load() != 0 {
		t.Errorf("%d dials, %d connects, %d pool connections; want 3, 2, 0", d.dials.Load(), res.Connects, h.db.connects.Load())
	}
	if h.runner.closed.Load() != 3 {
		t.Errorf("%d Workers closed, want 3", h.runner.closed.Load())
	}
}
