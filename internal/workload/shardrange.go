package workload

// ShardRange returns shard i's (0-based) part of lo..hi, of n contiguous
// parts whose sizes differ by at most one, the larger ones first: the
// warehouses, tables or ids a Sharder keeps. ok is false when there are
// fewer values than shards.
func ShardRange(lo, hi, i, n int) (from, to int, ok bool) {
	size := hi - lo + 1
	if n < 1 || i < 0 || i >= n || size < n {
		return 0, 0, false
	}
	q, r := size/n, size%n
	from = lo + i*q + min(i, r)
	to = from + q - 1
	if i < r {
		to++
	}
	return from, to, true
}
