package execute

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/wire/poller"
)

// counterTimeout bounds each read of the server's counters or settings: a
// frozen server must not hang the end of a run.
const counterTimeout = 5 * time.Second

// errRestarted says the server restarted between two counter readings.
var errRestarted = errors.New("the server restarted during the run (its start time changed): server counters not compared")

// counterProbe reads the server's own counters on a connection apart from
// the workers', to cross-check the totals a run reports.
type counterProbe struct {
	d  dialect.Dialect
	db *sql.DB
}

func newCounterProbe(s *Session) (*counterProbe, error) {
	if s.NoDatabase {
		return nil, errors.New("no database")
	}
	db, err := s.Dialect.Open(s.Target, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		return nil, err
	}
	return &counterProbe{d: s.Dialect, db: db}, nil
}

// read reads the counters, giving up after counterTimeout.
func (p *counterProbe) read(ctx context.Context) (dialect.Counters, error) {
	ctx, cancel := context.WithTimeout(ctx, counterTimeout)
	defer cancel()
	return p.d.ReadCounters(ctx, p.db)
}

// delta reads the counters again and returns what changed since before, or
// errRestarted. PostgreSQL publishes a backend's statistics shortly after it
// goes idle or exits, so it waits until two reads agree (at most a few
// seconds, fewer when ctx ends).
func (p *counterProbe) delta(ctx context.Context, before dialect.Counters) (map[string]int64, error) {
	if poller.Sleep(ctx, 300*time.Millisecond) != nil {
		return nil, ctx.Err()
	}
	after, err := p.read(ctx)
	if err != nil {
		return nil, err
	}
	for i := 0; i < 20; i++ {
		if poller.Sleep(ctx, 250*time.Millisecond) != nil {
			break
		}
		again, err := p.read(ctx)
		if err != nil {
			return nil, err
		}
		// Questions counts the probe's own SHOW STATUS, and MySQL's start
		// time is derived from a clock: compare the rest.
		settled := again
		settled.Queries, settled.Started = after.Queries, after.Started
		if settled == after {
			break
		}
		after = again
	}
	if after.RestartedSince(before) {
		return nil, errRestarted
	}
	out := map[string]int64{
		"commits":       after.Commits - before.Commits,
		"rollbacks":     after.Rollbacks - before.Rollbacks,
		"rows_inserted": after.RowsInserted - before.RowsInserted,
	}
	if after.Queries > 0 {
		out["queries"] = after.Queries - before.Queries
		out["selects"] = after.Selects - before.Selects
		out["inserts"] = after.Inserts - before.Inserts
		out["updates"] = after.Updates - before.Updates
		out["deletes"] = after.Deletes - before.Deletes
	}
	return out, nil
}

// Close closes the probe's own pool.
func (p *counterProbe) Close() error { return p.db.Close() }
