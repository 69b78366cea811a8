package report

import (
	"strconv"

	"github.com/dbarena/dbarena/internal/summary"
)

// RunName names a run in a report: its number, or, for a sharded run
// merged from its shards (which has no number), its --run-id.
func RunName(r *summary.Run) string {
	if r.ID == 0 && r.RunKey != "" {
		return r.RunKey
	}
	return strconv.FormatInt(r.ID, 10)
}
