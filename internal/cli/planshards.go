package cli

import (
	"github.com/dbarena/dbarena/internal/lab"
	"github.com/dbarena/dbarena/internal/results/store"
)

// planShards runs a plan's steps of shards: N > 1 as `run --shards N
// --local` runs its shards: processes of this binary sharing results (the
// plan's --results) and the start barrier. Their output is not printed
// (plan run prints a line per step); an exit error quotes a shard's last
// lines.
func (a *App) planShards(st *store.Store, results string) lab.LocalShards {
	local := a.localShards()
	local.Started = nil
	return lab.LocalShards{Local: local, Store: st, Results: results}
}
