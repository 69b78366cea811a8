package runner

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/measure/hist"
)

// TestFirstWorkerOffsetsIDs: a shard's workers carry the ids (and seeds)
// one machine's workers would have.
func TestFirstWorkerOffsetsIDs(t *testing.T) {
	h := newHarness(t, nil)
	cfg := testConfig(3, 30)
	cfg.FirstWorker = 5
	cfg.Seed = 100
	h.run(t, context.Background(), cfg)
	var ids []int
	for id, seeds := range h.runner.seeds {
		ids = append(ids, id)
		if seeds[0] != 100+int64(id) {
			t.Errorf("worker %d seed %d, want %d", id, seeds[0], 100+id)
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []int{5, 6, 7}) {
		t.Errorf("worker ids %v, want [5 6 7]", ids)
	}
}

// TestBarrierBeforeFirstEvent: the barrier runs once every worker is
// connected and before any event; its error ends the run before it starts.
func TestBarrierBeforeFirstEvent(t *testing.T) {
	h := newHarness(t, nil)
	cfg := testConfig(4, 40)
	var calls atomic.Int64
	cfg.Barrier = func(context.Context) error {
		calls.Add(1)
		if n := h.runner.newWorkers.Load(); n != 4 {
			t.Errorf("barrier with %d workers set up, want 4", n)
		}
		if n := h.runner.attempts.Load(); n != 0 {
			t.Errorf("barrier after %d events, want 0", n)
		}
		return nil
	}
	res := h.run(t, context.Background(), cfg)
	if calls.Load() != 1 || res.Events != 40 {
		t.Errorf("barrier called %d times, %d events; want 1 and 40", calls.Load(), res.Events)
	}

	h = newHarness(t, nil)
	cfg.Barrier = func(context.Context) error { return errors.New("shard 2 never came") }
	if _, err := Run(context.Background(), cfg, h.env, h.runner, nil); err == nil || err.Error() != "shard 2 never came" {
		t.Fatalf("Run = %v, want the barrier's error", err)
	}
	if n := h.runner.attempts.Load(); n != 0 {
		t.Errorf("%d events ran after a failed barrier", n)
	}
	if n := h.runner.closed.Load(); n != 4 {
		t.Errorf("%d workers closed after a failed barrier, want 4", n)
	}
}

// TestIntervalHistograms: with Config.IntervalHistograms each measured
// interval carries its histogram, counting its events; without, none.
func TestIntervalHistograms(t *testing.T) {
	for _, on := range []bool{true, false} {
		h := newHarness(t, nil)
		cfg := testConfig(2, 300)
		cfg.ReportInterval = 5 * time.Millisecond
		cfg.IntervalHistograms = on
		res := h.run(t, context.Background(), cfg)
		var n int64
		for i, iv := range res.Intervals {
			if !on {
				if iv.Histogram != "" {
					t.Fatalf("interval %d has a histogram without IntervalHistograms", i)
				}
				continue
			}
			if iv.Events == 0 {
				continue
			}
			hh, err := hist.Decode(iv.Histogram)
			if err != nil {
				t.Fatalf("interval %d: %v", i, err)
			}
			n += hh.Count()
			if s := iv.Summary(); s.Histogram != iv.Histogram {
				t.Errorf("interval %d: Summary drops the histogram", i)
			}
		}
		if on && n != res.Events+res.Unfinished {
			t.Errorf("interval histograms count %d, want %d events", n, res.Events)
		}
	}
}
