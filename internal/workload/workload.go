// Package workload defines what a benchmark workload is: a small core
// interface plus optional capabilities that commands discover by type
// assertion. The capabilities, all in this file:
//
//   - Preparer: creates and loads the tables (`dbarena prepare`).
//   - Cleaner: drops them (`dbarena cleanup`).
//   - Checker: consistency checks (`dbarena check`).
//   - Runner: makes one Worker per connection (`dbarena run`).
//   - Dialer: a Runner whose Workers dial and own their connection.
//   - Rollbacker: a Worker that owns its connection ends a failed transaction.
//   - ResponseLimiter: response-time limits by event type.
//   - Reporter: its own interval lines, summary figures and final report.
//   - Demander: what a run asks of the server (connections, statements).
//   - Readier: whether the prepared data is there and complete.
//   - Noter: warnings to print before a run.
//   - MeasureBeginner: told when the measured period begins (after warm-up).
//   - Sharder: narrows its work to one shard of a run spread over hosts.
//   - Detached: Workers that use no database connection (HTTP).
//   - EventLimiter: its own flags limit the run's events.
//   - Pacer: a Worker whose events are due at set times (a replay).
//   - Scheduler: a Runner whose Workers are Pacers.
//   - Defaulter: run settings (threads, length, errors) it picks itself.
//   - ThreadSetter: told the run's thread count before it prepares, runs or
//     cleans up.
//   - Originer: a Detached workload that names what its workers talk to.
//
// A Worker whose Event (or Pacer's Next) returns ErrDone has no more events.
//
// Each implementation carries `var _ workload.Iface = (*T)(nil)` beside it.
package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/target"
)

// Workload is the core every workload implements. A Workload value holds its
// own configuration; Flags binds that configuration to command-line flags.
type Workload interface {
	// Name is the command-line name, e.g. "oltp_read_write".
	Name() string
	// Description is one line for `dbarena workloads`.
	Description() string
	// Flags registers the workload's flags on fs, bound to its configuration.
	Flags(fs *pflag.FlagSet)
	// Validate reports every problem with the configuration at once.
	Validate() []error
	// Params returns the configuration as plain values, for the run summary.
	Params() map[string]any
}

// Env is the database a workload works against.
type Env struct {
	DB      *sql.DB
	Dialect flavor.Dialect
	Target  target.Target
	// Sockets, if set, records connections a workload dials itself
	// (Dialer), so that a run can abort them with the pool's.
	Sockets *flavor.Sockets
}

// Progress receives load progress. Implementations are safe for concurrent use.
type Progress interface {
	// SetTotal announces how many rows the whole load will write.
	SetTotal(rows int64)
	// Add reports rows (and their approximate bytes) just written.
	Add(rows, bytes int64)
}

// Preparer creates and loads a workload's tables.
type Preparer interface {
	Prepare(ctx context.Context, env Env, threads int, p Progress) error
}

// Cleaner drops what Prepare created.
type Cleaner interface {
	Cleanup(ctx context.Context, env Env) error
}

// Checker verifies data consistency and writes one line per check to out.
// It returns ok=false when a check fails and err when it could not check.
type Checker interface {
	Check(ctx context.Context, env Env, out io.Writer) (ok bool, err error)
}

// Runner is a workload that can be run: it makes one Worker per connection.
type Runner interface {
	// NewWorker prepares a worker on its own connection. id is 0-based and
	// unique within a run; seed makes the worker's random choices repeatable.
	NewWorker(ctx context.Context, env Env, conn *sql.Conn, id int, seed int64) (Worker, error)
}

// Dialer is a Runner whose Workers can dial and own their connection, for
// a client that bypasses database/sql (package mysqlwire). Such Workers
// block their OS thread in system calls while they wait for the server, as
// a C client does, so the runner gives the Go scheduler a P per worker.
type Dialer interface {
	// OwnsConns reports whether this run's Workers dial their own
	// connection on env; if not, the runner uses NewWorker.
	OwnsConns(env Env) bool
	// DialWorker connects and prepares a Worker whose Close also closes
	// the connection. A Worker that owns its connection implements
	// Rollbacker.
	DialWorker(ctx context.Context, env Env, id int, seed int64) (Worker, error)
}

// Rollbacker is a Worker that owns its connection: after a failed event
// the runner asks it to end the open transaction.
type Rollbacker interface {
	Rollback(ctx context.Context) error
}

// Demand is what a run asks of the server, so that a sandbox can be sized
// to it and a limit that would be hit is reported before the run starts.
type Demand struct {
	// Connections the run opens at once (workers; the monitor and counter
	// connections are the caller's to add).
	Connections int
	// PreparedPerConn is how many server-side prepared statements each
	// connection holds at most (MySQL's max_prepared_stmt_count counts
	// them server-wide).
	PreparedPerConn int
	// Tables the run touches (table caches, open files).
	Tables int
}

