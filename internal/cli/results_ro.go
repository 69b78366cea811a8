package cli

import (
	"context"
	"os"
	"strings"

	"github.com/dbarena/dbarena/internal/results/store"
)

// openStoreRead opens the results store named by a --results value for a
// command that only reads it (results list, show, export, report, compare). It opens it as
// openStore does; when that fails for a store file that exists (mode 0444,
// a read-only directory or file system), it opens the file read-only
// instead (store.OpenReadOnly), and fails with the first error only when
// that fails too.
func (a *App) openStoreRead(ctx context.Context, loc string) (*store.Store, error) {
	st, err := a.openStore(ctx, loc)
	if err == nil || strings.Contains(loc, "://") {
		return st, err
	}
	path := loc
	if path == "" {
		path = store.DefaultPath(a.Getenv)
	}
	if _, statErr := os.Stat(path); statErr != nil {
		return nil, err
	}
	ro, roErr := store.OpenReadOnly(ctx, path)
	if roErr != nil {
		return nil, usagef("%v (read-only: %v)", errUnwrapExit(err), roErr)
	}
	return ro, nil
}

// errUnwrapExit is the error inside an exit error, for a message that
// wraps it again.
func errUnwrapExit(err error) error {
	if e, ok := err.(*exitError); ok {
		return e.err
	}
	return err
}
