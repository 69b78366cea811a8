package monitor

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// procFile reads one small file again and again into the same buffer, so
// that sampling allocates little.
type procFile struct {
	path string
	buf  []byte
}

func (f *procFile) read() (*bytes.Reader, error) {
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if f.buf == nil {
		f.buf = make([]byte, 0, 4096)
	}
	f.buf = f.buf[:0]
	for {
		if len(f.buf) == cap(f.buf) {
			f.buf = append(f.buf, 0)[:len(f.buf)]
		}
		n, err := fh.Read(f.buf[len(f.buf):cap(f.buf)])
		f.buf = f.buf[:len(f.buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return bytes.NewReader(f.buf), nil
}

// HostSamplers returns the samplers of the host's figures, reading the
// proc file system at procRoot (normally "/proc") and sysfs at sysRoot
// (normally "/sys"): CPU, load, memory, block devices and network.
func HostSamplers(procRoot, sysRoot string) []Sampler {
	return []Sampler{
		NewCPUSampler(procRoot),
		NewLoadSampler(procRoot),
		NewMemSampler(procRoot),
		NewDiskSampler(procRoot, sysRoot),
		NewNetSampler(procRoot),
	}
}

// cpuTimes are the aggregate "cpu" line of /proc/stat, in clock ticks.
type cpuTimes struct {
	user, nice, system, idle, iowait, irq, softirq, steal uint64
}

func (c cpuTimes) total() uint64 {
	return c.user + c.nice + c.system + c.idle + c.iowait + c.irq + c.softirq + c.steal
}

// parseStat reads the aggregate "cpu" line of /proc/stat (proc(5)). Guest
// time is already part of user time and is not added again; fields that
// older kernels lack are zero.
func parseStat(r io.Reader) (cpuTimes, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || f[0] != "cpu" {
			continue
		}
		var v [8]uint64
		for i := 0; i < len(v) && i+1 < len(f); i++ {
			n, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return cpuTimes{}, fmt.Errorf("/proc/stat: cpu field %d: %w", i+1, err)
			}
			v[i] = n
		}
		return cpuTimes{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}, nil
	}
	if err := sc.Err(); err != nil {
		return cpuTimes{}, err
	}
	return cpuTimes{}, fmt.Errorf("/proc/stat: no cpu line")
}

// cpuPercents turns two readings into the keys host.cpu.user (user+nice),
// system (system+irq+softirq), iowait, steal, idle and busy (100 - idle -
// iowait), in percent of all CPUs.
func cpuPercents(prev, cur cpuTimes, out map[string]float64) {
	total := float64(delta64(prev.total(), cur.total()))
	if total <= 0 {
		return
	}
	// iowait may go backwards on some kernels: delta64 then counts from
	// zero, so clamp every share to [0, 100].
	pct := func(d uint64) float64 { return min(100, 100*float64(d)/total) }
	out["host.cpu.user"] = pct(delta64(prev.user, cur.user) + delta64(prev.nice, cur.nice))
	out["host.cpu.system"] = pct(delta64(prev.system, cur.system) + delta64(prev.irq, cur.irq) + delta64(prev.softirq, cur.softirq))
	iowait := 0.0
	if cur.iowait >= prev.iowait {
		iowait = pct(cur.iowait - prev.iowait)
	}
	idle := pct(delta64(prev.idle, cur.idle))
	out["host.cpu.iowait"] = iowait
	out["host.cpu.steal"] = pct(delta64(prev.steal, cur.steal))
	out["host.cpu.idle"] = idle
	out["host.cpu.busy"] = max(0, 100-idle-iowait)
}

// CPUSampler reads the host's CPU time split from /proc/stat.
type CPUSampler struct {
	f    procFile
	prev cpuTimes
	have bool
}

var _ Sampler = (*CPUSampler)(nil)

// NewCPUSampler reads procRoot/stat.
func NewCPUSampler(procRoot string) *CPUSampler {
	return &CPUSampler{f: procFile{path: filepath.Join(procRoot, "stat")}}
}

// Name implements Sampler.
func (*CPUSampler) Name() string { return "host.cpu" }

// Sample implements Sampler.
func (s *CPUSampler) Sample(_ context.Context, _ time.Time, out map[string]float64) error {
	r, err := s.f.read()
	if err != nil {
		return err
	}
	cur, err := parseStat(r)
	if err != nil {
		return err
	}
	if s.have {
		cpuPercents(s.prev, cur, out)
	}
	s.prev, s.have = cur, true
	return nil
}

// parseLoadavg reads the 1, 5 and 15 minute load averages.
func parseLoadavg(r io.Reader) ([3]float64, error) {
	var l [3]float64
	b, err := io.ReadAll(r)
	if err != nil {
		return l, err
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return l, fmt.Errorf("/proc/loadavg: want 3 numbers, got %q", strings.TrimSpace(string(b)))
	}
	for i := range l {
		if l[i], err = strconv.ParseFloat(f[i], 64); err != nil {
			return l, fmt.Errorf("/proc/loadavg: %w", err)
		}
	}
	return l, nil
}

// LoadSampler reads the load averages (host.load1, host.load5, host.load15).
type LoadSampler struct{ f procFile }

var _ Sampler = (*LoadSampler)(nil)

// NewLoadSampler reads procRoot/loadavg.
func NewLoadSampler(procRoot string) *LoadSampler {
	return &LoadSampler{f: procFile{path: filepath.Join(procRoot, "loadavg")}}
}

// Name implements Sampler.
func (*LoadSampler) Name() string { return "host.load" }

// Sample implements Sampler.
func (s *LoadSampler) Sample(_ context.Context, _ time.Time, out map[string]float64) error {
	r, err := s.f.read()
	if err != nil {
		return err
	}
	l, err := parseLoadavg(r)
	if err != nil {
		return err
	}
	out["host.load1"], out["host.load5"], out["host.load15"] = l[0], l[1], l[2]
	return nil
}

// parseMeminfo reads /proc/meminfo into kB values by field name.
func parseMeminfo(r io.Reader) (map[string]uint64, error) {
	out := map[string]uint64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			continue
		}
		out[strings.TrimSpace(name)] = v
	}
	return out, sc.Err()
}

