package runner

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/measure/hist"
)

// TestIntervalTypeHistograms: with IntervalHistograms a measured interval
// carries each type's histogram (its successes), kept by Summary; without,
// none.
func TestIntervalTypeHistograms(t *testing.T) {
	for _, on := range []bool{true, false} {
		n := &names{}
		col := newCollector(100*time.Millisecond, n, nil)
		col.encode = on
		col.phase(true, 0, 0, math.MaxInt64)
		var got []Interval
		emit := func(iv Interval) { got = append(got, iv) }
		pay, neworder := n.id("payment"), n.id("new_order")
		for i, end := range []float64{10, 20, 30, 150} {
			col.add(success(ms(end), ms(float64(i+1)), pay))
		}
		col.add(success(ms(40), ms(7), neworder))
		col.setStop(ms(200))
		col.closeAll(emit)
		if len(got) != 2 {
			t.Fatalf("%d intervals, want 2", len(got))
		}
		if !on {
			if got[0].TypeHistograms != nil {
				t.Errorf("type histograms without IntervalHistograms: %v", got[0].TypeHistograms)
			}
			continue
		}
		for k, want := range []map[string]int64{{"payment": 3, "new_order": 1}, {"payment": 1}} {
			if len(got[k].TypeHistograms) != len(want) {
				t.Errorf("interval %d: %d type histograms, want %d", k, len(got[k].TypeHistograms), len(want))
			}
			for name, count := range want {
				h, err := hist.Decode(got[k].TypeHistograms[name])
				if err != nil || h.Count() != count {
					t.Errorf("interval %d %s: histogram of %v values (%v), want %d", k, name, h, err, count)
					continue
				}
				if s := got[k].Summary().PerType[name]; s.Histogram != got[k].TypeHistograms[name] {
					t.Errorf("interval %d %s: Summary drops the histogram", k, name)
				}
			}
		}
	}
}

// TestTypeHistogramPrecision: the first fullTypes types keep full-precision
// totals, later ones (a URL list's many keys) coarse ones.
func TestTypeHistogramPrecision(t *testing.T) {
	const v = 1234567 * time.Microsecond
	full, coarse := hist.New(), hist.NewCoarse()
	full.Record(v)
	coarse.Record(v)
	if full.Max() == coarse.Max() {
		t.Fatalf("%v: full and coarse histograms agree (%v), the test cannot tell them apart", v, full.Max())
	}
	var ts []*typeStats
	for _, tc := range []struct {
		id   uint16
		want *hist.Histogram
	}{{1, full}, {fullTypes, full}, {fullTypes + 1, coarse}, {1000, coarse}} {
		h := typ(&ts, tc.id, false).lat
		h.Record(v)
		if h.Max() != tc.want.Max() {
			t.Errorf("type %d: max %v, want %v", tc.id, h.Max(), tc.want.Max())
		}
	}
}

// TestIntervalErrorsAndLatency: an interval counts its errors and retries
// by code, warm-up ones included, and with IntervalLatency carries a copy
// of its histogram (not reused by the next interval); without, none.
func TestIntervalErrorsAndLatency(t *testing.T) {
	for _, on := range []bool{true, false} {
		n := &names{}
		col := newCollector(100*time.Millisecond, n, nil)
		col.copyLat = on
		col.phase(false, 0, 0, ms(100))
		var got []Interval
		emit := func(iv Interval) { got = append(got, iv) }
		deadlock, dup := n.id("1213"), n.id("1062")
		failed := func(end int64, kind uint8, code uint16) *record {
			return &record{end: end, lat: ms(1), kind: kind, code: code, flags: fMeasured}
		}
		warm := failed(ms(10), kRetry, deadlock)
		warm.flags = 0
		col.add(warm)
		warm = success(ms(20), ms(2), 0)
		warm.flags = 0
		col.add(warm)
		col.closeAll(emit)
		col.phase(true, ms(100), ms(100), math.MaxInt64)
		col.add(failed(ms(110), kError, dup))
		col.add(failed(ms(120), kRetry, deadlock))
		col.add(failed(ms(130), kRetry, deadlock))
		col.add(success(ms(140), ms(5), 0))
		col.add(success(ms(150), ms(6), 0))
		col.add(success(ms(250), ms(7), 0))
		col.setStop(ms(300))
		col.closeAll(emit)
		if len(got) != 3 {
			t.Fatalf("%d intervals, want 3", len(got))
		}
		want := []map[string]int64{{"1213": 1}, {"1213": 2, "1062": 1}, nil}
		counts := []int64{1, 2, 1}
		for k, iv := range got {
			if fmt.Sprint(iv.ErrorsByCode) != fmt.Sprint(want[k]) {
				t.Errorf("interval %d: errors by code %v, want %v", k, iv.ErrorsByCode, want[k])
			}
			switch {
			case !on && iv.Latency != nil:
				t.Errorf("interval %d: a histogram without IntervalLatency", k)
			case on && (iv.Latency == nil || iv.Latency.Count() != counts[k]):
				t.Errorf("interval %d: histogram %v, want %d values", k, iv.Latency, counts[k])
			}
		}
	}
}
