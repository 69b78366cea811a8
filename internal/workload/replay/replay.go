// Package replay is the `replay` workload: it replays a capture file
// (package capture) against a server, one connection per captured session,
// statements in session order, paced as captured (--speed) or as fast as
// each session allows, and keeps per-fingerprint statistics (package
// fingerprint) and, with --record-results, a checksum of every result set,
// so that two replays can be compared statement by statement.
//
// One runner event is one statement (query or execute); connects, quits,
// prepares and deallocations happen between events (workload.Pacer).
// Workers are slots: each replays the sessions assigned to it one after the
// other, on a connection it opens at the session's connect and closes at
// its quit.
package replay

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/capture"
	"github.com/dbarena/dbarena/internal/workload"
)

// Prepared-statement modes (--prepared).
const (
	PreparedServer = "server" // executes run as server-side prepared statements
	PreparedText   = "text"   // executes run their captured text
)

// Workload is `dbarena run replay`.
type Workload struct {
	file          string
	speedFlag     string
	sessions      int
	loop          bool
	stopOnError   bool
	recordResults bool
	prepared      string
	db            string

	speed   float64 // 0: as fast as possible
	pg      bool    // the capture is PostgreSQL's
	capture *Capture
	shardI  int
	shardN  int
	threads int // set by SetThreads; 0 until then

	mu    sync.Mutex
	slots []*slotState // by worker id, built on first use

	begin    atomic.Int64 // replay start, unix ns; 0 until the first Next
	measured atomic.Bool
	lag      lagSeries
	stats    []*workerStats // one per slot

	watch watchdog     // finds a frozen server
	lost  atomic.Int64 // statements and connects that met a lost or unanswered connection

	// digests holds, with --record-results, each statement's result
	// digest by capture ordinal (0: not run).
	digests []uint64
	lats    []uint32 // and latencies in µs (at least 1)
}

var (
	_ workload.Workload        = (*Workload)(nil)
	_ workload.Runner          = (*Workload)(nil)
	_ workload.Dialer          = (*Workload)(nil)
	_ workload.Scheduler       = (*Workload)(nil)
	_ workload.Defaulter       = (*Workload)(nil)
	_ workload.Sharder         = (*Workload)(nil)
	_ workload.Reporter        = (*Workload)(nil)
	_ workload.MeasureBeginner = (*Workload)(nil)
	_ workload.Demander        = (*Workload)(nil)
)

// maxScheduleUS bounds a paced replay's schedule (the span over --speed),
// in µs: its due times in ns stay far from overflowing.
const maxScheduleUS = float64(capture.MaxTUS)

// New returns the workload with its defaults.
func New() workload.Workload {
	return &Workload{speedFlag: "1", prepared: PreparedServer, shardN: 1}
}

// All lists the workloads of this package, for the registry.
func All() []func() workload.Workload { return []func() workload.Workload{New} }

// Name implements workload.Workload.
func (wl *Workload) Name() string { return "replay" }

// Description implements workload.Workload.
func (wl *Workload) Description() string {
	return "replay a capture file (dbarena capture): one connection per captured session, paced as captured or at --speed"
}

// Flags implements workload.Workload.
func (wl *Workload) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&wl.file, "capture", "", "capture FILE to replay (dbarena.capture/v1, from `dbarena capture`)")
	fs.StringVar(&wl.speedFlag, "speed", wl.speedFlag, "F: each statement is due at its captured offset / F; max: as fast as each session allows")
	fs.IntVar(&wl.sessions, "sessions", 0, "fold the captured sessions onto N connections (0: as many as were open at once)")
	fs.BoolVar(&wl.loop, "loop", false, "repeat the capture until --time is up")
	fs.BoolVar(&wl.stopOnError, "stop-on-error", false, "stop the replay at the first server error (default: count errors per fingerprint and go on)")
	fs.BoolVar(&wl.recordResults, "record-results", false, "store a row count and checksum of every result set, for `dbarena compare`")
	fs.StringVar(&wl.prepared, "prepared", wl.prepared, "how captured prepared statements run: server (server-side prepared statements) or text (their captured text)")
	fs.StringVar(&wl.db, "db", "", "replay every session into database NAME instead of the captured one")
}

// Params implements workload.Workload.
func (wl *Workload) Params() map[string]any {
	p := map[string]any{"capture": wl.file, "speed": wl.speedFlag, "prepared": wl.prepared}
	if wl.sessions > 0 {
		p["sessions"] = wl.sessions
	}
	if wl.loop {
		p["loop"] = true
	}
	if wl.stopOnError {
		p["stop_on_error"] = true
	}
	if wl.recordResults {
		p["record_results"] = true
	}
	if wl.db != "" {
		p["db"] = wl.db
	}
	if wl.shardN > 1 {
		p["shard"] = fmt.Sprintf("%d/%d", wl.shardI, wl.shardN)
	}
	return p
}

