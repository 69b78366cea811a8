package console

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dbarena/dbarena/internal/measure/monitor"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// HostFigure is the compact host figure appended to a progress line:
// " cpu: 73% iowait: 2%", or "" without host figures.
func HostFigure(v map[string]float64) string {
	busy, ok := v["host.cpu.busy"]
	if !ok {
		return ""
	}
	return fmt.Sprintf(" cpu: %.0f%% iowait: %.0f%%", busy, v["host.cpu.iowait"])
}

// Monitor prints the monitor section of a run summary (nothing without
// monitor figures).
func Monitor(w io.Writer, r *summary.Run) {
	m := r.Monitor
	if m == nil {
		return
	}
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
