package shard

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/measure/hist"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/store/storetest"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// shardRun is a stored shard run of the given latencies (one per event)
// and per-type latencies.
func shardRun(t *testing.T, i, n int, lat []time.Duration, typ map[string][]time.Duration) *summary.Run {
	t.Helper()
	h := hist.New()
	for _, d := range lat {
		h.Record(d)
	}
	enc, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	r := &summary.Run{ID: int64(10 + i), Status: summary.StatusComplete, Workload: "w", Sections: []string{"siege"}, Threads: 2, DurationS: 10,
		Histogram: enc, LatencyMS: h.Latency(), Shard: &summary.Shard{Index: i, Count: n},
		Totals:         summary.Totals{Events: int64(len(lat)), Queries: summary.Queries{Read: 2 * int64(len(lat)), Total: 2 * int64(len(lat))}},
		Intervals:      []summary.Interval{{TS: 5, Threads: 2, Events: int64(len(lat) / 2), P95MS: float64(i)}, {TS: 10, Threads: 2, Events: int64(len(lat) - len(lat)/2)}},
		TypeHistograms: map[string]string{}, PerType: map[string]summary.Type{}, TpmC: new(float64)}
	*r.TpmC = 60 // 10 New-Orders in 10 s
	for name, ds := range typ {
		th := hist.New()
		for _, d := range ds {
			th.Record(d)
		}
		r.TypeHistograms[name], _ = th.Encode()
		r.PerType[name] = summary.Type{Count: int64(len(ds)), LatencyMS: th.Latency()}
	}
	return r
}

// TestMergeExact: counts add up exactly and the merged percentiles are
// those of one histogram of every sample (bucket-wise addition is exact).
func TestMergeExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ref, refType := hist.New(), hist.New()
	runs := map[int]*summary.Run{}
	br := &store.ShardRun{Key: "k", Count: 3}
	for i := range 3 {
		var lat, typ []time.Duration
		for range 5000 + 1000*i {
			// Shards with different distributions: averaging their
			// percentiles would be wrong.
			d := time.Duration(rng.ExpFloat64()*float64(time.Duration(i+1)*time.Millisecond)) + 50*time.Microsecond
			lat = append(lat, d)
			ref.Record(d)
			if rng.IntN(3) == 0 {
				typ = append(typ, d)
				refType.Record(d)
			}
		}
		runs[i] = shardRun(t, i, 3, lat, map[string][]time.Duration{"new_order": typ})
		br.Members = append(br.Members, store.ShardMember{Index: i, Host: "h", SkewMS: float64(i)})
	}
	m, err := Merge(br, runs)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != summary.StatusComplete || m.Totals.Events != ref.Count() || m.Totals.Queries.Total != 2*ref.Count() {
		t.Fatalf("merged %s, %d events, %d queries; want complete, %d, %d", m.Status, m.Totals.Events, m.Totals.Queries.Total, ref.Count(), 2*ref.Count())
	}
	if m.LatencyMS != ref.Latency() {
		t.Errorf("merged latency %+v\nwant %+v", m.LatencyMS, ref.Latency())
	}
	if len(m.Sections) != 1 || m.Sections[0] != "siege" {
		t.Errorf("merged sections %q, want the shards' [siege]", m.Sections)
	}
	if got := m.PerType["new_order"]; got.Count != refType.Count() || got.LatencyMS != refType.Latency() {
		t.Errorf("merged new_order %+v, want count %d latency %+v", got, refType.Count(), refType.Latency())
	}
	if m.Threads != 6 || len(m.Intervals) != 2 || m.Intervals[0].Threads != 6 || m.Intervals[0].P95MS != 2 {
		t.Errorf("threads %d, intervals %+v", m.Threads, m.Intervals)
	}
	var ivEvents int64
	for _, iv := range m.Intervals {
		ivEvents += iv.Events
	}
	if ivEvents != m.Totals.Events {
		t.Errorf("intervals add up to %d events, want %d", ivEvents, m.Totals.Events)
	}
	if m.TpmC == nil || math.Abs(*m.TpmC-1800/10.002) > 1e-9 {
		t.Errorf("tpmC %v, want %v", *m.TpmC, 1800/10.002)
	}
	// Shard 2 started 2 ms late: the merged period spans its end.
	if m.DurationS != 10.002 || len(m.Shards) != 3 || m.Shards[2].StartSkewMS != 2 || m.Shards[1].Run != 11 {
		t.Errorf("duration %v, shards %+v", m.DurationS, m.Shards)
	}
}

