package store

import (
	"context"
	"fmt"
)

// migration is one step of the schema history. Steps are applied in order,
// each exactly once; the database's PRAGMA user_version is the number of
// steps applied. Never edit or reorder a released step: append a new one.
type migration struct {
	name string
	sql  string
}

// migrations returns the schema history. It is a function, not a package
// variable, so that nothing can modify it.
func migrations() []migration {
	return []migration{
		{name: "runs, intervals, per-type statistics and tags", sql: schemaV1},
	}
}

// schemaV1 is the first schema. The runs row keeps the headline numbers as
// columns for listing and SQL reporting; the summary column holds the
// complete dbarena.run/v1 JSON and is authoritative when a run is read back.
// Timestamps are UTC text of fixed width (see timeLayout), so they sort.
const schemaV1 = `
CREATE TABLE runs (
	id              INTEGER PRIMARY KEY AUTOINCREMENT,
	schema          TEXT    NOT NULL,
	started_at      TEXT    NOT NULL,
	ended_at        TEXT    NOT NULL,
	status          TEXT    NOT NULL,
	error           TEXT    NOT NULL DEFAULT '',
	workload        TEXT    NOT NULL,
	flavor          TEXT    NOT NULL DEFAULT '',
	version         TEXT    NOT NULL DEFAULT '',
	dsn             TEXT    NOT NULL DEFAULT '',
	sandbox         TEXT    NOT NULL DEFAULT '',
	threads         INTEGER NOT NULL DEFAULT 0,
	rate            REAL    NOT NULL DEFAULT 0,
	duration_s      REAL    NOT NULL DEFAULT 0,
	warmup_s        REAL    NOT NULL DEFAULT 0,
	events          INTEGER NOT NULL DEFAULT 0,
	queries_read    INTEGER NOT NULL DEFAULT 0,
	queries_write   INTEGER NOT NULL DEFAULT 0,
	queries_other   INTEGER NOT NULL DEFAULT 0,
	queries         INTEGER NOT NULL DEFAULT 0,
	errors          INTEGER NOT NULL DEFAULT 0,
	retries         INTEGER NOT NULL DEFAULT 0,
	reconnects      INTEGER NOT NULL DEFAULT 0,
	late            INTEGER NOT NULL DEFAULT 0,
	dropped         INTEGER NOT NULL DEFAULT 0,
	tps             REAL    NOT NULL DEFAULT 0,
	qps             REAL    NOT NULL DEFAULT 0,
	min_ms          REAL    NOT NULL DEFAULT 0,
	avg_ms          REAL    NOT NULL DEFAULT 0,
	p50_ms          REAL    NOT NULL DEFAULT 0,
	p90_ms          REAL    NOT NULL DEFAULT 0,
	p95_ms          REAL    NOT NULL DEFAULT 0,
	p99_ms          REAL    NOT NULL DEFAULT 0,
	p999_ms         REAL    NOT NULL DEFAULT 0,
	max_ms          REAL    NOT NULL DEFAULT 0,
	tpmc            REAL,
	params          TEXT    NOT NULL DEFAULT '{}',
	settings        TEXT    NOT NULL DEFAULT '{}',
	server_counters TEXT    NOT NULL DEFAULT '{}',
	checks          TEXT    NOT NULL DEFAULT '[]',
	host            TEXT    NOT NULL DEFAULT '{}',
	dbarena_version TEXT    NOT NULL DEFAULT '',
	command         TEXT    NOT NULL DEFAULT '[]',
	summary         TEXT    NOT NULL,
	histogram       TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX runs_started_at ON runs (started_at);
CREATE INDEX runs_workload ON runs (workload, started_at);

CREATE TABLE intervals (
	run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	t_s        REAL    NOT NULL,
	threads    INTEGER NOT NULL DEFAULT 0,
	tps        REAL    NOT NULL DEFAULT 0,
	qps        REAL    NOT NULL DEFAULT 0,
	read_qps   REAL    NOT NULL DEFAULT 0,
	write_qps  REAL    NOT NULL DEFAULT 0,
	other_qps  REAL    NOT NULL DEFAULT 0,
	p95_ms     REAL    NOT NULL DEFAULT 0,
	errors     INTEGER NOT NULL DEFAULT 0,
	reconnects INTEGER NOT NULL DEFAULT 0,
	late       INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

CREATE TABLE run_types (
	run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	name    TEXT    NOT NULL,
	count   INTEGER NOT NULL DEFAULT 0,
	errors  INTEGER NOT NULL DEFAULT 0,
	retries INTEGER NOT NULL DEFAULT 0,
	min_ms  REAL    NOT NULL DEFAULT 0,
	avg_ms  REAL    NOT NULL DEFAULT 0,
	p50_ms  REAL    NOT NULL DEFAULT 0,
	p90_ms  REAL    NOT NULL DEFAULT 0,
	p95_ms  REAL    NOT NULL DEFAULT 0,
	p99_ms  REAL    NOT NULL DEFAULT 0,
	p999_ms REAL    NOT NULL DEFAULT 0,
	max_ms  REAL    NOT NULL DEFAULT 0,
	PRIMARY KEY (run_id, name)
) WITHOUT ROWID;

CREATE TABLE run_tags (
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	key    TEXT    NOT NULL,
	value  TEXT    NOT NULL,
	PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
CREATE INDEX run_tags_key_value ON run_tags (key, value);
`

// migrate brings the schema up to date in one IMMEDIATE transaction, so that
// two processes opening a new file at once cannot both apply a step, and a
// crash mid-migration leaves the previous version intact.
func (s *Store) migrate(ctx context.Context) error {
	steps := migrations()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit

	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("migrate: read schema version: %w", err)
	}
	switch {
	case version > len(steps):
		return fmt.Errorf("migrate: schema version %d is newer than this dbarena understands (%d); upgrade dbarena", version, len(steps))
	case version == len(steps):
		return nil
	}
	for i := version; i < len(steps); i++ {
		if _, err := tx.ExecContext(ctx, steps[i].sql); err != nil {
			return fmt.Errorf("migrate: step %d (%s): %w", i+1, steps[i].name, err)
		}
	}
	// PRAGMA takes no bound parameters; the value is an int we computed.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(steps))); err != nil {
		return fmt.Errorf("migrate: set schema version %d: %w", len(steps), err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}
