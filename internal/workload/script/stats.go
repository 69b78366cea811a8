package script

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dbarena/dbarena/internal/measure/hist"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/wire/poller"
	"github.com/dbarena/dbarena/internal/workload"
	"github.com/dbarena/dbarena/internal/workload/script/pgscript"
)

// stmtStat is one SQL command's figures (pgbench -r).
type stmtStat struct {
	lat    *hist.Histogram
	errors map[string]int64 // by the dialect's error code
}

// flushAt is how many latencies a worker buffers before it records them
// into the shared histograms: one histogram per statement for the run,
// not one per worker (each is 185 KiB, and a worker recording into its
// own would touch a cold one at every statement).
const flushAt = 256

// sample is one successful statement's latency, buffered by its worker.
type sample struct {
	i int
	d time.Duration
}

// errKey counts a statement's errors by code.
type errKey struct {
	i    int
	code string
}

// workerStats are per-statement figures not yet in the shared histograms,
// of one worker or of the workers of one poller group: those run on one
// thread, one at a time, so the buffer they share stays in the cache, where
// one per worker would be a cold page at every statement (5% of a
// select-only transaction's client CPU at 32 workers a thread). mu is taken
// by a worker for each record and by the workload when it takes the
// figures.
type workerStats struct {
	set    *statsSet
	mu     sync.Mutex
	buf    []sample
	errors map[errKey]int64
}

func (w *workerStats) record(i int, d time.Duration, code string) {
	w.mu.Lock()
	if code == "" {
		w.buf = append(w.buf, sample{i, d})
		if len(w.buf) >= flushAt {
			w.set.flush(w)
		}
	} else {
		if w.errors == nil {
			w.errors = map[errKey]int64{}
		}
		w.errors[errKey{i, code}]++
	}
	w.mu.Unlock()
}

// statsSet holds every worker's per-statement figures.
type statsSet struct {
	mu      sync.Mutex
	names   []string // "SCRIPT:LINE" per command index; "" for meta-commands
	workers []*workerStats
	groups  map[*poller.Group]*workerStats // the shared one of each group
	// hmu guards lat, a histogram per SQL command index (nil for
	// meta-commands); a worker holding its own mu may take hmu.
	hmu sync.Mutex
	lat []*hist.Histogram
}

func (s *statsSet) init(wl *Workload) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names = make([]string, wl.stmts)
	for _, sc := range wl.scripts {
		for i, c := range sc.s.Cmds {
			if c.Kind == pgscript.SQL {
				s.names[sc.base+i] = fmt.Sprintf("%s:%d", sc.s.Name, c.Line)
			}
		}
	}
	s.workers, s.groups = nil, nil
	s.hmu.Lock()
	s.lat = s.fresh()
	s.hmu.Unlock()
}

// fresh returns empty histograms for the SQL commands.
func (s *statsSet) fresh() []*hist.Histogram {
	lat := make([]*hist.Histogram, len(s.names))
	for i, n := range s.names {
		if n != "" {
			lat[i] = hist.New()
		}
	}
	return lat
}

// newWorker returns the figures a worker records into: the group's, shared
// by its workers, when g is not nil, else its own.
func (s *statsSet) newWorker(g *poller.Group) *workerStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.groups[g]; w != nil {
		return w
	}
	w := &workerStats{set: s, buf: make([]sample, 0, flushAt)}
	s.workers = append(s.workers, w)
	if g != nil {
		if s.groups == nil {
			s.groups = map[*poller.Group]*workerStats{}
		}
		s.groups[g] = w
	}
	return w
}

// flush records w's buffered latencies into the shared histograms; the
// caller holds w.mu.
func (s *statsSet) flush(w *workerStats) {
	s.hmu.Lock()
	for _, x := range w.buf {
		s.lat[x.i].Record(x.d)
	}
	s.hmu.Unlock()
	w.buf = w.buf[:0]
}

// take returns every worker's figures so far, and starts anew.
func (s *statsSet) take() []stmtStat {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]stmtStat, len(s.names))
	for i, n := range s.names {
		if n != "" {
			out[i].errors = map[string]int64{}
		}
	}
	for _, w := range s.workers {
		w.mu.Lock()
		s.flush(w)
		for k, n := range w.errors {
			out[k.i].errors[k.code] += n
		}
		w.errors = nil
		w.mu.Unlock()
	}
	s.hmu.Lock()
	lat := s.lat
	s.lat = s.fresh()
	s.hmu.Unlock()
	for i := range out {
		out[i].lat = lat[i]
	}
	return out
}

