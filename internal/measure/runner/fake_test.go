package runner

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/workload"
	"github.com/go-sql-driver/mysql"
)

// stubDB is an in-memory database/sql connector: connections do nothing
// but count ROLLBACKs. It tests the runner, not a database.
type stubDB struct {
	connects  atomic.Int64 // driver connections opened
	closes    atomic.Int64 // driver connections closed
	rollbacks atomic.Int64
	fail      error        // when set, Connect fails with it
	down      atomic.Bool  // while set, Connect fails: the server is gone
	refuse    atomic.Int64 // while > 0, Connect fails with 1040 and counts it down
}

// errTooMany is what Connect returns while refuse > 0.
var errTooMany = &mysql.MySQLError{Number: 1040, Message: "Too many connections"}

// errRefused is what Connect returns while the stub server is down.
var errRefused = errors.New("dial tcp 127.0.0.1:3306: connect: connection refused")

func (s *stubDB) Connect(context.Context) (driver.Conn, error) {
	if s.fail != nil {
		return nil, s.fail
	}
	if s.down.Load() {
		return nil, errRefused
	}
	if s.refuse.Add(-1) >= 0 {
		return nil, errTooMany
	}
	s.refuse.Store(0)
	s.connects.Add(1)
	return &stubConn{db: s}, nil
}

func (s *stubDB) Driver() driver.Driver { return stubDriver{s} }

type stubDriver struct{ db *stubDB }

func (d stubDriver) Open(string) (driver.Conn, error) { return d.db.Connect(context.Background()) }

type stubConn struct{ db *stubDB }

func (c *stubConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("stub: no statements")
}
func (c *stubConn) Close() error              { c.db.closes.Add(1); return nil }
func (c *stubConn) Begin() (driver.Tx, error) { return nil, errors.New("stub: no transactions") }

func (c *stubConn) ExecContext(_ context.Context, query string, _ []driver.NamedValue) (driver.Result, error) {
	if strings.EqualFold(query, "ROLLBACK") {
		c.db.rollbacks.Add(1)
	}
	return driver.RowsAffected(0), nil
}

// eventFunc is a fake event: w.n is the number of events this Worker has
// started, this one included (attempts count separately, see w.attempts).
type eventFunc func(ctx context.Context, w *fakeWorker, ev *workload.Event) error

// fakeRunner is a workload.Runner whose Workers run ev.
type fakeRunner struct {
	ev         eventFunc
	newWorker  func(id int) error // optional: fail NewWorker
	newWorkers atomic.Int64
	attempts   atomic.Int64 // Event calls
	succeeded  atomic.Int64 // Event calls that returned nil
	closed     atomic.Int64

	mu    sync.Mutex
	seeds map[int][]int64 // by worker id
}

func (f *fakeRunner) NewWorker(_ context.Context, _ workload.Env, conn *sql.Conn, id int, seed int64) (workload.Worker, error) {
	if conn == nil {
		return nil, errors.New("fake: nil conn")
	}
	if f.newWorker != nil {
		if err := f.newWorker(id); err != nil {
			return nil, err
		}
	}
	f.newWorkers.Add(1)
	f.mu.Lock()
	if f.seeds == nil {
		f.seeds = map[int][]int64{}
	}
	f.seeds[id] = append(f.seeds[id], seed)
	gen := len(f.seeds[id]) - 1
	f.mu.Unlock()
	return &fakeWorker{r: f, id: id, gen: gen}, nil
}

// fakeWorker counts its events; it is used by one goroutine.
type fakeWorker struct {
	r        *fakeRunner
	id, gen  int   // gen: 0 for the first Worker of this id, 1 after a reconnect...
	n        int64 // events started (attempt 0 of each)
	attempts int64 // attempts of the current event
	inRetry  bool
}

func (w *fakeWorker) Event(ctx context.Context, ev *workload.Event) error {
	w.r.attempts.Add(1)
	if w.inRetry {
		w.attempts++
	} else {
		w.n++
		w.attempts = 0
	}
	ev.Queries = workload.Queries{Read: 2, Write: 1, Other: 1}
	var err error
	if w.r.ev != nil {
		err = w.r.ev(ctx, w, ev)
	}
	// The runner reruns an event only after a retryable error.
	w.inRetry = err != nil && dialect.MySQLDialect{}.Classify(err).Kind == dialect.Retry
	if err == nil {
		w.r.succeeded.Add(1)
	}
	return err
}

