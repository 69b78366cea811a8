package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/measure/cpusched"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// The choices of Config.Placement (run --placement).
const (
	PlacementFollow = "follow"
	PlacementKernel = "kernel"
)

// Config says how to run a workload. Build one with DefaultConfig, set what
// the user asked for, and check it with Validate.
type Config struct {
	// Threads is the number of workers, each with its own connection.
	Threads int
	// Jobs, when > 0, runs the workers on that many threads, as pgbench's
	// -j: each thread waits for all its workers' sockets at once
	// (package poller). 0 gives each worker a thread of its own, as
	// sysbench does. It needs workers on the lean wire clients in a
	// closed loop (no Rate, no Pacer).
	Jobs int
	// Sched is the scheduling policy of dbarena's threads while the
	// workload runs (package cpusched): "batch", so that a reply does not
	// make the client preempt the server it measures, "normal", or "auto"
	// (or empty): batch for the lean PostgreSQL client in a closed loop,
	// where it was measured to cut client CPU at equal or better
	// throughput, normal elsewhere (see schedPolicy).
	Sched string
	// Placement is where the workers' threads run: PlacementFollow (or
	// empty): a worker with a thread of its own and a connection to a
	// server on this machine moves its thread, now and then, to the CPU
	// its server process runs on (rawsock.Follow); PlacementKernel leaves
	// the threads where the kernel puts them.
	Placement string
	// Duration is the measured time, after warm-up; 0 runs until Events.
	Duration time.Duration
	// Events limits the measured events (successful ones); 0 runs until
	// Duration. One of Duration and Events must be > 0; with both, the
	// first reached stops the run.
	Events int64
	// Warmup is run first and excluded from every total, rate, histogram
	// and interval of the Result.
	Warmup time.Duration
	// ReportInterval is the period of the interval series; 0 = none.
	ReportInterval time.Duration
	// Rate is a fixed arrival rate in events per second, shared by all
	// workers; latency is then counted from each event's intended start.
	// 0 runs a closed loop: each worker starts its next event at once.
	Rate float64
	// QueueSize bounds the queue of due events in Rate mode; events that
	// find it full are counted as Dropped. 0 picks max(1024, 64*Threads).
	QueueSize int
	// IgnoreErrors lists server error codes ("1062", "23505") that are
	// counted and rolled back, after which the worker goes on with its next
	// event; "all" ignores every such error. Other fatal errors stop the run.
	IgnoreErrors []string
	// MaxRetries caps how often one event is rerun after retryable errors
	// (deadlock, lock wait timeout, serialization failure). An event that
	// still fails is a fatal error, unless its code is ignored.
	MaxRetries int
	// Seed makes the workers' random choices repeatable: worker i gets
	// Seed+i, and Seed+i+k*Threads after its k-th reconnect.
	Seed int64
	// StopGrace is how long events still running when the run stops (time
	// is up, or a fatal error) may take to finish before they are
	// cancelled. Such events end after the measured period: they are
	// counted as Unfinished, with their latency. Interrupting the run
	// (cancelling Run's context) cancels them at once.
	StopGrace time.Duration
	// ReconnectTimeout is how long a worker that lost its connection keeps
	// trying to make a new one (with exponential back-off) before the run
	// fails with ErrUnreachable.
	ReconnectTimeout time.Duration
	// StallTimeout is the stall watchdog: when no event, error, retry or
	// reconnect was reported by any worker for that long while an event
	// that began at least that long ago is still running, the runner
	// calls Probe; unless the server answers it within probeTimeout (5 s,
	// or StallTimeout if shorter), the run ends as failed (wrapping
	// ErrStalled): the server stopped answering (frozen, or a network that
	// swallows packets) and every worker waits for it. The connections
	// are closed at once (Abort) so the waiting workers return. Idle time
	// (a rate or a replay's schedule with nothing due) never counts: only
	// a running event does; long statements, sleeps and think times do
	// not end the run while the server answers the probe. 0 disables the
	// watchdog, as do Detached workloads (they have time limits of their
	// own).
	StallTimeout time.Duration
	// Probe, if not nil, asks the server for a sign of life on a
	// connection apart from the workers' (a ping), for the stall
	// watchdog; it must return once ctx ends. Without it a stall ends
	// the run without a probe.
	Probe func(ctx context.Context) error
	// Connect is how often workers open a new connection (0: persistent).
	// Each such connect and set-up is timed apart from the events
	// (Result.Connect); refusals are counted in ConnectErrors and retried
	// with the reconnect back-off until ReconnectTimeout.
	Connect Connect
	// Checkpoint is the longest time between two OnCheckpoint calls.
	Checkpoint time.Duration
	// OnCheckpoint, if not nil, is called at least every Checkpoint during
	// the measured period with a snapshot of it so far (totals, intervals,
	// copies of the histograms; Elapsed up to the snapshot), so the caller
	// can store it. It is called on the goroutine that calls onInterval, in
	// order with the intervals; partial is the caller's to keep.
	OnCheckpoint func(partial *Result)
	// OnMeasure, if not nil, is called once on Run's goroutine as the
	// measured period begins: after every worker has connected and before
	// any measured event starts when there is no warm-up, or at the end of
	// the warm-up. Callers read the server's own counters there.
	OnMeasure func()
	// Abort, if not nil, closes every connection of the run so that
	// statements in flight fail at once (dialect.Sockets.CloseAll). With
	// it, events run under a context that is never cancelled — cheaper for
	// the drivers — and the runner calls Abort instead when the run must
	// stop at once (interrupt, or the stop grace expired) and at its end.
	Abort func()
	// WarmupUntil, if not nil, ends the warm-up early: it is called on
	// Run's goroutine after each warm-up report interval with every
	// warm-up interval so far, and the measured period begins as soon as
	// it returns true. Warmup is then the cap: the warm-up never lasts
	// longer. It needs Warmup > 0 and ReportInterval > 0.
	WarmupUntil func(warmup []Interval) bool
	// FirstWorker is the id of the first worker: workers are numbered
	// FirstWorker..FirstWorker+Threads-1 (ids and seeds), so that the
	// shards of a run spread over hosts have the ids one machine's workers
	// would have.
	FirstWorker int
	// Barrier, if not nil, is called on Run's goroutine once every worker
	// has connected, just before the clock starts (warm-up included): a
	// shard waits there for the run's other shards and the common start.
	// An error ends the run before it starts, as a setup error.
	Barrier func(ctx context.Context) error
	// IntervalHistograms makes each measured Interval carry its encoded
	// latency histogram (Interval.Histogram), at the cost of an encoding
	// per interval on the coordinator: for shards, whose intervals merge.
	IntervalHistograms bool
	// IntervalLatency makes each Interval, warm-up ones included, carry a
	// copy of its latency histogram (Interval.Latency, 1% precision): for
	// live exporters that turn it into buckets of their own.
	IntervalLatency bool
}

