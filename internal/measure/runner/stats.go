package runner

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbarena/dbarena/internal/measure/hist"
	"github.com/dbarena/dbarena/internal/workload"
)

// Record kinds.
const (
	kSuccess    uint8 = iota // an event succeeded
	kError                   // an event failed (ignored, lost connection or fatal)
	kRetry                   // an attempt failed and the event is rerun
	kReconnect               // a lost connection was made again
	kDrop                    // rate mode: lat events found the queue full
	kAborted                 // an event cut short by the runner's stop: latency so far
	kConnect                 // Config.Connect: a new connection, lat its connect and set-up time
	kConnectErr              // Config.Connect: a new connection was refused (code)
)

// Record flags.
const (
	fMeasured uint8 = 1 << iota // the event started in the measured period
	fLate                       // rate mode: it started after its intended time
)

// record is one thing a worker (or the pacer) reports: small and fixed, so
// a worker's memory does not depend on histograms.
type record struct {
	end   int64 // when it happened, ns since t0
	lat   int64 // latency in ns; for kDrop, the number of events
	q     workload.Queries
	typ   uint16 // 1 + index in the run's names; 0: no type
	code  uint16 // 1 + index in the run's names; 0: no code
	kind  uint8
	flags uint8
}

// outbox holds the records of one worker, of the workers of one poller
// group, or of the pacer. A group's workers run on one thread, one at a
// time, so the buffer they share stays in the cache, where one per worker
// would be a cold page at every event.
//
// Concurrency: a worker appends under mu, once per event; the coordinator
// takes mu to swap the slice for its spare, and reads the records outside
// the lock.
type outbox struct {
	mu    sync.Mutex
	recs  []record
	slots []*slot // whose records it holds; set before they start

	spare []record // coordinator only

	_ [64]byte // keep the next outbox's lock off this one's cache line
}

// slot is one worker's (or the pacer's) place in its outbox. inflight is
// set by the worker alone as an event begins and cleared under the
// outbox's mu with the event's record, so the coordinator, under mu, sees
// either the record or the running event, never both. After the final
// take, records are dropped: a worker the coordinator gave up on can never
// change what was counted.
type slot struct {
	out      *outbox
	inflight atomic.Int64 // (1 + start of the running event, ns since t0) << 1 | measured; 0 when idle
	closed   bool         // guarded by out.mu
}

// join makes s put its records into ob.
func (s *slot) join(ob *outbox) {
	s.out = ob
	ob.slots = append(ob.slots, s)
}

// begin marks an event started at start (ns since t0) as running.
func (s *slot) begin(start int64, measured bool) {
	v := (start + 1) << 1
	if measured {
		v |= 1
	}
	s.inflight.Store(v)
}

// put appends rec; with done, the running event is over.
func (s *slot) put(rec record, done bool) {
	ob := s.out
	ob.mu.Lock()
	if !s.closed {
		ob.recs = append(ob.recs, rec)
	}
	if done {
		s.inflight.Store(0)
	}
	ob.mu.Unlock()
}

// maxSpare is the capacity above which a drained buffer is not kept for
// reuse, so that a burst does not hold memory for the rest of the run.
const maxSpare = 1 << 16

// running is an event still running at the final take.
type running struct {
	start    int64 // ns since t0
	measured bool
}

// take returns the records so far, for the coordinator to read until its
// next take. With final, its slots are closed and their running events
// returned too.
func (ob *outbox) take(final bool) (recs []record, run []running) {
	spare := ob.spare[:0]
	ob.mu.Lock()
	recs = ob.recs
	ob.recs = spare
	if final {
		for _, s := range ob.slots {
			s.closed = true
			if v := s.inflight.Load(); v != 0 {
				run = append(run, running{start: v>>1 - 1, measured: v&1 != 0})
			}
		}
	}
	ob.mu.Unlock()
	ob.spare = recs
	if cap(recs) > maxSpare {
		ob.spare = nil
	}
	return recs, run
}

// names interns the event types and error codes of a run, so records carry
// small indexes. Workers keep their own cache (worker.ids) and come here
// only for a name they have not seen.
type names struct {
	mu   sync.Mutex
	list []string
	idx  map[string]uint16
}

