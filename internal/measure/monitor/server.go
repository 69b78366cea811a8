package monitor

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// counterSet turns successive readings of cumulative server counters into
// per-second rates (counter.NAME) and passes gauges through (gauge.NAME).
type counterSet struct {
	prev map[string]float64
	at   time.Time
}

// add records cur (read at now) and adds the rates since the previous
// reading to out. A counter that went down was reset (server restart,
// FLUSH STATUS): its value since the reset is the growth.
func (c *counterSet) add(now time.Time, cur, gauges map[string]float64, out map[string]float64) {
	for k, v := range gauges {
		out["gauge."+k] = v
	}
	if c.prev != nil {
		if secs := now.Sub(c.at).Seconds(); secs > 0 {
			for k, v := range cur {
				p, ok := c.prev[k]
				if !ok {
					continue
				}
				d := v - p
				if d < 0 {
					d = v
				}
				out["counter."+k] = d / secs
			}
		}
	}
	c.prev, c.at = cur, now
}

// NewServerSampler returns the sampler of a server's own counters kept
// in src, reading them through db (a pool of its own, one connection).
// database is the workload's database (PostgreSQL's pg_stat_database row).
func NewServerSampler(src flavor.StatusSource, db *sql.DB, database string) (Sampler, error) {
	switch src {
	case flavor.GlobalStatus:
		return &MySQLStatus{db: db}, nil
	case flavor.StatDatabase:
		return &PostgresStats{db: db, database: database}, nil
	}
	return nil, fmt.Errorf("no server counters in source %d", src)
}

// mysqlCounters are the SHOW GLOBAL STATUS counters sampled as per-second
// rates, besides every Handler_* counter.
var mysqlCounters = []string{
	"Questions", "Com_select", "Com_insert", "Com_update", "Com_delete", "Com_commit", "Com_rollback",
	"Innodb_rows_read", "Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted",
	"Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_reads", "Innodb_buffer_pool_write_requests",
	"Innodb_data_fsyncs", "Innodb_data_read", "Innodb_data_written", "Innodb_os_log_written",
	"Innodb_log_waits", "Innodb_row_lock_waits", "Bytes_received", "Bytes_sent",
	"Created_tmp_disk_tables", "Created_tmp_tables", "Select_full_join", "Sort_merge_passes",
	// MariaDB 10.6+ has no Innodb_rows_*; these count rows across engines.
	"Rows_read", "Rows_sent", "Rows_tmp_read",
}

// mysqlGauges are SHOW GLOBAL STATUS values that are levels, not counters.
var mysqlGauges = []string{"Threads_running", "Threads_connected", "Innodb_buffer_pool_pages_dirty"}

// MySQLStatus samples SHOW GLOBAL STATUS of MariaDB, MySQL and Percona
// Server. The sampler's own statement counts once per interval in
// Questions.
type MySQLStatus struct {
	db    *sql.DB
	query string
	c     counterSet
	// metrics reads InnoDB's own metrics (information_schema.INNODB_METRICS).
	metrics innodbMetrics
}

var _ Sampler = (*MySQLStatus)(nil)

// Name implements Sampler.
func (*MySQLStatus) Name() string { return "server counters" }

// Close closes the sampler's pool.
func (s *MySQLStatus) Close() error { return s.db.Close() }

func (s *MySQLStatus) statusQuery() string {
	if s.query == "" {
		names := append(append([]string{}, mysqlCounters...), mysqlGauges...)
		// Fixed identifiers of our own, not user input.
		s.query = "SHOW GLOBAL STATUS WHERE Variable_name IN ('" + strings.Join(names, "','") +
			"') OR Variable_name LIKE 'Handler\\_%'"
	}
	return s.query
}

