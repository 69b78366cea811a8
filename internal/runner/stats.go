package runner

import (
	"sync"
	"time"

	"github.com/dbarena/dbarena/internal/hist"
	"github.com/dbarena/dbarena/internal/workload"
)

// counts are the counters of one interval.
type counts struct {
	events                                     int64
	queries                                    workload.Queries
	errors, retries, reconnects, late, dropped int64
}

func (c *counts) add(o *counts) {
	c.events += o.events
	c.queries.Add(o.queries)
	c.errors += o.errors
	c.retries += o.retries
	c.reconnects += o.reconnects
	c.late += o.late
	c.dropped += o.dropped
}

// typeStats are one transaction type's statistics over a whole phase.
type typeStats struct {
	count, errors, retries, late int64
	lat                          *hist.Histogram
}

// typeInterval is one transaction type's statistics over one interval; its
// histogram is coarse (per worker, per type).
type typeInterval struct {
	count, late, errors, retries int64
	lat                          *hist.Histogram
}

func (t *typeInterval) add(o *typeInterval) {
	t.count += o.count
	t.late += o.late
	t.errors += o.errors
	t.retries += o.retries
	t.lat.Merge(o.lat)
}

func (t *typeInterval) reset() {
	t.count, t.late, t.errors, t.retries = 0, 0, 0, 0
	t.lat.Reset()
}

// slot is where one worker (or the pacer) records, and where the
// coordinator collects from.
//
// Concurrency: the owner records under mu, once per event; the coordinator
// takes mu once per interval to swap the interval's counters and histogram
// out (take), and merges them outside the lock, so a worker never waits for
// a merge. Per-type statistics stay in the slot for the whole phase: the
// coordinator reads them only after every worker has stopped. spare belongs
// to the coordinator alone.
type slot struct {
	mu sync.Mutex
	// measured is false during warm-up. A record made for an event that
	// started in another phase than the slot's is discarded, so an event
	// is counted in the phase it started in, exactly once.
	measured bool
	c        counts
	codes    map[string]int64
	lat      *hist.Histogram
	types    map[string]*typeStats
	// itypes are the per-type figures of the current interval.
	itypes map[string]*typeInterval

	spare *hist.Histogram // coordinator-owned, not guarded by mu

	_ [64]byte // keep the next slot's hot fields off this one's cache lines
}

func newSlot(measured bool) *slot {
	return &slot{
		measured: measured,
		codes:    map[string]int64{},
		lat:      hist.New(),
		spare:    hist.New(),
		types:    map[string]*typeStats{},
		itypes:   map[string]*typeInterval{},
	}
}

// typ returns the statistics of transaction type name; s.mu must be held.
func (s *slot) typ(name string) *typeStats {
	t := s.types[name]
	if t == nil {
		t = &typeStats{lat: hist.New()}
		s.types[name] = t
	}
	return t
}

// ityp returns the current interval's statistics of type name; s.mu must be held.
func (s *slot) ityp(name string) *typeInterval {
	t := s.itypes[name]
	if t == nil {
		t = &typeInterval{lat: hist.NewCoarse()}
		s.itypes[name] = t
	}
	return t
}

// done records an event that started in phase measured. code is "" for a
// success (counted with its latency) and the error code for a failure
// (counted as an error). q counts the statements of every attempt. limit is
// the type's response-time limit (0: none); a slower success is late.
func (s *slot) done(measured bool, lat time.Duration, q workload.Queries, typ string, late bool, code string, limit time.Duration) {
	s.mu.Lock()
	if measured != s.measured {
		s.mu.Unlock()
		return
	}
	s.c.queries.Add(q)
	if late {
		s.c.late++
	}
	if code == "" {
		s.c.events++
		s.lat.Record(lat)
	} else {
		s.c.errors++
		s.codes[code]++
	}
	if typ != "" {
		t, it := s.typ(typ), s.ityp(typ)
		if code == "" {
			t.count++
			t.lat.Record(lat)
			it.count++
			it.lat.Record(lat)
			if limit > 0 && lat > limit {
				t.late++
				it.late++
			}
		} else {
			t.errors++
			it.errors++
		}
	}
	s.mu.Unlock()
}

// retry records that an event started in phase measured is rerun after an
// error with code.
func (s *slot) retry(measured bool, code, typ string) {
	s.mu.Lock()
	if measured == s.measured {
		s.c.retries++
		s.codes[code]++
		if typ != "" {
			s.typ(typ).retries++
			s.ityp(typ).retries++
		}
	}
	s.mu.Unlock()
}

// reconnect records a lost connection, in the current phase.
func (s *slot) reconnect() {
	s.mu.Lock()
	s.c.reconnects++
	s.mu.Unlock()
}

// drop records n events that found the rate-mode queue full.
func (s *slot) drop(n int64) {
	s.mu.Lock()
	s.c.dropped += n
	s.mu.Unlock()
}

// take moves the interval's counts into c and codes and merges its latency
// into lat, leaving the slot with an empty interval. With measure, it ends
// the warm-up: per-type statistics are emptied and records of events
// started before are discarded from now on. Coordinator only.
func (s *slot) take(c *counts, codes map[string]int64, lat *hist.Histogram, types map[string]*typeInterval, measure bool) {
	s.mu.Lock()
	for name, t := range s.itypes {
		if t.count == 0 && t.errors == 0 && t.retries == 0 {
			continue
		}
		acc := types[name]
		if acc == nil {
			acc = &typeInterval{lat: hist.NewCoarse()}
			types[name] = acc
		}
		acc.add(t)
		t.reset()
	}
	taken := s.lat
	s.lat = s.spare
	c.add(&s.c)
	s.c = counts{}
	for k, v := range s.codes {
		codes[k] += v
	}
	clear(s.codes)
	if measure {
		s.measured = true
		clear(s.types) // warm-up's types need not exist in the measured period

	}
	s.mu.Unlock()
	if taken.Count() > 0 {
		lat.Merge(taken)
		taken.Reset()
	}
	s.spare = taken
}
