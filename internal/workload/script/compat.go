package script

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/workload"
	"github.com/dbarena/dbarena/internal/workload/script/pgscript"
)

// BuiltinNames are pgbench's built-in scripts in pgbench's order.
var BuiltinNames = []string{"tpcb-like", "simple-update", "select-only"}

// BuiltinDesc is the description pgbench prints for a built-in script.
var BuiltinDesc = map[string]string{
	"tpcb-like":     "<builtin: TPC-B (sort of)>",
	"simple-update": "<builtin: simple update>",
	"select-only":   "<builtin: select only>",
}

// BuiltinSource is the text of a built-in script ("" when there is none).
func BuiltinSource(name string) string { return builtinScripts[name] }

// BenchOptions are pgbench's run options (the `dbarena pgbench` entry).
type BenchOptions struct {
	Clients, Threads int
	Transactions     int64         // per client, as pgbench -t
	Duration         time.Duration // -T
	Rate             float64       // -R, transactions per second over all clients
	LatencyLimit     time.Duration // -L
	MaxTries         int           // --max-tries; 0 = unlimited (with -L or -T)
	Connect          bool          // -C: a new connection per transaction
	PerCommand       bool          // -r
	Log              bool          // -l
	LogPrefix        string        // --log-prefix (default pgbench_log)
	SamplingRate     float64       // --sampling-rate (0 = every transaction)
	AggInterval      int           // --aggregate-interval, seconds
	Progress         int           // -P, seconds
	ProgressTime     bool          // --progress-timestamp
	VerboseErrors    bool          // --verbose-errors
	FailuresDetailed bool          // --failures-detailed
	ExitOnAbort      bool          // --exit-on-abort
	Seed             uint64        // the run's random seed
	Mode             string        // query mode, for the summary
	Scale            int           // for the summary
	Version          string        // the first line, e.g. "pgbench (dbarena, server 15.18)"
	Debug            io.Writer     // -d: where "client N sending ..." lines go (nil = none)
}

// txResult is how a transaction ended, as pgbench's estatus.
type txResult int

const (
	txOK txResult = iota
	txSerialization
	txDeadlock
	txSkipped
)

// scriptStats are one script's (or the whole run's) counts and latencies.
type scriptStats struct {
	cnt, serial, deadlock, skipped, retried, retries, late int64
	lat, lat2, lag, lag2                                   float64 // microseconds
	latMin, latMax, lagMin, lagMax                         float64
}

func (s *scriptStats) add(r txResult, lat, lag float64, tries int, late bool) {
	switch r {
	case txSkipped:
		s.skipped++
		return
	case txSerialization:
		s.serial++
	case txDeadlock:
		s.deadlock++
	default:
		s.cnt++
		if s.cnt == 1 || lat < s.latMin {
			s.latMin = lat
		}
		if lat > s.latMax {
			s.latMax = lat
		}
		s.lat += lat
		s.lat2 += lat * lat
		if s.cnt == 1 || lag < s.lagMin {
			s.lagMin = lag
		}
		if lag > s.lagMax {
			s.lagMax = lag
		}
		s.lag += lag
		s.lag2 += lag * lag
		if late {
			s.late++
		}
	}
	if tries > 1 {
		s.retried++
		s.retries += int64(tries - 1)
	}
}

func (s *scriptStats) merge(o *scriptStats) {
	if o.cnt > 0 {
		if s.cnt == 0 || o.latMin < s.latMin {
			s.latMin = o.latMin
		}
		if o.latMax > s.latMax {
			s.latMax = o.latMax
		}
		if s.cnt == 0 || o.lagMin < s.lagMin {
			s.lagMin = o.lagMin
		}
		if o.lagMax > s.lagMax {
			s.lagMax = o.lagMax
		}
	}
	s.cnt += o.cnt
	s.serial += o.serial
	s.deadlock += o.deadlock
	s.skipped += o.skipped
	s.retried += o.retried
	s.retries += o.retries
	s.late += o.late
	s.lat += o.lat
	s.lat2 += o.lat2
	s.lag += o.lag
	s.lag2 += o.lag2
}

func (s *scriptStats) failures() int64 { return s.serial + s.deadlock }

// bench is one `dbarena pgbench` run.
type bench struct {
	wl     *Workload
	env    workload.Env
	o      BenchOptions
	stderr io.Writer

	mu      sync.Mutex
	total   scriptStats
	per     []scriptStats
	aborted int
	logs    []*txLog // by thread

	progMu   sync.Mutex
	progLast scriptStats
}

