package replay

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/workload"
)

// keptUpLimit is the p99 lag behind schedule under which a paced replay
// kept up.
const keptUpLimit = 10 * time.Millisecond

// fpStat is one fingerprint's figures on one slot.
type fpStat struct {
	lat                 lhist // successes, from the due time (paced) or the start
	count, errors, rows int64
	totalUS             int64 // every execution, failed ones included
	capUS, capN         int64
	codes               map[string]int64
	digest              uint64 // sum of the executions' result digests
}

// workerStats are one slot's figures; mu is uncontended but for Summarize.
type workerStats struct {
	mu          sync.Mutex
	fps         []*fpStat // by fingerprint index, nil until used
	lagH        lhist
	connectErrs int64
	stmts, errs int64 // for the interval lines
}

func newWorkerStats(nfp int) *workerStats { return &workerStats{fps: make([]*fpStat, nfp)} }

func (w *workerStats) fp(i int32) *fpStat {
	s := w.fps[i]
	if s == nil {
		s = &fpStat{}
		w.fps[i] = s
	}
	return s
}

func (w *workerStats) record(e *event, d time.Duration, code string, rows int64) {
	w.mu.Lock()
	s := w.fp(e.fp)
	s.totalUS += d.Microseconds()
	s.rows += rows
	if e.durUS >= 0 {
		s.capUS += e.durUS
		s.capN++
	}
	w.stmts++
	if code == "" {
		s.count++
		s.lat.record(d)
	} else {
		s.errors++
		w.errs++
		if s.codes == nil {
			s.codes = map[string]int64{}
		}
		s.codes[code]++
	}
	w.mu.Unlock()
}

// fail counts an error of a statement that was not an event (a prepare).
func (w *workerStats) fail(fp int32, code string, rows int64) {
	w.mu.Lock()
	s := w.fp(fp)
	s.errors++
	if s.codes == nil {
		s.codes = map[string]int64{}
	}
	s.codes[code]++
	w.mu.Unlock()
}

func (w *workerStats) lag(d time.Duration) {
	w.mu.Lock()
	w.lagH.record(max(d, 0))
	w.mu.Unlock()
}

func (w *workerStats) digest(fp int32, d uint64) {
	w.mu.Lock()
	w.fp(fp).digest += d
	w.mu.Unlock()
}

func (w *workerStats) connectErr() {
	w.mu.Lock()
	w.connectErrs++
	w.mu.Unlock()
}

// reset forgets everything but the digests (the warm-up ended).
func (w *workerStats) reset() {
	w.mu.Lock()
	for _, s := range w.fps {
		if s != nil {
			*s = fpStat{digest: s.digest}
		}
	}
	w.lagH = lhist{}
	w.connectErrs, w.stmts, w.errs = 0, 0, 0
	w.mu.Unlock()
}

// digest is a statement's result digest: its row count and checksum, or
// its error code; never 0 (0 marks a statement not run).
func digest(r result, code string) uint64 {
	var b [16]byte
	if code != "" {
		return xxhash.Sum64String("error "+code) | 1
	}
	binary.LittleEndian.PutUint64(b[:8], uint64(r.rows))
	binary.LittleEndian.PutUint64(b[8:], r.sum)
	return xxhash.Sum64(b[:]) | 1
}

// lagSeries counts lag behind schedule per second of the measured period.
type lagSeries struct {
	mu     sync.Mutex
	origin time.Time // start of the measured period
	secs   []lagSec
}

// lagSec is one second: statements, max lag, and counts by power of two
// of the lag in ms (b[0]: under 1 ms).
type lagSec struct {
	n, maxUS int64
	b        [24]int64
}

func (l *lagSeries) record(lag time.Duration, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.origin.IsZero() || at.Before(l.origin) {
		return
	}
	i := int(at.Sub(l.origin) / time.Second)
	for len(l.secs) <= i {
		l.secs = append(l.secs, lagSec{})
	}
	s := &l.secs[i]
	s.n++
	us := max(lag.Microseconds(), 0)
	s.maxUS = max(s.maxUS, us)
	s.b[min(bits.Len64(uint64(us/1000)), len(s.b)-1)]++
}

