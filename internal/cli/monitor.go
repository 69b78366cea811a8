package cli

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbarena/dbarena/internal/monitor"
	"github.com/dbarena/dbarena/internal/runner"
	"github.com/dbarena/dbarena/internal/sandbox"
	"github.com/dbarena/dbarena/internal/summary"
	"github.com/dbarena/dbarena/internal/target"
)

// --monitor values.
const (
	monitorOn   = "on"   // everything this machine can see of the target
	monitorOff  = "off"  // no host or server-process figures: server counters and dbarena's own
	monitorNone = "none" // no sampling at all
)

// monitorFlag registers --monitor on fs.
func monitorFlag(fs *pflag.FlagSet, mode *string) {
	fs.StringVar(mode, "monitor", monitorOn, "sample host, server and client figures at each report interval: on, off (server counters and dbarena's own only) or none")
}

// validateMonitor checks a --monitor value.
func validateMonitor(mode string) []error {
	switch mode {
	case monitorOn, monitorOff, monitorNone:
		return nil
	}
	return []error{fmt.Errorf("--monitor must be on, off or none, got %q", mode)}
}

// procRoot and sysRoot are where the host's figures are read.
const (
	procRoot = "/proc"
	sysRoot  = "/sys"
)

// runMonitor is the monitor of one run or load, with what it learnt about
// the target while starting.
type runMonitor struct {
	*monitor.Monitor
	// host is true when host figures are sampled (the progress line shows them).
	host bool
	// storage holds the server's data directory, when known.
	storage *summary.Storage
	// lines are said once, before the run (what is not sampled and why).
	lines []string
	// started is when sampling began.
	started time.Time
}

// startMonitor builds the samplers --monitor asks for and sets their
// baseline. It returns nil for --monitor none. Nothing here stops a run:
// what cannot be sampled is said in the monitor's note.
func (a *App) startMonitor(ctx context.Context, s *session, mode string) *runMonitor {
	if mode == monitorNone {
		return nil
	}
	rm := &runMonitor{}
	var samplers []monitor.Sampler
	local := monitor.IsLocal(s.target)
	switch {
	case !local:
		rm.note(fmt.Sprintf("remote target %s: server counters and dbarena's own figures only (host and server-process figures would describe this machine, not the server)", s.target.MaskedDSN()))
	case mode == monitorOff:
		rm.note("--monitor off: no host or server-process figures")
	default:
		rm.host = true
		samplers = append(samplers, monitor.HostSamplers(procRoot, sysRoot)...)
		pid, datadir := a.serverProcess(ctx, s)
		if pid > 0 {
			// PostgreSQL serves each connection from a child of the postmaster.
			samplers = append(samplers, monitor.NewProcessSampler(procRoot, "server", pid, s.target.Family() == target.Postgres))
		} else {
			rm.note("server process not found: no server.* figures")
		}
		if datadir != "" {
			if st, err := monitor.StorageOf(procRoot, sysRoot, datadir); err == nil {
				rm.storage = st
			}
		}
	}
	samplers = append(samplers, monitor.NewProcessSampler(procRoot, "client", os.Getpid(), false))
	if srv, err := monitor.OpenServerSampler(ctx, s.dialect, s.target); err == nil {
		samplers = append(samplers, srv)
	} else {
		rm.note("server counters: " + s.target.Mask(err.Error()))
	}
	rm.Monitor = monitor.New(samplers...)
	for _, l := range rm.lines {
		rm.Note("%s", l)
	}
	rm.Begin(ctx)
	rm.started = time.Now()
	return rm
}

func (rm *runMonitor) note(line string) { rm.lines = append(rm.lines, line) }

// serverProcess finds the local server's process and data directory: from
// the sandbox record, or by asking the server.
func (a *App) serverProcess(ctx context.Context, s *session) (int, string) {
	if s.target.Sandbox != "" {
		if sb, err := sandbox.NewManager(a.home()).Get(s.target.Sandbox); err == nil && sb.PID > 0 {
			return sb.PID, sb.Datadir
		}
	}
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	pid, err := monitor.ServerPID(qctx, s.target.Family(), s.db, procRoot)
	if err != nil {
		pid = 0
	}
	dir, _ := monitor.DataDir(qctx, s.target.Family(), s.db)
	return pid, dir
}

// disks are the devices whose I/O counts per transaction: the one under
// the data directory when known, else every sampled disk.
func (rm *runMonitor) disks() []string {
	if rm.storage != nil && rm.storage.Device != "" {
		return []string{rm.storage.Device}
	}
	return nil
}

// Close is safe on a nil monitor.
func (rm *runMonitor) close() {
	if rm != nil {
		rm.Close()
	}
}

// hostFigure is the compact host figure appended to a progress line:
// " cpu: 73% iowait: 2%", or "" without host figures.
func hostFigure(v map[string]float64) string {
	busy, ok := v["host.cpu.busy"]
	if !ok {
		return ""
	}
	return fmt.Sprintf(" cpu: %.0f%% iowait: %.0f%%", busy, v["host.cpu.iowait"])
}

