package shard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// Finder is the part of the results store Find reads (*store.Store).
type Finder interface {
	Reader
	// Location names the store in messages.
	Location() string
}

// NoSuchRun is Find's error for an argument that names no stored run: bad
// input, unlike a store that cannot be read.
type NoSuchRun struct{ Msg string }

func (e *NoSuchRun) Error() string { return e.Msg }

// Find reads the run arg names: a stored run by its number, or a sharded
// run by its --run-id, merged (Load).
func Find(ctx context.Context, st Finder, arg string) (*summary.Run, error) {
	if id, err := strconv.ParseInt(arg, 10, 64); err == nil && id > 0 {
		run, err := st.Run(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, &NoSuchRun{fmt.Sprintf("no run %d in %s", id, st.Location())}
		}
		return run, err
	}
	if CheckKey(arg) != nil {
		return nil, &NoSuchRun{fmt.Sprintf("%q is not a run ID (a number, or the --run-id of a sharded run)", arg)}
	}
	run, err := Load(ctx, st, arg)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &NoSuchRun{fmt.Sprintf("%q is not a run ID, nor the --run-id of a sharded run in %s", arg, st.Location())}
	}
	return run, err
}

// ExportSelection resolves the run IDs given to results export: numbers
// (and lists of them, 1,2) are runs; a sharded run's --run-id is the run
// with its shards' runs (every one stored, oldest first), exported whole.
func ExportSelection(ctx context.Context, st Finder, args []string) ([]int64, []string, error) {
	var (
		ids  []int64
		keys []string
	)
	for _, a := range args {
		for _, f := range strings.Split(a, ",") {
			f = strings.TrimSpace(f)
			if id, err := strconv.ParseInt(f, 10, 64); err == nil {
				if id < 1 {
					return nil, nil, &NoSuchRun{fmt.Sprintf("results export: %q is not a run ID", f)}
				}
				ids = append(ids, id)
				continue
			}
			if CheckKey(f) != nil {
				return nil, nil, &NoSuchRun{fmt.Sprintf("results export: %q is not a run ID (a number, or the --run-id of a sharded run)", f)}
			}
			if _, err := st.ShardRun(ctx, f); errors.Is(err, store.ErrNotFound) {
				return nil, nil, &NoSuchRun{fmt.Sprintf("results export: %q is not a run ID, nor the --run-id of a sharded run in %s", f, st.Location())}
			} else if err != nil {
				return nil, nil, err
			}
			rows, err := st.List(ctx, store.Filter{Tags: map[string]string{TagRun: f}})
			if err != nil {
				return nil, nil, err
			}
			for _, r := range slices.Backward(rows) { // newest first
				ids = append(ids, r.ID)
			}
			if !slices.Contains(keys, f) {
				keys = append(keys, f)
			}
		}
	}
	return ids, keys, nil
}