// RunBench runs the workload's scripts as pgbench does: o.Clients clients,
// each o.Transactions transactions (or for o.Duration), retrying
// serialization failures and deadlocks up to o.MaxTries tries, a client
// aborting at any other error. It prints pgbench's summary to stdout and
// its errors and progress to stderr, and returns pgbench's exit status: 0,
// or 2 when a client aborted.
func (wl *Workload) RunBench(ctx context.Context, env workload.Env, o BenchOptions, stdout, stderr io.Writer) int {
	b := &bench{wl: wl, env: env, o: o, stderr: stderr, per: make([]scriptStats, len(wl.scripts))}
	b.o.Clients = max(o.Clients, 1)
	b.o.Threads = min(max(o.Threads, 1), b.o.Clients)
	o = b.o
	if o.Log {
		if err := b.openLogs(); err != nil {
			fmt.Fprintf(stderr, "pgbench: error: %v\n", err)
			return 1
		}
		defer b.closeLogs()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if o.Duration > 0 {
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, o.Duration)
		defer c2()
	}
	connStart := time.Now()
	// Connections first, as pgbench does before its clock starts.
	clients := make([]*client, o.Clients)
	// Threads take contiguous blocks of clients, as pgbench deals them.
	threadOf := make([]int, o.Clients)
	for t, dealt := 0, 0; t < b.o.Threads; t++ {
		n := (o.Clients - dealt + b.o.Threads - t - 1) / (b.o.Threads - t)
		for k := dealt; k < dealt+n; k++ {
			threadOf[k] = t
		}
		dealt += n
	}
	for i := range clients {
		c := &client{b: b, id: i, thread: threadOf[i]}
		if !o.Connect {
			if err := c.connect(ctx); err != nil {
				fmt.Fprintf(stderr, "pgbench: error: %s\n", pgMessage(err))
				for _, c := range clients[:i] {
					c.close()
				}
				return 1
			}
		}
		clients[i] = c
	}
	connTime := time.Since(connStart)
	start := time.Now()
	var wg sync.WaitGroup
	stopProgress := make(chan struct{})
	if o.Progress > 0 {
		go b.progress(start, stopProgress)
	}
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.run(ctx, start, cancel)
		}()
	}
	wg.Wait()
	close(stopProgress)
	for _, c := range clients {
		c.close()
	}
	elapsed := time.Since(start)
	b.flushAgg()
	b.summary(stdout, elapsed, connTime)
	if b.aborted > 0 {
		fmt.Fprintln(stderr, "pgbench: error: Run was aborted; the above results are incomplete.")
		return 2
	}
	return 0
}

// client is one pgbench client.
type client struct {
	b      *bench
	id     int
	thread int
	conn   *sql.Conn
	w      *worker
	cnt    int64
}

func (c *client) connect(ctx context.Context) error {
	conn, err := c.b.env.DB.Conn(ctx)
	if err == nil {
		err = conn.PingContext(ctx)
	}
	if err != nil {
		if conn != nil {
			conn.Close()
		}
		return err
	}
	w, err := c.b.wl.newWorker(ctx, c.b.env, conn, c.id, int64(c.b.o.Seed)+int64(c.id))
	if err != nil {
		conn.Close()
		return err
	}
	if c.w != nil {
		// -C: the client's variables outlive its connection.
		w.st = c.w.st
	}
	w.undefinedNull = true
	w.prepareFailed = func(err error) { fmt.Fprintf(c.b.stderr, "pgbench: error: %s\n", pgMessage(err)) }
	if d := c.b.o.Debug; d != nil {
		id := c.id
		w.debug = func(s string) { fmt.Fprintf(d, "pgbench: client %d %s\n", id, s) }
	}
	c.conn, c.w = conn, w
	return nil
}

func (c *client) close() {
	if c.w != nil {
		_ = c.w.Close()
	}
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
}

// txStatus is the connection's transaction status ('I' idle, 'T' in a
// transaction, 'E' in a failed one).
func (c *client) txStatus() byte {
	if c.w == nil || c.w.pg == nil {
		return 'I'
	}
	return c.w.pg.TxStatus()
}

func (c *client) rollback(ctx context.Context) {
	if c.txStatus() != 'I' && c.w.pg != nil {
		_ = c.w.pg.Exec(ctx, "ROLLBACK").Close()
	}
}