// TestMergeDegraded: a shard that died or never came is listed, the run is
// degraded, and the others' data is kept.
func TestMergeDegraded(t *testing.T) {
	br := &store.ShardRun{Key: "k", Count: 3}
	runs := map[int]*summary.Run{
		0: shardRun(t, 0, 3, []time.Duration{time.Millisecond, 2 * time.Millisecond}, nil),
		1: shardRun(t, 1, 3, []time.Duration{time.Millisecond}, nil),
	}
	runs[1].Status = summary.StatusAborted
	m, err := Merge(br, runs)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != summary.StatusDegraded || m.Totals.Events != 2 || m.Shards[1].Status != summary.StatusAborted ||
		m.Shards[2].Status != "missing" || m.Shards[1].Totals.Events != 1 {
		t.Errorf("merged %s with %d events, shards %+v", m.Status, m.Totals.Events, m.Shards)
	}
	runs[0].Status = summary.StatusFailed
	if m, _ := Merge(br, runs); m.Status != summary.StatusFailed {
		t.Errorf("no shard ran to its end: status %s, want failed", m.Status)
	}
}

// countingStore counts a shard's looks at the barrier.
type countingStore struct {
	*store.Store
	polls atomic.Int64
}

func (c *countingStore) ShardStart(ctx context.Context, key string, lead time.Duration) (time.Time, error) {
	c.polls.Add(1)
	return c.Store.ShardStart(ctx, key, lead)
}