// window sums the seconds [from, to) of the measured period.
func (l *lagSeries) window(from, to time.Duration) lagSec {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out lagSec
	for i := max(int(from/time.Second), 0); i < len(l.secs) && time.Duration(i)*time.Second < to; i++ {
		s := &l.secs[i]
		out.n += s.n
		out.maxUS = max(out.maxUS, s.maxUS)
		for j := range s.b {
			out.b[j] += s.b[j]
		}
	}
	return out
}

// p99MS is the upper bound of the bucket holding the 99th percentile.
func (s *lagSec) p99MS() float64 {
	if s.n == 0 {
		return 0
	}
	rank := (s.n*99 + 99) / 100
	var seen int64
	for j, c := range s.b {
		seen += c
		if seen >= rank {
			if j == 0 {
				return min(1, float64(s.maxUS)/1000)
			}
			return min(float64(int64(1)<<j), float64(s.maxUS)/1000)
		}
	}
	return float64(s.maxUS) / 1000
}

// BeginMeasure implements workload.MeasureBeginner: figures leave out the
// warm-up.
func (wl *Workload) BeginMeasure() {
	wl.mu.Lock()
	wl.plan()
	stats := wl.stats
	wl.mu.Unlock()
	for _, s := range stats {
		s.reset()
	}
	wl.lag.mu.Lock()
	wl.lag.origin, wl.lag.secs = time.Now(), nil
	wl.lag.mu.Unlock()
	wl.measured.Store(true)
}

// merged sums every slot's figures by fingerprint.
func (wl *Workload) merged() (fps []*fpStat, lag lhist, connectErrs int64) {
	wl.mu.Lock()
	stats := wl.stats
	wl.mu.Unlock()
	fps = make([]*fpStat, len(wl.capture.FPs))
	for _, w := range stats {
		w.mu.Lock()
		for i, s := range w.fps {
			if s == nil {
				continue
			}
			m := fps[i]
			if m == nil {
				m = &fpStat{}
				fps[i] = m
			}
			m.lat.merge(&s.lat)
			m.count += s.count
			m.errors += s.errors
			m.rows += s.rows
			m.totalUS += s.totalUS
			m.capUS += s.capUS
			m.capN += s.capN
			m.digest += s.digest
			for c, n := range s.codes {
				if m.codes == nil {
					m.codes = map[string]int64{}
				}
				m.codes[c] += n
			}
		}
		lag.merge(&w.lagH)
		connectErrs += w.connectErrs
		w.mu.Unlock()
	}
	return fps, lag, connectErrs
}

func usMS(us int64) float64 { return float64(us) / 1000 }

func latencyOf(h *lhist) summary.Latency {
	if h.n == 0 {
		return summary.Latency{}
	}
	return summary.Latency{Min: usMS(h.min()), Avg: float64(h.sum) / float64(h.n) / 1000,
		P50: usMS(h.quantile(50)), P90: usMS(h.quantile(90)), P95: usMS(h.quantile(95)),
		P99: usMS(h.quantile(99)), P999: usMS(h.quantile(99.9)), Max: usMS(h.max)}
}

// encodeHist renders h as summary.Type.Histogram.
func encodeHist(h *lhist) string {
	if h.n == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(strconv.Itoa(h.lo))
	b.WriteByte(':')
	for j, c := range h.counts {
		if j > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(uint64(c), 10))
	}
	return b.String()
}

