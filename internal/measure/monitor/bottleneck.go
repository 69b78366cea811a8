package monitor

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// Thresholds of the bottleneck verdict (docs/CLI.md, "Bottleneck").
const (
	// LockBoundPct is the share of backend time (percent) in lock waits
	// above which a run is lock-bound.
	LockBoundPct = 30.0
	// FsyncBoundPct is the share of backend time (percent) in I/O and WAL
	// waits above which a run is fsync/IO-bound.
	FsyncBoundPct = 30.0
	// FsyncsPerTxn is the number of fsyncs per transaction above which a
	// run without session wait sampling (the MySQL family) is fsync-bound,
	// when the server did not use most of the host's CPU.
	FsyncsPerTxn = 0.5
	// ServerBoundShare is the share of the host's cores the server must
	// use for a run to be server CPU-bound.
	ServerBoundShare = 0.7
	// ClientWaitPct is the share of backend time waiting for the client
	// above which a run is client-wait (network or idle) bound.
	ClientWaitPct = 50.0
)

// runWaits returns the run-level figures of the wait keys: each the
// time-weighted average over the samples that carry a wait profile, a
// missing key counting as zero (an event not seen in an interval).
func runWaits(samples []summary.Sample) map[string]float64 {
	w := weights(samples)
	sum := map[string]float64{}
	var den float64
	for i, s := range samples {
		_, pg := s.Values["wait.ticks"]
		_, my := s.Values["wait.row_lock_ms"]
		if !pg && !my {
			continue
		}
		den += w[i]
		for k, v := range s.Values {
			if strings.HasPrefix(k, "wait.") {
				sum[k] += v * w[i]
			}
		}
	}
	if den <= 0 {
		return nil
	}
	for k := range sum {
		sum[k] /= den
	}
	return sum
}

// CPUs are the processors that count in a verdict: the host's online
// CPUs and those dbarena may run on (its CPU affinity, taskset).
type CPUs struct {
	Host, Client int
}

// LocalCPUs returns this machine's online CPUs
// (/sys/devices/system/cpu/online) and dbarena's affinity
// (runtime.NumCPU).
func LocalCPUs() CPUs {
	c := CPUs{Host: runtime.NumCPU(), Client: runtime.NumCPU()}
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		if n := parseCPUList(strings.TrimSpace(string(b))); n > 0 {
			c.Host = n
		}
	}
	return c
}

// parseCPUList counts the CPUs of a kernel CPU list ("0-3,6,8-9"); 0 when
// it does not parse.
func parseCPUList(s string) int {
	n := 0
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}

// Verdict returns the bottleneck of a run from its monitor section, host
// cores and threads; nil when the run has no monitor figures.
func Verdict(r *summary.Run) *summary.Bottleneck {
	return VerdictCPUs(r, CPUs{Host: r.Host.Cores, Client: r.Host.Cores})
}

// VerdictCPUs is Verdict with the host's CPUs and dbarena's own given
// (LocalCPUs for a run of this machine): dbarena pinned to fewer CPUs
// than the host has is client-bound at a lower CPU use.
func VerdictCPUs(r *summary.Run, c CPUs) *summary.Bottleneck {
	m := r.Monitor
	if m == nil || len(m.Avg) == 0 {
		return nil
	}
	v := &verdict{r: r, m: m, b: &summary.Bottleneck{Verdict: "none", Figures: map[string]float64{}}}
	v.cpuEvidence(c)
	v.waitEvidence()
	v.decide()
	return v.b
}

// verdict is the evidence gathered for a run's bottleneck verdict.
type verdict struct {
	r *summary.Run
	m *summary.Monitor
	b *summary.Bottleneck

	cores, clientCPUs          int
	server, client, idle       float64
	okServer, okClient, okIdle bool
	fsyncs                     float64
	okFsync                    bool

	waits                     map[string]float64
	sessions                  bool // a session sampler ran (PostgreSQL)
	lockPct, ioPct, clientPct float64
	lockWhat, ioWhat          string
}

// fig records a figure of the verdict and returns it.
func (v *verdict) fig(name string, x float64) float64 {
	v.b.Figures[name] = x
	return x
}

