package monitor

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// diskStat is one line of /proc/diskstats (Documentation/admin-guide/iostats.rst).
type diskStat struct {
	name               string
	reads, rsect, rms  uint64 // completed reads, sectors read, ms spent reading
	writes, wsect, wms uint64 // completed writes, sectors written, ms spent writing
	ioms               uint64 // ms spent doing I/O (the basis of %util)
}

// parseDiskstats reads /proc/diskstats and returns the devices keep
// accepts, in file order. Lines with fewer than the 14 fields of kernels
// 2.6.25+ (old partition lines) are skipped.
func parseDiskstats(r io.Reader, keep func(name string) bool) ([]diskStat, error) {
	var out []diskStat
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 14 || !keep(f[2]) {
			continue
		}
		var v [14]uint64
		for i := 3; i < len(f) && i < 3+len(v); i++ {
			n, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("/proc/diskstats: %s field %d: %w", f[2], i+1, err)
			}
			v[i-3] = n
		}
		out = append(out, diskStat{name: f[2],
			reads: v[0], rsect: v[2], rms: v[3],
			writes: v[4], wsect: v[6], wms: v[7],
			ioms: v[9],
		})
	}
	return out, sc.Err()
}

// diskFigures are one device's figures between two readings secs apart:
// disk.DEV.reads and .writes (completed requests per second), .read_mbps
// and .write_mbps (MB/s; sectors are 512 bytes whatever the device's block
// size), .await_ms (average time per completed request, queueing
// included, as iostat's await) and .util (percent of the time the device
// had requests in flight, as iostat's %util; capped at 100).
func diskFigures(prev, cur diskStat, secs float64, out map[string]float64) {
	if secs <= 0 {
		return
	}
	p := "disk." + cur.name + "."
	reads, writes := delta32(prev.reads, cur.reads), delta32(prev.writes, cur.writes)
	out[p+"reads"] = rate(reads, secs)
	out[p+"writes"] = rate(writes, secs)
	out[p+"read_mbps"] = mib(rate(delta32(prev.rsect, cur.rsect), secs) * 512)
	out[p+"write_mbps"] = mib(rate(delta32(prev.wsect, cur.wsect), secs) * 512)
	await := 0.0
	if n := reads + writes; n > 0 {
		await = float64(delta32(prev.rms, cur.rms)+delta32(prev.wms, cur.wms)) / float64(n)
	}
	out[p+"await_ms"] = await
	out[p+"util"] = min(100, float64(delta32(prev.ioms, cur.ioms))/(secs*1000)*100)
}

// partitionName matches the usual partition names when sysfs is missing:
// sda1, vdb2, xvda1, hdc3; nvme0n1p1, mmcblk0p2, md127p1, nbd0p1, loop0p1.
var partitionName = regexp.MustCompile(`^((s|v|h|xv)d[a-z]+[0-9]+|(nvme[0-9]+n[0-9]+|mmcblk[0-9]+|md[0-9]+|nbd[0-9]+|loop[0-9]+)p[0-9]+)$`)

// skippedDevice reports devices that never hold a server's data: loop
// devices (snap and image mounts) and RAM disks.
func skippedDevice(name string) bool {
	return strings.HasPrefix(name, "loop") || strings.HasPrefix(name, "ram")
}

// WholeDevice reports whether name in /proc/diskstats is a whole block
// device worth sampling: not a partition, a loop device or a RAM disk.
// With sysfs at sysRoot it asks sysfs (a whole device is in /sys/block;
// a name's '/' is '!' there, as in cciss/c0d0); otherwise it goes by name.
func WholeDevice(sysRoot, name string) bool {
	if skippedDevice(name) {
		return false
	}
	if sysRoot != "" {
		if _, err := os.Stat(filepath.Join(sysRoot, "block")); err == nil {
			_, err := os.Stat(filepath.Join(sysRoot, "block", strings.ReplaceAll(name, "/", "!")))
			return err == nil
		}
	}
	return !partitionName.MatchString(name)
}

// DiskSampler reads per-device I/O from /proc/diskstats. By default it
// samples whole devices that have done I/O since boot; partitions, loop
// devices and RAM disks are left out.
type DiskSampler struct {
	f     procFile
	whole func(name string) bool
	known map[string]bool
	prev  map[string]diskStat
	at    time.Time
}