// id returns 1 + the index of s, 0 for "" (and for names beyond the
// 65535th, which never happens with real workloads).
func (n *names) id(s string) uint16 {
	if s == "" {
		return 0
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if i, ok := n.idx[s]; ok {
		return i
	}
	if len(n.list) >= math.MaxUint16 {
		return 0
	}
	if n.idx == nil {
		n.idx = map[string]uint16{}
	}
	n.list = append(n.list, s)
	i := uint16(len(n.list))
	n.idx[s] = i
	return i
}

// name returns the name of id (> 0).
func (n *names) name(id uint16) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.list[id-1]
}

// counts are the counters of one interval or of the measured period.
type counts struct {
	events                                     int64
	queries                                    workload.Queries
	errors, retries, reconnects, late, dropped int64
	connects, connectErrors                    int64
}

// typeStats are one transaction type's figures over the measured period or
// one interval (with a coarse histogram).
type typeStats struct {
	count, late, errors, retries int64
	lat                          *hist.Histogram
}

// bucket is one report interval being filled.
type bucket struct {
	c     counts
	lat   *hist.Histogram // coarse
	types []*typeStats    // by type id - 1; coarse histograms
	codes map[uint16]int64
}

// collector turns records into the interval series and the totals of the
// measured period. It belongs to the coordinator alone.
//
// Each record counts in the interval its end falls in; one that comes after
// its interval was closed counts in the oldest interval still open, so
// nothing is lost and the sum of the intervals is the total. Intervals are
// closed one by one, however late, never merged.
type collector struct {
	ri     int64 // report interval in ns; 0: no intervals
	names  *names
	limits map[string]time.Duration
	// encode: measured intervals carry their encoded histogram
	// (Config.IntervalHistograms).
	encode bool
	// copyLat: intervals carry a copy of their histogram
	// (Config.IntervalLatency).
	copyLat bool

	measured bool  // the phase: warm-up or measured
	maxEnd   int64 // latest end of a record counted in the measured period
	origin   int64 // start of the phase, ns since t0
	report   int64 // offsets of reported intervals are from this, ns since t0
	// limit is the end of the phase once known (warm-up end, time up,
	// stop), else MaxInt64. Measured records that end later are unfinished.
	limit int64

	first int64     // index of the oldest open interval of the phase
	open  []*bucket // open[i] is interval first+i
	free  []*bucket

	// Totals of the measured period.
	tot        counts
	unfinished int64
	codes      []int64 // by code id - 1
	lat        *hist.Histogram
	conn       *hist.Histogram // connect times (Config.Connect)
	types      []*typeStats    // by type id - 1; full histograms
	typeLimit  []time.Duration
}

func newCollector(ri time.Duration, n *names, limits map[string]time.Duration) *collector {
	return &collector{ri: int64(ri), names: n, limits: limits, lat: hist.New(),
		conn: hist.New(), limit: math.MaxInt64}
}

// phase starts the warm-up or the measured period at origin, ns since t0;
// intervals are reported as offsets from report and end at limit
// (MaxInt64: not known yet). Open intervals must have been closed.
func (c *collector) phase(measured bool, origin, report, limit int64) {
	c.measured, c.origin, c.report, c.limit = measured, origin, report, limit
	c.first = 0
	c.open = c.open[:0]
}

// setLimit sets the end of the phase once it is known.
func (c *collector) setLimit(limit int64) { c.limit = limit }

// setStop marks the stop of the measured period: later records count as
// unfinished. It returns the stop it kept: never before a record already
// counted or an interval already closed (a stop decided by a worker can be
// published a little after it was timed), nor after the known end.
func (c *collector) setStop(stop int64) int64 {
	if c.ri > 0 {
		stop = max(stop, c.origin+c.first*c.ri)
	}
	stop = min(max(stop, c.maxEnd+1), c.limit)
	c.limit = stop
	return stop
}

// bucket returns open interval k (>= c.first).
func (c *collector) bucket(k int64) *bucket {
	i := int(k - c.first)
	for len(c.open) <= i {
		var b *bucket
		if n := len(c.free); n > 0 {
			b, c.free = c.free[n-1], c.free[:n-1]
		} else {
			b = &bucket{lat: hist.NewCoarse()}
		}
		c.open = append(c.open, b)
	}
	return c.open[i]
}

// fullTypes is how many transaction types keep a full-precision histogram
// over the measured period (0.1%, 185 KiB each); types beyond it (a URL
// list's or a capture's many keys) keep a coarse one (1%, 26 KiB), so the
// collector's memory stays near 26 KiB per key instead of 185.
const fullTypes = 64

