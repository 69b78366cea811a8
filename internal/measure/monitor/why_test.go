package monitor

import (
	"math"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/measure/stats"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// whyRound is one hand-made round: threads, throughput, server CPU per
// transaction and the shares of session time.
func whyRound(threads int, tps, cpuUS, lock, client, oncpu float64) *summary.Run {
	r := &summary.Run{Threads: threads,
		Monitor: &summary.Monitor{PerTxn: map[string]float64{"server_cpu_us": cpuUS}},
		Bottleneck: &summary.Bottleneck{Figures: map[string]float64{
			"wait_lock_pct": lock, "wait_client_pct": client, "wait_cpu_pct": oncpu}}}
	r.Throughput.TPS = tps
	return r
}

// TestWhyIntervalsAndContribution: three rounds a side give each row its
// 95% interval (the ratio's by stats.Relative, the points' by
// stats.Difference) and each share its milliseconds per transaction
// (share × threads / tps); shares are ordered by that contribution, not
// by points.
func TestWhyIntervalsAndContribution(t *testing.T) {
	// A: 4 threads at 1000 tps, 4 ms of session time per transaction;
	// B: 4 threads at 500 tps, 8 ms.
	a := []*summary.Run{whyRound(4, 1000, 100, 5, 90, 5), whyRound(4, 1000, 110, 6, 90, 4), whyRound(4, 1000, 120, 7, 90, 6)}
	b := []*summary.Run{whyRound(4, 500, 200, 50, 45, 4), whyRound(4, 500, 220, 52, 44, 4), whyRound(4, 500, 240, 54, 43, 4)}
	rows := Why(a, b)
	if len(rows) != 4 {
		t.Fatalf("rows %+v", rows)
	}
	cpu := rows[0]
	want := stats.Relative([]float64{200, 220, 240}, []float64{100, 110, 120})
	if cpu.Key != "per_txn.server_cpu_us" || cpu.Ratio != 2 || cpu.RatioCI != want || !cpu.HasCI() || !cpu.Significant() || cpu.NA != 3 || cpu.NB != 3 {
		t.Fatalf("server CPU row %+v, want ratio %+v", cpu, want)
	}
	// Lock: A 0.20, 0.24, 0.28 ms; B 4.00, 4.16, 4.32 ms: +3.92 ms.
	// On CPU: A 0.20, 0.16, 0.24 ms; B 0.32 ms each: +0.12 ms.
	// Client: A 3.6 ms each; B 3.60, 3.52, 3.44 ms: -0.08 ms, though it
	// moved as many points as the lock waits.
	var keys []string
	for _, r := range rows[1:] {
		keys = append(keys, strings.TrimPrefix(r.Key, "bottleneck.figures."))
	}
	if strings.Join(keys, ",") != "wait_lock_pct,wait_cpu_pct,wait_client_pct" {
		t.Errorf("shares in order %v, want by contribution: lock, cpu, client", keys)
	}
	lock := rows[1]
	if !lock.HasContrib || math.Abs(lock.MSA-0.24) > 1e-9 || math.Abs(lock.MSB-4.16) > 1e-9 || math.Abs(lock.Contrib.Value-3.92) > 1e-9 ||
		!lock.Contrib.Significant || lock.Points != stats.Difference([]float64{50, 52, 54}, []float64{5, 6, 7}) || !lock.Significant() {
		t.Errorf("lock row %+v", lock)
	}
	if client := rows[3]; math.Abs(client.Contrib.Value+0.08) > 1e-9 || client.Points.Value != -46 {
		t.Errorf("client row %+v", client)
	}
	msA, msB, d, ok := WhySessionMS(a, b)
	if !ok || msA != 4 || msB != 8 || d.Value != 4 || d.HasCI && d.Low != 4 {
		t.Errorf("session ms %v %v %+v %v", msA, msB, d, ok)
	}
	got := WhyReading(rows)
	if want := "B spends 2.0x more server CPU per transaction; B's sessions spend 46 points more of their time in lock waits (52% vs 6%, +3.92 ms per transaction)"; got != want {
		t.Errorf("reading %q\nwant    %q", got, want)
	}
}

// TestWhySingleRounds: one round a side gives no interval and nothing
// significant, and the reading says nothing of noise.
func TestWhySingleRounds(t *testing.T) {
	rows := Why([]*summary.Run{whyRound(8, 100, 10, 1, 90, 9)}, []*summary.Run{whyRound(8, 50, 30, 60, 30, 10)})
	for _, r := range rows {
		if r.HasCI() || r.Significant() || r.Points.HasCI || r.RatioCI.HasCI {
			t.Errorf("%s: an interval from single rounds: %+v", r.Name, r)
		}
	}
	if got := WhyReading(rows); strings.Contains(got, "noise") || !strings.Contains(got, "3.0x more server CPU") {
		t.Errorf("reading %q", got)
	}
}

// TestWhyNoise: a large ratio over rounds that scatter widely is said to
// be within the noise of the rounds; shares without throughput keep the
// order by points.
func TestWhyNoise(t *testing.T) {
	a := []*summary.Run{whyRound(4, 0, 100, 5, 50, 20), whyRound(4, 0, 300, 5, 50, 20)}
	b := []*summary.Run{whyRound(4, 0, 100, 5, 35, 40), whyRound(4, 0, 700, 5, 35, 40)}
	rows := Why(a, b)
	if rows[0].Significant() || !rows[0].HasCI() {
		t.Fatalf("scattered CPU significant: %+v", rows[0])
	}
	if rows[1].Key != "bottleneck.figures.wait_cpu_pct" || rows[1].HasContrib || rows[2].Key != "bottleneck.figures.wait_client_pct" {
		t.Errorf("without tps, shares by points: %+v", rows[1:])
	}
	got := WhyReading(rows)
	if want := "B spends 2.0x more server CPU per transaction (within the noise of the rounds); B's sessions spend 20 points more of their time on CPU (40% vs 20%)"; got != want {
		t.Errorf("reading %q\nwant    %q", got, want)
	}
}

// TestWhyFromZeroNoise: a cost A never had and B had in amounts its
// rounds do not tell from zero is sorted last and not named; one whose
// rounds do is named first.
func TestWhyFromZeroNoise(t *testing.T) {
	mk := func(cpu, fsyncs float64) *summary.Run {
		r := whyRound(4, 100, cpu, 1, 90, 9)
		r.Monitor.PerTxn["fsyncs"] = fsyncs
		return r
	}
	a := []*summary.Run{mk(100, 0), mk(102, 0), mk(98, 0)}
	rows := Why(a, []*summary.Run{mk(150, 0), mk(153, 0.001), mk(147, 0)})
	if rows[0].Key != "per_txn.server_cpu_us" || rows[1].Key != "per_txn.fsyncs" {
		t.Errorf("noisy fsyncs not last: %+v", rows[:2])
	}
	if got := WhyReading(rows); !strings.HasPrefix(got, "B spends 1.5x more server CPU per transaction;") {
		t.Errorf("reading %q", got)
	}
	rows = Why(a, []*summary.Run{mk(150, 1), mk(153, 1.02), mk(147, 0.98)})
	if rows[0].Key != "per_txn.fsyncs" || !strings.HasPrefix(WhyReading(rows), "B has fsyncs per transaction, A none;") {
		t.Errorf("fsyncs from zero: %+v %q", rows[0], WhyReading(rows))
	}
}

// TestWhyNearZeroA: a cost A barely had (MariaDB's fsyncs with
// innodb_flush_log_at_trx_commit=0: 0 and 0.0006 per transaction) against
// 0.78 in B: the ratio's interval is wide, from A's relative spread, but
// Welch's test of B - A tells them apart, which marks the row and keeps
// the reading free of noise.
func TestWhyNearZeroA(t *testing.T) {
	mk := func(fsyncs float64) *summary.Run {
		r := whyRound(4, 100, 100, 0, 90, 9)
		r.Monitor.PerTxn["fsyncs"] = fsyncs
		return r
	}
	rows := Why([]*summary.Run{mk(0), mk(0.0006)}, []*summary.Run{mk(0.78), mk(0.79)})
	f := rows[0]
	if f.Key != "per_txn.fsyncs" || !f.RatioCI.HasCI || f.RatioCI.Significant || !f.Significant() || !f.Diff.Significant {
		t.Fatalf("fsyncs row %+v", f)
	}
	if got := WhyReading(rows); !strings.HasPrefix(got, "B spends 2616.7x more fsyncs per transaction;") {
		t.Errorf("reading %q", got)
	}
	if fig := f.Figure(); fig.Diff == nil || fig.Ratio == nil || !fig.Diff.Significant {
		t.Errorf("figure %+v", fig)
	}
}
