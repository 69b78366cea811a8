package monitor

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SessionWaitSource is the optional capability of a flavor's Dialect whose
// server lists what each session is waiting for (PostgreSQL's
// pg_stat_activity). The wait profile samples it many times a second.
type SessionWaitSource interface {
	// SessionWaitsQuery returns a query with one parameter, the workload's
	// database, giving one row per client backend of that database other
	// than the querying one: state, wait event type and wait event (empty
	// when the backend waits for nothing).
	SessionWaitsQuery() string
}

// WaitSummarySource is the optional capability of a flavor's Dialect
// whose server keeps cumulative wait times by instrument (the MySQL
// family's performance_schema); the wait profile takes their deltas at
// every interval.
type WaitSummarySource interface {
	// WaitsEnabledQuery returns a query of one value saying whether waits
	// are collected ("1" or "ON").
	WaitsEnabledQuery() string
	// WaitSummaryQuery returns rows of instrument name and cumulative wait
	// time in picoseconds.
	WaitSummaryQuery() string
	// RowLockTimeQuery returns one row of name and cumulative milliseconds
	// spent waiting for row locks; the figure kept without performance_schema.
	RowLockTimeQuery() string
	// RowLockWaitsQuery returns rows of name and value: the number of
	// sessions waiting for a row lock now (a name ending in
	// "current_waits") and the number of row-lock waits begun so far (any
	// other name); read every WaitSampleEvery while sessions wait, every
	// RowLockQuietEvery while none does.
	RowLockWaitsQuery() string
	// WaitClass returns the class of an instrument name (see Wait keys).
	WaitClass(event string) string
}

// WaitSampleEvery is how often the session wait sampler reads the
// sessions' states.
const WaitSampleEvery = 100 * time.Millisecond

// Session wait classes, in the order they are shown; each is the key
// "wait.CLASS" (percent of sampled backend time).
var sessionClasses = []string{"cpu", "io", "lock", "lwlock", "ipc", "client", "idle", "other"}

// sessionClass returns the class of one backend's state and wait: "cpu"
// (active, waiting for nothing), "io", "lock", "lwlock", "ipc", "client"
// (waiting for the client: ClientRead, ClientWrite), "idle" (neither
// active nor waiting, a state PostgreSQL shows briefly) or "other"
// (Timeout, Activity, BufferPin, Extension).
func sessionClass(state, typ string) string {
	switch typ {
	case "":
		if state == "active" {
			return "cpu"
		}
		return "idle"
	case "IO":
		return "io"
	case "Lock":
		return "lock"
	case "LWLock":
		return "lwlock"
	case "IPC":
		return "ipc"
	case "Client":
		return "client"
	}
	return "other"
}

// isWAL says whether a wait is on the write-ahead log (IO:WALSync,
// IO:WALWrite, LWLock:WALWrite, LWLock:WALInsert...).
func isWAL(typ, event string) bool {
	return (typ == "IO" || typ == "LWLock") && strings.HasPrefix(event, "WAL")
}

// sessionTally counts sampled backends by class and by event.
type sessionTally struct {
	ticks    int
	sessions int
	class    map[string]int
	event    map[string]int
	wal      int
}

func newSessionTally() sessionTally {
	return sessionTally{class: map[string]int{}, event: map[string]int{}}
}

// add counts one backend seen in one tick.
func (t *sessionTally) add(state, typ, event string) {
	t.sessions++
	t.class[sessionClass(state, typ)]++
	if typ != "" {
		t.event[typ+":"+event]++
	}
	if isWAL(typ, event) {
		t.wal++
	}
}

// figures adds the tally's shares to out: wait.CLASS and wait.wal in
// percent of the backends sampled, wait.event.TYPE:EVENT likewise,
// wait.sessions the average number of backends seen, wait.ticks the
// number of readings.
func (t *sessionTally) figures(out map[string]float64) {
	if t.ticks == 0 {
		return
	}
	out["wait.ticks"] = float64(t.ticks)
	out["wait.sessions"] = float64(t.sessions) / float64(t.ticks)
	if t.sessions == 0 {
		return
	}
	n := float64(t.sessions)
	for _, c := range sessionClasses {
		out["wait."+c] = float64(t.class[c]) * 100 / n
	}
	out["wait.wal"] = float64(t.wal) * 100 / n
	for e, c := range t.event {
		out["wait.event."+e] = float64(c) * 100 / n
	}
}

