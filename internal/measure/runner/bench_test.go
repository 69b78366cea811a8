package runner

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/dbarena/dbarena/internal/workload"
)

// BenchmarkDrain measures one coordinator tick at 2048 workers: draining
// every buffer (perWorker records each, 5 event types) into the interval
// and the run's histograms, and closing the interval. The target is
// under 5 ms per tick; merging 2049 full histograms took 220-250 ms.
func BenchmarkDrain(b *testing.B) {
	const workers = 2048
	for _, perWorker := range []int{0, 1, 4, 16} {
		b.Run(fmt.Sprintf("workers=%d/records=%d", workers, perWorker), func(b *testing.B) {
			r := &run{}
			types := []string{"new_order", "payment", "order_status", "delivery", "stock_level"}
			for id := range workers {
				wk := r.newWorker(id)
				wk.join(r.newOutbox())
				r.workers = append(r.workers, wk)
			}
			col := newCollector(time.Second, &r.names, nil)
			col.phase(true, 0, 0, 1<<62)
			tick := int64(time.Second)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				end := int64(i) * tick
				for _, wk := range r.workers {
					for j := range perWorker {
						wk.put(record{end: end + int64(j), lat: int64(j+1) * int64(time.Millisecond),
							typ: wk.intern(types[(wk.id+j)%len(types)]), kind: kSuccess, flags: fMeasured,
							q: workload.Queries{Read: 10, Write: 4, Other: 2}}, true)
					}
				}
				b.StartTimer()
				r.drain(col, false)
				col.closeUpTo(end+tick, func(Interval) {})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/tick")
		})
	}
}

// BenchmarkWorkerMemory runs 2048 workers of a no-op workload with report
// intervals and reports what the runner holds per worker (worker struct and
// record buffers, after the run) and what the whole run allocated per
// worker (the stub driver's connections included).
func BenchmarkWorkerMemory(b *testing.B) {
	const threads = 2048
	for range b.N {
		h := newHarness(b, func(_ context.Context, w *fakeWorker, ev *workload.Event) error {
			ev.Type = []string{"a", "b", "c", "d", "e"}[w.n%5]
			return nil
		})
		c := testConfig(threads, threads*20)
		c.ReportInterval = 10 * time.Millisecond
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r := newRun(c, h.env, h.runner)
		if err := r.connectAll(context.Background()); err != nil {
			b.Fatal(err)
		}
		cb := startCallbacks()
		res := r.coordinate(context.Background(), cb, nil)
		cb.close()
		runtime.ReadMemStats(&after)
		if res.Events != c.Events {
			b.Fatalf("Events = %d", res.Events)
		}
		held := 0
		for _, wk := range r.workers {
			held += int(unsafe.Sizeof(*wk))
		}
		for _, ob := range r.outboxes {
			held += int(unsafe.Sizeof(*ob)) + (cap(ob.recs)+cap(ob.spare))*int(unsafe.Sizeof(record{}))
		}
		b.ReportMetric(float64(held)/threads, "runner-B/worker")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/threads, "alloc-B/worker")
	}
}
