package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/dbarena/dbarena/internal/lab"
)

// lockPlan takes plan name's lock in $DBARENA_HOME/locks (lab.LockPlan),
// waiting up to wait for it. Held by another process: exit 2, naming its
// pid.
func (a *App) lockPlan(name string, wait time.Duration) (func(), error) {
	dir := filepath.Join(a.home(), "locks")
	l, err := lab.LockPlan(dir, name, 0)
	var le *lab.LockedError
	if errors.As(err, &le) && wait > 0 {
		fmt.Fprintf(a.Stderr, "dbarena: %s; waiting up to %v\n", le.Holder(), wait)
		l, err = lab.LockPlan(dir, name, wait)
	}
	switch {
	case errors.As(err, &le):
		return nil, usagef("%w", err)
	case err != nil:
		return nil, failed(err)
	}
	return func() { _ = l.Unlock() }, nil
}
