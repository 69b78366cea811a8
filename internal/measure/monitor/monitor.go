// Package monitor samples the context of a run beside its throughput: the
// host's CPU, load, memory, block devices and network (Linux /proc), the
// server process's CPU and memory, the server's own counters, and dbarena's
// own CPU and memory. Figures are named by dotted keys (see docs/CLI.md,
// "Monitor keys"); counters become per-second rates over each interval.
//
// A Monitor is driven by its caller: Begin sets the baseline, each Sample
// call closes an interval. The run command calls Sample from the runner's
// interval callback, so samples line up with the throughput intervals.
package monitor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// Sampler reads one source of figures.
//
// Sample reads the source at now and adds its figures to out: gauges as
// read, counters as per-second rates since the previous call. The first
// call records the counters' baseline and adds gauges only. A Sampler is
// used by one goroutine at a time.
type Sampler interface {
	// Name names the source in notes ("host.cpu", "disk", "server").
	Name() string
	// Sample adds the figures of the interval ending at now to out.
	Sample(ctx context.Context, now time.Time, out map[string]float64) error
}

// DefaultTimeout bounds one round of sampling: a stalled server delays the
// interval report by at most this much, and that interval then lacks the
// server's counters.
const DefaultTimeout = 500 * time.Millisecond

// Monitor runs a set of samplers and keeps the samples of the measured
// period. It is not safe for concurrent use: one goroutine (the runner's
// interval callback) drives it.
type Monitor struct {
	samplers []Sampler
	// Timeout bounds each round of sampling (DefaultTimeout unless set).
	Timeout time.Duration
	samples []summary.Sample
	notes   []string
	failed  map[string]bool
}

// New returns a Monitor over the samplers.
func New(samplers ...Sampler) *Monitor {
	return &Monitor{samplers: samplers, Timeout: DefaultTimeout, failed: map[string]bool{}}
}

// Note adds a line to the summary's note (for example, what a remote target
// cannot show).
func (m *Monitor) Note(format string, args ...any) {
	m.notes = append(m.notes, fmt.Sprintf(format, args...))
}

// Begin sets every sampler's baseline to now and forgets earlier samples:
// the next Sample covers the time since Begin.
func (m *Monitor) Begin(ctx context.Context) {
	m.read(ctx)
	m.samples = m.samples[:0]
}

// Peek closes an interval without recording it (a warm-up interval) and
// returns its figures.
func (m *Monitor) Peek(ctx context.Context) map[string]float64 {
	return m.read(ctx)
}

// Sample closes the interval ending at ts (seconds since the measured
// period began, as summary.Interval.TS), records it and returns its
// figures.
func (m *Monitor) Sample(ctx context.Context, ts float64) map[string]float64 {
	v := m.read(ctx)
	m.samples = append(m.samples, summary.Sample{TS: ts, Values: v})
	return v
}

// Samples returns the recorded samples.
func (m *Monitor) Samples() []summary.Sample { return m.samples }

func (m *Monitor) read(ctx context.Context) map[string]float64 {
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	now := time.Now()
	out := map[string]float64{}
	for _, s := range m.samplers {
		if err := s.Sample(ctx, now, out); err != nil && !m.failed[s.Name()] {
			// The first failure of each source goes into the note; the
			// source is still asked again at the next interval.
			m.failed[s.Name()] = true
			m.Note("%s: %v", s.Name(), err)
		}
	}
	// What this round of sampling took (wall time, server queries
	// included): what sampling adds to each interval.
	out["monitor.sample_ms"] = float64(time.Since(now).Microseconds()) / 1000
	return out
}