// memFigures turns /proc/meminfo into host.mem.used_mb (MemTotal -
// MemAvailable, what no longer fits without reclaiming), available_mb,
// cached_mb (page cache: Buffers + Cached) and host.swap.used_mb.
func memFigures(kb map[string]uint64, out map[string]float64) error {
	total, ok := kb["MemTotal"]
	if !ok {
		return fmt.Errorf("/proc/meminfo: no MemTotal")
	}
	avail, ok := kb["MemAvailable"]
	if !ok { // kernels before 3.14
		avail = kb["MemFree"] + kb["Buffers"] + kb["Cached"]
	}
	mb := func(k uint64) float64 { return float64(k) / 1024 }
	out["host.mem.used_mb"] = mb(total - min(total, avail))
	out["host.mem.available_mb"] = mb(avail)
	out["host.mem.cached_mb"] = mb(kb["Buffers"] + kb["Cached"])
	out["host.swap.used_mb"] = mb(kb["SwapTotal"] - min(kb["SwapTotal"], kb["SwapFree"]))
	return nil
}

// MemSampler reads memory and swap use from /proc/meminfo.
type MemSampler struct{ f procFile }

var _ Sampler = (*MemSampler)(nil)

// NewMemSampler reads procRoot/meminfo.
func NewMemSampler(procRoot string) *MemSampler {
	return &MemSampler{f: procFile{path: filepath.Join(procRoot, "meminfo")}}
}

// Name implements Sampler.
func (*MemSampler) Name() string { return "host.mem" }

// Sample implements Sampler.
func (s *MemSampler) Sample(_ context.Context, _ time.Time, out map[string]float64) error {
	r, err := s.f.read()
	if err != nil {
		return err
	}
	kb, err := parseMeminfo(r)
	if err != nil {
		return err
	}
	return memFigures(kb, out)
}
