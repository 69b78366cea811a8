// Package reporttest builds fixture results stores for report tests: fully
// populated runs of several servers across thread counts and rounds, with
// monitor samples, a TPC-C run, a replay run and an interrupted run, as the
// lab, observability and TPC-C issues will store them.
//
// Fixture runs carry no summary.Run.Sections, as runs stored before runs
// named their report sections: reports give them the sections their
// workload names implied (summary.Run.ReportSections).
package reporttest

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/measure/monitor"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// Plan is the fixture plan's name.
const Plan = "sweep"

// Password is planted in the fixture's DSNs and commands; no report may
// show it.
const Password = "fixtureSecret42"

// Servers are the fixture plan's server axis. "mysql-8.0" equals the
// baseline within noise; "postgres-16" is 30% faster.
var Servers = []struct{ Name, Flavor, Version string }{
	{"mariadb-10.11", "mariadb", "10.11.6-MariaDB"},
	{"mysql-8.0", "mysql", "8.0.36"},
	{"postgres-16", "postgres", "16.2"},
}

// Threads are the fixture plan's thread axis.
var Threads = []int{1, 2, 4, 8, 16, 32, 64}

// Workloads are the fixture plan's workload axis.
var Workloads = []string{"oltp_read_write", "oltp_point_select"}

// Rounds is the number of rounds of each plan cell.
const Rounds = 3

// Options shape the fixture.
type Options struct {
	// Servers, Threads and Workloads limit the plan's axes (nil = all).
	Servers   int
	Threads   []int
	Workloads []string
	// Intervals per run (default 12).
	Intervals int
}

var start = time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)

// PlanRuns returns the fixture plan's runs.
func PlanRuns(o Options) []*summary.Run {
	if o.Servers == 0 {
		o.Servers = len(Servers)
	}
	if o.Threads == nil {
		o.Threads = Threads
	}
	if o.Workloads == nil {
		o.Workloads = Workloads
	}
	if o.Intervals == 0 {
		o.Intervals = 12
	}
	// Round noise: symmetric so that mysql's mean equals mariadb's.
	noise := [][Rounds]float64{{1, 1.03, 0.97}, {1.01, 0.99, 1.0}, {0.98, 1.02, 1.0}}
	var out []*summary.Run
	n := 0
	for wi, w := range o.Workloads {
		for si, s := range Servers[:o.Servers] {
			for _, th := range o.Threads {
				for round := 1; round <= Rounds; round++ {
					base := 400 * (1 + float64(wi)*4) * math.Sqrt(float64(th)) // scales sub-linearly
					if s.Flavor == "postgres" {
						base *= 1.3
					}
					tps := base * noise[si][round-1]
					cell := fmt.Sprintf("server=%s,threads=%d,workload=%s", s.Name, th, w)
					r := Run(n, w, s.Flavor, s.Version, th, tps, o.Intervals)
					r.Plan = &summary.PlanRef{Name: Plan, Cell: cell, Round: round,
						Coords: map[string]string{"server": s.Name, "threads": strconv.Itoa(th), "workload": w}}
					r.Tags = map[string]string{"plan": Plan}
					out = append(out, r)
					n++
				}
			}
		}
	}
	return out
}

// Run returns one fully populated sysbench-style run.
func Run(i int, workload, flavor, version string, threads int, tps float64, intervals int) *summary.Run {
	st := start.Add(time.Duration(i) * 2 * time.Minute)
	lat := 1000 * float64(threads) / tps
	port := 3306
	scheme := "mysql"
	settings := map[string]string{"innodb_buffer_pool_size": "1073741824", "sync_binlog": "1", "innodb_flush_log_at_trx_commit": "1"}
	if flavor == "postgres" {
		port, scheme = 5432, "postgres"
		settings = map[string]string{"shared_buffers": "1GB", "synchronous_commit": "on", "fsync": "on"}
	}
	if flavor == "mysql" {
		settings["innodb_flush_log_at_trx_commit"] = "2"
	}
	r := &summary.Run{
		Schema:    summary.Schema,
		Status:    summary.StatusComplete,
		StartedAt: st,
		EndedAt:   st.Add(time.Duration(intervals+5) * time.Second),
		Workload:  workload,
		Target: summary.Target{Flavor: flavor, Version: version,
			DSN:     fmt.Sprintf("%s://dbarena:%s@127.0.0.1:%d/sbtest", scheme, Password, port),
			Sandbox: flavor},
		Params:    map[string]any{"tables": 4, "table_size": 10000, "rand_type": "uniform"},
		Threads:   threads,
		DurationS: float64(intervals),
		WarmupS:   5,
		Totals: summary.Totals{Events: int64(tps * float64(intervals)),
			Queries: summary.Queries{Read: int64(tps * 14 * float64(intervals)), Write: int64(tps * 4 * float64(intervals)),
				Other: int64(tps * 2 * float64(intervals)), Total: int64(tps * 20 * float64(intervals))},
			Errors: int64(i % 3), Retries: int64(i % 2)},
		Throughput: summary.Throughput{TPS: tps, QPS: tps * 20},
		LatencyMS: summary.Latency{Min: lat / 4, Avg: lat, P50: lat * 0.9, P90: lat * 1.6, P95: lat * 2,
			P99: lat * 3.1, P999: lat * 5, Max: lat * 9},
		Settings: settings,
		Host: summary.Host{Hostname: "bench-01", CPUModel: "AMD EPYC 7B13", Cores: 2, MemoryMB: 7940,
			Kernel: "6.1.0-21-amd64", OS: "Debian GNU/Linux 12 (bookworm)"},
		Dbarena: summary.Dbarena{Version: "v0.3.0", Command: []string{"dbarena", "run", workload,
			"--target", fmt.Sprintf("%s://dbarena:%s@127.0.0.1:%d/sbtest", scheme, Password, port), "--password", Password}},
		Monitor: &summary.Monitor{Avg: map[string]float64{}, Max: map[string]float64{},
			PerTxn: map[string]float64{"server_cpu_us": 180 + float64(threads), "client_cpu_us": 20 + float64(i%3),
				"fsyncs": 0.9 + 0.01*float64(i%3), "disk_write_kb": 4}},
	}
	for k := 1; k <= intervals; k++ {
		wob := 1 + 0.05*math.Sin(float64(k+i))
		r.Intervals = append(r.Intervals, summary.Interval{TS: float64(k), Threads: threads, TPS: tps * wob,
			QPS: tps * 20 * wob, P95MS: lat * 2 / wob})
		v := map[string]float64{
			"host.cpu.user":    math.Min(95, 8*math.Sqrt(float64(threads))*wob),
			"host.cpu.system":  3 * wob,
			"host.cpu.iowait":  2 + math.Abs(math.Cos(float64(k))),
			"host.load1":       math.Min(float64(threads), 0.3*float64(k)),
			"host.mem.used_mb": 2100 + 10*float64(k),
			"disk.vda.util":    20 + 30*math.Abs(math.Sin(float64(k)/3)),
			"server.cpu":       30 * math.Sqrt(float64(threads)) * wob,
		}
		waits(v, flavor, threads, wob)
		r.Monitor.Samples = append(r.Monitor.Samples, summary.Sample{TS: float64(k), Values: v})
		for key, x := range v {
			r.Monitor.Avg[key] += x / float64(intervals)
			r.Monitor.Max[key] = math.Max(r.Monitor.Max[key], x)
		}
	}
	r.Bottleneck = monitor.Verdict(r)
	return r
}