// DefaultStallTimeout is Config.StallTimeout's default, as the default
// reconnect timeout: a frozen server ends a run about as soon as a dead
// one. Long statements on a server that answers the probe do not.
const DefaultStallTimeout = 30 * time.Second

// DefaultConfig returns sysbench's defaults: one thread for 10 seconds, no
// warm-up, no intervals, closed loop.
func DefaultConfig() Config {
	return Config{
		Threads:          1,
		Duration:         10 * time.Second,
		MaxRetries:       100,
		StopGrace:        10 * time.Second,
		ReconnectTimeout: 30 * time.Second,
		StallTimeout:     DefaultStallTimeout,
	}
}

// Validate reports every problem with c at once, naming the flags.
func (c Config) Validate() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Threads < 1 {
		add("--threads must be >= 1, got %d", c.Threads)
	}
	if c.Duration < 0 {
		add("--time must be >= 0, got %v", c.Duration)
	}
	if c.Events < 0 {
		add("--events must be >= 0, got %d", c.Events)
	}
	if c.Duration == 0 && c.Events == 0 {
		errs = append(errs, errors.New("one of --time and --events must be > 0"))
	}
	if c.Warmup < 0 {
		add("--warmup must be >= 0, got %v", c.Warmup)
	}
	if c.ReportInterval < 0 || (c.ReportInterval > 0 && c.ReportInterval < time.Millisecond) {
		add("--report-interval must be 0 (off) or >= 1ms, got %v", c.ReportInterval)
	}
	if c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) {
		add("--rate must be a finite number >= 0, got %v", c.Rate)
	}
	if c.QueueSize < 0 {
		add("--rate-queue must be >= 0, got %d", c.QueueSize)
	}
	for _, code := range c.IgnoreErrors {
		if err := checkErrorCode(code); err != nil {
			errs = append(errs, err)
			break
		}
	}
	if c.WarmupUntil != nil && (c.Warmup <= 0 || c.ReportInterval <= 0) {
		add("an automatic warm-up needs a --warmup cap > 0 and a --report-interval > 0")
	}
	if c.MaxRetries < 0 {
		add("max retries must be >= 0, got %d", c.MaxRetries)
	}
	if c.StopGrace < 0 {
		add("stop grace must be >= 0, got %v", c.StopGrace)
	}
	if c.ReconnectTimeout <= 0 {
		add("--reconnect-timeout must be > 0, got %v", c.ReconnectTimeout)
	}
	if c.StallTimeout < 0 {
		add("--stall-timeout must be >= 0 (0 = never), got %v", c.StallTimeout)
	}
	if c.FirstWorker < 0 {
		add("the first worker id must be >= 0, got %d", c.FirstWorker)
	}
	if c.Jobs < 0 {
		add("--jobs must be >= 0, got %d", c.Jobs)
	}
	if c.Jobs > 0 && c.Rate > 0 {
		add("--jobs shares threads between workers in a closed loop: it cannot be combined with --rate")
	}
	if c.Sched != "" && !cpusched.Valid(c.Sched) {
		add("--sched must be auto, batch or normal, got %q", c.Sched)
	}
	if c.Placement != "" && c.Placement != PlacementFollow && c.Placement != PlacementKernel {
		add("--placement must be follow or kernel, got %q", c.Placement)
	}
	if c.Connect < 0 {
		add("--connect: every=N needs N >= 1, got %d", int(c.Connect))
	}
	if c.Checkpoint < 0 || (c.OnCheckpoint != nil && c.Checkpoint == 0) {
		add("the checkpoint period must be > 0 with a checkpoint callback, got %v", c.Checkpoint)
	}
	return errs
}

