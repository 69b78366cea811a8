package replay

import (
	"math/bits"
	"time"
)

// lhist is a small latency histogram in microseconds: exact below 64 µs,
// then 32 buckets per power of two (about 3% precision), held densely
// between the lowest and highest bucket used. A fingerprint seen at a few
// latencies costs a few hundred bytes, so thousands of them stay cheap
// (the runner's full-precision histograms cost ~270 KB each).
type lhist struct {
	lo     int      // bucket index of counts[0]
	counts []uint32 // by bucket index - lo
	n      int64
	sum    int64 // µs
	max    int64 // µs
}

const subBuckets = 32

func bucketOf(us int64) int {
	if us < 2*subBuckets {
		return int(max(us, 0))
	}
	e := bits.Len64(uint64(us)) - 6 // us>>e is in [32, 63]
	return subBuckets*e + int(us>>e)
}

// valueOf is the middle of bucket i, in µs.
func valueOf(i int) int64 {
	if i < 2*subBuckets {
		return int64(i)
	}
	e := i/subBuckets - 1
	m := int64(i%subBuckets + subBuckets)
	return m<<e + (int64(1)<<e)/2
}

func (h *lhist) record(d time.Duration) {
	us := d.Microseconds()
	i := bucketOf(us)
	switch {
	case h.counts == nil:
		h.lo = i
		h.counts = make([]uint32, 1, 4)
	case i < h.lo:
		grown := make([]uint32, len(h.counts)+h.lo-i)
		copy(grown[h.lo-i:], h.counts)
		h.counts, h.lo = grown, i
	case i-h.lo >= len(h.counts):
		h.counts = append(h.counts, make([]uint32, i-h.lo-len(h.counts)+1)...)
	}
	h.counts[i-h.lo]++
	h.n++
	h.sum += us
	h.max = max(h.max, us)
}

func (h *lhist) merge(o *lhist) {
	for j, c := range o.counts {
		if c == 0 {
			continue
		}
		i := o.lo + j
		// Grow as record does, then add.
		switch {
		case h.counts == nil:
			h.lo = i
			h.counts = make([]uint32, 1)
		case i < h.lo:
			grown := make([]uint32, len(h.counts)+h.lo-i)
			copy(grown[h.lo-i:], h.counts)
			h.counts, h.lo = grown, i
		case i-h.lo >= len(h.counts):
			h.counts = append(h.counts, make([]uint32, i-h.lo-len(h.counts)+1)...)
		}
		h.counts[i-h.lo] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// quantile returns the q-th percentile (0..100) in µs.
func (h *lhist) quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	rank := int64(q/100*float64(h.n) + 0.5)
	rank = min(max(rank, 1), h.n)
	var seen int64
	for j, c := range h.counts {
		seen += int64(c)
		if seen >= rank {
			return min(valueOf(h.lo+j), h.max)
		}
	}
	return h.max
}

func (h *lhist) min() int64 {
	for j, c := range h.counts {
		if c > 0 {
			return valueOf(h.lo + j)
		}
	}
	return 0
}