// waits adds a sample's wait profile: PostgreSQL's shares of backend time
// (lock waits growing with the threads), the MySQL family's row-lock waits.
func waits(v map[string]float64, flavor string, threads int, wob float64) {
	if flavor != "postgres" {
		v["wait.row_lock_ms"] = 2 * float64(threads) * wob
		v["wait.row_lock_sessions"] = 0.002 * float64(threads)
		return
	}
	lock := math.Min(40, 2*float64(threads)) * wob
	cpu, io := 30.0, 8.0
	v["wait.ticks"], v["wait.sessions"] = 10, float64(threads)
	v["wait.cpu"], v["wait.io"], v["wait.lock"], v["wait.lwlock"] = cpu, io, lock, 2
	v["wait.client"] = 100 - cpu - io - lock - 2
	v["wait.event.Lock:transactionid"] = lock
	v["wait.event.IO:WALSync"] = io
}

// TPCCRun returns a TPC-C run with its five transactions, checks (one
// failed) and TpmC.
func TPCCRun() *summary.Run {
	r := Run(900, "tpcc", "mariadb", "10.11.6-MariaDB", 16, 210, 12)
	r.Params = map[string]any{"warehouses": 10, "schema": "standard", "fk": true}
	tpmc := 5670.5
	r.TpmC = &tpmc
	lat := func(p90, mx float64) summary.Latency {
		return summary.Latency{Avg: p90 / 2, P50: p90 / 2.2, P90: p90, P95: p90 * 1.2, P99: p90 * 1.8, Max: mx}
	}
	r.PerType = map[string]summary.Type{
		"new_order":    {Count: 1134, Errors: 3, Retries: 3, LatencyMS: lat(42, 210)},
		"payment":      {Count: 1090, LatencyMS: lat(12, 90)},
		"order_status": {Count: 101, LatencyMS: lat(4, 20)},
		"delivery":     {Count: 100, LatencyMS: lat(88, 400)},
		"stock_level":  {Count: 102, LatencyMS: lat(30, 120)},
	}
	r.Checks = []summary.Check{
		{Name: "new_order mix >= 45%", OK: false, Value: 44.9, Limit: 45},
		{Name: "payment mix >= 43%", OK: true, Value: 43.1, Limit: 43},
		{Name: "new_order 90% <= 5000 ms", OK: true, Value: 42, Limit: 5000},
	}
	return r
}

// ReplayRun returns an HTTP replay run (siege-style figures).
func ReplayRun() *summary.Run {
	r := Run(901, "replay_urls", "mariadb", "10.11.6-MariaDB", 20, 4.48, 12)
	r.DurationS = 223.35
	r.LatencyMS.Avg = 4380
	r.Totals.Events, r.Totals.Errors = 1000, 0
	r.Params = map[string]any{"file": "urls.txt", "reps": 50}
	return r
}

// InterruptedRun returns a run stopped with Ctrl-C.
func InterruptedRun() *summary.Run {
	r := Run(902, "oltp_read_write", "mariadb", "10.11.6-MariaDB", 8, 900, 3)
	r.Status = summary.StatusInterrupted
	return r
}

// AllRuns is the full fixture: the plan, a TPC-C run, a replay run and an
// interrupted run.
func AllRuns() []*summary.Run {
	runs := append(PlanRuns(Options{}), TPCCRun(), ReplayRun(), InterruptedRun())
	for i, r := range runs {
		r.ID = int64(i + 1)
	}
	return runs
}

// Store saves runs in a new results store under dir and returns its path
// and the ids in order.
func Store(tb testing.TB, dir string, runs []*summary.Run) (string, []int64) {
	tb.Helper()
	path := filepath.Join(dir, "results.db")
	st, err := store.Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	ids := make([]int64, len(runs))
	for i, r := range runs {
		if ids[i], err = st.SaveRun(context.Background(), r); err != nil {
			tb.Fatal(err)
		}
	}
	return path, ids
}
