package runner

import (
	"math"
	"slices"
	"time"
)

// outage is a window without connection, ns since t0.
type outage struct{ start, end int64 }

// outageBegin records that a worker lost its connection at lost (ns since
// t0) and could not make a new one at once.
func (r *run) outageBegin(lost int64) {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	if r.outOpen {
		r.outFrom = min(r.outFrom, lost)
		return
	}
	if n := len(r.outages); n > 0 && lost < r.outages[n-1].end {
		// Lost before the last outage ended: the same outage goes on.
		lost = r.outages[n-1].start
		r.outages = r.outages[:n-1]
	}
	r.outOpen, r.outFrom = true, lost
}

// outageEnd records that a worker made a new connection at, ns since t0.
func (r *run) outageEnd(at int64) {
	r.outMu.Lock()
	if r.outOpen {
		r.outages = append(r.outages, outage{r.outFrom, at})
		r.outOpen = false
	}
	r.outMu.Unlock()
}

// outagesIn returns the outages as offsets from from, clipped to
// [from, to), all ns since t0.
func (r *run) outagesIn(from, to int64) []Outage {
	r.outMu.Lock()
	all := slices.Clone(r.outages)
	if r.outOpen {
		all = append(all, outage{r.outFrom, math.MaxInt64})
	}
	r.outMu.Unlock()
	var out []Outage
	for i, o := range all {
		recovered := !(r.outOpen && i == len(all)-1)
		start, end := max(o.start, from), min(o.end, to)
		if end < start || (end == start && recovered) {
			continue
		}
		if o.end > to {
			recovered = false // still out at the end of the measured period
		}
		out = append(out, Outage{Start: time.Duration(start - from), End: time.Duration(end - from), Recovered: recovered})
	}
	return out
}

// uptime is elapsed minus the outages.
func uptime(elapsed time.Duration, outages []Outage) time.Duration {
	up := elapsed
	for _, o := range outages {
		up -= o.End - o.Start
	}
	return max(up, 0)
}