// Close closes the samplers that hold resources.
func (m *Monitor) Close() error {
	var errs []error
	for _, s := range m.samplers {
		if c, ok := s.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// Summary summarises the recorded samples: the time-weighted average and
// the maximum of every key, and costs per event (events > 0). disks names
// the block devices whose I/O counts in the per-event disk figures; when
// empty, every sampled device except stacked ones (dm-*, md*) counts.
func (m *Monitor) Summary(events int64, disks []string) *summary.Monitor {
	out := &summary.Monitor{Note: strings.Join(m.notes, "; ")}
	if len(m.samples) > 0 {
		out.Samples = append([]summary.Sample(nil), m.samples...)
		out.Avg, out.Max = Aggregate(m.samples)
		out.PerTxn = PerTxn(m.samples, events, disks)
	}
	return out
}

// weights are the lengths of the samples' intervals: TS minus the previous
// TS (the first interval starts at 0).
func weights(samples []summary.Sample) []float64 {
	w := make([]float64, len(samples))
	prev := 0.0
	for i, s := range samples {
		w[i] = s.TS - prev
		if w[i] <= 0 {
			w[i] = 0
		}
		prev = s.TS
	}
	return w
}

// Aggregate returns, for every key, the average weighted by interval
// length over the samples that have the key, and the maximum.
func Aggregate(samples []summary.Sample) (avg, mx map[string]float64) {
	w := weights(samples)
	sum, den := map[string]float64{}, map[string]float64{}
	mx = map[string]float64{}
	for i, s := range samples {
		for k, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			sum[k] += v * w[i]
			den[k] += w[i]
			if cur, ok := mx[k]; !ok || v > cur {
				mx[k] = v
			}
		}
	}
	avg = make(map[string]float64, len(sum))
	for k := range mx {
		if den[k] > 0 {
			avg[k] = sum[k] / den[k]
		} else {
			avg[k] = mx[k]
		}
	}
	return avg, mx
}

// total integrates a per-second key over the samples.
func total(samples []summary.Sample, w []float64, key string) (float64, bool) {
	var t float64
	found := false
	for i, s := range samples {
		if v, ok := s.Values[key]; ok {
			t += v * w[i]
			found = true
		}
	}
	return t, found
}

// fsyncKeys are the counters that count the server's fsyncs, by family.
var fsyncKeys = [...]string{"counter.Innodb_data_fsyncs", "counter.wal_sync"}

// PerTxn returns costs per event: "server_cpu_us" and "client_cpu_us"
// (CPU microseconds of the server process and of dbarena), "disk_read_kb"
// and "disk_write_kb" (KB of 1024 bytes on disks), "fsyncs" (the
// server's fsync counter) and the server's own counts (serverCostKeys). Figures whose keys were never sampled are left
// out; nil when events is 0.
func PerTxn(samples []summary.Sample, events int64, disks []string) map[string]float64 {
	if events <= 0 || len(samples) == 0 {
		return nil
	}
	w := weights(samples)
	n := float64(events)
	out := map[string]float64{}
	for key, name := range map[string]string{"server.cpu": "server_cpu_us", "client.cpu": "client_cpu_us"} {
		if t, ok := total(samples, w, key); ok {
			out[name] = t / 100 * 1e6 / n
		}
	}
	if len(disks) == 0 {
		disks = sampledDisks(samples)
	}
	for _, dir := range []string{"read", "write"} {
		var sum float64
		found := false
		for _, d := range disks {
			if t, ok := total(samples, w, "disk."+d+"."+dir+"_mbps"); ok {
				sum += t
				found = true
			}
		}
		if found {
			out["disk_"+dir+"_kb"] = sum * 1024 / n
		}
	}
	for _, key := range fsyncKeys {
		if t, ok := total(samples, w, key); ok {
			out["fsyncs"] = t / n
			break
		}
	}
	for name, keys := range serverCostKeys {
		for _, alt := range keys {
			var sum float64
			found := false
			for _, key := range alt.keys {
				if t, ok := total(samples, w, key); ok {
					sum += t
					found = true
				}
			}
			if found {
				out[name] = sum * alt.scale / n
				break
			}
		}
	}
	return out
}

// costSource is one way of counting a per-transaction cost: the sum of
// counters (per-second keys) times scale.
type costSource struct {
	keys  []string
	scale float64
}

// serverCostKeys are the per-transaction costs read from the server's
// counters, each with its sources by family, the first sampled one used:
// "buffer_misses" (pages read from disk into the buffer pool: InnoDB's
// Innodb_buffer_pool_reads, PostgreSQL's blks_read of the workload's
// database, which includes reads served by the OS page cache),
// "rows_examined" (rows the storage engine handed to the SQL layer:
// the Handler_read_* sum, PostgreSQL's tup_returned), "wal_kb" (KB of
// redo or WAL written: Innodb_os_log_written, the growth of the WAL
// position) and "wal_records" (PostgreSQL's pg_stat_wal.wal_records).
var serverCostKeys = map[string][]costSource{
	"buffer_misses": {{[]string{"counter.Innodb_buffer_pool_reads"}, 1}, {[]string{"counter.blks_read"}, 1}},
	"rows_examined": {{[]string{"counter.Handler_read_first", "counter.Handler_read_key", "counter.Handler_read_last",
		"counter.Handler_read_next", "counter.Handler_read_prev", "counter.Handler_read_rnd", "counter.Handler_read_rnd_next"}, 1},
		{[]string{"counter.tup_returned"}, 1}},
	"wal_kb":      {{[]string{"counter.Innodb_os_log_written"}, 1.0 / 1024}, {[]string{"counter.wal_bytes"}, 1.0 / 1024}},
	"wal_records": {{[]string{"counter.wal_records"}, 1}},
}

// sampledDisks lists the devices in the samples, without stacked devices
// (device mapper, md RAID) whose I/O the devices below them count again.
func sampledDisks(samples []summary.Sample) []string {
	seen := map[string]bool{}
	for _, s := range samples {
		for k := range s.Values {
			rest, ok := strings.CutPrefix(k, "disk.")
			if !ok {
				continue
			}
			if i := strings.LastIndexByte(rest, '.'); i > 0 {
				d := rest[:i]
				if !strings.HasPrefix(d, "dm-") && !strings.HasPrefix(d, "md") {
					seen[d] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// ClientBoundShare is the share of the machine's CPU (cores x 100%) that
// dbarena may use on average before a run is flagged as client-bound.
const ClientBoundShare = 0.8

// SaturatedIdle is the average host idle percentage below which the host
// counts as CPU-saturated.
const SaturatedIdle = 10.0

// ClientBound says whether the client was likely the bottleneck, and why.
// The rule (docs/CLI.md): dbarena used on average at least
// ClientBoundShare of the machine's CPU (cores x 100%); or the host was
// saturated (average host.cpu.idle+host.cpu.iowait below SaturatedIdle)
// while dbarena used at least as much CPU as the server process.
func ClientBound(avg map[string]float64, cores int) (string, bool) {
	client, ok := avg["client.cpu"]
	if !ok || cores <= 0 {
		return "", false
	}
	capacity := float64(cores) * 100
	if client >= ClientBoundShare*capacity {
		return fmt.Sprintf("dbarena itself used %.0f%% CPU of the %d cores' %.0f%%: the client is likely the bottleneck",
			client, cores, capacity), true
	}
	idle, okIdle := avg["host.cpu.idle"]
	server, okServer := avg["server.cpu"]
	if okIdle && okServer && idle+avg["host.cpu.iowait"] < SaturatedIdle && client >= server {
		return fmt.Sprintf("the host CPU was saturated (%.0f%% idle) and dbarena used %.0f%% CPU against the server's %.0f%%: the client is likely the bottleneck",
			idle, client, server), true
	}
	return "", false
}