// BeginMeasure implements workload.MeasureBeginner: the per-statement
// figures leave out the warm-up.
func (wl *Workload) BeginMeasure() { wl.stats.take() }

// Figure names (summary.Run.Figures), per SQL command of a script, named
// "stmt.SCRIPT:LINE.": count (successes), errors, mean_ms, p50_ms, p95_ms,
// p99_ms, max_ms, and errors.CODE per error code.
const figurePrefix = "stmt."

// Summarize implements workload.Reporter: per-statement figures (pgbench
// -r) go into run.Figures; per-script counts are the runner's run.PerType.
func (wl *Workload) Summarize(run *summary.Run) {
	stats := wl.stats.take()
	if run.Figures == nil {
		run.Figures = map[string]float64{}
	}
	for i, n := range wl.stats.names {
		if n == "" {
			continue
		}
		st := stats[i]
		k := figurePrefix + n + "."
		run.Figures[k+"count"] = float64(st.lat.Count())
		var errs int64
		for c, e := range st.errors {
			errs += e
			run.Figures[k+"errors."+c] = float64(e)
		}
		run.Figures[k+"errors"] = float64(errs)
		if st.lat.Count() > 0 {
			run.Figures[k+"mean_ms"] = ms(st.lat.Mean())
			run.Figures[k+"p50_ms"] = ms(st.lat.Quantile(50))
			run.Figures[k+"p95_ms"] = ms(st.lat.Quantile(95))
			run.Figures[k+"p99_ms"] = ms(st.lat.Quantile(99))
			run.Figures[k+"max_ms"] = ms(st.lat.Max())
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// IntervalHeader implements workload.Reporter.
func (wl *Workload) IntervalHeader() string {
	return "  time, threads, then per script: successes/errors p90|max (ms)"
}

// FormatInterval implements workload.Reporter.
func (wl *Workload) FormatInterval(iv workload.IntervalReport) string {
	var b strings.Builder
	secs := int((iv.End + time.Millisecond/2) / time.Second)
	fmt.Fprintf(&b, "[ %ds ]", secs)
	if iv.Warmup {
		b.WriteString(" (warm-up)")
	}
	fmt.Fprintf(&b, " thds: %d", iv.Threads)
	for _, s := range wl.scripts {
		ti := iv.PerType[s.s.Name]
		fmt.Fprintf(&b, " %s: %d/%d %.3f|%.3f", s.s.Name, ti.Count, ti.Errors, ms(ti.P90), ms(ti.Max))
	}
	return b.String()
}

// FormatSummary implements workload.Reporter: pgbench -r's table, per
// script and statement: mean latency, successes, failures by code.
func (wl *Workload) FormatSummary(run *summary.Run) string {
	var b strings.Builder
	b.WriteString("\nStatement latencies in milliseconds and failures (pgbench -r):\n")
	for _, s := range wl.scripts {
		t := run.PerType[s.s.Name]
		fmt.Fprintf(&b, "SQL script %q (weight %d): %d transactions, %d failed\n", s.s.Name, s.weight, t.Count, t.Errors)
		fmt.Fprintf(&b, "  %10s %10s %10s %10s  %s\n", "mean", "p95", "count", "failures", "statement")
		for i, c := range s.s.Cmds {
			if c.Kind != pgscript.SQL {
				continue
			}
			k := figurePrefix + wl.stats.names[s.base+i] + "."
			var codes []string
			for f, v := range run.Figures {
				if code, ok := strings.CutPrefix(f, k+"errors."); ok {
					codes = append(codes, fmt.Sprintf("%s=%d", code, int64(v)))
				}
			}
			sort.Strings(codes)
			text := c.Text
			if len(text) > 60 {
				text = text[:57] + "..."
			}
			text = strings.Join(strings.Fields(text), " ")
			fmt.Fprintf(&b, "  %10.3f %10.3f %10d %10d  %d: %s", run.Figures[k+"mean_ms"], run.Figures[k+"p95_ms"],
				int64(run.Figures[k+"count"]), int64(run.Figures[k+"errors"]), c.Line, text)
			if len(codes) > 0 {
				fmt.Fprintf(&b, " [%s]", strings.Join(codes, " "))
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}
