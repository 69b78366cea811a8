package monitor

import (
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
