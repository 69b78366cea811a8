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
	b := &summary.Bottleneck{Verdict: "none", Figures: map[string]float64{}}
	fig := func(name string, v float64) float64 {
		b.Figures[name] = v
		return v
	}
	cores := c.Host
	if cores <= 0 {
		cores = r.Host.Cores
	}
	clientCPUs := c.Client
	if clientCPUs <= 0 || clientCPUs > cores {
		clientCPUs = cores
	}
	server, okServer := m.Avg["server.cpu"]
	client, okClient := m.Avg["client.cpu"]
	idle, okIdle := m.Avg["host.cpu.idle"]
	var cpu []string
	if cores > 0 {
		fig("host_cores", float64(cores))
	}
	if okServer {
		cpu = append(cpu, fmt.Sprintf("server %.2f of %d cores", fig("server_cores", server/100), cores))
	}
	if okClient {
		cpu = append(cpu, fmt.Sprintf("client %.2f", fig("client_cores", client/100)))
		if clientCPUs < cores {
			cpu = append(cpu, fmt.Sprintf("dbarena pinned to %d CPUs", int(fig("client_cpus", float64(clientCPUs)))))
		}
	}
	if okIdle {
		cpu = append(cpu, fmt.Sprintf("host idle %.0f%%", fig("host_idle_pct", idle+m.Avg["host.cpu.iowait"])))
	}
	if len(cpu) > 0 {
		b.Evidence = append(b.Evidence, "CPU: "+strings.Join(cpu, ", "))
	}
	fsyncs, okFsync := m.PerTxn["fsyncs"]
	if okFsync {
		fig("fsyncs_per_txn", fsyncs)
		b.Evidence = append(b.Evidence, fmt.Sprintf("fsyncs: %.2f per transaction", fsyncs))
	}

	waits := runWaits(m.Samples)
	_, sessions := waits["wait.sessions"]
	var lockPct, ioPct, clientPct float64
	var lockWhat, ioWhat string
	if sessions {
		for _, c := range sessionClasses {
			fig("wait_"+c+"_pct", waits["wait."+c])
		}
		// I/O and WAL: every IO:* wait and the LWLocks of the WAL.
		for k, v := range waits {
			if ev, ok := strings.CutPrefix(k, "wait.event."); ok &&
				(strings.HasPrefix(ev, "IO:") || strings.HasPrefix(ev, "LWLock:WAL")) {
				ioPct += v
			}
		}
		fig("wait_io_wal_pct", ioPct)
		lockPct, clientPct = waits["wait.lock"], waits["wait.client"]
		lockWhat, ioWhat = "Lock:*", "IO:* and LWLock:WAL*"
		var parts []string
		for _, c := range sessionClasses {
			if v := waits["wait."+c]; v >= 0.5 {
				parts = append(parts, fmt.Sprintf("%s %.0f%%", c, v))
			}
		}
		b.Evidence = append(b.Evidence, fmt.Sprintf("backend time (%.1f backends sampled): %s", waits["wait.sessions"], strings.Join(parts, ", ")))
		for _, e := range TopWaitEvents(waits, 5) {
			b.TopWaits = append(b.TopWaits, summary.WaitShare{Event: e.Name, Value: e.Value, Unit: "pct"})
		}
	} else if rl, ok := waits["wait.row_lock_ms"]; ok {
		// MySQL family: row-lock wait time over the threads' time.
		// The larger of the timed waits and the sampled waiting sessions
		// (the server times each wait in whole milliseconds).
		if r.Threads > 0 {
			n := float64(r.Threads)
			lockPct = max(rl/1000/n*100, waits["wait.row_lock_sessions"]/n*100)
			fig("row_lock_pct", lockPct)
			lockWhat = "InnoDB row-lock waits"
		}
		b.Evidence = append(b.Evidence, fmt.Sprintf("row-lock waits: %.0f ms/s, %.2f sessions waiting on average, over %d threads (%.0f%% of their time)",
			rl, waits["wait.row_lock_sessions"], r.Threads, lockPct))
		if t, ok := waits["wait.time_ms"]; ok {
			fig("wait_ms_per_s", t)
			var parts []string
			for _, c := range summaryClasses {
				if v := waits["wait.class."+c]; v >= 0.5 {
					parts = append(parts, fmt.Sprintf("%s %.0f%%", c, v))
				}
			}
			b.Evidence = append(b.Evidence, fmt.Sprintf("performance_schema waits: %.0f ms/s: %s", t, strings.Join(parts, ", ")))
			for _, e := range TopWaitEvents(waits, 5) {
				b.TopWaits = append(b.TopWaits, summary.WaitShare{Event: e.Name, Value: e.Value, Unit: "ms/s"})
			}
		}
	}

	serverShare := 0.0
	if okServer && cores > 0 {
		serverShare = server / 100 / float64(cores)
	}
	clientWarning, clientBound := ClientBound(m.Avg, clientCPUs)
	if clientBound && clientCPUs < cores {
		clientWarning += fmt.Sprintf(" (it may run on %d of the host's %d CPUs)", clientCPUs, cores)
	}
	if !clientBound && clientCPUs < cores && sessions && clientPct >= ClientWaitPct {
		// Pinned to fewer CPUs than the host has, dbarena kept the
		// backends waiting for it.
		clientBound = true
		clientWarning = fmt.Sprintf("dbarena may run on %d of the host's %d CPUs (CPU affinity) and the backends spent %.0f%% of their time waiting for it (Client:*)",
			clientCPUs, cores, clientPct)
	}
	switch {
	case lockWhat != "" && lockPct >= LockBoundPct:
		b.Verdict = "lock"
		b.Reason = fmt.Sprintf("lock-bound: %.0f%% of backend time in %s", lockPct, lockWhat)
		if sessions {
			if e := TopWaitEvents(waits, 100); len(e) > 0 {
				for _, w := range e {
					if strings.HasPrefix(w.Name, "Lock:") {
						b.Reason += fmt.Sprintf(" (%s %.0f%%)", w.Name, w.Value)
						break
					}
				}
			}
		}
	case sessions && ioPct >= FsyncBoundPct:
		b.Verdict = "fsync"
		b.Reason = fmt.Sprintf("fsync/IO-bound: %.0f%% of backend time in %s", ioPct, ioWhat)
		if okFsync {
			b.Reason += fmt.Sprintf(", %.2f fsyncs per transaction", fsyncs)
		}
	case !sessions && okFsync && fsyncs >= FsyncsPerTxn && serverShare < ServerBoundShare:
		b.Verdict = "fsync"
		b.Reason = fmt.Sprintf("fsync-bound: %.2f fsyncs per transaction, server %.2f of %d cores", fsyncs, server/100, cores)
	case clientBound:
		b.Verdict = "client"
		b.Reason = "client-bound: " + clientWarning
	case serverShare >= ServerBoundShare:
		b.Verdict = "server-cpu"
		b.Reason = fmt.Sprintf("server CPU-bound: server %.2f of %d cores", server/100, cores)
		if okClient {
			b.Reason += fmt.Sprintf(", client %.2f", client/100)
		}
		if okIdle {
			b.Reason += fmt.Sprintf(", idle %.0f%%", idle+m.Avg["host.cpu.iowait"])
		}
	case okIdle && idle+m.Avg["host.cpu.iowait"] < SaturatedIdle:
		b.Verdict = "host-busy"
		b.Reason = fmt.Sprintf("host CPU saturated (idle %.0f%%) with the server at %.2f and dbarena at %.2f of %d cores: other processes took the CPU",
			idle+m.Avg["host.cpu.iowait"], server/100, client/100, cores)
	case sessions && clientPct >= ClientWaitPct:
		b.Verdict = "client-wait"
		b.Reason = fmt.Sprintf("network/idle: %.0f%% of backend time waiting for the client (Client:*)", clientPct)
	default:
		b.Reason = "no single bottleneck: no wait class, CPU or fsync figure passed its threshold"
	}
	return b
}
