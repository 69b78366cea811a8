// Package micro is dbarena's micro suite: sql-bench's test groups (connect,
// create, insert, select, update, alter, big, transactions, wisconsin)
// re-designed for the MySQL family and PostgreSQL. Each operation is a fixed
// amount of work timed alone; every instance of it is one runner event whose
// Type is the operation name, so the run stores one per_type entry per
// operation. One worker runs the selected tests one after another.
//
// The suite ends by itself: `dbarena run micro` defaults to --time 0 and
// --events = the suite's operation count (Planned). Where no such flags exist
// (plan steps), a worker that finished idles in "(idle)" events, left out of
// the summary, until the run's duration ends.
package micro

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// Groups lists the test groups in the order the suite runs them.
var Groups = []string{"connect", "create", "insert", "select", "update", "alter", "big", "transactions", "wisconsin",
	"prepared", "joins", "keys", "distinct", "order", "delete", "batch"}

// Workload is the micro suite. NewWorker and the figures it keeps are safe
// for concurrent use.
type Workload struct {
	groups    []string
	scale     float64
	timeLimit time.Duration
	fs        *pflag.FlagSet
	// keep leaves the tables a test made for its checks (tests only).
	keep bool

	mu      sync.Mutex
	threads int
	active  int // workers whose suite is not over
	timings map[string]*timing
	// cuts are the workers whose suite is not complete.
	cuts map[*worker]*cut
	// wrong counts each operation's wrong results (checks.go).
	wrong map[string]*wrongs
	// m is the model of the prepared tables the checks read.
	m *model
}

// timing is one operation's work summed over the run's workers.
type timing struct {
	done, planned int64
	elapsed       time.Duration
	// usr and sys are dbarena's CPU time while the operation ran.
	usr, sys time.Duration
	// capped: the seconds are extrapolated; limited: by --time-limit.
	capped, limited bool
}

var (
	_ workload.Workload = (*Workload)(nil)
	_ workload.Preparer = (*Workload)(nil)
	_ workload.Cleaner  = (*Workload)(nil)
	_ workload.Runner   = (*Workload)(nil)
	_ workload.Readier  = (*Workload)(nil)
	_ workload.Demander = (*Workload)(nil)
	_ workload.Reporter = (*Workload)(nil)

	_ workload.MeasureBeginner = (*Workload)(nil)
)

// New returns the micro suite with every group at scale 1.
func New() workload.Workload {
	return &Workload{groups: append([]string(nil), Groups...), scale: 1}
}

// Name implements workload.Workload.
func (wl *Workload) Name() string { return "micro" }

// Description implements workload.Workload.
func (wl *Workload) Description() string {
	return "sql-bench-style micro suite: one timed line per operation (connect, create, insert, select, update, alter, ...)"
}

// Flags implements workload.Workload. On `dbarena run`'s flag set it also
// makes the suite end by itself: --time defaults to 0 and --events to the
// suite's operation count (set in Validate, once the flags are known).
func (wl *Workload) Flags(fs *pflag.FlagSet) {
	wl.fs = fs
	fs.StringSliceVar(&wl.groups, "tests", wl.groups, "test groups to run, in suite order: "+strings.Join(Groups, ","))
	fs.Float64Var(&wl.scale, "scale", wl.scale, "multiplies every test's row and operation counts (0 < F <= 100)")
	fs.DurationVar(&wl.timeLimit, "time-limit", 0, "cap each test's time; a capped test's seconds are extrapolated and marked so; 0 = none")
	if f := fs.Lookup("time"); f != nil && !f.Changed {
		_ = f.Value.Set("0")
		f.DefValue = "0"
	}
	if f := fs.Lookup("events"); f != nil && !f.Changed {
		_ = f.Value.Set("1") // placeholder until Validate knows the suite
		f.DefValue = "the suite's operation count"
	}
}

// Validate implements workload.Workload.
func (wl *Workload) Validate() []error {
	var errs []error
	seen := map[string]bool{}
	for _, g := range wl.groups {
		if !contains(Groups, g) {
			errs = append(errs, fmt.Errorf("--tests: unknown group %q (want %s)", g, strings.Join(Groups, ",")))
		}
		if seen[g] {
			errs = append(errs, fmt.Errorf("--tests: group %q given twice", g))
		}
		seen[g] = true
	}
	if len(wl.groups) == 0 {
		errs = append(errs, errors.New("--tests: no group given"))
	}
	if !(wl.scale > 0 && wl.scale <= 100) {
		errs = append(errs, fmt.Errorf("--scale must be > 0 and <= 100, got %g", wl.scale))
	}
	if wl.timeLimit < 0 {
		errs = append(errs, fmt.Errorf("--time-limit must be >= 0, got %v", wl.timeLimit))
	}
	if len(errs) > 0 {
		return errs
	}
	wl.groups = ordered(wl.groups)
	if wl.fs != nil {
		if f := wl.fs.Lookup("events"); f != nil && !f.Changed {
			// One idle event per worker but the last to finish (worker.Event).
			n := wl.runThreads()
			_ = f.Value.Set(strconv.FormatInt(wl.Planned(n)+int64(n-1), 10))
		}
	}
	return nil
}

