package tpcc

import (
	"context"
	"database/sql"
	"runtime"
	"testing"

	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
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

// BenchmarkTerminalMemory reports the heap one terminal keeps once it has
// run every transaction type (every statement prepared, every buffer
// grown): "B/terminal" is what the tpcc package holds beyond the
// connection, "conn-B/terminal" what the driver's connection holds
// without a worker. Run with -benchtime 1x.
//
// Measured (MariaDB 10.11, PostgreSQL 15): before terminals shared their
// statement texts, read only this district's S_DIST_xx and kept their
// scratch in slices, 37.1 KB (MariaDB) and 68.0 KB (PostgreSQL); after,
// 21.9 KB and 43.4 KB.
func BenchmarkTerminalMemory(b *testing.B) {
	for _, flavor := range []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres} {
		b.Run(string(flavor), func(b *testing.B) {
			env := sandboxtest.Env(b, flavor)
			ctx := context.Background()
			wl := setup(b)
			if err := wl.Prepare(ctx, env, 4, &progress{}); err != nil {
				b.Fatal(err)
			}
			const n = 32
			db, err := env.Dialect.Open(env.Target, dialect.OpenOptions{MaxConns: n})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			env.DB = db
			for i := 0; i < b.N; i++ {
				conns := make([]*sql.Conn, n)
				workers := make([]workload.Worker, n)
				heap := func() uint64 {
					var ms runtime.MemStats
					runtime.GC()
					runtime.GC()
					runtime.ReadMemStats(&ms)
					return ms.HeapAlloc
				}
				h0 := heap()
				for j := range conns {
					if conns[j], err = db.Conn(ctx); err != nil {
						b.Fatal(err)
					}
					if err := conns[j].PingContext(ctx); err != nil {
						b.Fatal(err)
					}
				}
				h1 := heap()
				for j, conn := range conns {
					if workers[j], err = wl.NewWorker(ctx, env, conn, j, int64(j)); err != nil {
						b.Fatal(err)
					}
					for k := 0; k < 60; k++ {
						ev := new(workload.Event)
						if err := workers[j].Event(ctx, ev); err != nil {
							b.Fatal(err)
						}
					}
				}
				h2 := heap()
				b.ReportMetric(float64(h1-h0)/n, "conn-B/terminal")
				b.ReportMetric(float64(h2-h1)/n, "B/terminal")
				for j := range conns {
					workers[j].Close()
					conns[j].Close()
				}
			}
		})
	}
}
