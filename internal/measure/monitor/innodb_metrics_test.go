package monitor

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

// TestInnoDBMetrics: the server counters of a MariaDB sandbox carry the
// INNODB_METRICS it enables by default (buffer pool pages, the purge
// history length) as levels, read by the workload account.
func TestInnoDBMetrics(t *testing.T) {
	tg := sandboxtest.Start(t, target.FlavorMariaDB)
	d, err := dialect.For(tg.Family())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := OpenServerSampler(ctx, d, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.(interface{ Close() error }).Close()
	out := map[string]float64{}
	if err := s.Sample(ctx, time.Now(), out); err != nil {
		t.Fatal(err)
	}
	pages, ok := out["gauge.innodb_metrics.buffer_pool_pages_total"]
	if _, hist := out["gauge.innodb_metrics.trx_rseg_history_len"]; !ok || pages <= 0 || !hist {
		t.Fatalf("no INNODB_METRICS levels: %v", slices.Sorted(maps.Keys(out)))
	}
	for _, k := range slices.Sorted(maps.Keys(out)) {
		if k == "gauge.innodb_metrics.buffer_pool_reads" || k == "counter.innodb_metrics.buffer_pool_reads" {
			t.Errorf("%s: a status_counter row, which repeats SHOW GLOBAL STATUS", k)
		}
	}
}
