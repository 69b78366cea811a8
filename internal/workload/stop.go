package workload

import (
	"context"
	"errors"
	"time"

	"github.com/dbarena/dbarena/internal/wire/poller"
	"github.com/dbarena/dbarena/internal/wire/rawsock"
)

// ErrStopped, returned (or wrapped) by Worker.Event, says the event was cut
// short because the run stopped (Stop's channel closed): the runner counts
// it as unfinished, not as an error.
var ErrStopped = errors.New("run stopped")

type stopKey struct{}

// WithStop returns ctx carrying stop, a channel the runner closes when the
// run stops (time up, last event, fatal error, stall, interrupt). Events
// run under a context that the runner may not cancel at the stop (it lets
// running statements finish within the stop grace), so a Worker that waits
// for nothing but time (a script's \sleep) waits on Stop(ctx) too.
func WithStop(ctx context.Context, stop <-chan struct{}) context.Context {
	return context.WithValue(ctx, stopKey{}, stop)
}

// Stop returns the channel of WithStop, or nil (never closed) when ctx
// carries none.
func Stop(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(stopKey{}).(<-chan struct{})
	return ch
}

// sleepSlice is the longest wait of a worker of a poller group (--jobs)
// between two looks at the run's stop.
const sleepSlice = 50 * time.Millisecond

// Sleep waits d, or until the run stops (ErrStopped: the event is cut
// short, so a wait longer than the time left does not hold the run past
// its end) or ctx ends (its error). A worker of a poller group sleeps
// through poller.Sleep, so that its thread serves the others meanwhile,
// in slices so that it sees the stop.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	stop := Stop(ctx)
	if rawsock.WaiterFrom(ctx) == nil {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-stop:
			return ErrStopped
		}
	}
	until := time.Now().Add(d)
	for {
		select {
		case <-stop:
			return ErrStopped
		default:
		}
		left := time.Until(until)
		if left <= 0 {
			return nil
		}
		if err := poller.Sleep(ctx, min(left, sleepSlice)); err != nil {
			return err
		}
	}
}