// TestBarrierHolds: shards that joined keep waiting (polling) until the
// last one joins, then all start at one common time, after that join.
func TestBarrierHolds(t *testing.T) {
	ctx := context.Background()
	st := storetest.Temp(t)
	cs := &countingStore{Store: st}
	var (
		wg       sync.WaitGroup
		returned atomic.Int64
		bs       [3]*Barrier
		errs     [3]error
	)
	for i := range bs {
		bs[i] = &Barrier{St: cs, Key: "hold", Index: i, Count: 3, Host: "h", Poll: 5 * time.Millisecond, Lead: 50 * time.Millisecond, Timeout: time.Minute}
	}
	for i := range 2 {
		if err := bs[i].Join(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = bs[i].Wait(ctx)
			returned.Add(1)
		}()
	}
	for cs.polls.Load() < 20 { // both are polling, well past their first look
		time.Sleep(time.Millisecond)
	}
	if n := returned.Load(); n != 0 {
		t.Fatalf("%d shards passed the barrier before the third joined", n)
	}
	joined := time.Now()
	if err := bs[2].Join(ctx); err != nil {
		t.Fatal(err)
	}
	if err := bs[2].Wait(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, b := range bs {
		if errs[i] != nil {
			t.Fatalf("shard %d: %v", i, errs[i])
		}
		if !b.StartAt.Equal(bs[0].StartAt) || b.StartAt.Before(joined) || b.Skew < 0 {
			t.Errorf("shard %d start %v skew %v; want %v, after %v", i, b.StartAt, b.Skew, bs[0].StartAt, joined)
		}
	}
	r, err := st.ShardRun(ctx, "hold")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Members {
		if !m.Started {
			t.Errorf("shard %d not recorded as started", m.Index)
		}
	}
}

// TestBarrierTimeout names the shards that never came.
func TestBarrierTimeout(t *testing.T) {
	ctx := context.Background()
	st := storetest.Temp(t)
	b := &Barrier{St: st, Key: "late", Index: 1, Count: 3, Poll: time.Millisecond, Timeout: 20 * time.Millisecond}
	if err := b.Join(ctx); err != nil {
		t.Fatal(err)
	}
	err := b.Wait(ctx)
	if err == nil || !strings.Contains(err.Error(), "shards 0, 2 not ready") {
		t.Fatalf("Wait = %v, want shards 0, 2 not ready", err)
	}
}

// TestMergeIntervalPercentiles: with the shards' interval histograms, a
// merged interval's p95 is that of every sample of the interval.
func TestMergeIntervalPercentiles(t *testing.T) {
	br := &store.ShardRun{Key: "k", Count: 2}
	ref := hist.NewCoarse()
	runs := map[int]*summary.Run{}
	for i := range 2 {
		var lat []time.Duration
		h := hist.NewCoarse()
		for j := range 200 {
			d := time.Duration((i*10+1)*(j+1)) * 10 * time.Microsecond
			lat = append(lat, d)
			h.Record(d)
			ref.Record(d)
		}
		r := shardRun(t, i, 2, lat, nil)
		enc, err := h.Encode()
		if err != nil {
			t.Fatal(err)
		}
		r.Intervals = []summary.Interval{{TS: 1, Events: 200, P95MS: h.Latency().P95, Histogram: enc}}
		runs[i] = r
	}
	m, err := Merge(br, runs)
	if err != nil {
		t.Fatal(err)
	}
	// Within the interval histograms' precision (1%) of the reference.
	want := float64(ref.Quantile(95).Microseconds()) / 1000
	if got := m.Intervals[0].P95MS; math.Abs(got-want) > want/100 || m.Intervals[0].Histogram != "" {
		t.Errorf("merged interval p95 %v (histogram kept: %v), want %v (shards' %v, %v)", got, m.Intervals[0].Histogram != "",
			want, runs[0].Intervals[0].P95MS, runs[1].Intervals[0].P95MS)
	}
	for _, n := range m.Notes {
		if strings.Contains(n, "upper bound") {
			t.Errorf("note %q with every interval histogram", n)
		}
	}
}

// TestMergeIntervalTypePercentiles: with the shards' per-type interval
// histograms, each merged interval's p95 and each type's p90 and max are
// those of one histogram of every sample of the interval (and type), not
// the largest shard's.
func TestMergeIntervalTypePercentiles(t *testing.T) {
	const shards, intervals = 3, 2
	types := []string{"new_order", "payment"}
	rng := rand.New(rand.NewPCG(3, 4))
	br := &store.ShardRun{Key: "k", Count: shards}
	whole := make([]*hist.Histogram, intervals)
	ref := make([]map[string]*hist.Histogram, intervals)
	for k := range intervals {
		whole[k], ref[k] = hist.NewCoarse(), map[string]*hist.Histogram{}
		for _, name := range types {
			ref[k][name] = hist.NewCoarse()
		}
	}
	encode := func(h *hist.Histogram) string {
		s, err := h.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	runs := map[int]*summary.Run{}
	for i := range shards {
		r := shardRun(t, i, shards, []time.Duration{time.Millisecond}, nil)
		r.Intervals = nil
		for k := range intervals {
			iv := summary.Interval{TS: float64(k + 1), PerType: map[string]summary.IntervalType{}}
			ivh := hist.NewCoarse()
			for j, name := range types {
				// Each shard, interval and type its own distribution: the
				// largest shard's p90 is not the merged one.
				h := hist.NewCoarse()
				for range 300 + 100*i {
					d := time.Duration(rng.ExpFloat64()*float64(time.Duration((i+1)*(j+1)*(k+1))*time.Millisecond)) + 20*time.Microsecond
					h.Record(d)
					ivh.Record(d)
					ref[k][name].Record(d)
					whole[k].Record(d)
				}
				iv.PerType[name] = summary.IntervalType{Count: h.Count(), P90MS: ms(h.Quantile(90)), MaxMS: ms(h.Max()), Histogram: encode(h)}
			}
			iv.Events, iv.P95MS, iv.Histogram = ivh.Count(), ms(ivh.Quantile(95)), encode(ivh)
			r.Intervals = append(r.Intervals, iv)
		}
		runs[i] = r
	}
	m, err := Merge(br, runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Intervals) != intervals {
		t.Fatalf("%d merged intervals, want %d", len(m.Intervals), intervals)
	}
	// The reference histograms read back as the merge reads the shards'.
	fine := func(h *hist.Histogram) *hist.Histogram {
		d, err := hist.Decode(encode(h))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for k, iv := range m.Intervals {
		if want := ms(fine(whole[k]).Quantile(95)); iv.P95MS != want || iv.Histogram != "" {
			t.Errorf("interval %d: p95 %v (histogram kept: %v), want %v", k, iv.P95MS, iv.Histogram != "", want)
		}
		for _, name := range types {
			got, want := iv.PerType[name], fine(ref[k][name])
			largest := 0.0
			for _, r := range runs {
				largest = max(largest, r.Intervals[k].PerType[name].P90MS)
			}
			if got.Count != want.Count() || got.P90MS != ms(want.Quantile(90)) || got.MaxMS != ms(want.Max()) || got.Histogram != "" {
				t.Errorf("interval %d %s: count %d p90 %v max %v (histogram kept: %v); want %d, %v, %v (largest shard p90 %v)",
					k, name, got.Count, got.P90MS, got.MaxMS, got.Histogram != "", want.Count(), ms(want.Quantile(90)), ms(want.Max()), largest)
			}
			if got.P90MS == largest {
				t.Errorf("interval %d %s: p90 %v is the largest shard's", k, name, got.P90MS)
			}
		}
	}
	for _, n := range m.Notes {
		if strings.Contains(n, "upper bound") {
			t.Errorf("note %q with every histogram", n)
		}
	}
	// A shard without per-type interval histograms: the largest shard's
	// figures, said so.
	for k := range runs[1].Intervals {
		for name, tp := range runs[1].Intervals[k].PerType {
			tp.Histogram = ""
			runs[1].Intervals[k].PerType[name] = tp
		}
	}
	m, err = Merge(br, runs)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Intervals[0].PerType["payment"].P90MS; got != max(runs[0].Intervals[0].PerType["payment"].P90MS,
		runs[1].Intervals[0].PerType["payment"].P90MS, runs[2].Intervals[0].PerType["payment"].P90MS) {
		t.Errorf("without histograms: p90 %v, want the largest shard's", got)
	}
	if !strings.Contains(strings.Join(m.Notes, "\n"), "per-type p90 and max are the largest") {
		t.Errorf("no note on inexact per-type figures: %q", m.Notes)
	}
}