// printMonitor prints the monitor section of a run summary.
func (a *App) printMonitor(r *summary.Run) {
	m := r.Monitor
	if m == nil {
		return
	}
	w := a.Stdout
	avg, mx := m.Avg, m.Max
	line := func(label, format string, args ...any) {
		fmt.Fprintf(w, "    %-20s"+format+"\n", append([]any{label}, args...)...)
	}
	if len(avg) > 0 {
		fmt.Fprintln(w, "\nMonitor (avg / max):")
	}
	if _, ok := avg["host.cpu.busy"]; ok {
		line("host cpu:", "busy %.1f%% / %.1f%%  user %.1f%%  system %.1f%%  iowait %.1f%% / %.1f%%  steal %.1f%%",
			avg["host.cpu.busy"], mx["host.cpu.busy"], avg["host.cpu.user"], avg["host.cpu.system"],
			avg["host.cpu.iowait"], mx["host.cpu.iowait"], avg["host.cpu.steal"])
	}
	if _, ok := mx["host.load1"]; ok {
		line("load average:", "max %.2f %.2f %.2f", mx["host.load1"], mx["host.load5"], mx["host.load15"])
	}
	if _, ok := mx["host.mem.used_mb"]; ok {
		line("memory:", "used %.0f / %.0f MB  available min %.0f MB  cache %.0f MB  swap used %.0f MB",
			avg["host.mem.used_mb"], mx["host.mem.used_mb"], minOf(m.Samples, "host.mem.available_mb"),
			avg["host.mem.cached_mb"], mx["host.swap.used_mb"])
	}
	for _, d := range keyGroups(avg, "disk.") {
		p := "disk." + d + "."
		line("disk "+d+":", "r/s %.1f  w/s %.1f  read %.2f MB/s  write %.2f / %.2f MB/s  await %.2f ms  util %.1f%% / %.1f%%",
			avg[p+"reads"], avg[p+"writes"], avg[p+"read_mbps"], avg[p+"write_mbps"], mx[p+"write_mbps"],
			avg[p+"await_ms"], avg[p+"util"], mx[p+"util"])
	}
	for _, n := range keyGroups(avg, "net.") {
		p := "net." + n + "."
		if mx[p+"rx_mbps"]+mx[p+"tx_mbps"] < 0.005 {
			continue // an idle interface
		}
		line("net "+n+":", "rx %.2f MB/s  tx %.2f MB/s", avg[p+"rx_mbps"], avg[p+"tx_mbps"])
	}
	for _, who := range []string{"server", "client"} {
		if _, ok := avg[who+".cpu"]; ok {
			label := "server process:"
			if who == "client" {
				label = "dbarena:"
			}
			line(label, "cpu %.0f%% / %.0f%% (of one core)  rss %.0f / %.0f MB", avg[who+".cpu"], mx[who+".cpu"],
				avg[who+".rss_mb"], mx[who+".rss_mb"])
		}
	}
	if pt := m.PerTxn; len(pt) > 0 {
		var parts []string
		for _, f := range []struct{ key, format string }{
			{"server_cpu_us", "server cpu %.0f us"}, {"client_cpu_us", "dbarena cpu %.0f us"},
			{"disk_read_kb", "disk read %.2f KB"}, {"disk_write_kb", "disk write %.2f KB"}, {"fsyncs", "fsyncs %.3f"},
		} {
			if v, ok := pt[f.key]; ok {
				parts = append(parts, fmt.Sprintf(f.format, v))
			}
		}
		line("per transaction:", "%s", strings.Join(parts, ", "))
	}
	if m.Note != "" {
		fmt.Fprintf(w, "    note: %s\n", m.Note)
	}
	if warning, ok := monitor.ClientBound(avg, r.Host.Cores); ok {
		fmt.Fprintf(w, "\nWARNING: %s (rule: docs/CLI.md, Monitor)\n", warning)
	}
}

// keyGroups lists the middle names of keys "prefix.NAME.field" (devices,
// interfaces), sorted.
func keyGroups(m map[string]float64, prefix string) []string {
	seen := map[string]bool{}
	for k := range m {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		if i := strings.LastIndexByte(rest, '.'); i > 0 {
			seen[rest[:i]] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// minOf is the smallest value of key over the samples.
func minOf(samples []summary.Sample, key string) float64 {
	first, lo := true, 0.0
	for _, s := range samples {
		if v, ok := s.Values[key]; ok && (first || v < lo) {
			lo, first = v, false
		}
	}
	return lo
}

// announce returns what the run should say before it starts.
func (rm *runMonitor) announce() []string {
	if rm == nil {
		return nil
	}
	return rm.lines
}

// begin resets the baseline as the measured period begins.
func (rm *runMonitor) begin(ctx context.Context) {
	if rm != nil {
		rm.Begin(ctx)
	}
}

// interval samples the interval iv closes: recorded when measured, only
// shown when it is a warm-up interval.
func (rm *runMonitor) interval(ctx context.Context, iv runner.Interval) map[string]float64 {
	if rm == nil {
		return nil
	}
	if iv.Warmup {
		return rm.Peek(ctx)
	}
	return rm.Sample(ctx, iv.End.Seconds())
}

// summary closes the series (one sample for the whole run when there were
// no report intervals) and summarises it.
func (rm *runMonitor) summary(ctx context.Context, elapsed time.Duration, events int64) *summary.Monitor {
	if rm == nil {
		return nil
	}
	if len(rm.Samples()) == 0 && elapsed > 0 {
		rm.Sample(ctx, elapsed.Seconds())
	}
	return rm.Summary(events, rm.disks())
}

// progressFigure samples one second of a load and returns its compact host
// figure for the progress line. Nil-safe: a nil monitor shows nothing.
func (rm *runMonitor) progressFigure(elapsed time.Duration) string {
	if rm == nil {
		return ""
	}
	return hostFigure(rm.Sample(context.Background(), elapsed.Seconds()))
}

// printLoadMonitor prints the monitor's summary of a load (prepare is not
// stored as a run; its figures are printed only).
func (a *App) printLoadMonitor(rm *runMonitor) {
	if rm == nil {
		return
	}
	rm.Sample(context.Background(), time.Since(rm.started).Seconds()) // the last, partial second
	m := rm.Summary(0, rm.disks())
	if len(m.Samples) == 0 {
		return
	}
	a.printMonitor(&summary.Run{Monitor: m, Host: summary.Host{Cores: runtime.NumCPU()}})
}