// run is the client's loop.
func (c *client) run(ctx context.Context, start time.Time, cancel context.CancelFunc) {
	o := &c.b.o
	var rng *rand.Rand
	next := start
	if o.Rate > 0 {
		rng = rand.New(rand.NewPCG(o.Seed, uint64(c.id)+1))
	}
	for o.Transactions == 0 || c.cnt < o.Transactions {
		if ctx.Err() != nil {
			return
		}
		var lag float64
		if o.Rate > 0 {
			// Poisson arrivals at Rate/Clients per second, as pgbench.
			mean := float64(o.Clients) / o.Rate * 1e6
			next = next.Add(time.Duration(-math.Log(1-rng.Float64())*mean) * time.Microsecond)
			if d := time.Until(next); d > 0 {
				if workload.Sleep(ctx, d) != nil {
					return
				}
			}
			lag = float64(time.Since(next).Microseconds())
			if o.LatencyLimit > 0 && time.Since(next) > o.LatencyLimit {
				c.cnt++
				c.b.record(c, 0, txSkipped, 0, lag, 1, false)
				continue
			}
		}
		if o.Connect || c.w == nil {
			if err := c.connect(ctx); err != nil {
				fmt.Fprintf(c.b.stderr, "pgbench: error: client %d aborted while establishing connection: %s\n", c.id, pgMessage(err))
				c.abort(cancel)
				return
			}
		}
		tstart := time.Now()
		if o.Rate > 0 {
			tstart = next
		}
		tries := 0
		var res txResult
		sc := c.w.pick()
		// A transaction retried draws the same random numbers, as pgbench.
		rs := *c.w.st.Rand
		for {
			*c.w.st.Rand = rs
			tries++
			ev := workload.Event{}
			if o.Debug != nil {
				fmt.Fprintf(o.Debug, "pgbench: client %d executing script \"%s\"\n", c.id, sc.s.Name)
			}
			err := c.eventWith(ctx, sc, &ev)
			if err != nil && strings.Contains(err.Error(), endOpen) || err == nil && c.txStatus() != 'I' {
				// pgbench counts the transaction, then aborts the client.
				c.cnt++
				c.b.record(c, scriptIndex(c.b.wl, sc), txOK, float64(time.Since(tstart).Microseconds()), lag, tries, false)
				fmt.Fprintf(c.b.stderr, "pgbench: error: client %d aborted: end of script reached without completing the last transaction\n", c.id)
				c.abort(cancel)
				return
			}
			if err == nil {
				res = txOK
				break
			}
			if ctx.Err() != nil && o.Duration > 0 {
				return // the run's end interrupted the transaction
			}
			code := sqlState(err)
			if code != "40001" && code != "40P01" {
				c.reportAbort(sc, err)
				c.abort(cancel)
				return
			}
			if o.VerboseErrors {
				fmt.Fprintf(c.b.stderr, "pgbench: client %d got an error in command %d (SQL) of script %d; %s\n", c.id, commandIndex(sc, err), scriptIndex(c.b.wl, sc), pgMessage(err))
			}
			c.rollback(ctx)
			res = txSerialization
			if code == "40P01" {
				res = txDeadlock
			}
			if (o.MaxTries == 0 || tries < o.MaxTries) &&
				(o.LatencyLimit == 0 || time.Since(tstart) < o.LatencyLimit) && ctx.Err() == nil {
				if o.VerboseErrors {
					fmt.Fprintf(c.b.stderr, "pgbench: client %d repeats the transaction after the error (try %d", c.id, tries)
					if o.MaxTries > 0 {
						fmt.Fprintf(c.b.stderr, "/%d", o.MaxTries)
					}
					fmt.Fprintln(c.b.stderr, ")")
				}
				continue
			}
			if o.VerboseErrors {
				fmt.Fprintf(c.b.stderr, "pgbench: client %d ends the failed transaction (try %d/%d)\n", c.id, tries, o.MaxTries)
			}
			break
		}
		lat := float64(time.Since(tstart).Microseconds())
		late := o.LatencyLimit > 0 && time.Since(tstart) > o.LatencyLimit
		c.cnt++
		c.b.record(c, scriptIndex(c.b.wl, sc), res, lat, lag, tries, late)
		if o.Connect {
			c.close()
			c.w = &worker{st: c.w.st}
		}
	}
}

// endOpen is the end of pgbench's message for a script that ends inside a
// transaction.
const endOpen = "end of script reached without completing the last transaction"