// SessionWaits samples the states of the workload's backends every
// WaitSampleEvery on a connection of its own, and reports per interval
// the share of backend time by class and by event.
type SessionWaits struct {
	db       *sql.DB
	query    string
	database string
	every    time.Duration

	mu    sync.Mutex
	tally sessionTally
	err   error
	cost  readingCost

	stop chan struct{}
	done chan struct{}
}

var _ Sampler = (*SessionWaits)(nil)

// readingCost is what the frequent readings of a wait sampler cost: their
// number and the wall time they took, between two interval samples.
type readingCost struct {
	readings int
	spent    time.Duration
	at       time.Time // the previous interval sample
}

// add counts one reading that took d.
func (c *readingCost) add(d time.Duration) {
	c.readings++
	c.spent += d
}

// figures adds monitor.wait_readings (readings per second) and
// monitor.wait_query_ms (milliseconds of wall time per second spent on
// them: an upper bound of the server's and dbarena's time for them, as
// they run one at a time on one connection) over the time since the
// previous call, and starts counting anew.
func (c *readingCost) figures(now time.Time, out map[string]float64) {
	if !c.at.IsZero() {
		if secs := now.Sub(c.at).Seconds(); secs > 0 {
			out["monitor.wait_readings"] = float64(c.readings) / secs
			out["monitor.wait_query_ms"] = c.spent.Seconds() * 1000 / secs
		}
	}
	c.readings, c.spent, c.at = 0, 0, now
}

// NewSessionWaits starts sampling src's sessions of database through db (a
// pool of its own, which Close closes) every every (WaitSampleEvery when 0).
func NewSessionWaits(src SessionWaitSource, db *sql.DB, database string, every time.Duration) *SessionWaits {
	if every <= 0 {
		every = WaitSampleEvery
	}
	s := &SessionWaits{db: db, query: src.SessionWaitsQuery(), database: database, every: every,
		tally: newSessionTally(), stop: make(chan struct{}), done: make(chan struct{})}
	go s.loop()
	return s
}

// Name implements Sampler.
func (*SessionWaits) Name() string { return "wait profile" }

func (s *SessionWaits) loop() {
	defer close(s.done)
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
		start := time.Now()
		tick, err := s.read(ctx)
		took := time.Since(start)
		cancel()
		s.mu.Lock()
		s.cost.add(took)
		if err != nil {
			if s.err == nil {
				s.err = err
			}
		} else {
			s.tally.ticks++
			s.tally.sessions += tick.sessions
			s.tally.wal += tick.wal
			for k, v := range tick.class {
				s.tally.class[k] += v
			}
			for k, v := range tick.event {
				s.tally.event[k] += v
			}
		}
		s.mu.Unlock()
	}
}

// read takes one reading of the sessions.
func (s *SessionWaits) read(ctx context.Context) (sessionTally, error) {
	tick := newSessionTally()
	rows, err := s.db.QueryContext(ctx, s.query, s.database)
	if err != nil {
		return tick, err
	}
	defer rows.Close()
	for rows.Next() {
		var state, typ, event string
		if err := rows.Scan(&state, &typ, &event); err != nil {
			return tick, err
		}
		tick.add(state, typ, event)
	}
	return tick, rows.Err()
}

// Sample implements Sampler: the shares since the previous call, and
// what the readings cost (readingCost).
func (s *SessionWaits) Sample(_ context.Context, now time.Time, out map[string]float64) error {
	s.mu.Lock()
	t, err := s.tally, s.err
	s.tally, s.err = newSessionTally(), nil
	s.cost.figures(now, out)
	s.mu.Unlock()
	t.figures(out)
	return err
}

// Close stops sampling and closes the pool.
func (s *SessionWaits) Close() error {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	return s.db.Close()
}

// SummaryWaits samples the cumulative wait times of the MySQL family's
// performance_schema at every interval: wait.class.CLASS is the class's
// share (percent) of the interval's wait time, wait.time_ms the wait time
// in milliseconds per second (summed over sessions), wait.event.NAME the
// milliseconds per second of each instrument. With or without
// performance_schema, wait.row_lock_ms is the milliseconds per second
// sessions waited for InnoDB row locks (the server counts each wait in
// whole milliseconds, so short waits count as none), and
// wait.row_lock_sessions the average number of sessions waiting for a
// row lock, read every WaitSampleEvery while sessions wait for row locks
// and every RowLockQuietEvery while none does (see rowLockGauge).
type SummaryWaits struct {
	db      *sql.DB
	src     WaitSummarySource
	enabled bool
	prev    map[string]float64
	prevRow float64
	at      time.Time
	started bool

	mu    sync.Mutex
	gauge rowLockGauge
	cost  readingCost
	stop  chan struct{}
	done  chan struct{}
}

