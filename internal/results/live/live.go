// Package live serves the figures of the runs going on in this dbarena
// process in Prometheus's text format (OpenMetrics when the scraper asks
// for it), through the ecosystem's client library: events, queries,
// errors by code and latency (a histogram) by run, the monitor's host,
// server and counter figures, and a plan's progress.
//
// It is fed by the run pipeline's callbacks (RunObserver is an
// execute.Observer; the plan's progress comes through Exporter.Plan*), not
// by reading the store: what is served is what the run has counted so far.
// Finished runs stay exposed with their final totals (from the stored
// run) for as long as the process serves, and Server.Linger keeps it
// serving until a scrape has read them.
//
// Every series carries the labels run (the run's ID in the results store),
// workload, server and cell (the plan cell, "" outside a plan). Counters
// carry phase="warmup" or "measured": the measured ones add up to the
// stored run's totals.
package live

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// Buckets are the upper bounds, in seconds, of the latency histogram's
// buckets: 50µs to 60s, six per decade from 100µs to 1s (1, 1.5, 2, 3, 5,
// 7.5), so that a p95 interpolated in a bucket is within about 25%.
var Buckets = []float64{0.00005,
	0.0001, 0.00015, 0.0002, 0.0003, 0.0005, 0.00075,
	0.001, 0.0015, 0.002, 0.003, 0.005, 0.0075,
	0.01, 0.015, 0.02, 0.03, 0.05, 0.075,
	0.1, 0.15, 0.2, 0.3, 0.5, 0.75,
	1, 2, 5, 10, 30, 60}

// MaxTypes is how many transaction types (or a replay's fingerprints, a
// URL list's keys) of a run get series of their own; the others are summed
// under type="_other", so a capture's thousands of statements do not make
// thousands of series.
const MaxTypes = 64

// OtherType is the type label of the types beyond MaxTypes.
const OtherType = "_other"

// Phases of the counters' phase label.
const (
	PhaseWarmup   = "warmup"
	PhaseMeasured = "measured"
)

// runLabels are the labels of every run series.
var runLabels = []string{"run", "workload", "server", "cell"}

func labels(extra ...string) []string { return append(slices.Clone(runLabels), extra...) }

// descs are the metric families served.
var (
	dEvents = prometheus.NewDesc("dbarena_events_total",
		"Successful events (transactions, requests, replayed statements) of the run.", labels("phase"), nil)
	dErrors = prometheus.NewDesc("dbarena_errors_total",
		"Failed events of the run.", labels("phase"), nil)
	dRetries = prometheus.NewDesc("dbarena_retries_total",
		"Events rerun after a retryable error (serialization failure, deadlock).", labels("phase"), nil)
	dReconnects = prometheus.NewDesc("dbarena_reconnects_total",
		"Connections made again after one was lost.", labels("phase"), nil)
	dQueries = prometheus.NewDesc("dbarena_queries_total",
		"Statements sent, by kind (read, write, other), those of failed events and retries included.", labels("phase", "kind"), nil)
	dCodes = prometheus.NewDesc("dbarena_errors_by_code_total",
		"Errors and retries by server error code (1213, 40001, ...).", labels("phase", "code"), nil)
	dTypeEvents = prometheus.NewDesc("dbarena_type_events_total",
		"Successful events by transaction type.", labels("phase", "type"), nil)
	dTypeErrors = prometheus.NewDesc("dbarena_type_errors_total",
		"Failed events by transaction type.", labels("phase", "type"), nil)
	dTypeP95 = prometheus.NewDesc("dbarena_type_latency_p95_seconds",
		"95th percentile latency of the type's events in the last report interval.", labels("type"), nil)
	dLatency = prometheus.NewDesc("dbarena_latency_seconds",
		"Latency of successful events (from the intended start in --rate mode).", labels("phase"), nil)
	dIntervalQ = prometheus.NewDesc("dbarena_interval_latency_seconds",
		"Latency percentile of the last report interval's events, as the progress line prints it.", labels("quantile"), nil)
	dThreads = prometheus.NewDesc("dbarena_threads",
		"Workers connected at the end of the last report interval.", labels(), nil)
	dRunning = prometheus.NewDesc("dbarena_run_running",
		"1 while the run goes on (warm-up included), 0 once it ended.", labels(), nil)
	dInfo = prometheus.NewDesc("dbarena_run_info",
		"The run's target server: its flavor and version; value 1.", labels("flavor", "version"), nil)
	dStatus = prometheus.NewDesc("dbarena_run_status",
		"1 for the run's status (running, complete, degraded, failed, interrupted), 0 for the others.",
		labels("status"), nil)
	dElapsed = prometheus.NewDesc("dbarena_run_elapsed_seconds",
		"Time into the run: the end of its last report interval (warm-up excluded once measuring).", labels("phase"), nil)
	dFigure = prometheus.NewDesc("dbarena_monitor",
		"The monitor's figures of the last interval, named as in the stored samples (host.cpu.busy, server.cpu, disk.sda.write_mbps, counter.Innodb_data_fsyncs, ...).",
		labels("source", "figure"), nil)
	dPlanCells = prometheus.NewDesc("dbarena_plan_cells",
		"Runs (cell rounds) in the plan's schedule.", []string{"plan", "session"}, nil)
	dPlanDone = prometheus.NewDesc("dbarena_plan_cells_done",
		"Runs of the schedule done, those complete before a resume included.", []string{"plan", "session"}, nil)
	dPlanFailed = prometheus.NewDesc("dbarena_plan_cells_failed",
		"Runs of the schedule that ended otherwise than complete.", []string{"plan", "session"}, nil)
	dPlanCurrent = prometheus.NewDesc("dbarena_plan_current_cell",
		"The cell running now (value: its 1-based position in the schedule); absent between cells.",
		[]string{"plan", "session", "cell", "round"}, nil)
	dPlanETA = prometheus.NewDesc("dbarena_plan_eta_seconds",
		"Estimated time left of the plan: its steps' durations scaled by how long the steps run so far took.",
		[]string{"plan", "session"}, nil)
)