// typ returns the statistics of type id in ts, growing it: coarse, or with
// a full histogram for the first fullTypes ids.
func typ(ts *[]*typeStats, id uint16, coarse bool) *typeStats {
	i := int(id) - 1
	for len(*ts) <= i {
		*ts = append(*ts, nil)
	}
	t := (*ts)[i]
	if t == nil {
		if coarse || id > fullTypes {
			t = &typeStats{lat: hist.NewCoarse()}
		} else {
			t = &typeStats{lat: hist.New()}
		}
		(*ts)[i] = t
	}
	return t
}

// limitOf is the response-time limit of type id.
func (c *collector) limitOf(id uint16) time.Duration {
	i := int(id) - 1
	for len(c.typeLimit) <= i {
		c.typeLimit = append(c.typeLimit, -1)
	}
	if c.typeLimit[i] < 0 {
		c.typeLimit[i] = c.limits[c.names.name(id)]
	}
	return c.typeLimit[i]
}

// add counts one record.
func (c *collector) add(r *record) {
	measured := r.flags&fMeasured != 0
	if measured != c.measured {
		return // an event of the warm-up that ended in the measured period
	}
	if !measured && r.end >= c.limit {
		return
	}
	if measured && (r.kind == kAborted || r.end >= c.limit) {
		// In flight at the stop: its latency so far, not an event.
		if r.kind == kSuccess || r.kind == kError || r.kind == kAborted {
			c.unfinished++
			c.lat.Record(time.Duration(r.lat))
		}
		return
	}
	late := r.flags&fLate != 0
	var tl time.Duration
	if r.typ > 0 && r.kind == kSuccess {
		tl = c.limitOf(r.typ)
	}
	if measured {
		c.maxEnd = max(c.maxEnd, r.end)
		apply(&c.tot, &c.types, c.lat, r, late, tl, false)
		if r.kind == kConnect {
			c.conn.Record(time.Duration(r.lat))
		}
		if r.code > 0 {
			i := int(r.code) - 1
			for len(c.codes) <= i {
				c.codes = append(c.codes, 0)
			}
			c.codes[i]++
		}
	}
	if c.ri > 0 {
		k := max((r.end-c.origin)/c.ri, c.first)
		b := c.bucket(k)
		apply(&b.c, &b.types, b.lat, r, late, tl, true)
		if r.code > 0 {
			if b.codes == nil {
				b.codes = map[uint16]int64{}
			}
			b.codes[r.code]++
		}
	}
}

// apply adds r to counters, a latency histogram and per-type figures.
func apply(ct *counts, ts *[]*typeStats, lat *hist.Histogram, r *record, late bool, limit time.Duration, coarse bool) {
	ct.queries.Add(r.q)
	if late {
		ct.late++
	}
	var t *typeStats
	if r.typ > 0 && r.kind != kReconnect && r.kind != kDrop && r.kind != kConnect && r.kind != kConnectErr {
		t = typ(ts, r.typ, coarse)
	}
	switch r.kind {
	case kSuccess:
		d := time.Duration(r.lat)
		ct.events++
		lat.Record(d)
		if t != nil {
			t.count++
			t.lat.Record(d)
			if limit > 0 && d > limit {
				t.late++
			}
		}
	case kError:
		ct.errors++
		if t != nil {
			t.errors++
		}
	case kRetry:
		ct.retries++
		if t != nil {
			t.retries++
		}
	case kReconnect:
		ct.reconnects++
	case kDrop:
		ct.dropped += r.lat
	case kConnect:
		ct.connects++
	case kConnectErr:
		ct.connectErrors++
	}
}

// bounds returns the start and end of interval k, ns since t0.
func (c *collector) bounds(k int64) (start, end int64) {
	start = c.origin + k*c.ri
	return start, min(start+c.ri, c.limit)
}

// nextEnd is the end of the oldest open interval (MaxInt64 without
// intervals).
func (c *collector) nextEnd() int64 {
	if c.ri <= 0 {
		return math.MaxInt64
	}
	_, end := c.bounds(c.first)
	return end
}

// closeUpTo closes, in order, every interval that ended at or before upTo
// and before the end of the phase (the last one is closed by closeAll).
func (c *collector) closeUpTo(upTo int64, emit func(Interval)) {
	if c.ri <= 0 {
		return
	}
	for {
		_, end := c.bounds(c.first)
		if end > upTo || end >= c.limit {
			return
		}
		emit(c.closeFirst())
	}
}

