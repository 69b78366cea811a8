package monitor

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCoreShare reports the CPU this process spent per round since
// cpu0, as the share of one core that sampling once a second takes.
func reportCoreShare(b *testing.B, cpu0 time.Duration) {
	per := (cpuTime(b) - cpu0).Seconds() / float64(b.N)
	b.ReportMetric(per*1e6, "cpu-us/op")
	b.ReportMetric(per*100, "%core@1s")
}

// BenchmarkHostSampling is one round of every /proc sampler a local run
// uses: host CPU, load, memory, disks, network, a server process with its
// children (this process stands in) and dbarena itself. The target is
// under 1% of one core at a 1 s interval, i.e. under 10 ms per round.
func BenchmarkHostSampling(b *testing.B) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		b.Skip("no /proc")
	}
	samplers := append(HostSamplers("/proc", "/sys"),
		NewProcessSampler("/proc", "server", os.Getppid(), true),
		NewProcessSampler("/proc", "client", os.Getpid(), false))
	m := New(samplers...)
	ctx := context.Background()
	m.Begin(ctx)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	for i := 0; i < b.N; i++ {
		m.Peek(ctx)
	}
	reportCoreShare(b, cpu0)
}

// BenchmarkServerCounters is the client's side of one round of server
// counters on a live server: dbarena's CPU per round (ns/op also holds
// the round trip and the server's own work).
func BenchmarkServerCounters(b *testing.B) {
	for _, flavor := range []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres} {
		b.Run(string(flavor), func(b *testing.B) {
			tg := sandboxtest.Start(b, flavor)
			d, _ := dialect.For(tg.Family())
			ctx := context.Background()
			s, err := OpenServerSampler(ctx, d, tg)
			if err != nil {
				b.Fatal(err)
			}
			defer s.(interface{ Close() error }).Close()
			out := map[string]float64{}
			if err := s.Sample(ctx, time.Now(), out); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime(b)
			for i := 0; i < b.N; i++ {
				if err := s.Sample(ctx, time.Now(), out); err != nil {
					b.Fatal(err)
				}
			}
			reportCoreShare(b, cpu0)
		})
	}
}