// statuses are the values of dbarena_run_status's status label.
var statuses = []string{summary.StatusRunning, summary.StatusComplete, summary.StatusDegraded,
	summary.StatusFailed, summary.StatusInterrupted}

// Exporter holds the live figures of a process's runs and plan. It is a
// prometheus.Collector; its methods are safe for concurrent use. Make one
// with New.
type Exporter struct {
	mu      sync.Mutex
	runs    []*runState
	plan    *planState
	version uint64 // counts changes; see Server.Linger
	served  uint64 // the version a completed scrape served
	unnamed int    // runs the store refused, named by sequence
	changed chan struct{}
}

var _ prometheus.Collector = (*Exporter)(nil)

// New returns an exporter with nothing to serve yet.
func New() *Exporter { return &Exporter{changed: make(chan struct{})} }

// touch records a change; e.mu must be held.
func (e *Exporter) touch() { e.version++ }

// Describe implements prometheus.Collector.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{dEvents, dErrors, dRetries, dReconnects, dQueries, dCodes, dTypeEvents,
		dTypeErrors, dTypeP95, dLatency, dIntervalQ, dThreads, dRunning, dInfo, dStatus, dElapsed, dFigure,
		dPlanCells, dPlanDone, dPlanFailed, dPlanCurrent, dPlanETA} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.runs {
		r.collect(ch)
	}
	if p := e.plan; p != nil {
		send(ch, dPlanCells, prometheus.GaugeValue, float64(p.total), p.name, p.session)
		send(ch, dPlanDone, prometheus.GaugeValue, float64(p.done), p.name, p.session)
		send(ch, dPlanFailed, prometheus.GaugeValue, float64(p.failed), p.name, p.session)
		if p.current != "" {
			send(ch, dPlanCurrent, prometheus.GaugeValue, float64(p.position), p.name, p.session, p.current, strconv.Itoa(p.round))
		}
		if p.eta >= 0 {
			send(ch, dPlanETA, prometheus.GaugeValue, p.eta.Seconds(), p.name, p.session)
		}
	}
}

// send sends one metric; label values that are not UTF-8 (a type named
// from captured bytes) are repaired, so one odd name never fails a scrape.
func send(ch chan<- prometheus.Metric, d *prometheus.Desc, t prometheus.ValueType, v float64, lv ...string) {
	for i, s := range lv {
		if !utf8.ValidString(s) {
			lv[i] = strings.ToValidUTF8(s, "\uFFFD")
		}
	}
	if m, err := prometheus.NewConstMetric(d, t, v, lv...); err == nil {
		ch <- m
	}
}

