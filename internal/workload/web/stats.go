package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/workload"
)

// Failure causes: the runner's error codes of an http run.
const (
	CauseRefused = "conn_refused" // the connection was refused
	CauseTimeout = "timeout"      // connect or response-header timeout
	CauseReset   = "reset"        // the connection was reset or closed mid-request
	Cause4xx     = "http_4xx"     // a 4xx response
	Cause5xx     = "http_5xx"     // a 5xx response
	CauseOther   = "http_client"  // anything else (DNS, TLS, a malformed response)
)

// StatusError is a response of status 400 or above.
type StatusError struct{ Code int }

func (e *StatusError) Error() string { return "HTTP " + strconv.Itoa(e.Code) }

// Classify implements workload.Detached: every failure is counted under its
// cause and the worker goes on.
func (wl *Workload) Classify(err error) dialect.Class {
	return dialect.Class{Kind: dialect.Fatal, Code: Cause(err)}
}

// Cause names why a request failed.
func Cause(err error) string {
	var se *StatusError
	var ne net.Error
	switch {
	case errors.As(err, &se):
		if se.Code >= 500 {
			return Cause5xx
		}
		return Cause4xx
	case errors.Is(err, syscall.ECONNREFUSED):
		return CauseRefused
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return CauseTimeout
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return CauseReset
	}
	return CauseOther
}

// slot is one worker's siege figures; the worker takes mu once a request,
// the workload when it resets or sums them.
type slot struct {
	mu        sync.Mutex
	responses int64 // every response, whatever its status (siege's transactions)
	ok        int64 // responses below 400
	failures  int64 // requests without a response
	bytes     int64 // response bodies
	rtSum     time.Duration
	rtMin     time.Duration
	rtMax     time.Duration
	status    map[int]int64
}

func (s *slot) response(code int, n int64, rt time.Duration) {
	s.mu.Lock()
	s.responses++
	if code < 400 {
		s.ok++
	}
	s.bytes += n
	s.rtSum += rt
	if s.responses == 1 || rt < s.rtMin {
		s.rtMin = rt
	}
	s.rtMax = max(s.rtMax, rt)
	s.status[code]++
	s.mu.Unlock()
}

func (s *slot) failed(time.Duration) {
	s.mu.Lock()
	s.failures++
	s.mu.Unlock()
}

func (s *slot) reset() {
	s.mu.Lock()
	s.responses, s.ok, s.failures, s.bytes = 0, 0, 0, 0
	s.rtSum, s.rtMin, s.rtMax = 0, 0, 0
	clear(s.status)
	s.mu.Unlock()
}

// statsSet holds every worker's slot, by worker id (a worker made again
// keeps its slot).
type statsSet struct {
	mu    sync.Mutex
	slots map[int]*slot
}

func (s *statsSet) slot(id int) *slot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.slots == nil {
		s.slots = map[int]*slot{}
	}
	if sl, ok := s.slots[id]; ok {
		return sl
	}
	sl := &slot{status: map[int]int64{}}
	s.slots[id] = sl
	return sl
}

// Siege is a run's figures as siege prints them.
type Siege struct {
	Transactions, Successful, Failed, Bytes int64
	RTSum, Longest, Shortest                time.Duration
	Status                                  map[int]int64
}

func (s *statsSet) total() Siege {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := Siege{Status: map[int]int64{}}
	first := true
	for _, sl := range s.slots {
		sl.mu.Lock()
		t.Transactions += sl.responses
		t.Successful += sl.ok
		t.Failed += sl.failures
		t.Bytes += sl.bytes
		t.RTSum += sl.rtSum
		if sl.responses > 0 {
			if first || sl.rtMin < t.Shortest {
				t.Shortest = sl.rtMin
			}
			first = false
			t.Longest = max(t.Longest, sl.rtMax)
		}
		for c, n := range sl.status {
			t.Status[c] += n
		}
		sl.mu.Unlock()
	}
	return t
}

func (s *statsSet) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sl := range s.slots {
		sl.reset()
	}
}

// BeginMeasure implements workload.MeasureBeginner: the warm-up's requests
// leave siege's figures.
func (wl *Workload) BeginMeasure() { wl.stats.reset() }

// Figure names of an http run in summary.Run.Figures (siege's, plus the
// status codes as "http.status.NNN").
const (
	FigTransactions = "http.transactions"
	FigAvailability = "http.availability_pct"
	FigElapsed      = "http.elapsed_s"
	FigDataMB       = "http.data_mb"
	FigResponseTime = "http.response_time_s"
	FigRate         = "http.transaction_rate"
	FigThroughput   = "http.throughput_mbps"
	FigConcurrency  = "http.concurrency"
	FigSuccessful   = "http.successful"
	FigFailed       = "http.failed"
	FigLongest      = "http.longest_s"
	FigShortest     = "http.shortest_s"
	FigBytes        = "http.bytes"
	FigStatus       = "http.status."
)

