package script

import (
	"context"
	"testing"

	"github.com/dbarena/dbarena/internal/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// BenchmarkEvent runs one worker's events of a script that needs no
// tables (pgbench's select-only shape: one \set, one SELECT), per protocol.
func BenchmarkEvent(b *testing.B) {
	file := writeFile(b, "bench.sql", "\\set aid random(1, 100000 * :scale)\nSELECT :aid + 1 AS abalance;\n")
	env := sandboxtest.Env(b, target.FlavorPostgres)
	for _, proto := range []string{Simple, Extended, Prepared} {
		b.Run(proto, func(b *testing.B) {
			wl := setup(b, "--file", file, "--protocol", proto)
			ctx := context.Background()
			conn, err := env.DB.Conn(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			w, err := wl.NewWorker(ctx, env, conn, 0, 1)
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var ev workload.Event
				if err := w.Event(ctx, &ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
