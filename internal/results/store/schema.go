package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// migration is one step of the schema history, written for each backend
// (the same tables and columns, in each database's types). Steps are
// applied in order, each exactly once; the schema version is the number of
// steps applied (SQLite's PRAGMA user_version, the one row of the
// dbarena_schema table elsewhere). Never edit or reorder a released step:
// append a new one.
type migration struct {
	name string
	// sql holds the step's statements, separated by ";" at line ends, by
	// backend.
	sql [3]string
}

// migrations returns the schema history. It is a function, not a package
// variable, so that nothing can modify it.
func migrations() []migration {
	return []migration{
		{name: "runs, intervals, per-type statistics and tags",
			sql: [3]string{sqliteBackend: schemaV1, mysqlBackend: mysqlV1, postgresBackend: postgresV1}},
		{name: "run owners and heartbeats, plan names, interval per-type figures, monitor samples",
			sql: [3]string{sqliteBackend: sqliteV2, mysqlBackend: mysqlV2, postgresBackend: postgresV2}},
		{name: "start barrier of sharded runs",
			sql: [3]string{sqliteBackend: sqliteV3, mysqlBackend: mysqlV3, postgresBackend: postgresV3}},
		{name: "the coordinator's verdict on a sharded run",
			sql: [3]string{sqliteBackend: sqliteV4, mysqlBackend: mysqlV4, postgresBackend: postgresV4}},
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

// mysqlV1 is schemaV1 for the MySQL family (InnoDB, utf8mb4). Text
// columns that are keys or indexed are VARCHAR; long ones have no default
// (MySQL allows none), every INSERT names them.
const mysqlV1 = `
CREATE TABLE runs (
	id              BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
	` + "`schema`" + `        VARCHAR(64)  NOT NULL,
	started_at      VARCHAR(32)  NOT NULL,
	ended_at        VARCHAR(32)  NOT NULL,
	status          VARCHAR(32)  NOT NULL,
	error           MEDIUMTEXT   NOT NULL,
	workload        VARCHAR(255) NOT NULL,
	flavor          VARCHAR(64)  NOT NULL DEFAULT '',
	version         VARCHAR(255) NOT NULL DEFAULT '',
	dsn             TEXT         NOT NULL,
	sandbox         VARCHAR(255) NOT NULL DEFAULT '',
	threads         BIGINT       NOT NULL DEFAULT 0,
	rate            DOUBLE       NOT NULL DEFAULT 0,
	duration_s      DOUBLE       NOT NULL DEFAULT 0,
	warmup_s        DOUBLE       NOT NULL DEFAULT 0,
	events          BIGINT       NOT NULL DEFAULT 0,
	queries_read    BIGINT       NOT NULL DEFAULT 0,
	queries_write   BIGINT       NOT NULL DEFAULT 0,
	queries_other   BIGINT       NOT NULL DEFAULT 0,
	queries         BIGINT       NOT NULL DEFAULT 0,
	errors          BIGINT       NOT NULL DEFAULT 0,
	retries         BIGINT       NOT NULL DEFAULT 0,
	reconnects      BIGINT       NOT NULL DEFAULT 0,
	late            BIGINT       NOT NULL DEFAULT 0,
	dropped         BIGINT       NOT NULL DEFAULT 0,
	tps             DOUBLE       NOT NULL DEFAULT 0,
	qps             DOUBLE       NOT NULL DEFAULT 0,
	min_ms          DOUBLE       NOT NULL DEFAULT 0,
	avg_ms          DOUBLE       NOT NULL DEFAULT 0,
	p50_ms          DOUBLE       NOT NULL DEFAULT 0,
	p90_ms          DOUBLE       NOT NULL DEFAULT 0,
	p95_ms          DOUBLE       NOT NULL DEFAULT 0,
	p99_ms          DOUBLE       NOT NULL DEFAULT 0,
	p999_ms         DOUBLE       NOT NULL DEFAULT 0,
	max_ms          DOUBLE       NOT NULL DEFAULT 0,
	tpmc            DOUBLE,
	params          MEDIUMTEXT   NOT NULL,
	settings        MEDIUMTEXT   NOT NULL,
	server_counters MEDIUMTEXT   NOT NULL,
	checks          MEDIUMTEXT   NOT NULL,
	host            MEDIUMTEXT   NOT NULL,
	dbarena_version VARCHAR(255) NOT NULL DEFAULT '',
	command         MEDIUMTEXT   NOT NULL,
	summary         LONGTEXT     NOT NULL,
	histogram       LONGTEXT     NOT NULL,
	INDEX runs_started_at (started_at),
	INDEX runs_workload (workload, started_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE intervals (
	run_id     BIGINT NOT NULL,
	seq        BIGINT NOT NULL,
	t_s        DOUBLE NOT NULL,
	threads    BIGINT NOT NULL DEFAULT 0,
	tps        DOUBLE NOT NULL DEFAULT 0,
	qps        DOUBLE NOT NULL DEFAULT 0,
	read_qps   DOUBLE NOT NULL DEFAULT 0,
	write_qps  DOUBLE NOT NULL DEFAULT 0,
	other_qps  DOUBLE NOT NULL DEFAULT 0,
	p95_ms     DOUBLE NOT NULL DEFAULT 0,
	errors     BIGINT NOT NULL DEFAULT 0,
	reconnects BIGINT NOT NULL DEFAULT 0,
	late       BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (run_id, seq),
	FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE run_types (
	run_id  BIGINT       NOT NULL,
	name    VARCHAR(255) NOT NULL,
	count   BIGINT       NOT NULL DEFAULT 0,
	errors  BIGINT       NOT NULL DEFAULT 0,
	retries BIGINT       NOT NULL DEFAULT 0,
	min_ms  DOUBLE       NOT NULL DEFAULT 0,
	avg_ms  DOUBLE       NOT NULL DEFAULT 0,
	p50_ms  DOUBLE       NOT NULL DEFAULT 0,
	p90_ms  DOUBLE       NOT NULL DEFAULT 0,
	p95_ms  DOUBLE       NOT NULL DEFAULT 0,
	p99_ms  DOUBLE       NOT NULL DEFAULT 0,
	p999_ms DOUBLE       NOT NULL DEFAULT 0,
	max_ms  DOUBLE       NOT NULL DEFAULT 0,
	PRIMARY KEY (run_id, name),
	FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE run_tags (
	run_id BIGINT       NOT NULL,
	` + "`key`" + `  VARCHAR(255) NOT NULL,
	value  TEXT         NOT NULL,
	PRIMARY KEY (run_id, ` + "`key`" + `),
	INDEX run_tags_key_value (` + "`key`" + `, value(191)),
	FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
`

// postgresV1 is schemaV1 for PostgreSQL.
const postgresV1 = `
CREATE TABLE runs (
	id              BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
	"schema"        TEXT   NOT NULL,
	started_at      TEXT   NOT NULL,
	ended_at        TEXT   NOT NULL,
	status          TEXT   NOT NULL,
	error           TEXT   NOT NULL DEFAULT '',
	workload        TEXT   NOT NULL,
	flavor          TEXT   NOT NULL DEFAULT '',
	version         TEXT   NOT NULL DEFAULT '',
	dsn             TEXT   NOT NULL DEFAULT '',
	sandbox         TEXT   NOT NULL DEFAULT '',
	threads         BIGINT NOT NULL DEFAULT 0,
	rate            DOUBLE PRECISION NOT NULL DEFAULT 0,
	duration_s      DOUBLE PRECISION NOT NULL DEFAULT 0,
	warmup_s        DOUBLE PRECISION NOT NULL DEFAULT 0,
	events          BIGINT NOT NULL DEFAULT 0,
	queries_read    BIGINT NOT NULL DEFAULT 0,
	queries_write   BIGINT NOT NULL DEFAULT 0,
	queries_other   BIGINT NOT NULL DEFAULT 0,
	queries         BIGINT NOT NULL DEFAULT 0,
	errors          BIGINT NOT NULL DEFAULT 0,
	retries         BIGINT NOT NULL DEFAULT 0,
	reconnects      BIGINT NOT NULL DEFAULT 0,
	late            BIGINT NOT NULL DEFAULT 0,
	dropped         BIGINT NOT NULL DEFAULT 0,
	tps             DOUBLE PRECISION NOT NULL DEFAULT 0,
	qps             DOUBLE PRECISION NOT NULL DEFAULT 0,
	min_ms          DOUBLE PRECISION NOT NULL DEFAULT 0,
	avg_ms          DOUBLE PRECISION NOT NULL DEFAULT 0,
	p50_ms          DOUBLE PRECISION NOT NULL DEFAULT 0,
	p90_ms          DOUBLE PRECISION NOT NULL DEFAULT 0,
	p95_ms          DOUBLE PRECISION NOT NULL DEFAULT 0,
	p99_ms          DOUBLE PRECISION NOT NULL DEFAULT 0,
	p999_ms         DOUBLE PRECISION NOT NULL DEFAULT 0,
	max_ms          DOUBLE PRECISION NOT NULL DEFAULT 0,
	tpmc            DOUBLE PRECISION,
	params          TEXT   NOT NULL DEFAULT '{}',
	settings        TEXT   NOT NULL DEFAULT '{}',
	server_counters TEXT   NOT NULL DEFAULT '{}',
	checks          TEXT   NOT NULL DEFAULT '[]',
	host            TEXT   NOT NULL DEFAULT '{}',
	dbarena_version TEXT   NOT NULL DEFAULT '',
	command         TEXT   NOT NULL DEFAULT '[]',
	summary         TEXT   NOT NULL,
	histogram       TEXT   NOT NULL DEFAULT ''
);
CREATE INDEX runs_started_at ON runs (started_at);
CREATE INDEX runs_workload ON runs (workload, started_at);

CREATE TABLE intervals (
	run_id     BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	seq        BIGINT NOT NULL,
	t_s        DOUBLE PRECISION NOT NULL,
	threads    BIGINT NOT NULL DEFAULT 0,
	tps        DOUBLE PRECISION NOT NULL DEFAULT 0,
	qps        DOUBLE PRECISION NOT NULL DEFAULT 0,
	read_qps   DOUBLE PRECISION NOT NULL DEFAULT 0,
	write_qps  DOUBLE PRECISION NOT NULL DEFAULT 0,
	other_qps  DOUBLE PRECISION NOT NULL DEFAULT 0,
	p95_ms     DOUBLE PRECISION NOT NULL DEFAULT 0,
	errors     BIGINT NOT NULL DEFAULT 0,
	reconnects BIGINT NOT NULL DEFAULT 0,
	late       BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (run_id, seq)
);

CREATE TABLE run_types (
	run_id  BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	name    TEXT   NOT NULL,
	count   BIGINT NOT NULL DEFAULT 0,
	errors  BIGINT NOT NULL DEFAULT 0,
	retries BIGINT NOT NULL DEFAULT 0,
	min_ms  DOUBLE PRECISION NOT NULL DEFAULT 0,
	avg_ms  DOUBLE PRECISION NOT NULL DEFAULT 0,
	p50_ms  DOUBLE PRECISION NOT NULL DEFAULT 0,
	p90_ms  DOUBLE PRECISION NOT NULL DEFAULT 0,
	p95_ms  DOUBLE PRECISION NOT NULL DEFAULT 0,
	p99_ms  DOUBLE PRECISION NOT NULL DEFAULT 0,
	p999_ms DOUBLE PRECISION NOT NULL DEFAULT 0,
	max_ms  DOUBLE PRECISION NOT NULL DEFAULT 0,
	PRIMARY KEY (run_id, name)
);

CREATE TABLE run_tags (
	run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	"key"  TEXT   NOT NULL,
	value  TEXT   NOT NULL,
	PRIMARY KEY (run_id, "key")
);
CREATE INDEX run_tags_key_value ON run_tags ("key", value);
`

// sqliteV2 records who writes a running run (see owner.go) and when it last
// wrote, the plan name as a column (for filtering without JSON functions),
// each interval's per-type figures (JSON) and the monitor's samples, so that
// a run written as it goes keeps everything an interval carries.
const sqliteV2 = `
ALTER TABLE runs ADD COLUMN owner_host TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN owner_boot TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN owner_pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN owner_start INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN heartbeat_at TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN plan_name TEXT NOT NULL DEFAULT '';
UPDATE runs SET plan_name = COALESCE(json_extract(summary, '$.plan.name'), '');
CREATE INDEX runs_plan_name ON runs (plan_name, started_at);
ALTER TABLE intervals ADD COLUMN per_type TEXT NOT NULL DEFAULT '';
CREATE TABLE run_samples (
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	seq    INTEGER NOT NULL,
	t_s    REAL    NOT NULL,
	data   TEXT    NOT NULL,
	PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
`

// mysqlV2 is sqliteV2 for the MySQL family. No store of this family
// predates it, so plan names need no back-fill.
const mysqlV2 = `
ALTER TABLE runs
	ADD COLUMN owner_host   VARCHAR(255) NOT NULL DEFAULT '',
	ADD COLUMN owner_boot   VARCHAR(64)  NOT NULL DEFAULT '',
	ADD COLUMN owner_pid    BIGINT       NOT NULL DEFAULT 0,
	ADD COLUMN owner_start  BIGINT       NOT NULL DEFAULT 0,
	ADD COLUMN heartbeat_at VARCHAR(32)  NOT NULL DEFAULT '',
	ADD COLUMN plan_name    VARCHAR(255) NOT NULL DEFAULT '',
	ADD INDEX runs_plan_name (plan_name, started_at);
ALTER TABLE intervals ADD COLUMN per_type MEDIUMTEXT NOT NULL;
CREATE TABLE run_samples (
	run_id BIGINT     NOT NULL,
	seq    BIGINT     NOT NULL,
	t_s    DOUBLE     NOT NULL,
	data   MEDIUMTEXT NOT NULL,
	PRIMARY KEY (run_id, seq),
	FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
`

// postgresV2 is sqliteV2 for PostgreSQL.
const postgresV2 = `
ALTER TABLE runs
	ADD COLUMN owner_host   TEXT   NOT NULL DEFAULT '',
	ADD COLUMN owner_boot   TEXT   NOT NULL DEFAULT '',
	ADD COLUMN owner_pid    BIGINT NOT NULL DEFAULT 0,
	ADD COLUMN owner_start  BIGINT NOT NULL DEFAULT 0,
	ADD COLUMN heartbeat_at TEXT   NOT NULL DEFAULT '',
	ADD COLUMN plan_name    TEXT   NOT NULL DEFAULT '';
CREATE INDEX runs_plan_name ON runs (plan_name, started_at);
ALTER TABLE intervals ADD COLUMN per_type TEXT NOT NULL DEFAULT '';
CREATE TABLE run_samples (
	run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	seq    BIGINT NOT NULL,
	t_s    DOUBLE PRECISION NOT NULL,
	data   TEXT   NOT NULL,
	PRIMARY KEY (run_id, seq)
);
`

// sqliteV3 holds the start barrier of runs spread over client hosts
// (shard.go): one shard_runs row per --run-id, with its shard count and the
// common start time once every shard is ready, and one shard_members row
// per shard that joined, with its host and how late it started. The
// shards' own runs are ordinary runs tagged shard_of=RUN-ID.
const sqliteV3 = `
CREATE TABLE shard_runs (
	run_key    TEXT    NOT NULL PRIMARY KEY,
	shards     INTEGER NOT NULL,
	created_at TEXT    NOT NULL,
	start_at   TEXT    NOT NULL DEFAULT ''
);
CREATE TABLE shard_members (
	run_key  TEXT    NOT NULL REFERENCES shard_runs (run_key) ON DELETE CASCADE,
	shard    INTEGER NOT NULL,
	host     TEXT    NOT NULL DEFAULT '',
	pid      INTEGER NOT NULL DEFAULT 0,
	ready_at TEXT    NOT NULL,
	started  INTEGER NOT NULL DEFAULT 0,
	skew_ms  REAL    NOT NULL DEFAULT 0,
	PRIMARY KEY (run_key, shard)
) WITHOUT ROWID;
`

// mysqlV3 is sqliteV3 for the MySQL family.
const mysqlV3 = `
CREATE TABLE shard_runs (
	run_key    VARCHAR(64) NOT NULL PRIMARY KEY,
	shards     INT         NOT NULL,
	created_at VARCHAR(32) NOT NULL,
	start_at   VARCHAR(32) NOT NULL DEFAULT ''
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE shard_members (
	run_key  VARCHAR(64)  NOT NULL,
	shard    INT          NOT NULL,
	host     VARCHAR(255) NOT NULL DEFAULT '',
	pid      BIGINT       NOT NULL DEFAULT 0,
	ready_at VARCHAR(32)  NOT NULL,
	started  INT          NOT NULL DEFAULT 0,
	skew_ms  DOUBLE       NOT NULL DEFAULT 0,
	PRIMARY KEY (run_key, shard),
	FOREIGN KEY (run_key) REFERENCES shard_runs (run_key) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
`

// postgresV3 is sqliteV3 for PostgreSQL.
const postgresV3 = `
CREATE TABLE shard_runs (
	run_key    TEXT    NOT NULL PRIMARY KEY,
	shards     INTEGER NOT NULL,
	created_at TEXT    NOT NULL,
	start_at   TEXT    NOT NULL DEFAULT ''
);
CREATE TABLE shard_members (
	run_key  TEXT    NOT NULL REFERENCES shard_runs (run_key) ON DELETE CASCADE,
	shard    INTEGER NOT NULL,
	host     TEXT    NOT NULL DEFAULT '',
	pid      BIGINT  NOT NULL DEFAULT 0,
	ready_at TEXT    NOT NULL,
	started  INTEGER NOT NULL DEFAULT 0,
	skew_ms  DOUBLE PRECISION NOT NULL DEFAULT 0,
	PRIMARY KEY (run_key, shard)
);
`

// sqliteV4 holds the error a sharded run's coordinator stored (a shard that
// stopped answering, FailShardRun): it makes the merged run failed.
const sqliteV4 = `
ALTER TABLE shard_runs ADD COLUMN error TEXT NOT NULL DEFAULT '';
`

// mysqlV4 is sqliteV4 for the MySQL family.
const mysqlV4 = `
ALTER TABLE shard_runs ADD COLUMN error VARCHAR(2048) NOT NULL DEFAULT '';
`

// postgresV4 is sqliteV4 for PostgreSQL.
const postgresV4 = `
ALTER TABLE shard_runs ADD COLUMN error TEXT NOT NULL DEFAULT '';
`

// statements splits a step into its statements.
func statements(step string) []string {
	var out []string
	for _, s := range strings.Split(step, ";\n") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// migrate brings the schema up to date.
func (s *Store) migrate(ctx context.Context) error {
	switch s.be {
	case mysqlBackend:
		return s.migrateMySQL(ctx)
	case postgresBackend:
		return s.migratePostgres(ctx)
	}
	return s.migrateSQLite(ctx)
}

// checkVersion says whether version needs steps, or is too new.
func checkVersion(version int) (bool, error) {
	n := len(migrations())
	if version > n {
		return false, fmt.Errorf("migrate: schema version %d is newer than this dbarena understands (%d); upgrade dbarena", version, n)
	}
	return version < n, nil
}

// migrateSQLite runs in one IMMEDIATE transaction, so that two processes
// opening a new file at once cannot both apply a step, and a crash
// mid-migration leaves the previous version intact.
func (s *Store) migrateSQLite(ctx context.Context) error {
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
	if need, err := checkVersion(version); !need {
		return err
	}
	for i := version; i < len(steps); i++ {
		if _, err := tx.ExecContext(ctx, steps[i].sql[sqliteBackend]); err != nil {
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

// migrationLockKey is the PostgreSQL advisory lock (an arbitrary constant)
// that serialises migrations of one database.
const migrationLockKey = 0x64626172656e61 // "dbarena"

// migratePostgres runs in one transaction (PostgreSQL's DDL is
// transactional) under an advisory lock.
func (s *Store) migratePostgres(ctx context.Context) error {
	steps := migrations()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLockKey)); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS dbarena_schema (version INTEGER NOT NULL)"); err != nil {
		return fmt.Errorf("migrate: create dbarena_schema: %w", err)
	}
	version, err := readVersion(ctx, tx.QueryRowContext)
	if err != nil {
		return err
	}
	if need, err := checkVersion(version); !need {
		return err
	}
	for i := version; i < len(steps); i++ {
		for _, st := range statements(steps[i].sql[postgresBackend]) {
			if _, err := tx.ExecContext(ctx, st); err != nil {
				return fmt.Errorf("migrate: step %d (%s): %w", i+1, steps[i].name, err)
			}
		}
	}
	if err := setVersion(ctx, tx.ExecContext, len(steps)); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}

// migrateMySQL holds a named lock on one connection while it applies the
// steps. MySQL commits DDL statement by statement, so the version is
// recorded after each step; a crash inside a step leaves it half applied,
// and the next Open says which step failed.
func (s *Store) migrateMySQL(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK('dbarena_results_migrate', 60)").Scan(&got); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	if got.Int64 != 1 {
		return fmt.Errorf("migrate: another dbarena held the migration lock for a minute")
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "DO RELEASE_LOCK('dbarena_results_migrate')") //nolint:errcheck // the lock also ends with the connection
	if _, err := conn.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS dbarena_schema (version INT NOT NULL) ENGINE=InnoDB"); err != nil {
		return fmt.Errorf("migrate: create dbarena_schema: %w", err)
	}
	version, err := readVersion(ctx, conn.QueryRowContext)
	if err != nil {
		return err
	}
	if need, err := checkVersion(version); !need {
		return err
	}
	steps := migrations()
	for i := version; i < len(steps); i++ {
		for _, st := range statements(steps[i].sql[mysqlBackend]) {
			if _, err := conn.ExecContext(ctx, st); err != nil {
				return fmt.Errorf("migrate: step %d (%s): %w", i+1, steps[i].name, err)
			}
		}
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migrate: set schema version %d: %w", i+1, err)
		}
		if err := setVersion(ctx, tx.ExecContext, i+1); err != nil {
			tx.Rollback() //nolint:errcheck // the error above says what failed
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate: set schema version %d: %w", i+1, err)
		}
	}
	return nil
}

func readVersion(ctx context.Context, query func(context.Context, string, ...any) *sql.Row) (int, error) {
	var v sql.NullInt64
	if err := query(ctx, "SELECT MAX(version) FROM dbarena_schema").Scan(&v); err != nil {
		return 0, fmt.Errorf("migrate: read schema version: %w", err)
	}
	return int(v.Int64), nil
}

func setVersion(ctx context.Context, exec func(context.Context, string, ...any) (sql.Result, error), v int) error {
	if _, err := exec(ctx, "DELETE FROM dbarena_schema"); err != nil {
		return fmt.Errorf("migrate: set schema version %d: %w", v, err)
	}
	// The value is an int we computed.
	if _, err := exec(ctx, fmt.Sprintf("INSERT INTO dbarena_schema (version) VALUES (%d)", v)); err != nil {
		return fmt.Errorf("migrate: set schema version %d: %w", v, err)
	}
	return nil
}
