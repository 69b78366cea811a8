package workload

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestSleep: a sleep ends at its time, at the run's stop (ErrStopped) or
// with its context, whichever comes first.
func TestSleep(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want error
	}{
		{"elapsed", context.Background(), time.Millisecond, nil},
		{"zero", WithStop(context.Background(), closed), 0, nil},
		{"stopped", WithStop(context.Background(), closed), time.Hour, ErrStopped},
		{"cancelled", cancelled, time.Hour, context.Canceled},
		{"no stop", WithStop(context.Background(), nil), time.Millisecond, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- Sleep(tc.ctx, tc.d) }()
			select {
			case err := <-done:
				if !errors.Is(err, tc.want) {
					t.Errorf("Sleep = %v, want %v", err, tc.want)
				}
			case <-time.After(30 * time.Second): // a bound on a hang
				t.Fatal("Sleep did not return")
			}
		})
	}
	if Stop(context.Background()) != nil {
		t.Error("Stop of a context without one is not nil")
	}
}