// checkErrorCode accepts one --ignore-errors value: "all", a MySQL error
// number (1 to 5 digits) or a 5-character SQLSTATE (digits and capitals).
func checkErrorCode(code string) error {
	code = strings.TrimSpace(code)
	if code == "" {
		return errors.New("--ignore-errors: empty error code")
	}
	if strings.EqualFold(code, "all") {
		return nil
	}
	digits, sqlstate := true, len(code) == 5
	for _, ch := range code {
		digits = digits && ch >= '0' && ch <= '9'
		sqlstate = sqlstate && (ch >= '0' && ch <= '9' || ch >= 'A' && ch <= 'Z')
	}
	if (digits && len(code) <= 5) || sqlstate {
		return nil
	}
	return fmt.Errorf("--ignore-errors: %q is not an error code (want all, a MySQL error number such as 1062, or a 5-character SQLSTATE such as 40001)", code)
}

// queueSize is the effective bound of the rate-mode queue.
func (c Config) queueSize() int {
	if c.QueueSize > 0 {
		return c.QueueSize
	}
	return max(1024, 64*c.Threads)
}

// ignoreSet returns the ignored codes and whether every code is ignored.
func (c Config) ignoreSet() (map[string]bool, bool) {
	set := make(map[string]bool, len(c.IgnoreErrors))
	all := false
	for _, code := range c.IgnoreErrors {
		code = strings.TrimSpace(code)
		if strings.EqualFold(code, "all") {
			all = true
		}
		set[code] = true
	}
	return set, all
}

// schedPolicy is the policy Sched asks for. Auto picks batch for workers
// on the lean PostgreSQL client (lean) in a closed loop, and normal
// elsewhere. Measured on 2 cores, alternating runs: on PostgreSQL batch
// cut client CPU per query by 10-20% at equal or higher QPS at 4 to 64
// threads; on MariaDB it cut CPU as much but cost 2-3% of QPS at 4 and 16
// threads and 11% at 64. Events due at set times (Rate, a replay's timing:
// paced) need a woken worker to start on time, not after a backend's time
// slice.
func (c Config) schedPolicy(flavor target.Flavor, lean, paced bool) string {
	if c.Sched != "" && c.Sched != cpusched.Auto {
		return c.Sched
	}
	if lean && !paced && c.Rate == 0 && flavor == target.FlavorPostgres {
		return cpusched.Batch
	}
	return cpusched.Normal
}

// LimitEvents applies w's own event limit (workload.EventLimiter: http's
// --reps, a script's --number-of-queries) to c: the run goes until the
// limit, and the duration caps it only when keepDuration (the user set
// one: --time, a plan's duration:), not by its default. It reports whether
// w has a limit. `dbarena run` and plan steps both decide it here.
func (c *Config) LimitEvents(w workload.Workload, keepDuration bool) bool {
	el, ok := w.(workload.EventLimiter)
	if !ok || el.EventLimit() <= 0 {
		return false
	}
	c.Events = el.EventLimit()
	if !keepDuration {
		c.Duration = 0
	}
	return true
}
