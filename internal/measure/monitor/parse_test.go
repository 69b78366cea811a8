package monitor

import (
	"context"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
)

func open(t testing.TB, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func near(t testing.TB, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-3*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.4f, want %.4f", what, got, want)
	}
}

func expect(t testing.TB, got map[string]float64, want map[string]float64) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s missing (have %v)", k, slices.Sorted(maps.Keys(got)))
			continue
		}
		near(t, k, g, w)
	}
}

func TestDelta(t *testing.T) {
	tests := []struct {
		name            string
		prev, cur, want uint64
		fn              func(a, b uint64) uint64
	}{
		{"grows", 10, 25, 15, delta32},
		{"32-bit wrap", math.MaxUint32 - 5, 10, 16, delta32},
		{"32-bit wrap at the edge", math.MaxUint32, 0, 1, delta32},
		{"reset, not a wrap: prev far from the top", 1000, 10, 10, delta32},
		{"64-bit counter reset", 1 << 40, 7, 7, delta32},
		{"64-bit grows", 1 << 40, 1<<40 + 3, 3, delta64},
		{"64-bit reset is never a wrap", math.MaxUint32 - 5, 10, 10, delta64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.fn(tt.prev, tt.cur); got != tt.want {
				t.Fatalf("delta(%d, %d) = %d, want %d", tt.prev, tt.cur, got, tt.want)
			}
		})
	}
}

