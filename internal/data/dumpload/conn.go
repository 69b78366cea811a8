package dumpload

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbarena/dbarena/internal/data/dump"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// conn is one loader connection.
type conn interface {
	// exec runs one statement and returns the rows it affected.
	exec(ctx context.Context, sql string) (int64, error)
	// copyIn runs COPY ... FROM stdin with data (PostgreSQL).
	copyIn(ctx context.Context, sql string, data []byte) (int64, error)
	// use switches to database db; fresh reports a new session (the
	// connection was replaced).
	use(ctx context.Context, db string) (fresh bool, err error)
	close()
}

// dialer opens loader connections to one server.
type dialer struct {
	t      target.Target
	family target.Family
	// mysql: one pool without a default database, connections pinned.
	db *sql.DB
}

// SyntaxOf is the SQL syntax of t's server: the loader reads dumps of
// that syntax only and talks to the server through one connection type
// per syntax (myConn, pgConn). Every other difference between flavors is
// the flavor's (loader.flavor).
func SyntaxOf(t target.Target) dump.Syntax {
	if t.Family() == target.Postgres {
		return dump.Postgres
	}
	return dump.MySQL
}

// dumpServer is the server a dump's version comments are read for:
// MariaDB runs /*M! comments, the others do not.
func dumpServer(t target.Target) dump.Server {
	return dump.ParseServer(t.Flavor == target.FlavorMariaDB, t.Version)
}

// syntax is the target's SQL syntax (the dump's: Load checks they agree).
func (l *loader) syntax() dump.Syntax { return SyntaxOf(l.t) }

// flavor is the target's flavor.
func (l *loader) flavor() dialect.Dialect { return dialect.MustFor(l.t.Flavor) }

func newDialer(t target.Target) (*dialer, error) {
	d := &dialer{t: t, family: t.Family()}
	if d.family == target.MySQL {
		t2 := t
		t2.Database = ""
		cfg := dialect.MySQLDialect{}.Config(t2, dialect.OpenOptions{})
		tc, preferred, err := dialect.MySQLTLS(t2)
		if err != nil {
			return nil, err
		}
		cfg.TLS, cfg.AllowFallbackToPlaintext = tc, preferred
		cfg.InterpolateParams = false
		// Dumps may carry statements near the server's max_allowed_packet.
		cfg.MaxAllowedPacket = 0
		c, err := mysql.NewConnector(cfg)
		if err != nil {
			return nil, err
		}
		d.db = sql.OpenDB(c)
	}
	return d, nil
}

func (d *dialer) close() {
	if d.db != nil {
		d.db.Close()
	}
}

// dial opens a connection to database db ("" for the target's own).
func (d *dialer) dial(ctx context.Context, db string) (conn, error) {
	if d.family == target.Postgres {
		t := d.t
		if db != "" {
			t.Database = db
		}
		cfg, err := dialect.PostgresDialect{}.Config(t, dialect.OpenOptions{})
		if err != nil {
			return nil, err
		}
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return &pgConn{d: d, c: c, db: t.Database}, nil
	}
	c, err := d.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	mc := &myConn{c: c}
	if db == "" {
		db = d.t.Database
	}
	if db != "" {
		if _, err := mc.use(ctx, db); err != nil {
			c.Close()
			return nil, err
		}
	}
	return mc, nil
}

type myConn struct {
	c  *sql.Conn
	db string
	// colCache holds column types for LOAD DATA's check (loaddata_exec.go).
	colCache map[string]colTypes
}

func (m *myConn) exec(ctx context.Context, q string) (int64, error) {
	r, err := m.c.ExecContext(ctx, q)
	if err != nil {
		return 0, err
	}
	n, _ := r.RowsAffected()
	return n, nil
}

func (m *myConn) copyIn(context.Context, string, []byte) (int64, error) {
	return 0, errors.New("COPY is PostgreSQL's: this is a MySQL-family server")
}

func (m *myConn) use(ctx context.Context, db string) (bool, error) {
	if db == m.db {
		return false, nil
	}
	if _, err := m.c.ExecContext(ctx, "USE "+quoteMySQL(db)); err != nil {
		return false, err
	}
	m.db = db
	return false, nil
}

func (m *myConn) close() { m.c.Close() }

type pgConn struct {
	d  *dialer
	c  *pgx.Conn
	db string
}

func (p *pgConn) exec(ctx context.Context, q string) (int64, error) {
	res := p.c.PgConn().Exec(ctx, q)
	rs, err := res.ReadAll()
	if err != nil {
		return 0, err
	}
	var n int64
	for _, r := range rs {
		n += r.CommandTag.RowsAffected()
	}
	return n, nil
}

func (p *pgConn) copyIn(ctx context.Context, q string, data []byte) (int64, error) {
	tag, err := p.c.PgConn().CopyFrom(ctx, bytes.NewReader(data), q)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// use reconnects to database db (a PostgreSQL session is bound to one).
func (p *pgConn) use(ctx context.Context, db string) (bool, error) {
	if db == "" || db == p.db {
		return false, nil
	}
	nc, err := p.d.dial(ctx, db)
	if err != nil {
		return false, err
	}
	p.c.Close(context.Background())
	*p = *nc.(*pgConn)
	return true, nil
}

func (p *pgConn) close() { p.c.Close(context.Background()) }

// quoteMySQL quotes an identifier with backticks.
func quoteMySQL(s string) string {
	return "`" + string(bytes.ReplaceAll([]byte(s), []byte("`"), []byte("``"))) + "`"
}

// quotePG quotes an identifier with double quotes.
func quotePG(s string) string {
	return `"` + string(bytes.ReplaceAll([]byte(s), []byte(`"`), []byte(`""`))) + `"`
}

// serverError extracts the server's code and message, if err is one.
func serverError(err error) (code string, ok bool) {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return fmt.Sprint(me.Number), true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code, true
	}
	return "", false
}

// row is one result row to scan.
type row interface{ Scan(dest ...any) error }

func (m *myConn) queryRow(ctx context.Context, q string, args ...any) row {
	return m.c.QueryRowContext(ctx, q, args...)
}

func (p *pgConn) queryRow(ctx context.Context, q string, args ...any) row {
	return p.c.QueryRow(ctx, q, args...)
}

// maxDeadlockRetries bounds the runs of a statement that keeps being
// chosen as a deadlock victim.
const maxDeadlockRetries = 10

// isDeadlock reports a MySQL-family deadlock (1213): the server rolled
// the statement (autocommit: its transaction) back.
func isDeadlock(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1213
}
