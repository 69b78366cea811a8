package hist

import (
	"math"
	"sync"
	"testing"
	"time"
)

// within reports whether got is within the histogram's 0.1% precision (plus
// one microsecond of rounding) of want.
func within(got, want time.Duration) bool {
	tol := time.Duration(float64(want)*0.001) + time.Microsecond
	return got >= want-tol && got <= want+tol
}

// uniform records 1ms, 2ms, ... n ms.
func uniform(tb testing.TB, n int) *Histogram {
	tb.Helper()
	h := New()
	for i := 1; i <= n; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	return h
}

func TestQuantiles(t *testing.T) {
	h := uniform(t, 1000)
	if h.Count() != 1000 {
		t.Fatalf("Count = %d, want 1000", h.Count())
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{
		{0, time.Millisecond},
		{50, 500 * time.Millisecond},
		{90, 900 * time.Millisecond},
		{99, 990 * time.Millisecond},
		{99.9, 999 * time.Millisecond},
		{100, 1000 * time.Millisecond},
	} {
		if got := h.Quantile(tc.q); !within(got, tc.want) {
			t.Errorf("Quantile(%v) = %v, want %v ±0.1%%", tc.q, got, tc.want)
		}
	}
	if !within(h.Min(), time.Millisecond) || !within(h.Max(), time.Second) {
		t.Errorf("Min, Max = %v, %v; want 1ms, 1s", h.Min(), h.Max())
	}
	if !within(h.Mean(), 500500*time.Microsecond) {
		t.Errorf("Mean = %v, want 500.5ms", h.Mean())
	}
}

func TestLatencySummary(t *testing.T) {
	t.Run("empty", func(t *testing.T) {
		l := New().Latency()
		if l.Min != 0 || l.Avg != 0 || l.P99 != 0 || l.Max != 0 {
			t.Errorf("empty Latency = %+v, want zeros", l)
		}
	})
	t.Run("uniform", func(t *testing.T) {
		l := uniform(t, 1000).Latency()
		for name, c := range map[string][2]float64{
			"min": {l.Min, 1}, "avg": {l.Avg, 500.5}, "p50": {l.P50, 500}, "p90": {l.P90, 900},
			"p95": {l.P95, 950}, "p99": {l.P99, 990}, "p999": {l.P999, 999}, "max": {l.Max, 1000},
		} {
			if math.Abs(c[0]-c[1]) > c[1]*0.001+0.001 {
				t.Errorf("%s = %v ms, want %v", name, c[0], c[1])
			}
		}
	})
}

func TestRecordClamps(t *testing.T) {
	h := New()
	h.Record(0)
	h.Record(-time.Second)
	h.Record(500 * time.Nanosecond)
	h.Record(2 * time.Hour)
	if h.Count() != 4 {
		t.Fatalf("Count = %d, want 4 (out-of-range values clamp, never drop)", h.Count())
	}
	if h.Min() != Lowest {
		t.Errorf("Min = %v, want %v", h.Min(), Lowest)
	}
	if !within(h.Max(), Highest) {
		t.Errorf("Max = %v, want %v", h.Max(), Highest)
	}
}

func TestMergeReset(t *testing.T) {
	a, b := New(), New()
	for i := 0; i < 100; i++ {
		a.Record(time.Millisecond)
		b.Record(time.Second)
	}
	a.Merge(b)
	a.Merge(nil)
	if a.Count() != 200 {
		t.Fatalf("Count after merge = %d, want 200", a.Count())
	}
	if got := a.Quantile(25); !within(got, time.Millisecond) {
		t.Errorf("p25 = %v, want 1ms", got)
	}
	if got := a.Quantile(75); !within(got, time.Second) {
		t.Errorf("p75 = %v, want 1s", got)
	}
	if b.Count() != 100 {
		t.Errorf("Merge changed its source: Count = %d", b.Count())
	}
	a.Reset()
	if a.Count() != 0 || a.Quantile(99) != 0 {
		t.Errorf("after Reset: Count %d, p99 %v; want 0, 0", a.Count(), a.Quantile(99))
	}
}

func TestEncodeDecode(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    *Histogram
	}{
		{"empty", New()},
		{"uniform", uniform(t, 1000)},
		{"extremes", func() *Histogram { h := New(); h.Record(0); h.Record(3 * time.Hour); return h }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.h.Encode()
			if err != nil {
				t.Fatal(err)
			}
			d, err := Decode(s)
			if err != nil {
				t.Fatal(err)
			}
			if d.Count() != tc.h.Count() {
				t.Fatalf("decoded Count = %d, want %d", d.Count(), tc.h.Count())
			}
			for _, q := range []float64{0, 50, 99, 99.9, 100} {
				if d.Quantile(q) != tc.h.Quantile(q) {
					t.Errorf("decoded Quantile(%v) = %v, want %v", q, d.Quantile(q), tc.h.Quantile(q))
				}
			}
			// A decoded histogram is a full citizen: it records and merges.
			d.Record(time.Millisecond)
			d.Merge(tc.h)
			if want := 2*tc.h.Count() + 1; d.Count() != want {
				t.Errorf("Count after record+merge = %d, want %d", d.Count(), want)
			}
		})
	}
	t.Run("garbage", func(t *testing.T) {
		for _, s := range []string{"", "not base64!", "AAAA"} {
			if _, err := Decode(s); err == nil {
				t.Errorf("Decode(%q) succeeded, want error", s)
			}
		}
	})
}

func TestRecorderSwap(t *testing.T) {
	r := NewRecorder()
	const workers, each = 4, 1000
	var wg sync.WaitGroup
	var total int64
	done := make(chan struct{})
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				r.Record(time.Millisecond)
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	acc := New()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		iv := r.Swap()
		total += iv.Count()
		acc.Merge(iv)
	}
	total += r.Swap().Count() // nothing may be left behind
	if total != workers*each || acc.Count() != total {
		t.Errorf("swapped %d values (merged %d), want %d", total, acc.Count(), workers*each)
	}
	if r.Swap().Count() != 0 {
		t.Error("a fresh interval is not empty")
	}
}

func BenchmarkRecord(b *testing.B) {
	h := New()
	d := 1234 * time.Microsecond
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.Record(d + time.Duration(i&1023)*time.Microsecond)
	}
}

func BenchmarkRecorderRecord(b *testing.B) {
	r := NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		r.Record(1234 * time.Microsecond)
	}
}

func BenchmarkMerge(b *testing.B) {
	src := uniform(b, 1000)
	dst := New()
	for b.Loop() {
		dst.Merge(src)
	}
}