func TestCPU(t *testing.T) {
	prev, err := parseStat(open(t, "stat-1"))
	if err != nil {
		t.Fatal(err)
	}
	cur, err := parseStat(open(t, "stat-2"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	cpuPercents(prev, cur, out)
	// stat-1 -> stat-2: 102 ticks: user 75, system 11, idle 5, iowait 2, steal 9.
	expect(t, out, map[string]float64{
		"host.cpu.user": 75.0 / 1.02, "host.cpu.system": 11.0 / 1.02, "host.cpu.idle": 5.0 / 1.02,
		"host.cpu.iowait": 2.0 / 1.02, "host.cpu.steal": 9.0 / 1.02, "host.cpu.busy": 95.0 / 1.02,
	})

	t.Run("old kernel without steal", func(t *testing.T) {
		a, err := parseStat(strings.NewReader("cpu 10 0 10 80\n"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := parseStat(strings.NewReader("cpu 20 0 20 160\n"))
		out := map[string]float64{}
		cpuPercents(a, b, out)
		expect(t, out, map[string]float64{"host.cpu.user": 10, "host.cpu.idle": 80, "host.cpu.busy": 20, "host.cpu.steal": 0})
	})
	t.Run("iowait going backwards", func(t *testing.T) {
		a, _ := parseStat(strings.NewReader("cpu 10 0 10 80 50 0 0 0\n"))
		b, _ := parseStat(strings.NewReader("cpu 20 0 20 160 45 0 0 0\n"))
		out := map[string]float64{}
		cpuPercents(a, b, out)
		if out["host.cpu.iowait"] != 0 || out["host.cpu.busy"] < 0 || out["host.cpu.busy"] > 100 {
			t.Fatalf("%v", out)
		}
	})
	t.Run("no cpu line", func(t *testing.T) {
		if _, err := parseStat(strings.NewReader("intr 1 2 3\n")); err == nil {
			t.Fatal("want an error")
		}
	})
}

func TestLoadAndMemory(t *testing.T) {
	l, err := parseLoadavg(open(t, "loadavg"))
	if err != nil || l != [3]float64{5.67, 5.99, 4.50} {
		t.Fatalf("loadavg %v %v", l, err)
	}
	if _, err := parseLoadavg(strings.NewReader("garbage")); err == nil {
		t.Fatal("bad loadavg: want an error")
	}
	tests := []struct {
		name string
		file string
		want map[string]float64
	}{
		{"current kernel", "meminfo", map[string]float64{
			"host.mem.used_mb": (24684092.0 - 23277728) / 1024, "host.mem.available_mb": 23277728.0 / 1024,
			"host.mem.cached_mb": (36744.0 + 2135796) / 1024,
		}},
		{"kernel without MemAvailable", "meminfo-old", map[string]float64{
			"host.mem.used_mb": 1000, "host.mem.available_mb": 1000, "host.mem.cached_mb": 500, "host.swap.used_mb": 100,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kb, err := parseMeminfo(open(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]float64{}
			if err := memFigures(kb, out); err != nil {
				t.Fatal(err)
			}
			expect(t, out, tt.want)
		})
	}
}

func TestWholeDeviceByName(t *testing.T) {
	tests := []struct {
		name  string
		whole bool
	}{
		{"sda", true}, {"sda1", false}, {"vdb", true}, {"vdb15", false}, {"xvda", true}, {"xvda1", false},
		{"hdc3", false}, {"nvme0n1", true}, {"nvme0n1p1", false}, {"nvme12n3p14", false},
		{"mmcblk0", true}, {"mmcblk0p2", false}, {"md127", true}, {"md127p1", false}, {"dm-0", true},
		{"dm-12", true}, {"loop0", false}, {"loop7p1", false}, {"ram0", false}, {"zram0", true},
		{"cciss/c0d0", true}, {"nbd0", true}, {"nbd0p1", false}, {"sr0", true},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.name, "/", "!"), func(t *testing.T) {
			if got := WholeDevice("", tt.name); got != tt.whole {
				t.Fatalf("WholeDevice(%q) = %v, want %v", tt.name, got, tt.whole)
			}
		})
	}
}

// TestDiskSampler reads two captured /proc/diskstats two seconds apart:
// partitions, loop devices and never-used devices are left out; nvme0n1's
// 32-bit counters wrapped in between.
func TestDiskSampler(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "diskstats")
	copyFile := func(name string) {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := newDiskSampler(path, func(n string) bool { return WholeDevice("", n) })
	t0 := time.Unix(1000, 0)
	copyFile("diskstats-1")
	first := map[string]float64{}
	if err := s.Sample(context.Background(), t0, first); err != nil {
		t.Fatal(err)
	}
	if len(first) != 0 {
		t.Fatalf("the first reading is a baseline, got %v", first)
	}
	copyFile("diskstats-2")
	out := map[string]float64{}
	if err := s.Sample(context.Background(), t0.Add(2*time.Second), out); err != nil {
		t.Fatal(err)
	}
	t.Run("sda", func(t *testing.T) {
		expect(t, out, map[string]float64{
			"disk.sda.reads": 50, "disk.sda.writes": 200, "disk.sda.read_mbps": 2, "disk.sda.write_mbps": 10,
			"disk.sda.await_ms": 1.8, "disk.sda.util": 25,
		})
	})
	t.Run("nvme0n1 after a 32-bit wrap", func(t *testing.T) {
		expect(t, out, map[string]float64{
			"disk.nvme0n1.reads": 500, "disk.nvme0n1.read_mbps": 0.5, "disk.nvme0n1.writes": 200,
			"disk.nvme0n1.write_mbps": 0.5, "disk.nvme0n1.util": 50, "disk.nvme0n1.await_ms": 8.0 / 1400,
		})
	})
	t.Run("stacked and odd names", func(t *testing.T) {
		expect(t, out, map[string]float64{
			"disk.md127.writes": 50, "disk.dm-0.writes": 50, "disk.cciss/c0d0.util": 0, "disk.mmcblk0.reads": 0,
		})
	})
	t.Run("left out", func(t *testing.T) {
		for k := range out {
			for _, skip := range []string{"sda1", "nvme0n1p1", "mmcblk0p1", "loop0", "zram0", "sdb"} {
				if strings.HasPrefix(k, "disk."+skip+".") {
					t.Errorf("%s should not be sampled", k)
				}
			}
		}
	})
}

func TestNetDev(t *testing.T) {
	real, err := parseNetDev(open(t, "netdev-1"))
	if err != nil || len(real) == 0 || real[0].name != "lo" {
		t.Fatalf("captured /proc/net/dev: %v %v", real, err)
	}
	dir := t.TempDir()
	s := NewNetSampler(dir)
	path := filepath.Join(dir, "net", "dev")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	out := map[string]float64{}
	for i, name := range []string{"netdev-2", "netdev-3"} {
		b, _ := os.ReadFile(filepath.Join("testdata", name))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := s.Sample(context.Background(), t0.Add(time.Duration(i)*time.Second), out); err != nil {
			t.Fatal(err)
		}
	}
	// eth0's receive counter wrapped at 2^32: 1048280 + 296 bytes = 1 MB.
	expect(t, out, map[string]float64{"net.lo.rx_mbps": 2, "net.lo.tx_mbps": 2, "net.eth0.rx_mbps": 1, "net.eth0.tx_mbps": 0})
	if _, ok := out["net.veth1a2b3c4d5e6f.rx_mbps"]; ok {
		t.Fatal("an interface that never carried traffic is sampled")
	}
}

func TestProcessFiles(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "pid-stat"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := parseProcStat(b)
	if err != nil {
		t.Fatal(err)
	}
	if st.ppid != 4200 || st.utime != 250 || st.stime != 75 || st.cutime != 30 || st.cstime != 12 || st.ticks() != 367 {
		t.Fatalf("a command name with spaces and parentheses: %+v", st)
	}
	m, err := parseProcStatus(open(t, "pid-status"))
	if err != nil || m != (procMem{anon: 2000, file: 9000, shmem: 5000, rss: 16000}) {
		t.Fatalf("status: %+v %v", m, err)
	}
	t.Run("tree memory counts shared pages once", func(t *testing.T) {
		got := treeRSSkB([]procMem{m, {anon: 1000, file: 9000, shmem: 6000, rss: 16000}})
		if got != 2000+1000+15000 {
			t.Fatalf("treeRSSkB = %d", got)
		}
		if got := treeRSSkB([]procMem{{rss: 10}, {rss: 30}}); got != 30 {
			t.Fatalf("old kernel: treeRSSkB = %d, want the largest VmRSS", got)
		}
	})
}

// TestProcessSamplerSelf samples this test process while it burns CPU.
func TestProcessSamplerSelf(t *testing.T) {
	s := NewProcessSampler("/proc", "client", os.Getpid(), true)
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	out := map[string]float64{}
	if err := s.Sample(context.Background(), time.Now(), out); err != nil {
		t.Fatal(err)
	}
	if out["client.rss_mb"] <= 0 || out["client.procs"] < 1 {
		t.Fatalf("first sample: %v", out)
	}
	// Burn CPU until the kernel has charged at least one tick.
	var x float64
	for start := time.Now(); time.Since(start) < 2*time.Second; {
		for i := 0; i < 1e6; i++ {
			x += math.Sqrt(float64(i))
		}
		b, _ := os.ReadFile("/proc/self/stat")
		if st, err := parseProcStat(b); err == nil && st.ticks() > s.prev+2 {
			break
		}
	}
	_ = x
	out = map[string]float64{}
	if err := s.Sample(context.Background(), time.Now(), out); err != nil {
		t.Fatal(err)
	}
	if out["client.cpu"] <= 0 {
		t.Fatalf("a busy process shows no CPU: %v", out)
	}
	t.Run("gone process", func(t *testing.T) {
		s := NewProcessSampler(t.TempDir(), "server", 1<<22, false)
		if err := s.Sample(context.Background(), time.Now(), map[string]float64{}); err == nil {
			t.Fatal("want an error for a process that does not exist")
		}
	})
}

func TestStorage(t *testing.T) {
	mounts, err := parseMountinfo(open(t, "mountinfo"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, mount, fstype, dev string
	}{
		{"/var/lib/dbarena/x/data", "/", "ext4", "254:0"},
		{"/var/lib/mysql/data", "/var/lib/mysql", "tmpfs", "0:45"}, // the later mount hides the xfs one
		{"/srv/my data/pg", "/srv/my data", "ext4", "253:0"},
		{"/srv/my datab", "/", "ext4", "254:0"},
		{"/proc", "/proc", "proc", "0:21"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			m, ok := mountOf(mounts, tt.path)
			if !ok || m.mountPoint != tt.mount || m.fsType != tt.fstype || m.devID != tt.dev {
				t.Fatalf("mountOf(%q) = %+v", tt.path, m)
			}
		})
	}
	for in, want := range map[string]string{
		"none [mq-deadline] kyber bfq\n": "mq-deadline", "[none] mq-deadline\n": "none", "none\n": "none", "": "",
	} {
		if got := parseScheduler(in); got != want {
			t.Errorf("parseScheduler(%q) = %q, want %q", in, got, want)
		}
	}
	t.Run("this machine", func(t *testing.T) {
		st, err := StorageOf("/proc", "/sys", t.TempDir())
		if err != nil {
			t.Skipf("no mountinfo: %v", err)
		}
		if st.Mount == "" || st.FSType == "" {
			t.Fatalf("%+v", st)
		}
	})
}

func TestSummary(t *testing.T) {
	samples := []summary.Sample{
		{TS: 1, Values: map[string]float64{"host.cpu.busy": 50, "server.cpu": 100, "client.cpu": 20,
			"disk.vda.write_mbps": 1, "disk.dm-0.write_mbps": 1, "counter.Innodb_data_fsyncs": 100, "host.load1": 1}},
		{TS: 2, Values: map[string]float64{"host.cpu.busy": 70, "server.cpu": 100, "client.cpu": 20,
			"disk.vda.write_mbps": 3, "disk.dm-0.write_mbps": 3, "counter.Innodb_data_fsyncs": 300, "host.load1": 3}},
		// A last, partial interval of half a second.
		{TS: 2.5, Values: map[string]float64{"host.cpu.busy": 90, "server.cpu": 100, "client.cpu": 20,
			"disk.vda.write_mbps": 2, "disk.dm-0.write_mbps": 2, "counter.Innodb_data_fsyncs": 200, "host.load1": 2}},
	}
	avg, mx := Aggregate(samples)
	near(t, "avg busy (time-weighted)", avg["host.cpu.busy"], (50+70+45)/2.5)
	near(t, "max load1", mx["host.load1"], 3)
	// 2.5 s: 2.5 CPU-seconds of server, 1+3+1 = 5 MB written, 500 fsyncs, over 1000 events.
	pt := PerTxn(samples, 1000, nil)
	expect(t, pt, map[string]float64{"server_cpu_us": 2500, "client_cpu_us": 500, "disk_write_kb": 5 * 1024 / 1000.0, "fsyncs": 0.5})
	if _, ok := pt["disk_read_kb"]; ok {
		t.Error("disk_read_kb without read keys")
	}
	only := PerTxn(samples, 1000, []string{"dm-0"})
	near(t, "per-txn on the data device only", only["disk_write_kb"], 5*1024/1000.0)
	if PerTxn(samples, 0, nil) != nil {
		t.Error("per-txn figures without events")
	}
}

func TestClientBound(t *testing.T) {
	tests := []struct {
		name  string
		avg   map[string]float64
		cores int
		want  bool
	}{
		{"client takes the machine", map[string]float64{"client.cpu": 170}, 2, true},
		{"client busy, machine not", map[string]float64{"client.cpu": 120}, 2, false},
		{"saturated host, client above server", map[string]float64{"client.cpu": 90, "server.cpu": 80, "host.cpu.idle": 3}, 2, true},
		{"saturated host, server above client", map[string]float64{"client.cpu": 40, "server.cpu": 150, "host.cpu.idle": 3}, 2, false},
		{"idle host", map[string]float64{"client.cpu": 90, "server.cpu": 80, "host.cpu.idle": 50}, 2, false},
		{"iowait is not saturation", map[string]float64{"client.cpu": 90, "server.cpu": 80, "host.cpu.idle": 3, "host.cpu.iowait": 30}, 2, false},
		{"no client figure", map[string]float64{"server.cpu": 80}, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, got := ClientBound(tt.avg, tt.cores)
			if got != tt.want || (got && msg == "") {
				t.Fatalf("ClientBound = %v %q, want %v", got, msg, tt.want)
			}
		})
	}
}
