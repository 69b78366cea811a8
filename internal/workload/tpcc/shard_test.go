package tpcc

import "testing"

// TestShardHomes: each shard's terminals have their home warehouses in
// its own part, and the parts cover every warehouse once.
func TestShardHomes(t *testing.T) {
	const warehouses = 7
	seen := map[int]int{}
	for i := range 3 {
		wl := New()
		if err := wl.Shard(i, 3); err != nil {
			t.Fatal(err)
		}
		lo, hi, err := wl.homes(warehouses)
		if err != nil {
			t.Fatal(err)
		}
		for h := lo; h <= hi; h++ {
			seen[h]++
		}
		w := offlineWorker(t, wl, warehouses, 0)
		w.homeLo, w.homeHi = lo, hi
		for range 500 {
			w.next()
			if w.w < lo || w.w > hi {
				t.Fatalf("shard %d: home warehouse %d outside %d..%d", i, w.w, lo, hi)
			}
		}
	}
	for h := 1; h <= warehouses; h++ {
		if seen[h] != 1 {
			t.Errorf("warehouse %d is home in %d shards, want 1", h, seen[h])
		}
	}
	wl := New()
	if err := wl.Shard(2, 3); err != nil {
		t.Fatal(err)
	}
	if _, _, err := wl.homes(2); err == nil {
		t.Error("2 warehouses in 3 shards: no error")
	}
}
