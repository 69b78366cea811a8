package runner

import (
	"errors"

	"github.com/dbarena/dbarena/internal/wire/poller"
)

// ErrNotMultiplexed is returned for --jobs when the workload's connections
// cannot wait through a poller group: only workers on the lean wire
// clients (pgwire, mysqlwire) can, and only in a closed loop.
var ErrNotMultiplexed = errors.New("this workload's workers cannot share threads (it needs workers on the lean wire clients, --client auto, in a closed loop; drop --jobs)")

// makeGroups makes the cfg.Jobs poller groups the workers will share.
func (r *run) makeGroups() error {
	for range min(r.cfg.Jobs, r.cfg.Threads) {
		g, err := poller.New()
		if err != nil {
			r.closeGroups()
			return err
		}
		r.groups = append(r.groups, g)
	}
	return nil
}

// checkGroups makes sure that every connected worker attached a socket
// to its group: one that did not would block its whole group.
func (r *run) checkGroups() error {
	for _, wk := range r.workers {
		if wk.waiter != nil && wk.waiter.Attached() == 0 {
			return ErrNotMultiplexed
		}
	}
	return nil
}

// release closes the connected workers and their groups of a run that
// will not start.
func (r *run) release() {
	r.cancelWorkers()
	for _, wk := range r.workers {
		wk.close(false)
	}
	r.closeGroups()
}

// closeGroups releases groups that will not run.
func (r *run) closeGroups() {
	for _, g := range r.groups {
		g.Close()
	}
	r.groups = nil
}
