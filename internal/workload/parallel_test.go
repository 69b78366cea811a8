package workload

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

func TestParallel(t *testing.T) {
	t.Run("runs every job once", func(t *testing.T) {
		var seen [50]atomic.Int32
		var running, peak atomic.Int32
		err := Parallel(context.Background(), 4, len(seen), func(_ context.Context, j int) error {
			if n := running.Add(1); n > peak.Load() {
				peak.Store(n)
			}
			defer running.Add(-1)
			seen[j].Add(1)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for j := range seen {
			if seen[j].Load() != 1 {
				t.Fatalf("job %d ran %d times", j, seen[j].Load())
			}
		}
		if peak.Load() > 4 {
			t.Fatalf("%d jobs at once, want at most 4", peak.Load())
		}
	})
	t.Run("first error stops the rest", func(t *testing.T) {
		boom := errors.New("boom")
		var ran atomic.Int32
		err := Parallel(context.Background(), 1, 100, func(_ context.Context, j int) error {
			ran.Add(1)
			if j == 3 {
				return boom
			}
			return nil
		})
		if !errors.Is(err, boom) || ran.Load() != 4 {
			t.Fatalf("err %v after %d jobs, want boom after 4", err, ran.Load())
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := Parallel(ctx, 2, 10, func(context.Context, int) error { return nil }); !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
	})
	t.Run("no jobs", func(t *testing.T) {
		if err := Parallel(context.Background(), 4, 0, nil); err != nil {
			t.Fatal(err)
		}
	})
}
