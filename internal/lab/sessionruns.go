package lab

import (
	"context"
	"slices"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
)

// SessionRuns reads the runs of session of plan name, oldest first (cells
// in schedule order), a sharded step's shards merged into its run
// (shard.MergeRuns), for plan show's statistics and its --fail-on.
func SessionRuns(ctx context.Context, st shard.Reader, name, session string) ([]*summary.Run, error) {
	rows, err := st.List(ctx, store.Filter{Tags: map[string]string{TagPlan: name, TagSession: session}})
	if err != nil {
		return nil, err
	}
	slices.Reverse(rows)
	var runs []*summary.Run
	for _, r := range rows {
		run, err := st.Run(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	return shard.MergeRuns(ctx, st, runs)
}

// DefaultBaseline is plan show's baseline when none is given: the server
// of the first cell of runs.
func DefaultBaseline(runs []*summary.Run) []plan.Param {
	for _, r := range runs {
		if r.Plan != nil {
			return []plan.Param{{Key: "server", Value: r.Plan.Coords["server"]}}
		}
	}
	return nil
}
