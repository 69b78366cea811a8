package report

import (
	"context"
	"fmt"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/scaleout/shard"
)

// Select reads the runs a report selects: those filter selects
// (none when it selects nothing but sharded runs), then the sharded runs
// named by keys, each merged into one run (shard.Find, as results show); a name that is no run is a shard.NoSuchRun.
// A shard's own run selected by a tag or plan is replaced by its merged
// run, so that a sharded run is one run of its series; one named by its
// number stays itself.
func Select(ctx context.Context, st shard.Finder, filter store.Filter, keys []string) ([]*summary.Run, error) {
	var runs []*summary.Run
	if len(filter.IDs) > 0 || filter.Tags != nil || filter.Plan != "" {
		var err error
		if runs, err = Load(ctx, st, filter); err != nil {
			return nil, err
		}
		if len(runs) == 0 {
			return nil, &shard.NoSuchRun{Msg: fmt.Sprintf("no stored run matches the selection in %s", st.Location())}
		}
		for _, id := range filter.IDs {
			if !containsRun(runs, id) {
				return nil, &shard.NoSuchRun{Msg: fmt.Sprintf("no run %d in %s", id, st.Location())}
			}
		}
	}
	named := map[int64]bool{}
	for _, id := range filter.IDs {
		named[id] = true
	}
	var merge []string
	seen := map[string]bool{}
	add := func(key string) {
		if !seen[key] {
			seen[key] = true
			merge = append(merge, key)
		}
	}
	for _, key := range keys {
		add(key)
	}
	out := runs[:0]
	for _, r := range runs {
		if key := r.Tags[shard.TagRun]; key != "" && r.RunKey != "" && !named[r.ID] {
			add(key)
			continue
		}
		out = append(out, r)
	}
	runs = out
	for _, key := range merge {
		run, err := shard.Find(ctx, st, key)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	return runs, nil
}

func containsRun(runs []*summary.Run, id int64) bool {
	for _, r := range runs {
		if r.ID == id {
			return true
		}
	}
	return false
}
