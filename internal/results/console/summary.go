// Package console renders runs for a terminal: the interval lines and
// the end-of-run summary in sysbench's layout, the monitor's section, a
// sharded run's shards, load progress and a dump load's tables. Each
// function writes to the io.Writer it is given; what is printed, where
// and when is the caller's (package cli).
package console

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// Interval renders one report line in sysbench's shape. Warm-up
// lines are labelled with the time since the run began (warmup is the
// warm-up's length); measured ones with the time since measuring began.
func Interval(iv runner.Interval, warmup time.Duration) string {
	secs := (iv.End - iv.Start).Seconds()
	if secs <= 0 {
		secs = 1
	}
	per := func(n int64) float64 { return float64(n) / secs }
	label := fmt.Sprintf("%ds", int((iv.End + time.Millisecond/2).Seconds()))
	if iv.Warmup {
		label = fmt.Sprintf("%ds warmup", int((warmup + iv.End + time.Millisecond/2).Seconds()))
	}
	line := fmt.Sprintf("[ %s ] thds: %d tps: %.2f qps: %.2f (r/w/o: %.2f/%.2f/%.2f) lat (ms,95%%): %.2f err/s: %.2f reconn/s: %.2f",
		label, iv.Threads, per(iv.Events), per(iv.Queries.Total()),
		per(iv.Queries.Read), per(iv.Queries.Write), per(iv.Queries.Other),
		ms(iv.P95), per(iv.Errors), per(iv.Reconnects))
	if iv.Connects > 0 || iv.ConnectErrors > 0 {
		line += fmt.Sprintf(" conn/s: %.2f refused/s: %.2f", per(iv.Connects), per(iv.ConnectErrors))
	}
	if iv.Late > 0 || iv.Dropped > 0 {
		line += fmt.Sprintf(" late: %d dropped: %d", iv.Late, iv.Dropped)
	}
	return line
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Summary prints the final statistics of r in sysbench's layout, its
// monitor section and, when it did not complete, its status.
func Summary(w io.Writer, r *summary.Run) {
	t := r.Totals
	per := func(n int64) float64 {
		if r.DurationS <= 0 {
			return 0
		}
		return float64(n) / r.DurationS
	}
	fmt.Fprintln(w, "\nSQL statistics:")
	fmt.Fprintln(w, "    queries performed:")
	fmt.Fprintf(w, "        %-33s%d\n", "read:", t.Queries.Read)
	fmt.Fprintf(w, "        %-33s%d\n", "write:", t.Queries.Write)
	fmt.Fprintf(w, "        %-33s%d\n", "other:", t.Queries.Other)
	fmt.Fprintf(w, "        %-33s%d\n", "total:", t.Queries.Total)
	fmt.Fprintf(w, "    %-37s%-8d (%.2f per sec.)\n", "transactions:", t.Events, r.Throughput.TPS)
	fmt.Fprintf(w, "    %-37s%-8d (%.2f per sec.)\n", "queries:", t.Queries.Total, r.Throughput.QPS)
	fmt.Fprintf(w, "    %-37s%-8d (%.2f per sec.)\n", "errors:", t.Errors, per(t.Errors))
	fmt.Fprintf(w, "    %-37s%-8d (%.2f per sec.)\n", "retries:", t.Retries, per(t.Retries))
	fmt.Fprintf(w, "    %-37s%-8d (%.2f per sec.)\n", "reconnects:", t.Reconnects, per(t.Reconnects))
	if r.Rate > 0 {
		fmt.Fprintf(w, "    %-37s%d\n", "late events:", t.Late)
		fmt.Fprintf(w, "    %-37s%d\n", "dropped events (queue full):", t.Dropped)
	}
	if len(t.ErrorsByCode) > 0 {
		codes := make([]string, 0, len(t.ErrorsByCode))
		for c := range t.ErrorsByCode {
			codes = append(codes, c)
		}
		sort.Strings(codes)
		var parts []string
		for _, c := range codes {
			parts = append(parts, fmt.Sprintf("%s=%d", c, t.ErrorsByCode[c]))
		}
		fmt.Fprintf(w, "    %-37s%s\n", "errors by code:", strings.Join(parts, " "))
	}
	fmt.Fprintln(w, "\nGeneral statistics:")
	fmt.Fprintf(w, "    %-37s%.4fs\n", "total time:", r.DurationS)
	fmt.Fprintf(w, "    %-37s%d\n", "total number of events:", t.Events)
	if r.WarmupS > 0 {
		fmt.Fprintf(w, "    %-37s%.1fs (excluded)\n", "warm-up:", r.WarmupS)
	}
	l := r.LatencyMS
	fmt.Fprintln(w, "\nLatency (ms):")
	for _, row := range []struct {
		name string
		v    float64
	}{{"min", l.Min}, {"avg", l.Avg}, {"p50", l.P50}, {"p90", l.P90}, {"p95", l.P95},
		{"p99", l.P99}, {"p99.9", l.P999}, {"max", l.Max}} {
		fmt.Fprintf(w, "    %10s: %12.2f\n", row.name, row.v)
	}
	if len(r.PerType) > 0 {
		fmt.Fprintln(w, "\nPer transaction type:")
		names := make([]string, 0, len(r.PerType))
		for n := range r.PerType {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			pt := r.PerType[n]
			fmt.Fprintf(w, "    %-14s count %-8d errors %-6d p90 %.2f ms  max %.2f ms\n",
				n, pt.Count, pt.Errors, pt.LatencyMS.P90, pt.LatencyMS.Max)
		}
	}
	if c := r.ConnectMS; c != nil || r.Totals.ConnectErrors > 0 {
		fmt.Fprintf(w, "\nConnections (--connect): %d made, %d refused", r.Totals.Connects, r.Totals.ConnectErrors)
		if c != nil {
			fmt.Fprintf(w, "; connect ms avg %.2f p95 %.2f max %.2f", c.Avg, c.P95, c.Max)
		}
		fmt.Fprintln(w)
	}
	if q, ok := r.ServerCounters["queries"]; ok {
		fmt.Fprintf(w, "\nServer counters: %d statements (Questions), %d commits\n", q, r.ServerCounters["commits"])
	} else if c, ok := r.ServerCounters["commits"]; ok {
		fmt.Fprintf(w, "\nServer counters: %d commits, %d rollbacks\n", c, r.ServerCounters["rollbacks"])
	}
	Monitor(w, r)
	Bottleneck(w, r.Bottleneck)
	if r.Status != summary.StatusComplete {
		fmt.Fprintf(w, "\nRun %s", r.Status)
		if r.Error != "" {
			fmt.Fprintf(w, ": %s", r.Error)
		}
		fmt.Fprintln(w)
	}
}

// Progress prints a prepare's progress once a second: rows, rate, MB and
// ETA; it is a workload.Progress.
type Progress struct {
	w             io.Writer
	total         atomic.Int64
	rows, bytes   atomic.Int64
	began         time.Time
	done          chan struct{}
	wg            sync.WaitGroup
	lastRows      int64
	lastPrintedAt time.Time
	// Suffix, if not nil, is called on the printing goroutine once per
	// progress line, with the time since the load began, and its result
	// appended to the line (the monitor's host figure).
	Suffix func(elapsed time.Duration) string
}

// NewProgress returns a Progress printing to w.
func NewProgress(w io.Writer) *Progress { return &Progress{w: w, done: make(chan struct{})} }

// SetTotal implements workload.Progress.
func (p *Progress) SetTotal(rows int64) { p.total.Store(rows) }

// Add implements workload.Progress.
func (p *Progress) Add(rows, bytes int64) {
	p.rows.Add(rows)
	p.bytes.Add(bytes)
}

// Start starts printing a line a second.
func (p *Progress) Start() {
	p.began = time.Now()
	p.lastPrintedAt = p.began
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-tick.C:
				p.print(false)
			}
		}
	}()
}

