package workload

import "testing"

// TestShardRange: the parts are contiguous, cover lo..hi once, and the
// first ones are the larger.
func TestShardRange(t *testing.T) {
	for _, tc := range []struct{ lo, hi, n int }{{1, 10, 3}, {1, 3, 3}, {5, 104, 7}, {1, 1, 1}} {
		next := tc.lo
		for i := range tc.n {
			from, to, ok := ShardRange(tc.lo, tc.hi, i, tc.n)
			size, want := to-from+1, (tc.hi-tc.lo+1)/tc.n
			if i < (tc.hi-tc.lo+1)%tc.n {
				want++
			}
			if !ok || from != next || size != want {
				t.Fatalf("ShardRange(%d, %d, %d, %d) = %d..%d %v; want from %d, %d values", tc.lo, tc.hi, i, tc.n, from, to, ok, next, want)
			}
			next = to + 1
		}
		if next != tc.hi+1 {
			t.Errorf("%d..%d in %d: parts end at %d", tc.lo, tc.hi, tc.n, next-1)
		}
	}
	if _, _, ok := ShardRange(1, 2, 0, 3); ok {
		t.Error("2 values in 3 shards: ok")
	}
}
