package runner

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/workload"
)

// ms is n milliseconds in ns, for records.
func ms(n float64) int64 { return int64(n * float64(time.Millisecond)) }

func success(end, lat int64, typ uint16) *record {
	return &record{end: end, lat: lat, kind: kSuccess, flags: fMeasured, typ: typ, q: workload.Queries{Read: 1}}
}

// TestCollectorByEndTime: each record counts in the interval its end falls
// in, and the intervals add up to the totals.
func TestCollectorByEndTime(t *testing.T) {
	n := &names{}
	col := newCollector(100*time.Millisecond, n, nil)
	col.phase(true, 0, 0, math.MaxInt64)
	var got []Interval
	emit := func(iv Interval) { got = append(got, iv) }
	pay := n.id("payment")
	for _, end := range []float64{0, 10, 99.999, 100, 150, 250, 299} {
		col.add(success(ms(end), ms(1), pay))
	}
	col.closeUpTo(ms(350), emit) // closes [0,100) [100,200) [200,300)
	stop := col.setStop(ms(350))
	col.closeAll(emit)
	if stop != ms(350) {
		t.Errorf("stop = %v, want 350ms", time.Duration(stop))
	}
	want := []struct {
		start, end float64
		events     int64
	}{{0, 100, 3}, {100, 200, 2}, {200, 300, 2}, {300, 350, 0}}
	if len(got) != len(want) {
		t.Fatalf("got %d intervals %+v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		iv := got[i]
		if iv.Start != time.Duration(ms(w.start)) || iv.End != time.Duration(ms(w.end)) || iv.Events != w.events {
			t.Errorf("interval %d = [%v,%v) %d events, want [%vms,%vms) %d", i, iv.Start, iv.End, iv.Events, w.start, w.end, w.events)
		}
		if w.events > 0 && iv.PerType["payment"].Count != w.events {
			t.Errorf("interval %d: payment count %d, want %d", i, iv.PerType["payment"].Count, w.events)
		}
	}
	var res Result
	col.fill(&res, false)
	if res.Events != 7 || res.Latency.Count() != 7 || res.PerType["payment"].Count != 7 {
		t.Errorf("totals: events %d, latency count %d, per type %+v; want 7", res.Events, res.Latency.Count(), res.PerType["payment"])
	}
}

// TestCollectorLateRecord: a record that arrives after its interval was
// closed (its worker was descheduled) counts in the next open interval,
// never lost.
func TestCollectorLateRecord(t *testing.T) {
	col := newCollector(100*time.Millisecond, &names{}, nil)
	col.phase(true, 0, 0, math.MaxInt64)
	var got []Interval
	emit := func(iv Interval) { got = append(got, iv) }
	col.add(success(ms(50), ms(1), 0))
	col.closeUpTo(ms(105), emit)
	col.add(success(ms(99), ms(1), 0)) // late for [0,100)
	col.add(success(ms(120), ms(1), 0))
	col.setStop(ms(200))
	col.closeAll(emit)
	if len(got) != 2 || got[0].Events != 1 || got[1].Events != 2 {
		t.Fatalf("intervals %+v: want [0,100) with 1 event and [100,200) with 2", got)
	}
	var res Result
	col.fill(&res, false)
	if res.Events != 3 {
		t.Errorf("Events = %d, want 3", res.Events)
	}
}

// TestCollectorLateCoordinator: a coordinator that comes late still closes
// every interval on its own, empty ones included; none is merged.
func TestCollectorLateCoordinator(t *testing.T) {
	col := newCollector(10*time.Millisecond, &names{}, nil)
	col.phase(true, 0, 0, ms(100))
	for _, end := range []float64{5, 15, 45, 95} {
		col.add(success(ms(end), ms(1), 0))
	}
	var got []Interval
	col.closeUpTo(ms(1000), func(iv Interval) { got = append(got, iv) })
	col.setStop(ms(100))
	col.closeAll(func(iv Interval) { got = append(got, iv) })
	if len(got) != 10 {
		t.Fatalf("%d intervals, want 10", len(got))
	}
	var sum int64
	for i, iv := range got {
		if iv.End-iv.Start != 10*time.Millisecond || iv.Start != time.Duration(i)*10*time.Millisecond {
			t.Errorf("interval %d = [%v,%v)", i, iv.Start, iv.End)
		}
		sum += iv.Events
	}
	if sum != 4 {
		t.Errorf("intervals hold %d events, want 4", sum)
	}
}

// TestCollectorStop: records that end after the stop are unfinished, with
// their latency; the stop never comes before a record already counted.
func TestCollectorStop(t *testing.T) {
	col := newCollector(0, &names{}, nil)
	col.phase(true, 0, 0, math.MaxInt64)
	col.add(success(ms(10), ms(1), 0))
	col.add(success(ms(30), ms(2), 0)) // counted before the stop was known
	if stop := col.setStop(ms(20)); stop != ms(30)+1 {
		t.Errorf("stop = %v, want just after the last counted record", time.Duration(stop))
	}
	col.add(success(ms(40), ms(13000), 0))
	col.add(&record{end: ms(41), lat: ms(5), kind: kAborted, flags: fMeasured})
	col.add(&record{end: ms(42), kind: kRetry, flags: fMeasured})
	var res Result
	col.fill(&res, false)
	if res.Events != 2 || res.Unfinished != 2 || res.Retries != 0 {
		t.Errorf("Events %d, Unfinished %d, Retries %d; want 2, 2, 0", res.Events, res.Unfinished, res.Retries)
	}
	if res.Latency.Max() < 12900*time.Millisecond || res.Latency.Count() != 4 {
		t.Errorf("latency max %v, count %d; want the 13s unfinished event in it", res.Latency.Max(), res.Latency.Count())
	}
}

// TestElapsedEndsAtStop: a time-limited run measures exactly its duration,
// however long the stop takes, and its intervals are exact.
func TestElapsedEndsAtStop(t *testing.T) {
	h := newHarness(t, func(context.Context, *fakeWorker, *workload.Event) error {
		time.Sleep(2 * time.Millisecond)
		return nil
	})
	c := testConfig(3, 0)
	c.Duration = 150 * time.Millisecond
	c.ReportInterval = 50 * time.Millisecond
	res := h.run(t, context.Background(), c)
	if res.Elapsed != c.Duration || res.Ended.Sub(res.Started) != c.Duration {
		t.Errorf("Elapsed %v, Ended-Started %v; want exactly %v", res.Elapsed, res.Ended.Sub(res.Started), c.Duration)
	}
	if len(res.Intervals) != 3 {
		t.Fatalf("%d intervals, want 3", len(res.Intervals))
	}
	for i, iv := range res.Intervals {
		if iv.End-iv.Start != c.ReportInterval {
			t.Errorf("interval %d lasts %v, want %v", i, iv.End-iv.Start, c.ReportInterval)
		}
	}
	checkSums(t, res)
}

// TestSlowCallback: a callback slower than the interval delays neither the
// collection nor the intervals: each is still reported on its own, in
// order, and Run returns after the last callback.
func TestSlowCallback(t *testing.T) {
	h := newHarness(t, func(context.Context, *fakeWorker, *workload.Event) error {
		time.Sleep(100 * time.Microsecond)
		return nil
	})
	c := testConfig(2, 0)
	c.Duration = 200 * time.Millisecond
	c.ReportInterval = 20 * time.Millisecond
	var mu sync.Mutex
	var seen []Interval
	res, err := Run(context.Background(), c, h.env, h.runner, func(iv Interval) {
		if len(seen) == 0 {
			time.Sleep(150 * time.Millisecond)
		}
		mu.Lock()
		seen = append(seen, iv)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(res.Intervals) != 10 || len(seen) != 10 {
		t.Fatalf("%d intervals, %d callbacks when Run returned; want 10 and 10", len(res.Intervals), len(seen))
	}
	for i, iv := range res.Intervals {
		if iv.End-iv.Start != c.ReportInterval || seen[i].Start != iv.Start {
			t.Errorf("interval %d = [%v,%v), callback got [%v,%v)", i, iv.Start, iv.End, seen[i].Start, seen[i].End)
		}
	}
	checkSums(t, res)
}

// TestCheckpoints: OnCheckpoint gets snapshots of the measured period, in
// order with the intervals, with histograms of their own.
func TestCheckpoints(t *testing.T) {
	h := newHarness(t, func(_ context.Context, _ *fakeWorker, ev *workload.Event) error {
		ev.Type = "t"
		time.Sleep(200 * time.Microsecond)
		return nil
	})
	c := testConfig(2, 0)
	c.Duration = 300 * time.Millisecond
	c.ReportInterval = 20 * time.Millisecond
	c.Checkpoint = 50 * time.Millisecond
	type call struct {
		intervals int // measured intervals delivered before
		partial   *Result
	}
	var calls []call
	delivered := 0
	c.OnCheckpoint = func(p *Result) { calls = append(calls, call{delivered, p}) }
	res, err := Run(context.Background(), c, h.env, h.runner, func(iv Interval) {
		if !iv.Warmup {
			delivered++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) == 0 {
		t.Fatal("OnCheckpoint never called")
	}
	var prev int64
	for i, cl := range calls {
		p := cl.partial
		if len(p.Intervals) != cl.intervals {
			t.Errorf("checkpoint %d holds %d intervals, %d were delivered before it", i, len(p.Intervals), cl.intervals)
		}
		if p.Events < prev || p.Events > res.Events || p.Elapsed <= 0 || p.Elapsed > res.Elapsed {
			t.Errorf("checkpoint %d: events %d (previous %d, final %d), elapsed %v", i, p.Events, prev, res.Events, p.Elapsed)
		}
		prev = p.Events
		if p.Latency == res.Latency || p.Latency.Count() != p.Events || p.PerType["t"] == nil ||
			p.PerType["t"].Latency == res.PerType["t"].Latency || p.PerType["t"].Count != p.Events {
			t.Errorf("checkpoint %d: want copies of the histograms holding its %d events", i, p.Events)
		}
	}
	if errs := (Config{Threads: 1, Events: 1, ReconnectTimeout: time.Second, OnCheckpoint: func(*Result) {}}).Validate(); len(errs) != 1 {
		t.Errorf("OnCheckpoint without a period: Validate = %v, want one error", errs)
	}
}
