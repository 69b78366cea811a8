package monitor

import (
	"math"
	"testing"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// TestPerTxnServerCosts: buffer pool misses, rows examined and WAL from the
// server's counters, by family.
func TestPerTxnServerCosts(t *testing.T) {
	mysqlish := []summary.Sample{
		{TS: 1, Values: map[string]float64{"counter.Innodb_buffer_pool_reads": 10, "counter.Handler_read_key": 1000,
			"counter.Handler_read_next": 500, "counter.Handler_read_rnd_next": 100, "counter.Innodb_os_log_written": 2048}},
		{TS: 2, Values: map[string]float64{"counter.Innodb_buffer_pool_reads": 30, "counter.Handler_read_key": 1000,
			"counter.Handler_read_next": 300, "counter.Handler_read_rnd_next": 100, "counter.Innodb_os_log_written": 2048}},
	}
	expect(t, PerTxn(mysqlish, 100, nil), map[string]float64{"buffer_misses": 0.4, "rows_examined": 30, "wal_kb": 0.04})
	postgres := []summary.Sample{
		{TS: 1, Values: map[string]float64{"counter.blks_read": 5, "counter.tup_returned": 700, "counter.wal_bytes": 10240, "counter.wal_records": 300}},
		{TS: 2, Values: map[string]float64{"counter.blks_read": 15, "counter.tup_returned": 300, "counter.wal_bytes": 10240, "counter.wal_records": 100}},
	}
	pt := PerTxn(postgres, 100, nil)
	expect(t, pt, map[string]float64{"buffer_misses": 0.2, "rows_examined": 10, "wal_kb": 0.2, "wal_records": 4})
	if _, ok := PerTxn(mysqlish, 100, nil)["wal_records"]; ok {
		t.Error("wal_records without the counter")
	}
}

// TestRowLockGaugePace: the gauge is read fast from the start and after a
// wait begins, slow after rowLockQuietTicks quiet readings; its average is
// weighted by the time each reading covers.
func TestRowLockGaugePace(t *testing.T) {
	g := rowLockGauge{begun: -1, fast: true}
	for i := 0; i < rowLockQuietTicks-1; i++ {
		if !g.add(0, 7, 0.1) {
			t.Fatalf("slow after %d quiet readings", i+1)
		}
	}
	if g.add(0, 7, 0.1) {
		t.Fatal("still fast after the quiet readings")
	}
	if g.add(0, 7, 1) {
		t.Fatal("fast without a wait")
	}
	// A wait begun and ended between two slow readings: fast again.
	if !g.add(0, 8, 1) {
		t.Fatal("slow after a wait began")
	}
	if !g.add(4, 8, 0.1) {
		t.Fatal("slow while sessions wait")
	}
	avg, ok := g.take()
	if !ok || math.Abs(avg-0.4/3.1) > 1e-9 {
		t.Errorf("average %v (%v), want %v", avg, ok, 0.4/3.1)
	}
	if _, ok := g.take(); ok {
		t.Error("an average without readings")
	}
}