// reportAbort prints why the client aborts, as pgbench 15 words it: a
// meta-command's failure, its error and then "client N aborted in command
// C (set) of script S; evaluation of meta-command failed"; an SQL
// command's, "client N script S aborted in command C query 0: ERROR: ...".
func (c *client) reportAbort(sc *weighted, err error) {
	script, cmd := scriptIndex(c.b.wl, sc), commandIndex(sc, err)
	var se *pgscript.Error
	if errors.As(err, &se) && cmd < len(sc.s.Cmds) && sc.s.Cmds[cmd].Kind != pgscript.SQL {
		name := "meta"
		if lines := c.b.wl.sources[sc.s.Name]; se.Line >= 1 && se.Line <= len(lines) {
			if f := strings.Fields(strings.TrimSpace(lines[se.Line-1])); len(f) > 0 {
				name = strings.ToLower(strings.TrimPrefix(f[0], "\\"))
			}
		}
		what := "evaluation"
		if name == "shell" || name == "setshell" {
			what = "execution"
		}
		fmt.Fprintf(c.b.stderr, "pgbench: error: %s\n", err.Error())
		fmt.Fprintf(c.b.stderr, "pgbench: error: client %d aborted in command %d (%s) of script %d; %s of meta-command failed\n", c.id, cmd, name, script, what)
		return
	}
	fmt.Fprintf(c.b.stderr, "pgbench: error: client %d script %d aborted in command %d query 0: %s\n", c.id, script, cmd, pgMessage(err))
}

// eventWith runs one event of script sc (chosen by the client before
// its first try, and retried as it was, as pgbench does).
func (c *client) eventWith(ctx context.Context, sc *weighted, ev *workload.Event) error {
	return c.w.eventScript(ctx, sc, ev)
}

func (c *client) abort(cancel context.CancelFunc) {
	c.b.mu.Lock()
	c.b.aborted++
	c.b.mu.Unlock()
	if c.b.o.ExitOnAbort {
		cancel()
	}
}

func scriptIndex(wl *Workload, sc *weighted) int {
	for i := range wl.scripts {
		if &wl.scripts[i] == sc {
			return i
		}
	}
	return 0
}

// commandIndex is the index of the command an error names by its line
// (FILE:LINE), as pgbench numbers commands from 0.
func commandIndex(sc *weighted, err error) int {
	var se *pgscript.Error
	line := 0
	if errors.As(err, &se) {
		line = se.Line
	} else if _, rest, ok := strings.Cut(err.Error(), sc.s.Name+":"); ok {
		n, _, _ := strings.Cut(rest, ":")
		line, _ = strconv.Atoi(n)
	}
	for i, c := range sc.s.Cmds {
		if c.Line == line {
			return i
		}
	}
	return 0
}

// sqlState is the SQLSTATE of a server error in err ("" if none).
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// pgMessage is err as libpq prints a server error (ERROR:  message,
// DETAIL, HINT, CONTEXT lines); other errors as they are.
func pgMessage(err error) string {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		var ce *pgconn.ConnectError
		if errors.As(err, &ce) {
			return "connection to server failed: " + ce.Error()
		}
		return err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s:  %s", pe.Severity, pe.Message)
	if pe.Detail != "" {
		fmt.Fprintf(&b, "\nDETAIL:  %s", pe.Detail)
	}
	if pe.Hint != "" {
		fmt.Fprintf(&b, "\nHINT:  %s", pe.Hint)
	}
	if pe.Where != "" {
		fmt.Fprintf(&b, "\nCONTEXT:  %s", pe.Where)
	}
	return b.String()
}

// PgMessage is pgMessage for the command line.
func PgMessage(err error) string { return pgMessage(err) }

// record counts one transaction and logs it.
func (b *bench) record(c *client, script int, r txResult, lat, lag float64, tries int, late bool) {
	b.mu.Lock()
	b.total.add(r, lat, lag, tries, late)
	b.per[script].add(r, lat, lag, tries, late)
	b.mu.Unlock()
	if b.logs != nil {
		b.logs[c.thread].log(b, c, script, r, lat, lag, tries, late)
	}
}