// closeAll closes every interval up to the end of the phase (c.limit, which
// must be known); a zero-length last interval is not reported.
func (c *collector) closeAll(emit func(Interval)) {
	if c.ri <= 0 {
		return
	}
	for {
		start, _ := c.bounds(c.first)
		if start >= c.limit {
			break
		}
		emit(c.closeFirst())
	}
	for _, b := range c.open { // records past the end cannot be here; be safe
		c.recycle(b)
	}
	c.open = c.open[:0]
}

// closeFirst reports the oldest open interval and moves on to the next.
func (c *collector) closeFirst() Interval {
	start, end := c.bounds(c.first)
	iv := Interval{Start: time.Duration(start - c.report), End: time.Duration(end - c.report), Warmup: !c.measured}
	if len(c.open) > 0 {
		b := c.open[0]
		c.open = c.open[1:]
		iv.Events, iv.Queries = b.c.events, b.c.queries
		iv.Errors, iv.Retries, iv.Reconnects, iv.Late, iv.Dropped = b.c.errors, b.c.retries, b.c.reconnects, b.c.late, b.c.dropped
		iv.Connects, iv.ConnectErrors = b.c.connects, b.c.connectErrors
		iv.P50, iv.P95, iv.P99, iv.Max = b.lat.Quantile(50), b.lat.Quantile(95), b.lat.Quantile(99), b.lat.Max()
		if c.encode && c.measured && b.lat.Count() > 0 {
			iv.Histogram, _ = b.lat.Encode()
		}
		if c.copyLat {
			iv.Latency = b.lat.Clone()
		}
		for id, n := range b.codes {
			if iv.ErrorsByCode == nil {
				iv.ErrorsByCode = make(map[string]int64, len(b.codes))
			}
			iv.ErrorsByCode[c.names.name(id)] = n
		}
		for i, t := range b.types {
			if t == nil || t.count+t.errors+t.retries == 0 {
				continue
			}
			if iv.PerType == nil {
				iv.PerType = map[string]workload.TypeInterval{}
			}
			name := c.names.name(uint16(i + 1))
			iv.PerType[name] = workload.TypeInterval{Count: t.count, Late: t.late,
				Errors: t.errors, Retries: t.retries, P90: t.lat.Quantile(90), P95: t.lat.Quantile(95),
				P99: t.lat.Quantile(99), Max: t.lat.Max()}
			if c.encode && c.measured && t.lat.Count() > 0 {
				if iv.TypeHistograms == nil {
					iv.TypeHistograms = map[string]string{}
				}
				iv.TypeHistograms[name], _ = t.lat.Encode()
			}
		}
		c.recycle(b)
	}
	c.first++
	return iv
}

func (c *collector) recycle(b *bucket) {
	b.c = counts{}
	b.lat.Reset()
	clear(b.codes)
	for _, t := range b.types {
		if t != nil {
			t.count, t.late, t.errors, t.retries = 0, 0, 0, 0
			t.lat.Reset()
		}
	}
	c.free = append(c.free, b)
}

// fill copies the totals into res; with clone, the histograms are copies.
func (c *collector) fill(res *Result, clone bool) {
	res.Events, res.Queries = c.tot.events, c.tot.queries
	res.Errors, res.Retries, res.Reconnects = c.tot.errors, c.tot.retries, c.tot.reconnects
	res.Late, res.Dropped, res.Unfinished = c.tot.late, c.tot.dropped, c.unfinished
	res.ErrorsByCode = make(map[string]int64, len(c.codes))
	for i, n := range c.codes {
		if n > 0 {
			res.ErrorsByCode[c.names.name(uint16(i+1))] = n
		}
	}
	res.Connects, res.ConnectErrors = c.tot.connects, c.tot.connectErrors
	res.Latency, res.Connect = c.lat, c.conn
	if clone {
		res.Latency, res.Connect = c.lat.Clone(), c.conn.Clone()
	}
	res.PerType = make(map[string]*TypeResult, len(c.types))
	for i, t := range c.types {
		if t == nil {
			continue
		}
		tr := &TypeResult{Count: t.count, Errors: t.errors, Retries: t.retries, Late: t.late, Latency: t.lat}
		if clone {
			tr.Latency = t.lat.Clone()
		}
		res.PerType[c.names.name(uint16(i+1))] = tr
	}
}