// Stop stops the lines and prints the final one.
func (p *Progress) Stop() {
	close(p.done)
	p.wg.Wait()
	p.print(true)
}

func (p *Progress) print(final bool) {
	now := time.Now()
	rows, total, mb := p.rows.Load(), p.total.Load(), float64(p.bytes.Load())/1e6
	elapsed := now.Sub(p.began).Seconds()
	if final {
		rate := 0.0
		if elapsed > 0 {
			rate = float64(rows) / elapsed
		}
		fmt.Fprintf(p.w, "Loaded %d rows (%.1f MB) in %.1fs: %.0f rows/s\n", rows, mb, elapsed, rate)
		return
	}
	rate := float64(rows-p.lastRows) / now.Sub(p.lastPrintedAt).Seconds()
	p.lastRows, p.lastPrintedAt = rows, now
	line := fmt.Sprintf("[ %.0fs ] rows: %d", elapsed, rows)
	if total > 0 {
		line += fmt.Sprintf("/%d (%.1f%%)", total, 100*float64(rows)/float64(total))
	}
	line += fmt.Sprintf(" %.0f rows/s %.1f MB", rate, mb)
	if total > 0 && rows > 0 {
		avg := float64(rows) / elapsed
		eta := time.Duration(float64(total-rows) / avg * float64(time.Second)).Round(time.Second)
		line += fmt.Sprintf(" ETA %s", eta)
	}
	if p.Suffix != nil {
		line += p.Suffix(now.Sub(p.began))
	}
	fmt.Fprintln(p.w, line)
}