// Summarize implements workload.Reporter: per-fingerprint statistics go
// into run.PerType keyed by fingerprint id, the replay's own figures into
// run.Replay. A report shows the run in its siege table and compares it
// fingerprint by fingerprint (summary.SectionSiege, SectionFingerprints).
func (wl *Workload) Summarize(run *summary.Run) {
	run.AddSection(summary.SectionSiege)
	run.AddSection(summary.SectionFingerprints)
	fps, lag, connectErrs := wl.merged()
	if run.PerType == nil {
		run.PerType = map[string]summary.Type{}
	}
	for i, s := range fps {
		if s == nil || s.count+s.errors == 0 {
			continue
		}
		fp := &wl.capture.FPs[i]
		t := summary.Type{Count: s.count, Errors: s.errors, LatencyMS: latencyOf(&s.lat),
			Text: fp.Text, Examples: fp.Examples, Rows: s.rows, TotalMS: usMS(s.totalUS),
			CapturedMS: usMS(s.capUS), CapturedCount: s.capN, ErrorsByCode: s.codes, Histogram: encodeHist(&s.lat)}
		if wl.digests != nil {
			t.ResultDigest = strconv.FormatUint(s.digest, 16)
		}
		run.PerType[fp.ID] = t
	}
	sessions := wl.mine()
	var stmts int64
	for _, s := range sessions {
		for i := range s.events {
			if s.events[i].ord >= 0 {
				stmts++
			}
		}
	}
	r := &summary.Replay{Capture: wl.file, Source: wl.capture.Header.Source, Flavor: wl.capture.Header.Flavor,
		Sessions: len(sessions), Statements: stmts, Speed: wl.speed, SpanS: float64(wl.capture.Span) / 1e6,
		ConnectErrors: connectErrs, KeptUp: true, LostConnections: wl.lost.Load()}
	wl.skips(r)
	if wl.speed > 0 {
		r.ExpectedS = r.SpanS / wl.speed
		l := latencyOf(&lag)
		r.LagMS = &l
		r.KeptUpLimitMS = float64(keptUpLimit) / float64(time.Millisecond)
		// Statements skipped for want of a connection were not kept up with.
		r.KeptUp = (lag.n == 0 || l.P99 < r.KeptUpLimitMS) && r.LostConnections == 0 && r.Skipped[skipNoConn] == 0 && r.Skipped[skipGone] == 0
		wl.lag.mu.Lock()
		for i := range wl.lag.secs {
			s := &wl.lag.secs[i]
			r.LagSeries = append(r.LagSeries, summary.LagPoint{TS: float64(i + 1), N: s.n, P99MS: s.p99MS(), MaxMS: usMS(s.maxUS)})
		}
		wl.lag.mu.Unlock()
	}
	if wl.digests != nil {
		b := make([]byte, 8*len(wl.digests))
		for i, d := range wl.digests {
			binary.LittleEndian.PutUint64(b[8*i:], d)
		}
		r.Results = base64.StdEncoding.EncodeToString(b)
		l := make([]byte, 4*len(wl.lats))
		for i, v := range wl.lats {
			binary.LittleEndian.PutUint32(l[4*i:], v)
		}
		r.Latencies = base64.StdEncoding.EncodeToString(l)
		o := make([]byte, 4*len(wl.digests))
		for _, s := range wl.capture.Sessions {
			for i := range s.events {
				if e := &s.events[i]; e.ord >= 0 {
					binary.LittleEndian.PutUint32(o[4*e.ord:], uint32(e.fp))
				}
			}
		}
		r.Ordinals = base64.StdEncoding.EncodeToString(o)
		for _, fp := range wl.capture.FPs {
			r.FPs = append(r.FPs, fp.ID)
		}
	}
	run.Replay = r
}

// Reasons a statement was not sent (summary.Replay.Skipped).
const (
	skipAccount = "account statement: "
	skipNoConn  = "session could not connect"
	skipGone    = "not run: the server stopped answering"
	skipEnded   = "not run: the run ended first"
	skipCopy    = "COPY FROM STDIN: its rows are not in the capture"
)

