package tpcc

import (
	"context"
	"testing"

	"github.com/dbarena/dbarena/internal/runner"
	"github.com/dbarena/dbarena/internal/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/target"
)

// BenchmarkMix runs b.N transactions of the default mix on 4 terminals
// against one MariaDB warehouse (loaded on first use), for client CPU
// profiles: go test -bench Mix -run XXX -cpuprofile cpu.out.
func BenchmarkMix(b *testing.B) {
	env := sandboxtest.Env(b, target.FlavorMariaDB)
	ctx := context.Background()
	wl := setup(b)
	if err := wl.Prepare(ctx, env, 4, &progress{}); err != nil {
		b.Fatal(err)
	}
	cfg := runner.DefaultConfig()
	cfg.Threads, cfg.Duration, cfg.Events = 4, 0, int64(b.N)
	b.ResetTimer()
	res, err := runner.Run(ctx, cfg, env, setup(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	if res.Err != nil {
		b.Fatal(res.Err)
	}
	b.ReportMetric(float64(res.Events)/res.Elapsed.Seconds(), "txn/s")
}

// BenchmarkLoad loads one MariaDB warehouse per iteration.
func BenchmarkLoad(b *testing.B) {
	env := sandboxtest.Env(b, target.FlavorMariaDB)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		wl := setup(b)
		if err := wl.Cleanup(ctx, env); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		p := &progress{}
		if err := wl.Prepare(ctx, env, 4, p); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(p.rows.Load()), "rows/op")
	}
}