// Validate implements workload.Workload: it reads the capture, so that a
// bad file stops the command with its file:line.
func (wl *Workload) Validate() []error {
	var errs []error
	switch s := strings.ToLower(wl.speedFlag); s {
	case "max":
		wl.speed = 0
	default:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			errs = append(errs, fmt.Errorf("--speed %q: want a factor > 0 (1 = as captured) or max", wl.speedFlag))
		}
		wl.speed = f
	}
	if wl.sessions < 0 {
		errs = append(errs, fmt.Errorf("--sessions %d: must be >= 0", wl.sessions))
	}
	if wl.prepared != PreparedServer && wl.prepared != PreparedText {
		errs = append(errs, fmt.Errorf("--prepared %q: want server or text", wl.prepared))
	}
	if wl.file == "" {
		errs = append(errs, errors.New("--capture FILE is required"))
		return errs
	}
	c, err := Load(wl.file)
	if err != nil {
		errs = append(errs, fmt.Errorf("--capture: %w", err))
		return errs
	}
	if c.Statements == 0 {
		errs = append(errs, fmt.Errorf("--capture %s: no statements to replay", wl.file))
	}
	if wl.speed > 0 && float64(c.Span)/wl.speed > maxScheduleUS {
		errs = append(errs, fmt.Errorf("--speed %s: the capture's span of %.0f s would take %.0f s, more than the 10 years a replay may last",
			wl.speedFlag, float64(c.Span)/1e6, float64(c.Span)/1e6/wl.speed))
	}
	wl.capture = c
	wl.pg = pgCapture(c.Header.Flavor)
	return errs
}

// SetCapture replays c instead of reading --capture (tests, benchmarks).
func (wl *Workload) SetCapture(c *Capture) {
	wl.capture, wl.file, wl.pg = c, "(memory)", pgCapture(c.Header.Flavor)
}

// Shard implements workload.Sharder: shard i of n replays the sessions
// whose id hashes to i modulo n.
func (wl *Workload) Shard(i, n int) error {
	if n < 1 || i < 0 || i >= n {
		return fmt.Errorf("replay: shard %d of %d", i, n)
	}
	wl.mu.Lock()
	wl.shardI, wl.shardN, wl.slots = i, n, nil
	wl.mu.Unlock()
	return nil
}

var _ workload.ThreadSetter = (*Workload)(nil)

// SetThreads folds the sessions onto n connections when n differs from
// what the capture needs (--threads N is --sessions N).
func (wl *Workload) SetThreads(n int) {
	wl.mu.Lock()
	wl.threads, wl.slots = n, nil
	wl.mu.Unlock()
}

// Scheduled implements workload.Scheduler.
func (wl *Workload) Scheduled() {}

// mine lists the sessions of this shard.
func (wl *Workload) mine() []*session {
	if wl.shardN <= 1 {
		return wl.capture.Sessions
	}
	var out []*session
	for _, s := range wl.capture.Sessions {
		if int(s.hash%uint32(wl.shardN)) == wl.shardI {
			out = append(out, s)
		}
	}
	return out
}

// plan assigns the sessions to slots; wl.mu is held.
func (wl *Workload) plan() []*slotState {
	if wl.slots != nil {
		return wl.slots
	}
	fold := wl.sessions
	peak := len(assign(wl.mine(), 0, wl.capture.WholeSeconds))
	if fold == 0 && wl.threads > 0 && wl.threads != peak {
		fold = wl.threads
	}
	slots := assign(wl.mine(), fold, wl.capture.WholeSeconds)
	n := max(len(slots), wl.threads, 1)
	wl.slots = make([]*slotState, n)
	wl.stats = make([]*workerStats, n)
	for i := range wl.slots {
		st := &slotState{}
		if i < len(slots) {
			st.sessions = slots[i].sessions
		}
		wl.slots[i] = st
		wl.stats[i] = newWorkerStats(len(wl.capture.FPs))
	}
	if wl.recordResults && wl.digests == nil {
		wl.digests = make([]uint64, wl.capture.Statements)
		wl.lats = make([]uint32, wl.capture.Statements)
	}
	return wl.slots
}

// RunDefaults implements workload.Defaulter: one thread per session open
// at once (or --sessions), until the capture is done (or, with --loop,
// --time), errors counted unless --stop-on-error.
func (wl *Workload) RunDefaults() workload.RunDefaults {
	wl.mu.Lock()
	defer wl.mu.Unlock()
	n := wl.sessions
	if n == 0 {
		n = len(assign(wl.mine(), 0, wl.capture.WholeSeconds))
	}
	return workload.RunDefaults{Threads: max(n, 1), UntilDone: !wl.loop, IgnoreErrors: !wl.stopOnError}
}

// Demand implements workload.Demander.
func (wl *Workload) Demand(threads int) workload.Demand {
	return workload.Demand{Connections: threads}
}

// due is when an event at tus of loop round loop is due.
func (wl *Workload) due(tus int64, loop int) time.Time {
	off := float64(tus+int64(loop)*(wl.capture.Span+1)) / wl.speed
	return time.Unix(0, wl.begin.Load()+int64(off*float64(time.Microsecond)))
}

// start marks the replay's start on the first call.
func (wl *Workload) start() {
	if wl.begin.Load() == 0 {
		wl.begin.CompareAndSwap(0, time.Now().UnixNano())
	}
}