var _ Sampler = (*DiskSampler)(nil)

// NewDiskSampler reads procRoot/diskstats and decides what a whole device
// is with sysfs at sysRoot (see WholeDevice).
func NewDiskSampler(procRoot, sysRoot string) *DiskSampler {
	return newDiskSampler(filepath.Join(procRoot, "diskstats"), func(n string) bool { return WholeDevice(sysRoot, n) })
}

func newDiskSampler(path string, whole func(string) bool) *DiskSampler {
	return &DiskSampler{f: procFile{path: path}, whole: whole, known: map[string]bool{}}
}

// Name implements Sampler.
func (*DiskSampler) Name() string { return "disk" }

// keep caches the whole-device decision per name.
func (s *DiskSampler) keep(name string) bool {
	w, ok := s.known[name]
	if !ok {
		w = s.whole(name)
		s.known[name] = w
	}
	return w
}

// Sample implements Sampler.
func (s *DiskSampler) Sample(_ context.Context, now time.Time, out map[string]float64) error {
	r, err := s.f.read()
	if err != nil {
		return err
	}
	stats, err := parseDiskstats(r, s.keep)
	if err != nil {
		return err
	}
	secs := now.Sub(s.at).Seconds()
	cur := make(map[string]diskStat, len(stats))
	for _, d := range stats {
		cur[d.name] = d
		if d.reads == 0 && d.writes == 0 {
			continue // never used: an empty drive, unused zram
		}
		if p, ok := s.prev[d.name]; ok {
			diskFigures(p, d, secs, out)
		}
	}
	s.prev, s.at = cur, now
	return nil
}

// NetSampler reads per-interface traffic from /proc/net/dev:
// net.IF.rx_mbps and net.IF.tx_mbps (MB/s), for interfaces that have
// carried traffic since boot (loopback included: a local server's clients
// talk over it).
type NetSampler struct {
	f    procFile
	prev map[string][2]uint64
	at   time.Time
}

var _ Sampler = (*NetSampler)(nil)

// NewNetSampler reads procRoot/net/dev.
func NewNetSampler(procRoot string) *NetSampler {
	return &NetSampler{f: procFile{path: filepath.Join(procRoot, "net", "dev")}}
}

// Name implements Sampler.
func (*NetSampler) Name() string { return "net" }

// netStat is one interface's received and transmitted bytes.
type netStat struct {
	name   string
	rx, tx uint64
}

// parseNetDev reads /proc/net/dev: two header lines, then
// "IFACE: rx_bytes rx_packets ... (8 fields) tx_bytes ...". Interface
// names may be long (veth...) and glued to the first number.
func parseNetDev(r io.Reader) ([]netStat, error) {
	var out []netStat
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.Contains(name, "|") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 9 {
			continue
		}
		rx, err1 := strconv.ParseUint(f[0], 10, 64)
		tx, err2 := strconv.ParseUint(f[8], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("/proc/net/dev: bad counters for %s", strings.TrimSpace(name))
		}
		out = append(out, netStat{name: strings.TrimSpace(name), rx: rx, tx: tx})
	}
	return out, sc.Err()
}

// Sample implements Sampler.
func (s *NetSampler) Sample(_ context.Context, now time.Time, out map[string]float64) error {
	r, err := s.f.read()
	if err != nil {
		return err
	}
	stats, err := parseNetDev(r)
	if err != nil {
		return err
	}
	secs := now.Sub(s.at).Seconds()
	cur := make(map[string][2]uint64, len(stats))
	for _, n := range stats {
		cur[n.name] = [2]uint64{n.rx, n.tx}
		if n.rx == 0 && n.tx == 0 {
			continue
		}
		if p, ok := s.prev[n.name]; ok && secs > 0 {
			out["net."+n.name+".rx_mbps"] = mib(rate(delta32(p[0], n.rx), secs))
			out["net."+n.name+".tx_mbps"] = mib(rate(delta32(p[1], n.tx), secs))
		}
	}
	s.prev, s.at = cur, now
	return nil
}
