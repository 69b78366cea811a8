package monitor

import (
	"context"
	"database/sql"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// OpenWaitSampler opens a pool of one connection and returns the wait
// profile's sampler for d's servers, with a line for the monitor's note
// when the profile is partial (performance_schema off). It returns a nil
// Sampler and the reason when d's flavor has no wait source.
func OpenWaitSampler(ctx context.Context, d dialect.Dialect, t target.Target) (Sampler, string, error) {
	switch src := d.(type) {
	case SessionWaitSource:
		db, err := openMonitorPool(ctx, d, t)
		if err != nil {
			return nil, "", err
		}
		return NewSessionWaits(src, db, t.Database, WaitSampleEvery), "", nil
	case WaitSummarySource:
		db, err := openMonitorPool(ctx, d, t)
		if err != nil {
			return nil, "", err
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		s, on, err := NewSummaryWaits(qctx, src, db, WaitSampleEvery)
		cancel()
		if err != nil {
			return s, "wait profile: performance_schema: " + err.Error() + ": row-lock waits only", nil
		}
		if !on {
			return s, "wait profile: performance_schema is off on the server: row-lock waits only (wait.row_lock_ms, wait.row_lock_sessions)", nil
		}
		return s, "", nil
	}
	return nil, "wait profile: the " + string(t.Flavor) + " flavor has no wait source", nil
}

// openMonitorPool opens a pool of one connection for a monitor sampler, to
// the maintenance database when the flavor has one (so that the sampler's
// queries do not count in the workload database's statistics).
func openMonitorPool(ctx context.Context, d dialect.Dialect, t target.Target) (*sql.DB, error) {
	if m := d.MaintenanceDatabase(); m != "" && t.Database != m {
		alt := t
		alt.Database = m
		if db, err := d.Open(alt, dialect.OpenOptions{MaxConns: 1}); err == nil {
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err = db.PingContext(pctx)
			cancel()
			if err == nil {
				return db, nil
			}
			db.Close()
		}
	}
	return d.Open(t, dialect.OpenOptions{MaxConns: 1})
}
