package report

import (
	"strconv"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// RunName names a run in a report: its number, or, for a sharded run
// merged from its shards (which has no number), its --run-id.
func RunName(r *summary.Run) string {
	if r.ID == 0 && r.RunKey != "" {
		return r.RunKey
	}
	return strconv.FormatInt(r.ID, 10)
}

// runIDs are the stored runs behind r: its number, or for a merged sharded
// run its shards' stored runs in shard order (a shard that stored none is
// left out).
func runIDs(r *summary.Run) []int64 {
	if r.ID != 0 || r.RunKey == "" {
		return []int64{r.ID}
	}
	var out []int64
	for _, s := range r.Shards {
		if s.Run != 0 {
			out = append(out, s.Run)
		}
	}
	return out
}