func (w *fakeWorker) Close() error { w.r.closed.Add(1); return nil }

// harness is one Run's fixtures.
type harness struct {
	db     *stubDB
	runner *fakeRunner
	env    workload.Env

	mu        sync.Mutex
	intervals []Interval // every onInterval call, warm-up ones included
}

func newHarness(tb testing.TB, ev eventFunc) *harness {
	tb.Helper()
	h := &harness{db: &stubDB{}, runner: &fakeRunner{ev: ev}}
	sqlDB := sql.OpenDB(h.db)
	tb.Cleanup(func() { sqlDB.Close() })
	h.env = workload.Env{DB: sqlDB, Dialect: dialect.MySQLDialect{}}
	return h
}

func (h *harness) onInterval(iv Interval) {
	h.mu.Lock()
	h.intervals = append(h.intervals, iv)
	h.mu.Unlock()
}

// run runs cfg and fails the test on a setup error.
func (h *harness) run(tb testing.TB, ctx context.Context, cfg Config) *Result {
	tb.Helper()
	res, err := Run(ctx, cfg, h.env, h.runner, h.onInterval)
	if err != nil {
		tb.Fatalf("Run: %v", err)
	}
	if res == nil {
		tb.Fatal("Run returned a nil result")
	}
	return res
}

// testConfig is a closed-loop config for tests: short grace, no duration.
func testConfig(threads int, events int64) Config {
	c := DefaultConfig()
	c.Threads = threads
	c.Duration = 0
	c.Events = events
	c.StopGrace = 2 * time.Second
	return c
}

// checkSums fails unless res's intervals add up to its totals and follow
// each other from 0.
func checkSums(tb testing.TB, res *Result) {
	tb.Helper()
	var sum counts
	var q workload.Queries
	prev := time.Duration(0)
	for i, iv := range res.Intervals {
		if iv.Warmup {
			tb.Errorf("interval %d is a warm-up interval", i)
		}
		if iv.Start != prev {
			tb.Errorf("interval %d starts at %v, want %v (previous end)", i, iv.Start, prev)
		}
		if iv.End < iv.Start {
			tb.Errorf("interval %d ends at %v before it starts at %v", i, iv.End, iv.Start)
		}
		prev = iv.End
		sum.events += iv.Events
		q.Add(iv.Queries)
		sum.errors += iv.Errors
		sum.retries += iv.Retries
		sum.reconnects += iv.Reconnects
		sum.late += iv.Late
		sum.dropped += iv.Dropped
	}
	if len(res.Intervals) == 0 {
		return
	}
	if d := prev - res.Elapsed; d < -time.Millisecond || d > time.Millisecond {
		tb.Errorf("last interval ends at %v, elapsed is %v", prev, res.Elapsed)
	}
	want := counts{events: res.Events, errors: res.Errors, retries: res.Retries, reconnects: res.Reconnects,
		late: res.Late, dropped: res.Dropped}
	if sum != want {
		tb.Errorf("intervals add up to %+v, totals are %+v", sum, want)
	}
	if q != res.Queries {
		tb.Errorf("interval queries add up to %+v, total is %+v", q, res.Queries)
	}
}

// dialingRunner is a fakeRunner whose Workers own their connections
// (workload.Dialer): the runner must not lend them pool connections.
type dialingRunner struct {
	*fakeRunner
	dials     atomic.Int64
	rollbacks atomic.Int64
	procs     atomic.Int64 // GOMAXPROCS seen by the last DialWorker
}

func (d *dialingRunner) OwnsConns(workload.Env) bool { return true }

func (d *dialingRunner) DialWorker(ctx context.Context, env workload.Env, id int, seed int64) (workload.Worker, error) {
	d.dials.Add(1)
	d.procs.Store(int64(runtime.GOMAXPROCS(0)))
	w, err := d.fakeRunner.NewWorker(ctx, env, &sql.Conn{}, id, seed)
	if err != nil {
		return nil, err
	}
	return &dialedWorker{fakeWorker: w.(*fakeWorker), d: d}, nil
}

type dialedWorker struct {
	*fakeWorker
	d *dialingRunner
}

func (w *dialedWorker) Rollback(context.Context) error { w.d.rollbacks.Add(1); return nil }