// progress prints pgbench's -P lines to stderr.
func (b *bench) progress(start time.Time, stop chan struct{}) {
	t := time.NewTicker(time.Duration(b.o.Progress) * time.Second)
	defer t.Stop()
	last := start
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			b.mu.Lock()
			cur := b.total
			b.mu.Unlock()
			d := cur
			p := b.progLast
			d.cnt -= p.cnt
			d.lat -= p.lat
			d.lat2 -= p.lat2
			d.lag -= p.lag
			d.skipped -= p.skipped
			d.serial -= p.serial
			d.deadlock -= p.deadlock
			d.retried -= p.retried
			d.retries -= p.retries
			b.progLast = cur
			secs := now.Sub(last).Seconds()
			last = now
			var avg, std float64
			if d.cnt > 0 {
				avg = d.lat / float64(d.cnt) / 1000
				std = math.Sqrt(max(d.lat2/float64(d.cnt)-(d.lat/float64(d.cnt))*(d.lat/float64(d.cnt)), 0)) / 1000
			}
			at := fmt.Sprintf("%.1f s", now.Sub(start).Seconds())
			if b.o.ProgressTime {
				at = fmt.Sprintf("%d.%03d s", now.UnixMilli()/1000, now.UnixMilli()%1000)
			}
			line := fmt.Sprintf("progress: %s, %.1f tps, lat %.3f ms stddev %.3f, %d failed", at, float64(d.cnt)/secs, avg, std, d.failures())
			if b.o.Rate > 0 {
				lag := 0.0
				if d.cnt > 0 {
					lag = d.lag / float64(d.cnt) / 1000
				}
				line += fmt.Sprintf(", lag %.3f ms", lag)
				if b.o.LatencyLimit > 0 {
					line += fmt.Sprintf(", %d skipped", d.skipped)
				}
			}
			if b.o.MaxTries != 1 {
				line += fmt.Sprintf(", %d retried, %d retries", d.retried, d.retries)
			}
			fmt.Fprintln(b.stderr, line)
		}
	}
}

// summary prints pgbench's result lines.
func (b *bench) summary(out io.Writer, elapsed, connTime time.Duration) {
	o := &b.o
	wl := b.wl
	fmt.Fprintln(out, o.Version)
	if len(wl.scripts) == 1 {
		fmt.Fprintf(out, "transaction type: %s\n", scriptDesc(wl.scripts[0].s.Name))
	} else {
		fmt.Fprintln(out, "transaction type: multiple scripts")
	}
	fmt.Fprintf(out, "scaling factor: %d\n", o.Scale)
	fmt.Fprintf(out, "query mode: %s\n", o.Mode)
	fmt.Fprintf(out, "number of clients: %d\n", o.Clients)
	fmt.Fprintf(out, "number of threads: %d\n", b.o.Threads)
	if o.MaxTries > 0 {
		fmt.Fprintf(out, "maximum number of tries: %d\n", o.MaxTries)
	}
	if o.Duration > 0 {
		fmt.Fprintf(out, "duration: %d s\n", int(o.Duration.Seconds()))
	} else {
		fmt.Fprintf(out, "number of transactions per client: %d\n", o.Transactions)
	}
	t := &b.total
	done := t.cnt + t.failures()
	if o.Duration > 0 {
		fmt.Fprintf(out, "number of transactions actually processed: %d\n", t.cnt)
	} else {
		fmt.Fprintf(out, "number of transactions actually processed: %d/%d\n", t.cnt, o.Transactions*int64(o.Clients))
	}
	pct := func(n, of int64) float64 {
		if of == 0 {
			return math.NaN()
		}
		return 100 * float64(n) / float64(of)
	}
	fmt.Fprintf(out, "number of failed transactions: %d (%.3f%%)\n", t.failures(), pct(t.failures(), done))
	if o.FailuresDetailed {
		fmt.Fprintf(out, "number of serialization failures: %d (%.3f%%)\n", t.serial, pct(t.serial, done))
		fmt.Fprintf(out, "number of deadlock failures: %d (%.3f%%)\n", t.deadlock, pct(t.deadlock, done))
	}
	if o.MaxTries != 1 {
		fmt.Fprintf(out, "number of transactions retried: %d (%.3f%%)\n", t.retried, pct(t.retried, done))
		fmt.Fprintf(out, "total number of retries: %d\n", t.retries)
	}
	if o.Rate > 0 && o.LatencyLimit > 0 {
		fmt.Fprintf(out, "number of transactions skipped: %d (%.3f%%)\n", t.skipped, pct(t.skipped, t.cnt+t.skipped))
	}
	if o.LatencyLimit > 0 {
		fmt.Fprintf(out, "number of transactions above the %.1f ms latency limit: %d/%d (%.3f%%)\n",
			float64(o.LatencyLimit.Microseconds())/1000, t.late, t.cnt, pct(t.late, t.cnt))
	}
	if t.cnt > 0 {
		if o.Rate > 0 || o.Progress > 0 || o.LatencyLimit > 0 {
			avg := t.lat / float64(t.cnt)
			fmt.Fprintf(out, "latency average = %.3f ms\n", avg/1000)
			fmt.Fprintf(out, "latency stddev = %.3f ms\n", math.Sqrt(max(t.lat2/float64(t.cnt)-avg*avg, 0))/1000)
		} else {
			fmt.Fprintf(out, "latency average = %.3f ms\n", float64(o.Clients)*elapsed.Seconds()*1000/float64(done))
		}
		if o.Rate > 0 {
			fmt.Fprintf(out, "rate limit schedule lag: avg %.3f (max %.3f) ms\n", t.lag/float64(t.cnt)/1000, t.lagMax/1000)
		}
	}
	fmt.Fprintf(out, "initial connection time = %.3f ms\n", float64(connTime.Microseconds())/1000)
	fmt.Fprintf(out, "tps = %f (without initial connection time)\n", float64(t.cnt)/elapsed.Seconds())
	if len(wl.scripts) > 1 {
		for i, sc := range wl.scripts {
			s := &b.per[i]
			fmt.Fprintf(out, "SQL script %d: %s\n", i+1, scriptDesc(sc.s.Name))
			fmt.Fprintf(out, " - weight: %d (targets %.1f%% of total)\n", sc.weight, 100*float64(sc.weight)/float64(wl.totalW))
			fmt.Fprintf(out, " - %d transactions (%.1f%% of total, tps = %f)\n", s.cnt, pct(s.cnt, t.cnt), float64(s.cnt)/elapsed.Seconds())
			fmt.Fprintf(out, " - number of failed transactions: %d (%.3f%%)\n", s.failures(), pct(s.failures(), s.cnt+s.failures()))
			if s.cnt > 0 {
				avg := s.lat / float64(s.cnt)
				fmt.Fprintf(out, " - latency average = %.3f ms\n", avg/1000)
				fmt.Fprintf(out, " - latency stddev = %.3f ms\n", math.Sqrt(max(s.lat2/float64(s.cnt)-avg*avg, 0))/1000)
			}
			if o.PerCommand {
				b.commandLatencies(out, i)
			}
		}
	} else if o.PerCommand {
		b.commandLatencies(out, 0)
	}
}