// Demander is a Runner that can say what a run with threads workers asks of
// the server.
type Demander interface {
	Demand(threads int) Demand
}

// NotReadyError says the workload's data is missing or incomplete; Hint is
// the command that fixes it ("dbarena prepare oltp_read_write --tables 4").
// Short marks data that is there but smaller than the flags say; Refuse
// marks data a run cannot use as the flags ask at all (more TPC-C
// warehouses than loaded, micro's tables of another --scale): the run is
// refused before it starts, as bad input (exit 2).
type NotReadyError struct {
	Problem string
	Hint    string
	Short   bool
	Refuse  bool
}

// Error implements error.
func (e *NotReadyError) Error() string {
	if e.Hint == "" {
		return e.Problem
	}
	return e.Problem + "; run `" + e.Hint + "` first"
}

// Readier is a workload that can check, before a run, that its prepared
// data is there and complete. Ready returns a *NotReadyError when it is
// not, and another error when it could not tell.
type Readier interface {
	Ready(ctx context.Context, env Env) error
}

// Noter is a workload with warnings to print before a run of threads
// workers (TPC-C: warehouses that are never a home warehouse).
type Noter interface {
	Notes(threads int) []string
}

// MeasureBeginner is a workload that keeps figures of its own (TPC-C's
// delivered and skipped districts): it is told when the measured period
// begins, so that the warm-up is left out of them.
type MeasureBeginner interface {
	BeginMeasure()
}

// Sharder is a workload that can run shard i (0-based) of n of one run
// spread over client hosts: it narrows its own work (TPC-C warehouses,
// OLTP id ranges, replay sessions, HTTP users) so that the n shards
// together do exactly the work of the same run on one machine. The runner
// splits threads, events and rate itself.
type Sharder interface {
	Shard(i, n int) error
}

// ErrDone, returned by Worker.Event or a Pacer's Next, says the worker has
// no more events to run (siege's --reps, the end of a replay's capture): that
// event did not happen, the worker stops without an error, and the run ends
// once every worker has stopped.
var ErrDone = errors.New("worker done")

// Detached is a Runner whose Workers talk to something other than the
// target database (an HTTP application): they dial their own clients
// (DialWorker; OwnsConns is not asked), the workload classifies their
// errors, and the target, if any, is only monitored and its counters read.
// Env.DB and Env.Dialect may then be nil. Its errors never stop a run (as
// siege goes on after failed requests): each is counted under its code and
// the worker goes on, after dialing a new Worker for a flavor.ConnLost.
type Detached interface {
	Dialer
	// Classify says what the runner does about a Worker's error and under
	// which code it is counted.
	Classify(err error) flavor.Class
}

// EventLimiter is a workload whose own flags limit a run's measured events
// (mysqlslap's --number-of-queries): the command runs until EventLimit
// events, as with --events, when it is > 0.
type EventLimiter interface {
	EventLimit() int64
}

// Pacer is a Worker whose events are due at set times (a replay). Before
// each event the runner calls Next, which does what comes before the event
// (a session's connect) and waits until it is due or stop is closed. The
// event's latency counts from due, not from when it could start (no
// coordinated omission), and it is late when it starts more than 1 ms
// after. Next returns ErrDone when there is nothing left, and the context's
// error when cancelled. The runner neither retries nor rolls back a
// Pacer's failed events: it replays what it was given.
type Pacer interface {
	Next(ctx context.Context, stop <-chan struct{}) (due time.Time, err error)
}

// Scheduler is a Dialer whose Workers are Pacers. They wait in the Go
// netpoller rather than in raw system calls, so the runner leaves
// GOMAXPROCS as it is.
type Scheduler interface {
	Scheduled()
}

// RunDefaults are run settings a Defaulter picks where the user set none.
type RunDefaults struct {
	// Threads replaces the default --threads when > 0.
	Threads int
	// UntilDone: without --time or --events the run lasts until every
	// Worker is done (ErrDone).
	UntilDone bool
	// IgnoreErrors: without --ignore-errors, every server error is counted
	// and the run goes on.
	IgnoreErrors bool
}

// Defaulter is a workload that picks run settings the user did not set;
// the CLI asks it after Validate.
type Defaulter interface {
	RunDefaults() RunDefaults
}

// ThreadSetter is a workload whose work depends on the run's thread count
// (OLTP's select_random_* give each thread its own segment, bulk_insert
// and micro a table per thread, a replay folds its sessions onto the
// connections, HTTP's --reps counts per user). The command tells it the
// thread count after Validate, before it prepares, runs or cleans up.
type ThreadSetter interface {
	SetThreads(n int)
}

