package monitor

import "math"

// delta32 is how much a cumulative kernel counter grew from prev to cur.
// Counters the kernel keeps in an unsigned long (/proc/diskstats,
// /proc/net/dev) are 32 bits wide on 32-bit kernels and wrap to zero after
// 2^32-1. A smaller cur is read as one wrap when prev fits in 32 bits and
// the wrapped growth is below 2^31 (no device moves 2^31 sectors or
// requests in one interval); otherwise the counter was reset (a device
// re-attached) and the growth since the reset, cur, is the best estimate.
func delta32(prev, cur uint64) uint64 {
	if cur >= prev {
		return cur - prev
	}
	if prev <= math.MaxUint32 {
		if d := cur + (math.MaxUint32 - prev) + 1; d < 1<<31 {
			return d
		}
	}
	return cur
}

// delta64 is how much a 64-bit counter grew; a smaller cur means it was
// reset (a server restart, FLUSH STATUS) and the growth since is cur.
func delta64(prev, cur uint64) uint64 {
	if cur >= prev {
		return cur - prev
	}
	return cur
}

// rate turns a counter's growth over secs into a per-second rate.
func rate(d uint64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(d) / secs
}

// mib converts bytes to MB of 2^20 bytes, the unit of every *_mb and
// *_mbps figure (as iostat -m and free -m).
func mib(bytes float64) float64 { return bytes / (1 << 20) }