// RowLockQuietEvery is how often the row-lock gauge is read while no
// session waits for a row lock: SHOW GLOBAL STATUS sums every session's
// status and InnoDB's, a cost better not paid ten times a second for a
// gauge that stays at zero.
const RowLockQuietEvery = time.Second

// rowLockQuietTicks is the number of fast readings without a row-lock
// wait after which the gauge goes back to RowLockQuietEvery.
const rowLockQuietTicks = 10

// rowLockGauge integrates the number of sessions waiting for a row lock
// over time, from readings taken at a varying pace; it starts slow (the
// first reading comes after WaitSampleEvery all the same). A reading that finds
// no session waiting and no wait begun since the previous one proves the
// gauge was zero in between (a session that waits counts in
// Innodb_row_lock_waits as it starts waiting), so slow readings lose
// nothing while nothing waits; the first wait seen switches to fast ones.
type rowLockGauge struct {
	// waiting is the integral (sessions x seconds), span its seconds.
	waiting, span float64
	// begun is the last count of waits begun, -1 before the first reading.
	begun float64
	// fast is true while reading every WaitSampleEvery; quiet counts the
	// fast readings in a row that saw no wait.
	fast  bool
	quiet int
}

// add counts a reading of current waiting sessions and of waits begun,
// dt seconds after the previous one, and returns whether the next
// reading should come fast.
func (g *rowLockGauge) add(current, begun, dt float64) bool {
	active := current > 0 || (g.begun >= 0 && begun != g.begun)
	g.begun = begun
	if dt > 0 {
		g.waiting += current * dt
		g.span += dt
	}
	switch {
	case active:
		g.fast, g.quiet = true, 0
	case g.fast:
		g.quiet++
		if g.quiet >= rowLockQuietTicks {
			g.fast = false
		}
	}
	return g.fast
}

// take returns the average number of waiting sessions since the last
// take and starts a new average; ok is false without a reading.
func (g *rowLockGauge) take() (avg float64, ok bool) {
	if g.span > 0 {
		avg, ok = g.waiting/g.span, true
	}
	g.waiting, g.span = 0, 0
	return avg, ok
}

var _ Sampler = (*SummaryWaits)(nil)

// NewSummaryWaits returns the sampler of src's cumulative waits through
// db (a pool of its own, which Close closes), and whether
// performance_schema collects waits, or why that could not be read; when
// it does not, the sampler keeps the row-lock figures only. It starts
// reading the row-lock waits every every (WaitSampleEvery when 0).
func NewSummaryWaits(ctx context.Context, src WaitSummarySource, db *sql.DB, every time.Duration) (*SummaryWaits, bool, error) {
	if every <= 0 {
		every = WaitSampleEvery
	}
	s := &SummaryWaits{db: db, src: src, gauge: rowLockGauge{begun: -1},
		stop: make(chan struct{}), done: make(chan struct{})}
	var v sql.NullString
	err := db.QueryRowContext(ctx, src.WaitsEnabledQuery()).Scan(&v)
	if err == nil {
		on := strings.ToUpper(v.String)
		s.enabled = on == "1" || on == "ON"
	}
	go s.loop(every)
	return s, s.enabled, err
}

// loop reads the row-lock gauge every every while sessions wait for row
// locks, every RowLockQuietEvery (or every, when longer) while none does.
func (s *SummaryWaits) loop(every time.Duration) {
	defer close(s.done)
	quiet := max(RowLockQuietEvery, every)
	t := time.NewTimer(every)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
		start := time.Now()
		current, begun, err := s.readRowLocks(ctx)
		cancel()
		now := time.Now()
		next := every
		s.mu.Lock()
		s.cost.add(now.Sub(start))
		if err == nil && !s.gauge.add(current, begun, now.Sub(last).Seconds()) {
			next = quiet
		}
		s.mu.Unlock()
		last = now
		t.Reset(next)
	}
}