// commandLatencies prints -r's table for script i: the mean latency of
// each SQL command and its failures (meta-commands are not timed: 0.000).
func (b *bench) commandLatencies(out io.Writer, i int) {
	if len(b.wl.scripts) == 1 {
		fmt.Fprintln(out, "statement latencies in milliseconds and failures:")
	} else {
		fmt.Fprintln(out, " - statement latencies in milliseconds and failures:")
	}
	sc := b.wl.scripts[i]
	snap := b.wl.stats.snapshot()
	for k, c := range sc.s.Cmds {
		mean, fails := 0.0, int64(0)
		if st, ok := snap[sc.base+k]; ok {
			mean, fails = st.meanMS, st.errors
		}
		text := c.Text
		if lines := b.wl.sources[sc.s.Name]; c.Kind != pgscript.SQL && c.Line >= 1 && c.Line <= len(lines) {
			text = strings.TrimSpace(lines[c.Line-1])
		}
		fmt.Fprintf(out, "   %11.3f  %10d  %s\n", mean, fails, strings.ReplaceAll(text, "\n", " "))
	}
}

// scriptDesc is pgbench's name for a script: <builtin: ...> or its file.
func scriptDesc(name string) string {
	if d, ok := BuiltinDesc[name]; ok {
		return d
	}
	return name
}

// txLog is one thread's -l log file (and its aggregate interval).
type txLog struct {
	mu    sync.Mutex
	f     *os.File
	rng   *rand.Rand
	agg   scriptStats
	aggAt int64 // start of the current interval, Unix seconds (0 = none yet)
}

func (b *bench) openLogs() error {
	prefix := b.o.LogPrefix
	if prefix == "" {
		prefix = "pgbench_log"
	}
	pid := os.Getpid()
	for t := 0; t < max(b.o.Threads, 1); t++ {
		name := fmt.Sprintf("%s.%d", prefix, pid)
		if t > 0 {
			name = fmt.Sprintf("%s.%d.%d", prefix, pid, t)
		}
		f, err := os.Create(name)
		if err != nil {
			return fmt.Errorf("could not open logfile \"%s\": %w", name, err)
		}
		b.logs = append(b.logs, &txLog{f: f, rng: rand.New(rand.NewPCG(b.o.Seed, uint64(t)+7))})
	}
	return nil
}

