package k8s

import (
	"testing"
	"time"
)

// TestStuck: a pod is stuck once it has been pending for longer than the
// bound since the later of it first seen pending and the first shard seen
// at the barrier; not before.
func TestStuck(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	j := &jobWatch{pending: map[string]string{"p1": "shard 1 (pod p1) pending: Unschedulable"},
		pendingSince: map[string]time.Time{"p1": t0}}
	barrier := t0.Add(10 * time.Second)
	for _, tc := range []struct {
		now  time.Duration
		from time.Time
		want string
	}{
		{14 * time.Second, t0, ""},
		{16 * time.Second, t0, "shard 1 (pod p1) pending: Unschedulable"},
		{16 * time.Second, barrier, ""}, // the shards came later: 6 s at the barrier
		{26 * time.Second, barrier, "shard 1 (pod p1) pending: Unschedulable"},
	} {
		if got, _ := j.stuck(t0.Add(tc.now), tc.from, 15*time.Second); got != tc.want {
			t.Errorf("at +%v from %v: %q, want %q", tc.now, tc.from.Sub(t0), got, tc.want)
		}
	}
}
