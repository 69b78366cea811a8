package cli

import (
	"context"
	"database/sql"
	"time"

	"github.com/dbarena/dbarena/internal/dialect"
)

// counterProbe reads the server's own counters on a connection apart from
// the workers', to cross-check the totals a run reports.
type counterProbe struct {
	d  dialect.Dialect
	db *sql.DB
}

func newCounterProbe(s *session) (*counterProbe, error) {
	db, err := s.dialect.Open(s.target, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		return nil, err
	}
	return &counterProbe{d: s.dialect, db: db}, nil
}

func (p *counterProbe) read(ctx context.Context) (dialect.Counters, error) {
	return p.d.ReadCounters(ctx, p.db)
}

// delta reads the counters again and returns what changed. PostgreSQL
// publishes a backend's statistics shortly after it goes idle or exits, so
// it waits until two reads agree (at most a few seconds).
func (p *counterProbe) delta(ctx context.Context, before dialect.Counters) (map[string]int64, error) {
	time.Sleep(300 * time.Millisecond)
	after, err := p.read(ctx)
	if err != nil {
		return nil, err
	}
	for i := 0; i < 20; i++ {
		time.Sleep(250 * time.Millisecond)
		again, err := p.read(ctx)
		if err != nil {
			return nil, err
		}
		// Questions counts the probe's own SHOW STATUS: compare the rest.
		settled := again
		settled.Queries = after.Queries
		if settled == after {
			break
		}
		after = again
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