func (b *bench) closeLogs() {
	for _, l := range b.logs {
		_ = l.f.Close()
	}
}

// log writes one transaction in pgbench's per-transaction format
//
//	client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]
//
// or adds it to the aggregate interval (--aggregate-interval).
func (l *txLog) log(b *bench, c *client, script int, r txResult, lat, lag float64, tries int, late bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	o := &b.o
	if o.AggInterval > 0 {
		sec := now.Unix()
		if l.aggAt == 0 {
			l.aggAt = sec
		}
		for sec >= l.aggAt+int64(o.AggInterval) {
			l.writeAgg(o)
			l.agg = scriptStats{}
			l.aggAt += int64(o.AggInterval)
		}
		l.agg.add(r, lat, lag, tries, late)
		return
	}
	if o.SamplingRate > 0 && l.rng.Float64() >= o.SamplingRate {
		return
	}
	var time string
	switch r {
	case txOK:
		time = strconv.FormatFloat(lat, 'f', 0, 64)
	case txSkipped:
		time = "skipped"
	case txSerialization:
		time = "failed"
		if o.FailuresDetailed {
			time = "serialization"
		}
	case txDeadlock:
		time = "failed"
		if o.FailuresDetailed {
			time = "deadlock"
		}
	}
	us := now.UnixMicro()
	line := fmt.Sprintf("%d %d %s %d %d %d", c.id, c.cnt, time, script, us/1000000, us%1000000)
	if o.Rate > 0 {
		line += " " + strconv.FormatFloat(lag, 'f', 0, 64)
	}
	if o.MaxTries != 1 {
		line += " " + strconv.Itoa(tries-1)
	}
	fmt.Fprintln(l.f, line)
}

// writeAgg writes the current interval in pgbench's aggregate format
//
//	interval_start num_transactions sum_latency sum_latency_2 min_latency max_latency
//	{ failures | serialization_failures deadlock_failures }
//	[ sum_lag sum_lag_2 min_lag max_lag [ skipped ] ] [ retried retries ]
func (l *txLog) writeAgg(o *BenchOptions) {
	a := &l.agg
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 0, 64) }
	line := fmt.Sprintf("%d %d %s %s %s %s", l.aggAt, a.cnt, f(a.lat), f(a.lat2), f(a.latMin), f(a.latMax))
	if o.FailuresDetailed {
		line += fmt.Sprintf(" %d %d", a.serial, a.deadlock)
	} else {
		line += fmt.Sprintf(" %d", a.failures())
	}
	if o.Rate > 0 {
		line += fmt.Sprintf(" %s %s %s %s", f(a.lag), f(a.lag2), f(a.lagMin), f(a.lagMax))
		if o.LatencyLimit > 0 {
			line += fmt.Sprintf(" %d", a.skipped)
		}
	}
	if o.MaxTries != 1 {
		line += fmt.Sprintf(" %d %d", a.retried, a.retries)
	}
	fmt.Fprintln(l.f, line)
}

// flushAgg writes every thread's last, partial, aggregate interval, as
// pgbench does at the end of the run.
func (b *bench) flushAgg() {
	if b.o.AggInterval == 0 {
		return
	}
	for _, l := range b.logs {
		l.mu.Lock()
		if l.aggAt != 0 {
			l.writeAgg(&b.o)
		}
		l.mu.Unlock()
	}
}

// BenchScripts lists the scripts a run picks from, with their weights, as
// pgbench's --show-script and summary name them.
func (wl *Workload) BenchScripts() (names []string, weights []int) {
	for _, s := range wl.scripts {
		names = append(names, s.s.Name)
		weights = append(weights, s.weight)
	}
	return names, weights
}

// cmdStat is one SQL command's mean latency and failures.
type cmdStat struct {
	meanMS float64
	errors int64
}

// snapshot returns every SQL command's figures so far, by command index.
func (s *statsSet) snapshot() map[int]cmdStat {
	s.mu.Lock()
	for _, w := range s.workers {
		w.mu.Lock()
		s.flush(w)
		w.mu.Unlock()
	}
	out := map[int]cmdStat{}
	s.hmu.Lock()
	for i, h := range s.lat {
		if h != nil {
			out[i] = cmdStat{meanMS: float64(h.Mean().Microseconds()) / 1000}
		}
	}
	s.hmu.Unlock()
	for _, w := range s.workers {
		w.mu.Lock()
		for k, n := range w.errors {
			st := out[k.i]
			st.errors += n
			out[k.i] = st
		}
		w.mu.Unlock()
	}
	s.mu.Unlock()
	return out
}