// ordered sorts groups into suite order.
func ordered(gs []string) []string {
	out := append([]string(nil), gs...)
	sort.SliceStable(out, func(i, j int) bool { return index(out[i]) < index(out[j]) })
	return out
}

func index(g string) int {
	for i, x := range Groups {
		if x == g {
			return i
		}
	}
	return len(Groups)
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// Params implements workload.Workload.
func (wl *Workload) Params() map[string]any {
	p := map[string]any{"tests": strings.Join(wl.groups, ","), "scale": wl.scale}
	if wl.timeLimit > 0 {
		p["time_limit_s"] = wl.timeLimit.Seconds()
	}
	return p
}

var _ workload.ThreadSetter = (*Workload)(nil)

// SetThreads tells the workload the run's thread count (each worker runs
// the whole suite on tables of its own).
func (wl *Workload) SetThreads(n int) {
	wl.mu.Lock()
	wl.threads = n
	wl.mu.Unlock()
}

func (wl *Workload) runThreads() int {
	wl.mu.Lock()
	n := wl.threads
	wl.mu.Unlock()
	if n > 0 {
		return n
	}
	if wl.fs != nil {
		if f := wl.fs.Lookup("threads"); f != nil {
			if v, err := strconv.Atoi(f.Value.String()); err == nil && v > 0 {
				return v
			}
		}
	}
	return 1
}

// Planned is the number of events (operation instances) the selected tests
// make with threads workers.
func (wl *Workload) Planned(threads int) int64 {
	var n int64
	for _, t := range wl.tests() {
		n += int64(wl.count(t))
	}
	return n * int64(threads)
}

// rows is the size of the prepared table micro_a; joinRows of micro_j1..10.
func (wl *Workload) rows() int     { return max(100, int(10000*wl.scale)) }
func (wl *Workload) joinRows() int { return max(10, int(1000*wl.scale)) }

// count is how many times t's operation runs.
func (wl *Workload) count(t *test) int { return wl.countBase(t.base) }

// countBase is base scaled, at least 1.
func (wl *Workload) countBase(base int) int { return max(1, int(float64(base)*wl.scale)) }

// tests are the selected tests in suite order.
func (wl *Workload) tests() []*test {
	var out []*test
	for _, t := range suite {
		if contains(wl.groups, t.group) {
			out = append(out, t)
		}
	}
	return out
}

// Demand implements workload.Demander.
func (wl *Workload) Demand(threads int) workload.Demand {
	// connect tests open one connection beside the worker's; create_table
	// makes all its tables before drop_table drops them; each worker has
	// up to 5 tables of its own beside the 11 shared ones.
	tables := 11 + 5*threads
	if contains(wl.groups, "create") {
		tables += threads * wl.countBase(100)
	}
	return workload.Demand{Connections: 2 * threads, Tables: tables}
}

// NewWorker implements workload.Runner.
func (wl *Workload) NewWorker(ctx context.Context, env workload.Env, conn *sql.Conn, id int, seed int64) (workload.Worker, error) {
	wl.join()
	w := &worker{wl: wl, env: env, conn: conn, id: id, tests: wl.tests(), fam: env.Dialect.Family()}
	wl.track(w, &cut{notRun: len(w.tests)})
	return w, nil
}

// record adds one test's work to the run's figures.
func (wl *Workload) record(op string, done, planned int64, elapsed, usr, sys time.Duration, capped bool) {
	wl.mu.Lock()
	defer wl.mu.Unlock()
	if wl.timings == nil {
		wl.timings = map[string]*timing{}
	}
	t := wl.timings[op]
	if t == nil {
		t = &timing{}
		wl.timings[op] = t
	}
	t.done += done
	t.planned += planned
	t.elapsed += elapsed
	t.usr += usr
	t.sys += sys
	t.capped = t.capped || capped
	t.limited = t.limited || capped
}

// isPG reports whether fam is PostgreSQL.
func isPG(fam target.Family) bool { return fam == target.Postgres }

// BeginMeasure implements workload.MeasureBeginner: tests that ended during
// a warm-up are left out of the seconds, as the runner leaves their events
// out of per_type (the suite is meant to run without one).
func (wl *Workload) BeginMeasure() {
	wl.mu.Lock()
	wl.timings = nil
	wl.wrong = nil
	wl.mu.Unlock()
}