// skips fills r.Sent and r.Skipped from the slots' counts; the workers are
// done.
func (wl *Workload) skips(r *summary.Replay) {
	wl.mu.Lock()
	slots := wl.slots
	wl.mu.Unlock()
	var sent, noConn, acct int64
	byKind := map[string]int64{}
	for _, st := range slots {
		sent += st.sent
		noConn += st.noConn
		for i, n := range st.acct {
			if i > 0 && n > 0 {
				if k := wl.capture.AcctKinds[i-1]; k == kindCopyStdin {
					byKind[skipCopy] += n
				} else {
					byKind[skipAccount+k] += n
				}
				acct += n
			}
		}
	}
	r.Sent = sent
	if noConn > 0 {
		byKind[skipNoConn] = noConn
	}
	if !wl.loop {
		if left := r.Statements - sent - noConn - acct; left > 0 {
			if r.LostConnections > 0 {
				byKind[skipGone] = left
			} else {
				byKind[skipEnded] = left
			}
		}
	}
	if len(byKind) > 0 {
		r.Skipped = byKind
	}
}

// IntervalHeader implements workload.Reporter.
func (wl *Workload) IntervalHeader() string {
	return "  time, sessions open (threads), statements/s, latency p95 from the schedule, errors/s, late statements, lag behind schedule"
}

// FormatInterval implements workload.Reporter.
func (wl *Workload) FormatInterval(iv workload.IntervalReport) string {
	secs := (iv.End - iv.Start).Seconds()
	if secs <= 0 {
		secs = 1
	}
	per := func(n int64) float64 { return float64(n) / secs }
	label := fmt.Sprintf("%ds", int((iv.End + time.Millisecond/2).Seconds()))
	if iv.Warmup {
		label += " warmup"
	}
	line := fmt.Sprintf("[ %s ] thds: %d stmts/s: %.2f (r/w/o: %.2f/%.2f/%.2f) lat (ms,95%%): %.2f err/s: %.2f",
		label, iv.Threads, per(iv.Queries.Total()), per(iv.Queries.Read), per(iv.Queries.Write), per(iv.Queries.Other),
		float64(iv.P95)/float64(time.Millisecond), per(iv.Errors))
	if wl.speed > 0 && !iv.Warmup {
		l := wl.lag.window(iv.Start, iv.End)
		line += fmt.Sprintf(" late: %d lag (ms,p99|max): %.1f|%.1f", iv.Late, l.p99MS(), usMS(l.maxUS))
	}
	return line
}

