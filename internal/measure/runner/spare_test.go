package runner

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestHoldSpareYields: with every P held (one by a raw-waiting "worker",
// the other by holdSpare), timers and new goroutines still run, and the
// holder returns once done closes.
func TestHoldSpareYields(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var stop atomic.Bool
	workerDone := make(chan struct{})
	go func() { // a worker waiting in raw system calls, as the lean clients do
		defer close(workerDone)
		for !stop.Load() {
			rawSleep(time.Millisecond)
		}
	}()
	done := make(chan struct{})
	held := make(chan struct{})
	go func() {
		defer close(held)
		holdSpare(done)
	}()
	defer func() {
		stop.Store(true)
		<-workerDone
	}()

	fired := make(chan struct{})
	time.AfterFunc(10*time.Millisecond, func() { close(fired) })
	ran := make(chan struct{})
	go close(ran)
	for name, ch := range map[string]chan struct{}{"a timer": fired, "a new goroutine": ran} {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s did not run while the spare P was held", name)
		}
	}
	close(done)
	select {
	case <-held:
	case <-time.After(5 * time.Second):
		t.Fatal("holdSpare did not return after done closed")
	}
}
