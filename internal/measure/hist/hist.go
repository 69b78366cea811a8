// Package hist records latency distributions in HDR histograms: microsecond
// resolution from 1µs to 1h with 3 significant digits, mergeable and
// encodable in HdrHistogram's standard compressed base64 form, so stored
// results can be re-read by any HDR tool.
//
// Concurrency: a Histogram is not safe for concurrent use; it is meant to be
// owned by one goroutine at a time (the runner's coordinator records every
// event into its own), or merged by an owner after another hands it over.
// Recorder is a safe hand-over point: one or more goroutines Record into it
// while another Swaps out the interval's histogram.
//
// Memory: each Histogram holds a dense counts array of about 185 KiB (26 KiB
// for NewCoarse), whatever it records. Keep a few per run and per type, not
// one per worker or per event.
package hist

import (
	"fmt"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// The range and precision of every Histogram. Values are microseconds.
const (
	// Lowest is the smallest recordable latency; shorter ones count as Lowest.
	Lowest = time.Microsecond
	// Highest is the largest recordable latency; longer ones count as Highest.
	Highest = time.Hour
	// SignificantDigits is the relative precision of recorded values (0.1%).
	SignificantDigits = 3
)

const (
	lowestUS  = int64(Lowest / time.Microsecond)
	highestUS = int64(Highest / time.Microsecond)
)

// Histogram is a latency distribution. The zero value is not usable; call
// New. A Histogram is not safe for concurrent use (see the package comment).
type Histogram struct {
	h *hdrhistogram.Histogram
}

// New returns an empty histogram covering Lowest..Highest.
func New() *Histogram {
	return &Histogram{h: hdrhistogram.New(lowestUS, highestUS, SignificantDigits)}
}

// NewCoarse returns an empty histogram covering Lowest..Highest with 2
// significant digits (1% precision) in about 26 KiB instead of 185 KiB: for
// per-type, per-interval figures kept for every worker. It merges into and
// from New's histograms (values are re-recorded, within 1%).
func NewCoarse() *Histogram {
	return &Histogram{h: hdrhistogram.New(lowestUS, highestUS, 2)}
}

// Record adds one latency, clamped to Lowest..Highest.
func (h *Histogram) Record(d time.Duration) {
	us := int64(d / time.Microsecond)
	if us < lowestUS {
		us = lowestUS
	} else if us > highestUS {
		us = highestUS
	}
	// Cannot fail: the value is in range and one count cannot overflow the
	// total in any realistic run.
	_ = h.h.RecordValue(us)
}

// Merge adds every value of o to h. o is only read; it must not be modified
// concurrently. A nil o is a no-op.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil || o.h.TotalCount() == 0 {
		return
	}
	// Same geometry (New and Decode) loses nothing; a coarse histogram's
	// values are re-recorded at its own precision.
	h.h.Merge(o.h)
}

// Reset empties h, keeping its memory.
func (h *Histogram) Reset() { h.h.Reset() }

// Clone returns an independent copy of h.
func (h *Histogram) Clone() *Histogram { return &Histogram{h: h.h.Clone()} }

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// Quantile returns the latency at or below which q percent of the recorded
// values lie, q in [0,100] (99 is p99, 99.9 is p999). Within 0.1% of the true
// value; 0 for an empty histogram.
func (h *Histogram) Quantile(q float64) time.Duration {
	return time.Duration(h.h.ValueAtQuantile(q)) * time.Microsecond
}

// Min is the smallest recorded latency (0 when empty).
func (h *Histogram) Min() time.Duration {
	if h.Count() == 0 {
		return 0
	}
	return time.Duration(h.h.Min()) * time.Microsecond
}

// Max is the largest recorded latency (0 when empty).
func (h *Histogram) Max() time.Duration {
	if h.Count() == 0 {
		return 0
	}
	return time.Duration(h.h.Max()) * time.Microsecond
}

// Mean is the average recorded latency (0 when empty).
func (h *Histogram) Mean() time.Duration {
	return time.Duration(h.h.Mean() * float64(time.Microsecond))
}

// Latency summarises h in milliseconds for the run summary. All fields are
// zero for an empty histogram.
func (h *Histogram) Latency() summary.Latency {
	if h.Count() == 0 {
		return summary.Latency{}
	}
	const usPerMS = 1000.0
	q := func(p float64) float64 { return float64(h.h.ValueAtQuantile(p)) / usPerMS }
	return summary.Latency{
		Min:  float64(h.h.Min()) / usPerMS,
		Avg:  h.h.Mean() / usPerMS,
		P50:  q(50),
		P90:  q(90),
		P95:  q(95),
		P99:  q(99),
		P999: q(99.9),
		Max:  float64(h.h.Max()) / usPerMS,
	}
}

// Encode returns h in HdrHistogram's V2 compressed, base64 form (values in
// microseconds), readable by Decode and by other HdrHistogram tools.
func (h *Histogram) Encode() (string, error) {
	b, err := h.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// Decode reads a histogram written by Encode. A histogram encoded with
// another range or precision is converted; values outside Lowest..Highest
// make it fail.
func Decode(s string) (*Histogram, error) {
	d, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	if d.LowestTrackableValue() == lowestUS && d.HighestTrackableValue() == highestUS &&
		d.SignificantFigures() == SignificantDigits {
		return &Histogram{h: d}, nil
	}
	h := New()
	if dropped := h.h.Merge(d); dropped > 0 {
		return nil, fmt.Errorf("decode histogram: %d values outside %v..%v", dropped, Lowest, Highest)
	}
	return h, nil
}

// Recorder is a Histogram that any number of goroutines may Record into
// while one coordinator periodically takes the interval's values with Swap.
// Recording takes an uncontended mutex (contended only for the instant of a
// Swap); Swap never allocates. A Recorder must not be copied.
type Recorder struct {
	swapMu sync.Mutex // serialises Swap callers; guards spare
	spare  *Histogram

	mu  sync.Mutex // guards cur
	cur *Histogram
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{cur: New(), spare: New()}
}

// Record adds one latency to the current interval. Safe for concurrent use.
func (r *Recorder) Record(d time.Duration) {
	r.mu.Lock()
	r.cur.Record(d)
	r.mu.Unlock()
}

// Swap returns the histogram of everything recorded since the previous Swap
// (or since NewRecorder) and starts a new interval. The returned histogram
// belongs to the caller only until the next Swap, which empties and reuses
// it: merge or Clone it before swapping again. Safe for concurrent use.
func (r *Recorder) Swap() *Histogram {
	r.swapMu.Lock()
	defer r.swapMu.Unlock()
	next := r.spare
	next.Reset() // outside mu: recording goes on meanwhile
	r.mu.Lock()
	prev := r.cur
	r.cur = next
	r.mu.Unlock()
	r.spare = prev
	return prev
}