// FormatSummary implements workload.Reporter: the replay's lag and the
// fingerprints that took the most time.
func (wl *Workload) FormatSummary(run *summary.Run) string {
	r := run.Replay
	if r == nil {
		return ""
	}
	var b strings.Builder
	speed := "max"
	if r.Speed > 0 {
		speed = strconv.FormatFloat(r.Speed, 'g', -1, 64)
	}
	fmt.Fprintf(&b, "\nReplay of %s (%s, %d sessions, %d statements, captured span %.1f s) at speed %s: %.1f s",
		r.Capture, r.Source, r.Sessions, r.Statements, r.SpanS, speed, run.DurationS)
	if r.ExpectedS > 0 {
		fmt.Fprintf(&b, " (schedule %.1f s)", r.ExpectedS)
	}
	b.WriteByte('\n')
	if r.LagMS != nil {
		verdict := "yes"
		if !r.KeptUp {
			verdict = "NO"
			if r.Skipped[skipNoConn]+r.Skipped[skipGone] > 0 || r.LostConnections > 0 {
				verdict = "NO (connections were lost; statements were skipped)"
			}
		}
		fmt.Fprintf(&b, "Behind schedule (ms): p50 %.2f p95 %.2f p99 %.2f max %.2f; kept up (p99 lag < %g ms): %s\n",
			r.LagMS.P50, r.LagMS.P95, r.LagMS.P99, r.LagMS.Max, r.KeptUpLimitMS, verdict)
	}
	if r.ConnectErrors > 0 {
		fmt.Fprintf(&b, "Sessions that could not connect (statements skipped): %d\n", r.ConnectErrors)
	}
	if r.LostConnections > 0 {
		fmt.Fprintf(&b, "Statements and connects that lost their connection or got no answer: %d\n", r.LostConnections)
	}
	if len(r.Skipped) > 0 {
		var total int64
		reasons := make([]string, 0, len(r.Skipped))
		for k, n := range r.Skipped {
			total += n
			reasons = append(reasons, k)
		}
		slices.Sort(reasons)
		fmt.Fprintf(&b, "Statements not sent: %d of %d (sent %d):\n", total, r.Statements, r.Sent)
		for _, k := range reasons {
			fmt.Fprintf(&b, "  %-50s %d\n", k, r.Skipped[k])
		}
	}
	ids := make([]string, 0, len(run.PerType))
	for id := range run.PerType {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, c string) int {
		ta, tc := run.PerType[a].TotalMS, run.PerType[c].TotalMS
		switch {
		case ta > tc:
			return -1
		case ta < tc:
			return 1
		}
		return strings.Compare(a, c)
	})
	const top = 10
	fmt.Fprintf(&b, "Fingerprints by total time (%d of %d):\n", min(top, len(ids)), len(ids))
	fmt.Fprintf(&b, "  %-16s %10s %8s %7s %9s %9s  %s\n", "id", "total_ms", "count", "errors", "p95_ms", "rows", "statement")
	for _, id := range ids[:min(top, len(ids))] {
		t := run.PerType[id]
		text := t.Text
		if len(text) > 70 {
			text = text[:67] + "..."
		}
		fmt.Fprintf(&b, "  %-16s %10.1f %8d %7d %9.3f %9d  %s\n", id, t.TotalMS, t.Count, t.Errors, t.LatencyMS.P95, t.Rows, text)
	}
	return b.String()
}

// Bucket is one bucket of a decoded summary.Type.Histogram: its middle
// value in µs and its count.
type Bucket struct {
	US    float64
	Count int64
}

// DecodeHist decodes a summary.Type.Histogram.
func DecodeHist(s string) ([]Bucket, error) {
	if s == "" {
		return nil, nil
	}
	lo, rest, ok := strings.Cut(s, ":")
	base, err := strconv.Atoi(lo)
	if !ok || err != nil || base < 0 {
		return nil, fmt.Errorf("histogram %.20q: want LO:COUNT,...", s)
	}
	var out []Bucket
	for i, f := range strings.Split(rest, ",") {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("histogram %.20q: bad count %q", s, f)
		}
		if n > 0 {
			out = append(out, Bucket{US: float64(valueOf(base + i)), Count: n})
		}
	}
	return out, nil
}

// DecodeDigests decodes summary.Replay's Results (uint64s), Latencies and
// Ordinals (uint32s).
func DecodeDigests(s string) ([]uint64, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%8 != 0 {
		return nil, fmt.Errorf("replay results: not base64 of 8-byte digests")
	}
	out := make([]uint64, len(b)/8)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return out, nil
}

// DecodeUint32s decodes summary.Replay's Latencies or Ordinals.
func DecodeUint32s(s string) ([]uint32, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 {
		return nil, fmt.Errorf("replay figures: not base64 of 4-byte values")
	}
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out, nil
}

// Statement returns the text of the statement at capture ordinal ord in c.
func (c *Capture) Statement(ord int) string {
	for _, s := range c.Sessions {
		for i := range s.events {
			if e := &s.events[i]; int(e.ord) == ord {
				if e.params == nil {
					return e.sql
				}
				ps := make([]string, len(e.params))
				for j, p := range e.params {
					ps[j] = "NULL"
					if p != nil {
						ps[j] = strconv.Quote(*p)
					}
				}
				return e.sql + " -- parameters: " + strings.Join(ps, ", ")
			}
		}
	}
	return ""
}