// Sample implements Sampler.
func (s *MySQLStatus) Sample(ctx context.Context, now time.Time, out map[string]float64) error {
	rows, err := s.db.QueryContext(ctx, s.statusQuery())
	if err != nil {
		return err
	}
	defer rows.Close()
	counters, gauges := map[string]float64{}, map[string]float64{}
	isGauge := map[string]bool{}
	for _, g := range mysqlGauges {
		isGauge[strings.ToLower(g)] = true
	}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return err
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		if isGauge[strings.ToLower(name)] {
			gauges[name] = v
		} else {
			counters[name] = v
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	s.metrics.read(ctx, s.db, counters, gauges)
	s.c.add(now, counters, gauges, out)
	return nil
}

// PostgresStats samples PostgreSQL's statistics views: pg_stat_database
// (the workload's database), the checkpointer and background writer
// (pg_stat_bgwriter before 17, pg_stat_checkpointer since; the names are
// those before 17 either way), WAL bytes (the growth of
// pg_current_wal_lsn), WAL records, writes and fsyncs (pg_stat_wal, 14
// to 17; pg_stat_io since 18) and relation I/O of every backend type
// (pg_stat_io, 16 and later). PostgreSQL publishes a backend's statistics up to a second
// late, so per-interval rates of pg_stat_database are lumpy.
type PostgresStats struct {
	db       *sql.DB
	database string
	queries  []pgQuery
	c        counterSet
}

var _ Sampler = (*PostgresStats)(nil)

// Name implements Sampler.
func (*PostgresStats) Name() string { return "server counters" }

// Close closes the sampler's pool.
func (s *PostgresStats) Close() error { return s.db.Close() }

// pgQuery is one statistics query: a single row whose columns are the
// counters named in cols (in order); gauges are the columns that are levels.
type pgQuery struct {
	name   string
	sql    string
	cols   []string
	gauges map[string]bool
	// optional queries fail without failing the sample (a standby has no
	// current WAL position).
	optional bool
}

// pgQueries returns the statistics queries for a server_version_num.
func pgQueries(version int) []pgQuery {
	qs := []pgQuery{{
		name: "pg_stat_database",
		sql: `SELECT xact_commit, xact_rollback, blks_read, blks_hit, tup_returned, tup_fetched,
			tup_inserted, tup_updated, tup_deleted, temp_bytes, deadlocks, numbackends
			FROM pg_stat_database WHERE datname = $1`,
		cols: []string{"xact_commit", "xact_rollback", "blks_read", "blks_hit", "tup_returned", "tup_fetched",
			"tup_inserted", "tup_updated", "tup_deleted", "temp_bytes", "deadlocks", "numbackends"},
		gauges: map[string]bool{"numbackends": true},
	}}
	if version >= 170000 {
		qs = append(qs, pgQuery{
			name: "pg_stat_checkpointer",
			sql: `SELECT c.num_timed, c.num_requested, c.write_time, c.sync_time, c.buffers_written,
				b.buffers_clean, b.maxwritten_clean, b.buffers_alloc
				FROM pg_stat_checkpointer c, pg_stat_bgwriter b`,
			cols: []string{"checkpoints_timed", "checkpoints_req", "checkpoint_write_time", "checkpoint_sync_time",
				"buffers_checkpoint", "buffers_clean", "maxwritten_clean", "buffers_alloc"},
		})
	} else {
		qs = append(qs, pgQuery{
			name: "pg_stat_bgwriter",
			sql: `SELECT checkpoints_timed, checkpoints_req, checkpoint_write_time, checkpoint_sync_time,
				buffers_checkpoint, buffers_clean, maxwritten_clean, buffers_alloc, buffers_backend, buffers_backend_fsync
				FROM pg_stat_bgwriter`,
			cols: []string{"checkpoints_timed", "checkpoints_req", "checkpoint_write_time", "checkpoint_sync_time",
				"buffers_checkpoint", "buffers_clean", "maxwritten_clean", "buffers_alloc", "buffers_backend", "buffers_backend_fsync"},
		})
	}
	qs = append(qs, pgQuery{
		name:     "pg_current_wal_lsn",
		sql:      `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8`,
		cols:     []string{"wal_bytes"},
		optional: true,
	})
	switch {
	case version >= 180000:
		qs = append(qs, pgQuery{
			name:     "pg_stat_wal",
			sql:      `SELECT w.wal_records, w.wal_fpi, (SELECT COALESCE(sum(fsyncs), 0) FROM pg_stat_io WHERE object = 'wal') FROM pg_stat_wal w`,
			cols:     []string{"wal_records", "wal_fpi", "wal_sync"},
			optional: true,
		})
	case version >= 140000:
		// The times are milliseconds, counted with track_wal_io_timing on.
		qs = append(qs, pgQuery{
			name:     "pg_stat_wal",
			sql:      `SELECT wal_records, wal_fpi, wal_write, wal_sync, wal_buffers_full, wal_write_time, wal_sync_time FROM pg_stat_wal`,
			cols:     []string{"wal_records", "wal_fpi", "wal_write", "wal_sync", "wal_buffers_full", "wal_write_time", "wal_sync_time"},
			optional: true,
		})
	}
	if version >= 160000 {
		// Relation I/O of every backend type (the WAL's own rows, since 18,
		// are in pg_stat_wal's figures above); the times are milliseconds,
		// counted with track_io_timing on.
		qs = append(qs, pgQuery{
			name: "pg_stat_io",
			sql: `SELECT COALESCE(sum(reads), 0), COALESCE(sum(writes), 0), COALESCE(sum(extends), 0),
				COALESCE(sum(fsyncs), 0), COALESCE(sum(hits), 0), COALESCE(sum(evictions), 0),
				COALESCE(sum(read_time), 0), COALESCE(sum(write_time), 0)
				FROM pg_stat_io WHERE object <> 'wal'`,
			cols:     []string{"io_reads", "io_writes", "io_extends", "io_fsyncs", "io_hits", "io_evictions", "io_read_time", "io_write_time"},
			optional: true,
		})
	}
	return qs
}

// Sample implements Sampler. Connected to another database than the
// workload's (see OpenServerSampler), the sampler's own transactions do
// not count in the workload database's xact_commit.
func (s *PostgresStats) Sample(ctx context.Context, now time.Time, out map[string]float64) error {
	if s.queries == nil {
		var v string
		if err := s.db.QueryRowContext(ctx, "SHOW server_version_num").Scan(&v); err != nil {
			return err
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("server_version_num %q: %w", v, err)
		}
		s.queries = pgQueries(n)
	}
	counters, gauges := map[string]float64{}, map[string]float64{}
	for i, q := range s.queries {
		vals := make([]sql.NullFloat64, len(q.cols))
		ptrs := make([]any, len(vals))
		for j := range vals {
			ptrs[j] = &vals[j]
		}
		var args []any
		if i == 0 {
			args = []any{s.database}
		}
		if err := s.db.QueryRowContext(ctx, q.sql, args...).Scan(ptrs...); err != nil {
			if q.optional && ctx.Err() == nil {
				continue
			}
			return fmt.Errorf("%s: %w", q.name, err)
		}
		for j, c := range q.cols {
			if !vals[j].Valid {
				continue
			}
			if q.gauges[c] {
				gauges[c] = vals[j].Float64
			} else {
				counters[c] = vals[j].Float64
			}
		}
	}
	s.c.add(now, counters, gauges, out)
	return nil
}

// OpenServerSampler opens a pool of one connection for the server's
// counters and returns their sampler. For PostgreSQL it connects to the
// "postgres" database when it can, so that the sampler's own queries do
// not count in the workload database's statistics.
func OpenServerSampler(ctx context.Context, d dialect.Dialect, t target.Target) (Sampler, error) {
	database := t.Database
	if m := d.MaintenanceDatabase(); m != "" && t.Database != m {
		alt := t
		alt.Database = m
		if db, err := d.Open(alt, dialect.OpenOptions{MaxConns: 1}); err == nil {
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err = db.PingContext(pctx)
			cancel()
			if err == nil {
				return NewServerSampler(d.StatusSource(), db, database)
			}
			db.Close()
		}
	}
	db, err := d.Open(t, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		return nil, err
	}
	return NewServerSampler(d.StatusSource(), db, database)
}
