package oltp

import (
	"context"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// TestShardNarrows: shards draw only from their own tables, or their own
// ids when there are fewer tables than shards.
func TestShardNarrows(t *testing.T) {
	for _, tc := range []struct {
		name           string
		tables, size   int
		shard, shards  int
		wantTables     [2]int
		wantLo, wantHi int64
	}{
		{"tables", 4, 100, 1, 3, [2]int{3, 3}, 1, 100},
		{"ids", 1, 100, 2, 3, [2]int{1, 1}, 68, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl := byName(t, "oltp_point_select").(*Workload)
			wl.cfg.Tables, wl.cfg.TableSize = tc.tables, tc.size
			if err := wl.Shard(tc.shard, tc.shards); err != nil {
				t.Fatal(err)
			}
			w, rec := newTestWorker(t, wl, target.MySQL, 0)
			for range 300 {
				if err := w.Event(context.Background(), &workload.Event{}); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range rec.ran {
				id := c.args[0].(int64)
				if id < tc.wantLo || id > tc.wantHi {
					t.Fatalf("id %d outside %d..%d", id, tc.wantLo, tc.wantHi)
				}
				ok := false
				for n := tc.wantTables[0]; n <= tc.wantTables[1]; n++ {
					ok = ok || strings.Contains(c.text, "sbtest"+string(rune('0'+n))+" ")
				}
				if !ok {
					t.Fatalf("statement %q outside tables %v", c.text, tc.wantTables)
				}
			}
		})
	}
	wl := byName(t, "oltp_point_select").(*Workload)
	wl.cfg.TableSize = 2
	if err := wl.Shard(0, 3); err == nil {
		t.Error("2 rows in 3 shards: no error")
	}
}
