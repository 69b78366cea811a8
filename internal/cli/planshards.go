package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/lab"
	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
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

// shardsLine says how the plan's workloads are sharded, for plan check:
// "" when no step is.
func shardsLine(p *plan.Plan) string {
	var parts []string
	for _, w := range p.Workloads {
		if n, _ := p.ShardsOf(w); n > 1 {
			parts = append(parts, w.Name+" "+strconv.Itoa(n))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Shards (local processes per run): " + strings.Join(parts, ", ")
}

// stepRunRef names a plan step's stored run for its progress line: its
// number, or the sharded run with its shards' start skew (and, when it is
// not complete, why).
func stepRunRef(run *summary.Run) string {
	switch {
	case run.ID > 0:
		return fmt.Sprintf(" (run %d)", run.ID)
	case run.RunKey == "":
		return ""
	}
	ref := fmt.Sprintf(" (sharded run %s: %d shards, start skew up to %.1f ms)", run.RunKey, len(run.Shards), maxShardSkew(run))
	if run.Status != summary.StatusComplete && len(run.Notes) > 0 {
		ref += " " + oneLine(strings.Join(run.Notes, "; "))
	}
	return ref
}

func maxShardSkew(run *summary.Run) float64 {
	m := 0.0
	for _, s := range run.Shards {
		m = max(m, s.StartSkewMS)
	}
	return m
}
