package oltp

import (
	"fmt"

	"github.com/dbarena/dbarena/internal/workload"
)

var _ workload.Sharder = (*Workload)(nil)

// part is the share of the tables a shard's workers draw from: tables
// tlo..thi, or ids ilo..ilo+isz-1 of every table; zero values mean all.
type part struct {
	tlo, thi int
	ilo, isz int64
}

// Shard implements workload.Sharder: with at least as many tables as
// shards, shard i draws from its own tables; otherwise from its own slice
// of every table's ids, with the run's distribution over that slice.
// oltp_insert with client-made ids (--auto-inc=off) cannot be split: each
// shard's sysbench.rand.unique() sequence would make the same ids.
func (wl *Workload) Shard(i, n int) error {
	if wl.spec.name == "oltp_insert" && !wl.cfg.AutoInc {
		return fmt.Errorf("%s --auto-inc=off cannot be split in shards: their ids would collide", wl.spec.name)
	}
	if lo, hi, ok := workload.ShardRange(1, wl.cfg.Tables, i, n); ok {
		wl.part = part{tlo: lo, thi: hi}
		return nil
	}
	lo, hi, ok := workload.ShardRange(1, wl.cfg.TableSize, i, n)
	if !ok {
		return fmt.Errorf("--table-size %d: fewer rows than shards (%d)", wl.cfg.TableSize, n)
	}
	wl.part = part{ilo: int64(lo), isz: int64(hi - lo + 1)}
	return nil
}