// planState is a plan's progress.
type planState struct {
	name, session       string
	total, done, failed int
	current             string
	round, position     int
	eta                 time.Duration // < 0: not known
}

// PlanBegan starts serving the progress of plan name's session: total runs
// in its schedule, complete of them already done (a resume).
func (e *Exporter) PlanBegan(name, session string, total, complete int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.plan = &planState{name: name, session: session, total: total, done: complete, eta: -1}
	e.touch()
}

// PlanStarting says which cell round runs now: position i (0-based) of the
// schedule, and the estimated time left (negative: not known).
func (e *Exporter) PlanStarting(i int, cell string, round int, eta time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p := e.plan; p != nil {
		p.current, p.round, p.position, p.eta = cell, round, i+1, eta
		e.touch()
	}
}

// PlanRan counts one run of the schedule done (failed unless complete)
// and sets the estimated time left.
func (e *Exporter) PlanRan(complete bool, eta time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p := e.plan; p != nil {
		p.done++
		if !complete {
			p.failed++
		}
		p.current, p.eta = "", eta
		e.touch()
	}
}

// phaseCounts are a run's counters in one phase.
type phaseCounts struct {
	events, errors, retries, reconnects int64
	queries                             [3]int64 // read, write, other
	codes                               map[string]int64
	typeEvents, typeErrors              map[string]int64
	buckets                             []uint64 // per Buckets, not cumulative; last: above all
	count                               uint64
	sum                                 float64
	elapsed                             time.Duration
}

func newPhase() *phaseCounts {
	return &phaseCounts{codes: map[string]int64{}, typeEvents: map[string]int64{}, typeErrors: map[string]int64{},
		buckets: make([]uint64, len(Buckets)+1)}
}

// runState is one run's figures.
type runState struct {
	lv              []string // run, workload, server, cell
	flavor, version string
	status          string
	running         bool
	phases          [2]*phaseCounts // warm-up, measured
	types           map[string]bool // types with series of their own
	typeP95         map[string]time.Duration
	p50, p95, p99   time.Duration
	max             time.Duration
	threads         int
	figures         map[string]float64
}

func phaseName(i int) string {
	if i == 0 {
		return PhaseWarmup
	}
	return PhaseMeasured
}

func (r *runState) collect(ch chan<- prometheus.Metric) {
	lv := func(extra ...string) []string { return append(slices.Clone(r.lv), extra...) }
	running := 0.0
	if r.running {
		running = 1
	}
	send(ch, dRunning, prometheus.GaugeValue, running, lv()...)
	send(ch, dInfo, prometheus.GaugeValue, 1, lv(r.flavor, r.version)...)
	for _, st := range statuses {
		v := 0.0
		if st == r.status {
			v = 1
		}
		send(ch, dStatus, prometheus.GaugeValue, v, lv(st)...)
	}
	send(ch, dThreads, prometheus.GaugeValue, float64(r.threads), lv()...)
	for i, p := range r.phases {
		ph := phaseName(i)
		send(ch, dEvents, prometheus.CounterValue, float64(p.events), lv(ph)...)
		send(ch, dErrors, prometheus.CounterValue, float64(p.errors), lv(ph)...)
		send(ch, dRetries, prometheus.CounterValue, float64(p.retries), lv(ph)...)
		send(ch, dReconnects, prometheus.CounterValue, float64(p.reconnects), lv(ph)...)
		send(ch, dElapsed, prometheus.GaugeValue, p.elapsed.Seconds(), lv(ph)...)
		for k, kind := range []string{"read", "write", "other"} {
			send(ch, dQueries, prometheus.CounterValue, float64(p.queries[k]), lv(ph, kind)...)
		}
		for code, n := range p.codes {
			send(ch, dCodes, prometheus.CounterValue, float64(n), lv(ph, code)...)
		}
		for typ, n := range p.typeEvents {
			send(ch, dTypeEvents, prometheus.CounterValue, float64(n), lv(ph, typ)...)
		}
		for typ, n := range p.typeErrors {
			send(ch, dTypeErrors, prometheus.CounterValue, float64(n), lv(ph, typ)...)
		}
		cum := map[float64]uint64{}
		var c uint64
		for b, ub := range Buckets {
			c += p.buckets[b]
			cum[ub] = c
		}
		if m, err := prometheus.NewConstHistogram(dLatency, p.count, p.sum, cum, lv(ph)...); err == nil {
			ch <- m
		}
	}
	for typ, d := range r.typeP95 {
		send(ch, dTypeP95, prometheus.GaugeValue, d.Seconds(), lv(typ)...)
	}
	for q, d := range map[string]time.Duration{"0.5": r.p50, "0.95": r.p95, "0.99": r.p99, "1": r.max} {
		send(ch, dIntervalQ, prometheus.GaugeValue, d.Seconds(), lv(q)...)
	}
	for k, v := range r.figures {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		source, _, _ := strings.Cut(k, ".")
		send(ch, dFigure, prometheus.GaugeValue, v, lv(source, k)...)
	}
}