// BenchConfig configures the workload for `dbarena pgbench`.
type BenchConfig struct {
	Files    []string // FILE@WEIGHT
	Builtins []string // NAME@WEIGHT, full names
	// Order says, per script of the command line, whether it is a
	// built-in (the next of Builtins) or a file (the next of Files).
	Order    []bool
	Protocol string
	Defines  []string
	Scale    int
	Seed     uint64 // --random-seed (time and rand resolved to a number)
	Clients  int
	// ShellOutput receives \shell's output, as pgbench's stdout does
	// (nil: standard error).
	ShellOutput io.Writer
}

// NewBench returns the workload of a pgbench command line, validated (a
// script that does not parse is an error here, before any connection).
func NewBench(c BenchConfig) (*Workload, []error) {
	wl := New().(*Workload)
	wl.shellOut = c.ShellOutput
	// Set through the workload's own flags, as `run script` is.
	fs := pflag.NewFlagSet("pgbench", pflag.ContinueOnError)
	wl.Flags(fs)
	set := func(name, val string) error {
		if err := fs.Set(name, val); err != nil {
			return fmt.Errorf("--%s %s: %w", name, val, err)
		}
		return nil
	}
	errs := []error{set("client", ClientSQL), set("protocol", c.Protocol),
		set("scale", strconv.Itoa(max(c.Scale, 1))), set("random-seed", strconv.FormatUint(c.Seed, 10))}
	for _, f := range c.Files {
		errs = append(errs, set("file", f))
	}
	for _, b := range c.Builtins {
		errs = append(errs, set("builtin", b))
	}
	for _, d := range c.Defines {
		errs = append(errs, set("define", d))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, []error{err}
	}
	errs = nil
	// Each pgbench client is one of the run's threads (its random streams).
	if ts, ok := any(wl).(workload.ThreadSetter); ok {
		ts.SetThreads(max(c.Clients, 1))
	}
	for _, err := range wl.Validate() {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	for _, s := range wl.scripts {
		if len(s.s.Cmds) == 0 {
			errs = append(errs, fmt.Errorf("empty command list for script \"%s\"", s.s.Name))
		}
		for _, c := range s.s.Cmds {
			if n := countParams(c); n > maxParams && wl.protocol != Simple {
				errs = append(errs, &pgscript.Error{File: s.s.Name, Line: c.Line,
					Msg: fmt.Sprintf("statement has too many arguments (maximum is %d): %s", maxParams, c.Text)})
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	// The scripts' lines, for -r's table of meta-commands.
	wl.sources = map[string][]string{}
	for _, f := range c.Builtins {
		name, _, _ := strings.Cut(f, "@")
		wl.sources[name] = strings.Split(builtinScripts[name], "\n")
	}
	for _, f := range c.Files {
		name := f[:max(strings.LastIndexByte(f, '@'), 0)]
		if !strings.Contains(f, "@") {
			name = f
		}
		if b, err := os.ReadFile(name); err == nil {
			wl.sources[name] = strings.Split(string(b), "\n")
		}
	}
	// Validate puts the built-ins first; pgbench keeps the command line's
	// order (script numbers in the summary and the logs).
	nb := len(c.Builtins)
	var ordered []weighted
	bi, fi := 0, nb
	for _, isBuiltin := range c.Order {
		if isBuiltin {
			ordered = append(ordered, wl.scripts[bi])
			bi++
		} else {
			ordered = append(ordered, wl.scripts[fi])
			fi++
		}
	}
	if len(ordered) == len(wl.scripts) {
		wl.scripts = ordered
	}
	return wl, nil
}

// SetScale sets :scale, as pgbench reads it from pgbench_branches.
func (wl *Workload) SetScale(n int) { wl.scale = n }

// maxParams is the most :variables a statement may have with --protocol
// extended or prepared, as pgbench's MAX_ARGS - 1.
const maxParams = 255

// countParams is the number of :variables of an SQL command, each
// occurrence a parameter as pgbench counts them.
func countParams(c pgscript.Cmd) int {
	n := 0
	for _, p := range c.Parts {
		if p.Var != "" {
			n++
		}
	}
	return n
}
