package cli

import "github.com/dbarena/dbarena/internal/workload"

// planConns is the pool size of a plan step's session: a workload.Detached
// one (http) only monitors the cell's server and reads its counters, as
// `dbarena run http --db-target` does, so it needs 2, not one a thread.
func planConns(w workload.Workload, threads int) int {
	if _, ok := w.(workload.Detached); ok {
		return 2
	}
	return threads
}
