package tpcc

import (
	"fmt"

	"github.com/dbarena/dbarena/internal/workload"
)

var _ workload.Sharder = (*Workload)(nil)

// Shard implements workload.Sharder: shard i of n takes its own
// contiguous part of the warehouses as home warehouses (the first shards
// one more when they do not divide evenly); remote warehouses (Payment's
// customer, New-Order's supplying warehouses) are still drawn from all
// of them, as on one machine. The warehouses are known once the run reads
// them, so the split is checked then.
func (wl *Workload) Shard(i, n int) error {
	if n < 1 || i < 0 || i >= n {
		return fmt.Errorf("tpcc: shard %d of %d", i, n)
	}
	if wl.fs != nil && wl.fs.Changed("warehouses") && wl.cfg.Warehouses < n {
		return fmt.Errorf("--warehouses %d: fewer warehouses than shards (%d); each shard needs a home warehouse", wl.cfg.Warehouses, n)
	}
	wl.shard, wl.shards = i, n
	return nil
}

// homes returns the home warehouses of this process's terminals: all of
// them, or its shard's part.
func (wl *Workload) homes(warehouses int) (lo, hi int, err error) {
	if wl.shards <= 1 {
		return 1, warehouses, nil
	}
	lo, hi, ok := workload.ShardRange(1, warehouses, wl.shard, wl.shards)
	if !ok {
		return 0, 0, fmt.Errorf("%d warehouses cannot be split in %d shards; each shard needs a home warehouse", warehouses, wl.shards)
	}
	return lo, hi, nil
}