// readRowLocks reads the number of sessions waiting for a row lock and
// the number of row-lock waits begun.
func (s *SummaryWaits) readRowLocks(ctx context.Context) (current, begun float64, err error) {
	rows, err := s.db.QueryContext(ctx, s.src.RowLockWaitsQuery())
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	seen := false
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return 0, 0, err
		}
		n, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		if strings.HasSuffix(strings.ToLower(name), "current_waits") {
			current, seen = n, true
		} else {
			begun = n
		}
	}
	if err := rows.Err(); err != nil {
		return 0, 0, err
	}
	if !seen {
		return 0, 0, fmt.Errorf("no current row-lock waits in %q", s.src.RowLockWaitsQuery())
	}
	return current, begun, nil
}

// Name implements Sampler.
func (*SummaryWaits) Name() string { return "wait profile" }

// Close stops sampling and closes the pool.
func (s *SummaryWaits) Close() error {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	return s.db.Close()
}

// Sample implements Sampler.
func (s *SummaryWaits) Sample(ctx context.Context, now time.Time, out map[string]float64) error {
	var name, value string
	if err := s.db.QueryRowContext(ctx, s.src.RowLockTimeQuery()).Scan(&name, &value); err != nil {
		return fmt.Errorf("row lock time: %w", err)
	}
	rowLock, _ := strconv.ParseFloat(value, 64)
	var cur map[string]float64
	if s.enabled {
		rows, err := s.db.QueryContext(ctx, s.src.WaitSummaryQuery())
		if err != nil {
			return fmt.Errorf("performance_schema waits: %w", err)
		}
		defer rows.Close()
		cur = map[string]float64{}
		for rows.Next() {
			var ev string
			var ps float64
			if err := rows.Scan(&ev, &ps); err != nil {
				return err
			}
			cur[ev] = ps
		}
		if err := rows.Err(); err != nil {
			return err
		}
	}
	s.mu.Lock()
	waiting, ok := s.gauge.take()
	s.cost.figures(now, out)
	s.mu.Unlock()
	if s.started && ok {
		out["wait.row_lock_sessions"] = waiting
	}
	if s.started {
		if secs := now.Sub(s.at).Seconds(); secs > 0 {
			summaryFigures(s.src, s.prev, cur, secs, out)
			if d := rowLock - s.prevRow; d >= 0 {
				out["wait.row_lock_ms"] = d / secs
			}
		}
	}
	s.prev, s.prevRow, s.at, s.started = cur, rowLock, now, true
	return nil
}

// summaryClasses are the wait classes of the MySQL family, in the order
// they are shown.
var summaryClasses = []string{"io", "mutex", "rwlock", "cond", "lock", "network", "table_io", "other"}

// summaryFigures adds the figures of the deltas from prev to cur (wait
// picoseconds by instrument) over secs seconds.
func summaryFigures(src WaitSummarySource, prev, cur map[string]float64, secs float64, out map[string]float64) {
	if cur == nil {
		return
	}
	byClass, events := map[string]float64{}, map[string]float64{}
	var total float64
	for ev, v := range cur {
		// A sum over threads goes down when a session ends: its waits
		// leave the sum, and the interval counts nothing for the event.
		d := v - prev[ev]
		if d <= 0 {
			continue
		}
		ms := d / 1e9
		byClass[src.WaitClass(ev)] += ms
		total += ms
		events[ev] = ms / secs
	}
	// The interval keeps its SummaryTopEvents largest instruments.
	for _, e := range topEvents(events, SummaryTopEvents) {
		out["wait.event."+e.Name] = e.Value
	}
	out["wait.time_ms"] = total / secs
	for _, c := range summaryClasses {
		if total > 0 {
			out["wait.class."+c] = byClass[c] * 100 / total
		}
	}
}

// WaitEvent is one wait event and its figure (percent of backend time for
// session sampling, milliseconds per second for summaries).
type WaitEvent struct {
	Name  string
	Value float64
}

// SummaryTopEvents is how many instruments an interval of the MySQL
// family's wait profile keeps (wait.event.NAME).
const SummaryTopEvents = 10

// TopWaitEvents returns the n largest wait.event.NAME figures of values.
func TopWaitEvents(values map[string]float64, n int) []WaitEvent {
	events := map[string]float64{}
	for k, v := range values {
		if name, ok := strings.CutPrefix(k, "wait.event."); ok {
			events[name] = v
		}
	}
	return topEvents(events, n)
}

// topEvents returns the n largest positive figures of events, by name.
func topEvents(events map[string]float64, n int) []WaitEvent {
	var out []WaitEvent
	for name, v := range events {
		if v > 0 {
			out = append(out, WaitEvent{name, v})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Value != out[j].Value {
			return out[i].Value > out[j].Value
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