// Summarize implements workload.Reporter: siege's figures over the
// measured period, for the report's siege table (summary.SectionSiege).
func (wl *Workload) Summarize(run *summary.Run) {
	run.AddSection(summary.SectionSiege)
	t := wl.stats.total()
	if run.Figures == nil {
		run.Figures = map[string]float64{}
	}
	f := run.Figures
	el := run.DurationS
	mb := float64(t.Bytes) / (1 << 20)
	f[FigTransactions] = float64(t.Transactions)
	f[FigAvailability] = 0
	if n := t.Transactions + t.Failed; n > 0 {
		f[FigAvailability] = 100 * float64(t.Transactions) / float64(n)
	}
	f[FigElapsed] = el
	f[FigDataMB] = mb
	f[FigBytes] = float64(t.Bytes)
	f[FigResponseTime] = 0
	if t.Transactions > 0 {
		f[FigResponseTime] = t.RTSum.Seconds() / float64(t.Transactions)
	}
	f[FigRate], f[FigThroughput], f[FigConcurrency] = 0, 0, 0
	if el > 0 {
		f[FigRate] = float64(t.Transactions) / el
		f[FigThroughput] = mb / el
		f[FigConcurrency] = t.RTSum.Seconds() / el
	}
	f[FigSuccessful] = float64(t.Successful)
	f[FigFailed] = float64(t.Failed)
	f[FigLongest] = t.Longest.Seconds()
	f[FigShortest] = t.Shortest.Seconds()
	for c, n := range t.Status {
		f[FigStatus+strconv.Itoa(c)] = float64(n)
	}
}

// FormatSummary implements workload.Reporter: siege's closing block, the
// percentiles and the failures by cause.
func (wl *Workload) FormatSummary(run *summary.Run) string {
	f := run.Figures
	var b strings.Builder
	b.WriteString("\nHTTP (siege's figures):\n")
	row := func(name, format string, v float64) { fmt.Fprintf(&b, "  %-24s "+format+"\n", name+":", v) }
	row("Transactions", "%12.0f hits", f[FigTransactions])
	row("Availability", "%12.2f %%", f[FigAvailability])
	row("Elapsed time", "%12.2f secs", f[FigElapsed])
	row("Data transferred", "%12.2f MB", f[FigDataMB])
	row("Response time", "%12.3f secs", f[FigResponseTime])
	row("Transaction rate", "%12.2f trans/sec", f[FigRate])
	row("Throughput", "%12.2f MB/sec", f[FigThroughput])
	row("Concurrency", "%12.2f", f[FigConcurrency])
	row("Successful transactions", "%12.0f", f[FigSuccessful])
	row("Failed transactions", "%12.0f", f[FigFailed])
	row("Longest transaction", "%12.3f", f[FigLongest])
	row("Shortest transaction", "%12.3f", f[FigShortest])
	l := run.LatencyMS
	fmt.Fprintf(&b, "  %-24s p50 %.3f  p95 %.3f  p99 %.3f  p99.9 %.3f  max %.3f ms (responses below 400)\n",
		"Response time:", l.P50, l.P95, l.P99, l.P999, l.Max)
	var codes []string
	for k := range f {
		if strings.HasPrefix(k, FigStatus) {
			codes = append(codes, k)
		}
	}
	slices.Sort(codes)
	if len(codes) > 0 {
		b.WriteString("  Status codes:           ")
		for _, k := range codes {
			fmt.Fprintf(&b, " %s: %.0f", strings.TrimPrefix(k, FigStatus), f[k])
		}
		b.WriteByte('\n')
	}
	if len(run.Totals.ErrorsByCode) > 0 {
		b.WriteString("  Failures by cause:      ")
		for _, k := range slices.Sorted(maps.Keys(run.Totals.ErrorsByCode)) {
			fmt.Fprintf(&b, " %s: %d", k, run.Totals.ErrorsByCode[k])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// IntervalHeader implements workload.Reporter.
func (wl *Workload) IntervalHeader() string {
	return "  time, users, hits/s (below 400), failures/s, slowest response (ms)"
}

// FormatInterval implements workload.Reporter.
func (wl *Workload) FormatInterval(iv workload.IntervalReport) string {
	var ok, bad int64
	var slowest time.Duration
	for _, ti := range iv.PerType {
		ok += ti.Count
		bad += ti.Errors
		slowest = max(slowest, ti.Max)
	}
	secs := (iv.End - iv.Start).Seconds()
	if secs <= 0 {
		secs = 1
	}
	warm := ""
	if iv.Warmup {
		warm = " (warm-up)"
	}
	return fmt.Sprintf("[ %ds ]%s users: %d hits: %.2f/s failures: %.2f/s slowest: %.3f ms",
		int((iv.End+time.Millisecond/2)/time.Second), warm, iv.Threads, float64(ok)/secs, float64(bad)/secs,
		float64(slowest)/float64(time.Millisecond))
}
