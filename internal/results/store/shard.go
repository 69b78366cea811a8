package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrShardStarted is returned (wrapped) by JoinShard when the sharded run
// already started: its run id is used up.
var ErrShardStarted = errors.New("the sharded run already started")

// ShardMember is one shard that joined a sharded run's start barrier.
type ShardMember struct {
	Index   int
	Host    string
	PID     int64
	ReadyAt time.Time
	// Started is set once the shard's clock started; SkewMS is then how
	// late after the common start it did, by its own clock.
	Started bool
	SkewMS  float64
}

// ShardRun is a sharded run's barrier: its shard count, the common start
// (zero until every shard joined) and the shards that joined, by index.
type ShardRun struct {
	Key     string
	Count   int
	StartAt time.Time
	Members []ShardMember
	// Error is the coordinator's verdict (FailShardRun), "" if none.
	Error string
}

// JoinShard registers shard index of count shards of the sharded run key
// at its start barrier, from host. A shard that joins again before the
// start (a restarted pod) replaces its row. It fails when the run was
// begun with another shard count, or already started (ErrShardStarted).
func (s *Store) JoinShard(ctx context.Context, key string, index, count int, host string) error {
	if index < 0 || index >= count {
		return fmt.Errorf("join shard %d of %d: index out of range", index, count)
	}
	now := formatTime(time.Now())
	_, err := s.inTx(ctx, func(tx *sql.Tx) (int64, error) {
		var (
			n     int
			start string
		)
		err := tx.QueryRowContext(ctx, s.be.rebind("SELECT shards, start_at FROM shard_runs WHERE run_key = ?"+s.be.forUpdate()), key).Scan(&n, &start)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if _, err := s.exec(ctx, tx, "INSERT INTO shard_runs (run_key, shards, created_at) VALUES (?, ?, ?)", key, count, now); err != nil {
				return 0, fmt.Errorf("insert sharded run: %w", err)
			}
		case err != nil:
			return 0, fmt.Errorf("read sharded run: %w", err)
		case n != count:
			return 0, fmt.Errorf("run id %q has %d shards, this shard says %d", key, n, count)
		case start != "":
			return 0, fmt.Errorf("run id %q: %w at %s; pick a new --run-id", key, ErrShardStarted, start)
		}
		if _, err := s.exec(ctx, tx, "DELETE FROM shard_members WHERE run_key = ? AND shard = ?", key, index); err != nil {
			return 0, fmt.Errorf("replace shard %d: %w", index, err)
		}
		_, err = s.exec(ctx, tx, "INSERT INTO shard_members (run_key, shard, host, pid, ready_at) VALUES (?, ?, ?, ?, ?)",
			key, index, host, s.self.pid, now)
		if err != nil {
			return 0, fmt.Errorf("insert shard %d: %w", index, err)
		}
		return 0, nil
	})
	if err != nil {
		return fmt.Errorf("join shard %d of run %q in %s: %w", index, key, s.loc, err)
	}
	return nil
}

// ShardStart returns the common start of sharded run key. Until every
// shard joined it returns the zero time; the first caller that finds them
// all sets the start to now+lead (a conditional update: exactly one
// caller's time wins), and every caller reads that one back.
func (s *Store) ShardStart(ctx context.Context, key string, lead time.Duration) (time.Time, error) {
	fail := func(err error) (time.Time, error) {
		return time.Time{}, fmt.Errorf("start barrier of run %q in %s: %w", key, s.loc, err)
	}
	var (
		n, joined int
		start     string
	)
	err := s.db.QueryRowContext(ctx, s.be.rebind(`SELECT r.shards, r.start_at,
		(SELECT COUNT(*) FROM shard_members m WHERE m.run_key = r.run_key)
		FROM shard_runs r WHERE r.run_key = ?`), key).Scan(&n, &start, &joined)
	if errors.Is(err, sql.ErrNoRows) {
		return fail(fmt.Errorf("no such sharded run: %w", ErrNotFound))
	}
	if err != nil {
		return fail(err)
	}
	if start == "" && joined < n {
		return time.Time{}, nil
	}
	if start == "" {
		_, err := s.inTx(ctx, func(tx *sql.Tx) (int64, error) {
			_, err := s.exec(ctx, tx, "UPDATE shard_runs SET start_at = ? WHERE run_key = ? AND start_at = ''",
				formatTime(time.Now().Add(lead)), key)
			return 0, err
		})
		if err != nil {
			return fail(err)
		}
		if err := s.db.QueryRowContext(ctx, s.be.rebind("SELECT start_at FROM shard_runs WHERE run_key = ?"), key).Scan(&start); err != nil {
			return fail(err)
		}
	}
	t, err := parseTime(start)
	if err != nil {
		return fail(err)
	}
	return t, nil
}