// Originer is a Detached workload that names what its workers talk to (an
// HTTP list's first scheme and host): a run without a database is stored
// against that origin.
type Originer interface {
	Origin() string
}

// Queries counts statements by sysbench's classes.
type Queries struct {
	Read, Write, Other int64
}

// Add adds o to q.
func (q *Queries) Add(o Queries) {
	q.Read += o.Read
	q.Write += o.Write
	q.Other += o.Other
}

// Total is the number of statements.
func (q Queries) Total() int64 { return q.Read + q.Write + q.Other }

// Event is what a Worker reports about one event (one transaction).
type Event struct {
	// Queries issued, counted even when the event failed part way.
	Queries Queries
	// Type names the transaction type for per-type statistics (TPC-C's
	// five); empty for single-type workloads.
	Type string
	// Pause is time the worker deliberately waited inside Event (TPC-C's
	// keying and think times); the runner leaves it out of the latency.
	Pause time.Duration
}

// Worker runs events on one connection. A Worker is used by one goroutine.
type Worker interface {
	// Event runs one event, filling ev. On error the runner classifies it
	// and may roll back, retry, or reconnect and make a new Worker.
	Event(ctx context.Context, ev *Event) error
	// Close releases prepared statements; the connection is the runner's.
	Close() error
}

// Stepper is a Worker whose events can also run in steps that never wait
// for the server, so that under --jobs its poller group's thread drives
// them from its own stack, as pgbench's threads drive their clients,
// instead of switching to the worker's coroutine at every reply. The
// runner steps only closed-loop workers on persistent connections, and
// runs retries through Event.
type Stepper interface {
	Worker
	// CanStep reports whether this Worker's events can run in steps; if
	// not, the runner calls Event.
	CanStep() bool
	// Start begins an event, filling ev as Event does: pending while it
	// waits for a reply, else it ended (err as Event's).
	Start(ev *Event) (pending bool, err error)
	// Resume goes on with a pending event once its connection's socket
	// signalled (or on a periodic check, when it may find nothing new).
	Resume(ev *Event) (pending bool, err error)
}

// Registry maps names to workload constructors.
type Registry struct {
	makers map[string]func() Workload
}

// NewRegistry builds a registry from constructors; names must be unique.
func NewRegistry(makers ...func() Workload) *Registry {
	r := &Registry{makers: map[string]func() Workload{}}
	for _, m := range makers {
		r.makers[m().Name()] = m
	}
	return r
}

// New returns a fresh workload with default configuration.
func (r *Registry) New(name string) (Workload, error) {
	m, ok := r.makers[name]
	if !ok {
		return nil, fmt.Errorf("unknown workload %q (see `dbarena workloads`)", name)
	}
	return m(), nil
}

// Names lists the registered workloads in order.
func (r *Registry) Names() []string {
	var names []string
	for n := range r.makers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TypeInterval is one transaction type's figures over one report interval.
type TypeInterval struct {
	// Count counts successful events; Late those of them slower than the
	// type's response-time limit (see ResponseLimiter).
	Count, Late int64
	// Errors counts failed events; Retries reruns after retryable errors.
	Errors, Retries int64
	// P90, P95, P99 and Max are the latency of the interval's successful
	// events.
	P90, P95, P99, Max time.Duration
}

// ResponseLimiter is a workload whose transaction types have response-time
// limits (TPC-C clause 5.2.5.4); the runner counts successful events slower
// than their type's limit as late, per interval and in total.
type ResponseLimiter interface {
	// ResponseLimits maps Event.Type to its limit; types not listed have none.
	ResponseLimits() map[string]time.Duration
}

// IntervalReport is one report interval as a Reporter sees it. Start and
// End are offsets from the start of the measured period (negative during
// warm-up).
type IntervalReport struct {
	Start, End time.Duration
	Warmup     bool
	Threads    int
	PerType    map[string]TypeInterval
	// Totals of the interval, as in the runner's interval line.
	Queries              Queries
	Events, Errors, Late int64
	P95                  time.Duration
}

// Reporter is a workload that prints its own report lines and final report
// (like tpcc-mysql's) instead of sysbench's, and adds its own figures to the
// run summary. The CLI finds it by type assertion.
type Reporter interface {
	// IntervalHeader is printed once above the interval lines.
	IntervalHeader() string
	// FormatInterval renders one report interval as one line.
	FormatInterval(iv IntervalReport) string
	// Summarize adds the workload's figures (checks, tpmc) to run, whose
	// generic fields are already filled.
	Summarize(run *summary.Run)
	// FormatSummary renders the workload's final report of run.
	FormatSummary(run *summary.Run) string
}
