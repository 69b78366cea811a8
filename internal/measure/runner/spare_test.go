package runner

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/workload"
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

// TestFewWorkersKeepTheirThreads: with fewer workers than holdSpareFrom
// per core, each worker's events run on one OS thread for the whole run,
// through sleeps that park it and sysmon's preemptions.
func TestFewWorkersKeepTheirThreads(t *testing.T) {
	var mu sync.Mutex
	tids := map[int]map[int]bool{} // worker id -> threads its events ran on
	h := newHarness(t, func(_ context.Context, w *fakeWorker, _ *workload.Event) error {
		tid := syscall.Gettid()
		rawSleep(200 * time.Microsecond)   // waits as the lean clients do
		time.Sleep(100 * time.Microsecond) // parks: its thread may be given away
		if syscall.Gettid() != tid {
			tid = -1 // moved within an event
		}
		mu.Lock()
		if tids[w.id] == nil {
			tids[w.id] = map[int]bool{}
		}
		tids[w.id][tid] = true
		mu.Unlock()
		return nil
	})
	d := &dialingRunner{fakeRunner: h.runner}
	const threads = 2 // fewer than holdSpareFrom per core on any machine
	res, err := Run(context.Background(), testConfig(threads, 400), h.env, d, h.onInterval)
	if err != nil || res.Err != nil || res.Events != 400 {
		t.Fatalf("Run: %v, %+v", err, res)
	}
	if len(tids) != threads {
		t.Fatalf("events of %d workers, want %d", len(tids), threads)
	}
	for id, seen := range tids {
		if len(seen) != 1 || seen[-1] {
			t.Errorf("worker %d ran on %d threads (-1: moved within an event), want one: %v", id, len(seen), seen)
		}
	}
}