// cpuEvidence reads the CPU and fsync figures.
func (v *verdict) cpuEvidence(c CPUs) {
	m, b := v.m, v.b
	v.cores = c.Host
	if v.cores <= 0 {
		v.cores = v.r.Host.Cores
	}
	v.clientCPUs = c.Client
	if v.clientCPUs <= 0 || v.clientCPUs > v.cores {
		v.clientCPUs = v.cores
	}
	v.server, v.okServer = m.Avg["server.cpu"]
	v.client, v.okClient = m.Avg["client.cpu"]
	v.idle, v.okIdle = m.Avg["host.cpu.idle"]
	var cpu []string
	if v.cores > 0 {
		v.fig("host_cores", float64(v.cores))
	}
	if v.okServer {
		cpu = append(cpu, fmt.Sprintf("server %.2f of %d cores", v.fig("server_cores", v.server/100), v.cores))
	}
	if v.okClient {
		cpu = append(cpu, fmt.Sprintf("client %.2f", v.fig("client_cores", v.client/100)))
		if v.clientCPUs < v.cores {
			cpu = append(cpu, fmt.Sprintf("dbarena pinned to %d CPUs", int(v.fig("client_cpus", float64(v.clientCPUs)))))
		}
	}
	if v.okIdle {
		cpu = append(cpu, fmt.Sprintf("host idle %.0f%%", v.fig("host_idle_pct", v.idle+m.Avg["host.cpu.iowait"])))
	}
	if len(cpu) > 0 {
		b.Evidence = append(b.Evidence, "CPU: "+strings.Join(cpu, ", "))
	}
	v.fsyncs, v.okFsync = m.PerTxn["fsyncs"]
	if v.okFsync {
		v.fig("fsyncs_per_txn", v.fsyncs)
		b.Evidence = append(b.Evidence, fmt.Sprintf("fsyncs: %.2f per transaction", v.fsyncs))
	}
}

// waitEvidence reads the wait profile: backend time by class where
// sessions were sampled (PostgreSQL), else row-lock and performance_schema
// waits (MySQL family).
func (v *verdict) waitEvidence() {
	v.waits = runWaits(v.m.Samples)
	_, v.sessions = v.waits["wait.sessions"]
	if v.sessions {
		v.sessionWaits()
	} else if rl, ok := v.waits["wait.row_lock_ms"]; ok {
		v.mysqlWaits(rl)
	}
}

// sessionWaits reads the share of backend time per wait class.
func (v *verdict) sessionWaits() {
	waits, b := v.waits, v.b
	for _, c := range sessionClasses {
		v.fig("wait_"+c+"_pct", waits["wait."+c])
	}
	// I/O and WAL: every IO:* wait and the LWLocks of the WAL.
	for k, x := range waits {
		if ev, ok := strings.CutPrefix(k, "wait.event."); ok &&
			(strings.HasPrefix(ev, "IO:") || strings.HasPrefix(ev, "LWLock:WAL")) {
			v.ioPct += x
		}
	}
	v.fig("wait_io_wal_pct", v.ioPct)
	v.lockPct, v.clientPct = waits["wait.lock"], waits["wait.client"]
	v.lockWhat, v.ioWhat = "Lock:*", "IO:* and LWLock:WAL*"
	var parts []string
	for _, c := range sessionClasses {
		if x := waits["wait."+c]; x >= 0.5 {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", c, x))
		}
	}
	b.Evidence = append(b.Evidence, fmt.Sprintf("backend time (%.1f backends sampled): %s", waits["wait.sessions"], strings.Join(parts, ", ")))
	for _, e := range TopWaitEvents(waits, 5) {
		b.TopWaits = append(b.TopWaits, summary.WaitShare{Event: e.Name, Value: e.Value, Unit: "pct"})
	}
}

// mysqlWaits reads the row-lock wait time (rl, ms/s) over the threads'
// time and performance_schema's waits when it was read.
func (v *verdict) mysqlWaits(rl float64) {
	waits, b, r := v.waits, v.b, v.r
	// The larger of the timed waits and the sampled waiting sessions
	// (the server times each wait in whole milliseconds).
	if r.Threads > 0 {
		n := float64(r.Threads)
		v.lockPct = max(rl/1000/n*100, waits["wait.row_lock_sessions"]/n*100)
		v.fig("row_lock_pct", v.lockPct)
		v.lockWhat = "InnoDB row-lock waits"
	}
	b.Evidence = append(b.Evidence, fmt.Sprintf("row-lock waits: %.0f ms/s, %.2f sessions waiting on average, over %d threads (%.0f%% of their time)",
		rl, waits["wait.row_lock_sessions"], r.Threads, v.lockPct))
	t, ok := waits["wait.time_ms"]
	if !ok {
		return
	}
	v.fig("wait_ms_per_s", t)
	var parts []string
	for _, c := range summaryClasses {
		if x := waits["wait.class."+c]; x >= 0.5 {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", c, x))
		}
	}
	b.Evidence = append(b.Evidence, fmt.Sprintf("performance_schema waits: %.0f ms/s: %s", t, strings.Join(parts, ", ")))
	for _, e := range TopWaitEvents(waits, 5) {
		b.TopWaits = append(b.TopWaits, summary.WaitShare{Event: e.Name, Value: e.Value, Unit: "ms/s"})
	}
}