// ShardStarted records that shard index of run key started its clock skew
// after the common start.
func (s *Store) ShardStarted(ctx context.Context, key string, index int, skew time.Duration) error {
	_, err := s.inTx(ctx, func(tx *sql.Tx) (int64, error) {
		_, err := s.exec(ctx, tx, "UPDATE shard_members SET started = 1, skew_ms = ? WHERE run_key = ? AND shard = ?",
			float64(skew)/float64(time.Millisecond), key, index)
		return 0, err
	})
	if err != nil {
		return fmt.Errorf("record the start of shard %d of run %q in %s: %w", index, key, s.loc, err)
	}
	return nil
}

// ShardRun returns sharded run key's barrier; the error wraps ErrNotFound
// when there is no such run.
func (s *Store) ShardRun(ctx context.Context, key string) (*ShardRun, error) {
	fail := func(err error) (*ShardRun, error) {
		return nil, fmt.Errorf("read sharded run %q from %s: %w", key, s.loc, err)
	}
	r := &ShardRun{Key: key}
	var start string
	err := s.db.QueryRowContext(ctx, s.be.rebind("SELECT shards, start_at, error FROM shard_runs WHERE run_key = ?"), key).Scan(&r.Count, &start, &r.Error)
	if errors.Is(err, sql.ErrNoRows) {
		return fail(ErrNotFound)
	}
	if err != nil {
		return fail(err)
	}
	if start != "" {
		if r.StartAt, err = parseTime(start); err != nil {
			return fail(err)
		}
	}
	rows, err := s.db.QueryContext(ctx, s.be.rebind(`SELECT shard, host, pid, ready_at, started, skew_ms
		FROM shard_members WHERE run_key = ? ORDER BY shard`), key)
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			m       ShardMember
			ready   string
			started int
		)
		if err := rows.Scan(&m.Index, &m.Host, &m.PID, &ready, &started, &m.SkewMS); err != nil {
			return fail(err)
		}
		if m.ReadyAt, err = parseTime(ready); err != nil {
			return fail(err)
		}
		m.Started = started != 0
		r.Members = append(r.Members, m)
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	return r, nil
}

// maxShardError bounds the stored length of a sharded run's error.
const maxShardError = 2000

// FailShardRun stores msg as the error of sharded run key of count shards
// (creating its row when no shard joined yet): the coordinator's verdict,
// such as a shard that stopped answering, which makes the merged run
// failed. A later call replaces the message.
func (s *Store) FailShardRun(ctx context.Context, key string, count int, msg string) error {
	if len(msg) > maxShardError {
		msg = msg[:maxShardError]
	}
	_, err := s.inTx(ctx, func(tx *sql.Tx) (int64, error) {
		res, err := s.exec(ctx, tx, "UPDATE shard_runs SET error = ? WHERE run_key = ?", msg, key)
		if err != nil {
			return 0, err
		}
		if n, err := res.RowsAffected(); err == nil && n > 0 {
			return 0, nil
		}
		_, err = s.exec(ctx, tx, "INSERT INTO shard_runs (run_key, shards, created_at, error) VALUES (?, ?, ?, ?)",
			key, count, formatTime(time.Now()), msg)
		return 0, err
	})
	if err != nil {
		return fmt.Errorf("store the error of sharded run %q in %s: %w", key, s.loc, err)
	}
	return nil
}
