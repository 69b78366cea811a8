package workload

import (
	"context"
	"errors"
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
