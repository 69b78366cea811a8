package script

import (
	"context"
	"testing"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
	"github.com/dbarena/dbarena/internal/workload/script/pgscript"
)

// BenchmarkEvent runs one worker's events of a script that needs no
// tables (pgbench's select-only shape: one \set, one SELECT), per protocol
// and client.
func BenchmarkEvent(b *testing.B) {
	file := writeFile(b, "bench.sql", "\\set aid random(1, 100000 * :scale)\nSELECT :aid + 1 AS abalance;\n")
	env := sandboxtest.Env(b, target.FlavorPostgres)
	for _, run := range protoClients(target.FlavorPostgres) {
		b.Run(run[0]+"/"+run[1], func(b *testing.B) {
			wl := setup(b, "--file", file, "--protocol", run[0], "--client", run[1])
			ctx := context.Background()
			conn, err := env.DB.Conn(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			w := newWorker(b, wl, env, conn, 0, 1)
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

// BenchmarkInterpret is the interpreter's own work per transaction of
// pgbench's built-in scripts, without a server: the \set expressions, the
// request each SQL command would send on the wire client (the text with
// :variables substituted, or the parameters), and the per-statement
// figures; the request is built and dropped instead of sent.
func BenchmarkInterpret(b *testing.B) {
	d, err := dialect.For(target.Postgres)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, run := range [][2]string{{"tpcb-like", Simple}, {"tpcb-like", Extended}, {"tpcb-like", Prepared}, {"select-only", Simple}} {
		b.Run(run[0]+"/"+run[1], func(b *testing.B) {
			wl := setup(b, "--builtin", run[0], "--protocol", run[1])
			w, err := wl.newWorker(ctx, workload.Env{Dialect: d}, nil, 0, 1)
			if err != nil {
				b.Fatal(err)
			}
			w.run = func(_ context.Context, idx int, c *pgscript.Cmd) error {
				_, _, err := w.wireRequest(idx, c)
				return err
			}
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

// BenchmarkPrepare loads pgbench's tables at --scale 2 on two threads per
// iteration, per flavor.
func BenchmarkPrepare(b *testing.B) {
	for _, flavor := range []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres} {
		b.Run(string(flavor), func(b *testing.B) {
			env := sandboxtest.Env(b, flavor)
			ctx := context.Background()
			wl := setup(b, "--builtin", "tpcb-like", "--scale", "2")
			b.Cleanup(func() { _ = wl.Cleanup(context.Background(), env) })
			for i := 0; i < b.N; i++ {
				if err := wl.Prepare(ctx, env, 2, nopProgress{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