// clientBound says whether dbarena held the run back, and why.
func (v *verdict) clientBound() (string, bool) {
	warning, bound := ClientBound(v.m.Avg, v.clientCPUs)
	if bound && v.clientCPUs < v.cores {
		warning += fmt.Sprintf(" (it may run on %d of the host's %d CPUs)", v.clientCPUs, v.cores)
	}
	if !bound && v.clientCPUs < v.cores && v.sessions && v.clientPct >= ClientWaitPct {
		// Pinned to fewer CPUs than the host has, dbarena kept the
		// backends waiting for it.
		return fmt.Sprintf("dbarena may run on %d of the host's %d CPUs (CPU affinity) and the backends spent %.0f%% of their time waiting for it (Client:*)",
			v.clientCPUs, v.cores, v.clientPct), true
	}
	return warning, bound
}

// decide picks the verdict: the first rule, in order, whose figure
// passed its threshold.
func (v *verdict) decide() {
	b, m := v.b, v.m
	serverShare := 0.0
	if v.okServer && v.cores > 0 {
		serverShare = v.server / 100 / float64(v.cores)
	}
	clientWarning, clientBound := v.clientBound()
	idle := v.idle + m.Avg["host.cpu.iowait"]
	switch {
	case v.lockWhat != "" && v.lockPct >= LockBoundPct:
		b.Verdict = "lock"
		b.Reason = fmt.Sprintf("lock-bound: %.0f%% of backend time in %s", v.lockPct, v.lockWhat)
		if v.sessions {
			for _, w := range TopWaitEvents(v.waits, 100) {
				if strings.HasPrefix(w.Name, "Lock:") {
					b.Reason += fmt.Sprintf(" (%s %.0f%%)", w.Name, w.Value)
					break
				}
			}
		}
	case v.sessions && v.ioPct >= FsyncBoundPct:
		b.Verdict = "fsync"
		b.Reason = fmt.Sprintf("fsync/IO-bound: %.0f%% of backend time in %s", v.ioPct, v.ioWhat)
		if v.okFsync {
			b.Reason += fmt.Sprintf(", %.2f fsyncs per transaction", v.fsyncs)
		}
	case !v.sessions && v.okFsync && v.fsyncs >= FsyncsPerTxn && serverShare < ServerBoundShare:
		b.Verdict = "fsync"
		b.Reason = fmt.Sprintf("fsync-bound: %.2f fsyncs per transaction, server %.2f of %d cores", v.fsyncs, v.server/100, v.cores)
	case clientBound:
		b.Verdict = "client"
		b.Reason = "client-bound: " + clientWarning
	case serverShare >= ServerBoundShare:
		b.Verdict = "server-cpu"
		b.Reason = fmt.Sprintf("server CPU-bound: server %.2f of %d cores", v.server/100, v.cores)
		if v.okClient {
			b.Reason += fmt.Sprintf(", client %.2f", v.client/100)
		}
		if v.okIdle {
			b.Reason += fmt.Sprintf(", idle %.0f%%", idle)
		}
	case v.okIdle && idle < SaturatedIdle:
		b.Verdict = "host-busy"
		b.Reason = fmt.Sprintf("host CPU saturated (idle %.0f%%) with the server at %.2f and dbarena at %.2f of %d cores: other processes took the CPU",
			idle, v.server/100, v.client/100, v.cores)
	case v.sessions && v.clientPct >= ClientWaitPct:
		b.Verdict = "client-wait"
		b.Reason = fmt.Sprintf("network/idle: %.0f%% of backend time waiting for the client (Client:*)", v.clientPct)
	default:
		b.Reason = "no single bottleneck: no wait class, CPU or fsync figure passed its threshold"
	}
}
