package monitor

import (
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// TestMergeShards: two shards of 8 threads on one host, each seeing the
// same server with 16 backends in lock waits; dbarena's CPU adds up, the
// server's does not.
func TestMergeShards(t *testing.T) {
	shard := func(id int64, host string, serverCPU float64) *summary.Run {
		r := runOf(8, 2, nil, map[string]float64{"server.cpu": serverCPU, "client.cpu": 20, "host.cpu.idle": 30,
			"counter.wal_sync": 100, "wait.ticks": 10, "wait.sessions": 16, "wait.lock": 60, "wait.client": 30, "wait.cpu": 10,
			"wait.event.Lock:transactionid": 60})
		r.ID, r.Host.Hostname = id, host
		return r
	}
	merged := &summary.Run{Threads: 16, DurationS: 2, Totals: summary.Totals{Events: 1000}, Host: summary.Host{Cores: 2}}
	m, b, why := MergeShards([]*summary.Run{shard(1, "h", 50), shard(2, "h", 70)}, merged)
	if m == nil || b == nil {
		t.Fatalf("no merged monitor: %s", why)
	}
	expect(t, m.Avg, map[string]float64{"server.cpu": 60, "client.cpu": 40, "wait.lock": 60, "wait.sessions": 16})
	expect(t, m.PerTxn, map[string]float64{"server_cpu_us": 1200, "client_cpu_us": 800, "fsyncs": 0.2})
	if b.Verdict != "lock" || !strings.Contains(b.Reason, "Lock:transactionid") {
		t.Errorf("verdict %s (%s), want lock", b.Verdict, b.Reason)
	}
	if len(m.Samples) != 1 || m.Samples[0].TS != 2 || !strings.HasPrefix(m.Note, "merged from 2 shards") {
		t.Errorf("samples %+v, note %q", m.Samples, m.Note)
	}
	if m, _, why := MergeShards([]*summary.Run{shard(1, "a", 50), shard(2, "b", 50)}, merged); m != nil || !strings.Contains(why, "2 hosts") {
		t.Errorf("shards on two hosts merged (%q)", why)
	}
	bare := shard(3, "h", 50)
	bare.Monitor = nil
	if m, _, why := MergeShards([]*summary.Run{shard(1, "h", 50), bare}, merged); m != nil || !strings.Contains(why, "run 3 has no monitor") {
		t.Errorf("a shard without monitor merged (%q)", why)
	}
}
