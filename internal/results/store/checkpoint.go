package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// BeginRun stores run's identity and parameters (and whatever else it
// holds) with status "running", owned by this process, and returns its id
// (also set in run.ID). Add intervals with AppendIntervals, the figures so
// far with Checkpoint, and end it with FinishRun; if this process dies
// first, readers report the run "aborted" with everything up to its last
// write. run.Status is ignored.
func (s *Store) BeginRun(ctx context.Context, run *summary.Run) (int64, error) {
	if run == nil {
		return 0, errors.New("begin run: nil run")
	}
	if run.Workload == "" {
		return 0, errors.New("begin run: workload is empty")
	}
	id, err := s.inTx(ctx, func(tx *sql.Tx) (int64, error) {
		return s.insertRun(ctx, tx, run, true)
	})
	if err != nil {
		return 0, fmt.Errorf("begin run in %s: %w", s.loc, err)
	}
	run.ID = id
	return id, nil
}

// AppendIntervals adds report intervals and monitor samples (either may be
// empty) after those already stored for running run id, in one
// transaction. A failed call stores nothing; the run stays writable.
func (s *Store) AppendIntervals(ctx context.Context, id int64, ivs []summary.Interval, samples []summary.Sample) error {
	_, err := s.inTx(ctx, func(tx *sql.Tx) (int64, error) {
		if err := s.lockRunning(ctx, tx, id); err != nil {
			return 0, err
		}
		nIv, err := s.count(ctx, tx, "intervals", id)
		if err != nil {
			return 0, err
		}
		if err := s.insertIntervals(ctx, tx, id, nIv, ivs); err != nil {
			return 0, err
		}
		nSm, err := s.count(ctx, tx, "run_samples", id)
		if err != nil {
			return 0, err
		}
		if err := s.insertSamples(ctx, tx, id, nSm, samples); err != nil {
			return 0, err
		}
		return 0, s.heartbeat(ctx, tx, id)
	})
	if err != nil {
		return fmt.Errorf("append %d intervals to run %d in %s: %w", len(ivs), id, s.loc, err)
	}
	return nil
}

// Checkpoint replaces running run id's content (totals, throughput,
// latency, per-type statistics, tags, histogram, everything in the
// summary) with run, the run so far, in one transaction. The intervals and
// samples already appended are kept (run's own are ignored); the status
// stays "running". A failed call changes nothing.
func (s *Store) Checkpoint(ctx context.Context, id int64, run *summary.Run) error {
	if run == nil {
		return fmt.Errorf("checkpoint run %d: nil run", id)
	}
	_, err := s.inTx(ctx, func(tx *sql.Tx) (int64, error) {
		if err := s.lockRunning(ctx, tx, id); err != nil {
			return 0, err
		}
		r := storedCopy(run)
		r.ID, r.Status = id, summary.StatusRunning
		return 0, s.updateRun(ctx, tx, r, true)
	})
	if err != nil {
		return fmt.Errorf("checkpoint run %d in %s: %w", id, s.loc, err)
	}
	return nil
}

// FinishRun stores running run id's final content and status (complete,
// interrupted, failed or degraded) in one transaction, and sets run.ID. If
// run has intervals (monitor samples) they replace the stored ones;
// otherwise the appended ones are kept and copied into the stored
// summary. A run readers report as aborted can still be finished.
func (s *Store) FinishRun(ctx context.Context, id int64, run *summary.Run) error {
	if run == nil {
		return fmt.Errorf("finish run %d: nil run", id)
	}
	if err := validate(run, finalStatuses); err != nil {
		return fmt.Errorf("finish run %d: %w", id, err)
	}
	_, err := s.inTx(ctx, func(tx *sql.Tx) (int64, error) {
		if err := s.lockRunning(ctx, tx, id); err != nil {
			return 0, err
		}
		r := storedCopy(run)
		r.ID = id
		if r.Intervals != nil {
			if _, err := s.exec(ctx, tx, "DELETE FROM intervals WHERE run_id = ?", id); err != nil {
				return 0, fmt.Errorf("delete appended intervals: %w", err)
			}
			if err := s.insertIntervals(ctx, tx, id, 0, r.Intervals); err != nil {
				return 0, err
			}
		} else {
			ivs, err := s.readIntervals(ctx, tx, id)
			if err != nil {
				return 0, err
			}
			r.Intervals = ivs
		}
		if r.Monitor != nil && r.Monitor.Samples != nil {
			if _, err := s.exec(ctx, tx, "DELETE FROM run_samples WHERE run_id = ?", id); err != nil {
				return 0, fmt.Errorf("delete appended monitor samples: %w", err)
			}
			if err := s.insertSamples(ctx, tx, id, 0, r.Monitor.Samples); err != nil {
				return 0, err
			}
		} else {
			samples, err := s.readSamples(ctx, tx, id)
			if err != nil {
				return 0, err
			}
			if len(samples) > 0 {
				if r.Monitor == nil {
					r.Monitor = &summary.Monitor{}
				}
				r.Monitor.Samples = samples
			}
		}
		return 0, s.updateRun(ctx, tx, r, false)
	})
	if err != nil {
		return fmt.Errorf("finish run %d in %s: %w", id, s.loc, err)
	}
	run.ID = id
	return nil
}

// lockRunning locks run id's row for the transaction and checks that it is
// a running run.
func (s *Store) lockRunning(ctx context.Context, tx *sql.Tx, id int64) error {
	var status string
	err := tx.QueryRowContext(ctx, s.be.rebind("SELECT status FROM runs WHERE id = ?"+s.be.forUpdate()), id).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("run %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("read run %d: %w", id, err)
	}
	if status != summary.StatusRunning {
		return fmt.Errorf("run %d is %s, no longer running", id, status)
	}
	return nil
}

// count returns the number of rows of run id in table.
func (s *Store) count(ctx context.Context, tx *sql.Tx, table string, id int64) (int, error) {
	var n int
	if err := tx.QueryRowContext(ctx, s.be.rebind("SELECT COUNT(*) FROM "+table+" WHERE run_id = ?"), id).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s: %w", table, err)
	}
	return n, nil
}

// heartbeat records that run id's owner wrote it now.
func (s *Store) heartbeat(ctx context.Context, tx *sql.Tx, id int64) error {
	if _, err := s.exec(ctx, tx, "UPDATE runs SET heartbeat_at = ? WHERE id = ?", formatTime(time.Now()), id); err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	return nil
}

// updateRun rewrites r's runs row (r.ID), per-type statistics and tags, and
// bumps the heartbeat.
func (s *Store) updateRun(ctx context.Context, tx *sql.Tx, r *summary.Run, running bool) error {
	names, vals, err := s.runColumns(r)
	if err != nil {
		return err
	}
	sum, err := encodeSummary(r, running)
	if err != nil {
		return err
	}
	set := make([]string, len(names))
	for i, n := range names {
		set[i] = n + " = ?"
		if n == "summary" {
			vals[i] = sum
		}
	}
	set = append(set, "heartbeat_at = ?")
	vals = append(vals, formatTime(time.Now()), r.ID)
	if _, err := s.exec(ctx, tx, "UPDATE runs SET "+strings.Join(set, ", ")+" WHERE id = ?", vals...); err != nil {
		return fmt.Errorf("update run: %w", err)
	}
	return s.replaceTypesAndTags(ctx, tx, r.ID, r, true)
}
