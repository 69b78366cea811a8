package shard

import (
	"context"
	"errors"
	"fmt"
	"strconv"

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
