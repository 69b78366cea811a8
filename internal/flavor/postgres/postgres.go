// Package postgres is PostgreSQL's flavor (see package flavor).
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/wire/pgwire"
)

// Dialect serves PostgreSQL.
type Dialect struct{}

var _ flavor.Dialect = Dialect{}

// Family implements flavor.Dialect.
func (Dialect) Family() target.Family { return target.Postgres }

// Flavors implements flavor.Dialect.
func (Dialect) Flavors() []target.Flavor { return []target.Flavor{target.FlavorPostgres} }

// RefusesBulk implements flavor.Dialect: COPY FROM STDIN needs no
// permission beyond INSERT, so no error means "use INSERTs instead".
func (Dialect) RefusesBulk(error) bool { return false }

// Config builds the driver configuration for t. Statements run through the
// simple protocol unless a workload prepares them explicitly, so BEGIN and
// COMMIT cost one round trip, as in sysbench.
func (Dialect) Config(t target.Target, o flavor.OpenOptions) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		return nil, err
	}
	if t.Socket != "" {
		// pgx wants the socket directory; the port names the socket file.
		dir := t.Socket
		if i := strings.LastIndex(dir, "/.s.PGSQL."); i >= 0 {
			dir = dir[:i]
		}
		cfg.Host = dir
	} else {
		cfg.Host = t.Host
	}
	cfg.Port = uint16(t.Port)
	cfg.User = t.User
	cfg.Password = t.Password
	cfg.Database = t.Database
	if err := checkSSLMode(t.Params["sslmode"]); err != nil {
		return nil, err
	}
	// TLS as libpq's sslmode says (disable when unset): pgx's parser
	// builds the TLS configuration and the fall-backs of allow and prefer.
	tc, err := pgx.ParseConfig(pgConnString(cfg.Host, t.Port, t))
	if err != nil {
		return nil, fmt.Errorf("DSN TLS parameters: %w", errors.Unwrap(err))
	}
	cfg.TLSConfig = tc.TLSConfig
	cfg.Fallbacks = nil
	for _, fb := range tc.Fallbacks {
		if fb.Host == cfg.Host { // never another host (a comma in the host name)
			fb.Port = cfg.Port
			cfg.Fallbacks = append(cfg.Fallbacks, fb)
		}
	}
	cfg.ConnectTimeout = 10 * time.Second
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	// The simple protocol never uses pgx's statement and description
	// caches: without them a connection holds ~17 KB instead of ~72 KB.
	cfg.StatementCacheCapacity = 0
	cfg.DescriptionCacheCapacity = 0
	if o.Sockets != nil {
		cfg.DialFunc = o.Sockets.Dial
	}
	for k, v := range t.Params {
		if postgresTLSParam(k) {
			continue
		}
		cfg.RuntimeParams[k] = v
	}
	return cfg, nil
}

// Open implements flavor.Dialect.
func (d Dialect) Open(t target.Target, o flavor.OpenOptions) (*sql.DB, error) {
	cfg, err := d.Config(t, o)
	if err != nil {
		return nil, err
	}
	db := stdlib.OpenDB(*cfg)
	if o.MaxConns > 0 {
		db.SetMaxOpenConns(o.MaxConns)
		db.SetMaxIdleConns(o.MaxConns)
	}
	return db, nil
}

// Classify implements flavor.Dialect.
func (Dialect) Classify(err error) flavor.Class {
	if err == nil {
		return flavor.Class{Kind: flavor.None}
	}
	code := ""
	var pe *pgconn.PgError
	var we *pgwire.Error
	switch {
	case errors.As(err, &pe):
		code = pe.Code
	case errors.As(err, &we):
		code = we.Code
	}
	if code != "" {
		switch {
		// 23505 too, as sysbench's pgsql driver does: under read committed
		// a delete-then-insert of the same id by two transactions ends in
		// a unique violation that a retry resolves.
		case code == "40P01", code == "40001", code == "55P03", code == "23505":
			return flavor.Class{Kind: flavor.Retry, Code: code}
		case strings.HasPrefix(code, "08"), code == "57P01", code == "57P02", code == "57P03":
			return flavor.Class{Kind: flavor.ConnLost, Code: code}
		}
		return flavor.Class{Kind: flavor.Fatal, Code: code}
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || flavor.IsConnError(err) || errors.Is(err, pgwire.ErrClosed) || strings.Contains(err.Error(), "conn closed") {
		return flavor.Class{Kind: flavor.ConnLost, Code: "conn"}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return flavor.Class{Kind: flavor.Fatal, Code: "canceled"}
	}
	return flavor.Class{Kind: flavor.Fatal, Code: "client"}
}

// Rebind implements flavor.Dialect: '?' becomes $1, $2, ... outside quoted strings.
func (Dialect) Rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n, quoted := 0, false
	for i := 0; i < len(q); i++ {
		ch := q[i]
		switch {
		case ch == '\'':
			quoted = !quoted
			b.WriteByte(ch)
		case ch == '?' && !quoted:
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// QuoteIdent implements flavor.Dialect.
func (Dialect) QuoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// ServerVersion implements flavor.Dialect.
func (Dialect) ServerVersion(ctx context.Context, db *sql.DB) (target.Flavor, string, error) {
	var v string
	if err := db.QueryRowContext(ctx, "SHOW server_version").Scan(&v); err != nil {
		return "", "", err
	}
	return target.FlavorPostgres, v, nil
}

// ReadCounters implements flavor.Dialect. PostgreSQL publishes a backend's
// statistics when it goes idle or exits, so read them after the work's
// connections are closed.
func (Dialect) ReadCounters(ctx context.Context, db *sql.DB) (flavor.Counters, error) {
	var c flavor.Counters
	err := db.QueryRowContext(ctx, `SELECT xact_commit, xact_rollback, tup_inserted, pg_postmaster_start_time()
		FROM pg_stat_database WHERE datname = current_database()`).Scan(&c.Commits, &c.Rollbacks, &c.RowsInserted, &c.Started)
	return c, err
}

// Settings implements flavor.Dialect.
func (Dialect) Settings(ctx context.Context, db *sql.DB) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT name, setting || COALESCE(unit, '') FROM pg_settings
		WHERE name IN ('shared_buffers', 'synchronous_commit', 'fsync', 'full_page_writes', 'wal_level',
		'max_connections', 'checkpoint_timeout', 'max_wal_size', 'default_transaction_isolation', 'work_mem')`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, err
		}
		out[name] = value
	}
	return out, rows.Err()
}

// LoadText implements flavor.Dialect: COPY FROM STDIN in text format, streamed
// from r. Modifier has no COPY equivalent and is refused; Charset is not
// used (the session's client_encoding applies).
func (Dialect) LoadText(ctx context.Context, conn *sql.Conn, t flavor.BulkTable, r io.Reader) (int64, error) {
	if t.Modifier != "" {
		return 0, fmt.Errorf("COPY has no %s", t.Modifier)
	}
	q := "COPY " + t.Table
	if t.Columns != "" {
		q += " (" + t.Columns + ")"
	}
	q += " FROM STDIN"
	var n int64
	err := conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("COPY needs a pgx connection, got %T", dc)
		}
		tag, err := c.Conn().PgConn().CopyFrom(ctx, r, q)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}