// typeName is typ, or OtherType once MaxTypes types have series.
func (r *runState) typeName(typ string) string {
	if r.types[typ] {
		return typ
	}
	if len(r.types) >= MaxTypes {
		return OtherType
	}
	r.types[typ] = true
	return typ
}

// interval adds iv to the run's figures.
func (r *runState) interval(iv runner.Interval, figures map[string]float64) {
	p := r.phases[1]
	if iv.Warmup {
		p = r.phases[0]
	}
	p.events += iv.Events
	p.errors += iv.Errors
	p.retries += iv.Retries
	p.reconnects += iv.Reconnects
	p.queries[0] += iv.Queries.Read
	p.queries[1] += iv.Queries.Write
	p.queries[2] += iv.Queries.Other
	p.elapsed = iv.End
	for code, n := range iv.ErrorsByCode {
		p.codes[code] += n
	}
	clear(r.typeP95)
	for typ, ti := range iv.PerType {
		name := r.typeName(typ)
		p.typeEvents[name] += ti.Count
		p.typeErrors[name] += ti.Errors
		if name != OtherType {
			r.typeP95[name] = ti.P95
		}
	}
	r.p50, r.p95, r.p99, r.max, r.threads = iv.P50, iv.P95, iv.P99, iv.Max, iv.Threads
	if iv.Latency != nil {
		addHistogram(p, iv.Latency.Encode)
	}
	if figures != nil {
		r.figures = figures
	}
}

// addHistogram adds an interval's histogram (encoded by encode, in
// microseconds, as hist.Histogram.Encode writes it) to p's buckets. It
// goes through HdrHistogram's standard encoding, whose reader lists the
// recorded values' bars, rather than widen package hist for one reader.
func addHistogram(p *phaseCounts, encode func() (string, error)) {
	s, err := encode()
	if err != nil {
		return
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return
	}
	for _, bar := range h.Distribution() {
		if bar.Count <= 0 {
			continue
		}
		// A bar holds values From..To, within 1% of each other: counted
		// at its middle, as in the sum.
		sec := float64(bar.From+bar.To) / 2 / 1e6
		i, _ := slices.BinarySearch(Buckets, sec)
		p.buckets[i] += uint64(bar.Count)
		p.count += uint64(bar.Count)
		p.sum += float64(bar.Count) * sec
	}
}

// finish sets the measured totals to the stored run's, which the
// intervals add up to (and which a run without report intervals only has
// at its end), and its status.
func (r *runState) finish(run *summary.Run) {
	r.running = false
	r.status = run.Status
	p := r.phases[1]
	t := run.Totals
	p.events = max(p.events, t.Events)
	p.errors = max(p.errors, t.Errors)
	p.retries = max(p.retries, t.Retries)
	p.reconnects = max(p.reconnects, t.Reconnects)
	p.queries[0] = max(p.queries[0], t.Queries.Read)
	p.queries[1] = max(p.queries[1], t.Queries.Write)
	p.queries[2] = max(p.queries[2], t.Queries.Other)
	for code, n := range t.ErrorsByCode {
		p.codes[code] = max(p.codes[code], n)
	}
	if run.DurationS > 0 {
		p.elapsed = max(p.elapsed, time.Duration(run.DurationS*float64(time.Second)))
	}
}

// runName is the run label of a run stored as id.
func (e *Exporter) runName(id int64) string {
	if id > 0 {
		return strconv.FormatInt(id, 10)
	}
	e.unnamed++
	return fmt.Sprintf("unstored-%d", e.unnamed)
}
