package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// backend is the kind of database holding a store. Queries are written once,
// in SQLite's syntax with '?' placeholders and "double-quoted" identifiers,
// and adapted by rebind.
type backend int

const (
	sqliteBackend backend = iota
	mysqlBackend
	postgresBackend
)

func (b backend) String() string {
	return [...]string{"sqlite", "mysql", "postgres"}[b]
}

// rebind adapts a query to the backend: MySQL quotes identifiers with
// backquotes, PostgreSQL numbers its placeholders. Queries never hold
// string literals with '"' or '?'.
func (b backend) rebind(q string) string {
	switch b {
	case mysqlBackend:
		return strings.ReplaceAll(q, `"`, "`")
	case postgresBackend:
		var sb strings.Builder
		n := 0
		for _, c := range q {
			if c == '?' {
				n++
				fmt.Fprintf(&sb, "$%d", n)
				continue
			}
			sb.WriteRune(c)
		}
		return sb.String()
	}
	return q
}

// forUpdate is the clause that locks the rows a SELECT in a write
// transaction reads; SQLite's write transactions lock the whole file.
func (b backend) forUpdate() string {
	if b == sqliteBackend {
		return ""
	}
	return " FOR UPDATE"
}

// exec runs a write statement in tx.
func (s *Store) exec(ctx context.Context, tx *sql.Tx, q string, args ...any) (sql.Result, error) {
	return tx.ExecContext(ctx, s.be.rebind(q), args...)
}

// insertID runs an INSERT into a table with an id column and returns the
// new id.
func (s *Store) insertID(ctx context.Context, tx *sql.Tx, q string, args ...any) (int64, error) {
	if s.be == postgresBackend {
		var id int64
		err := tx.QueryRowContext(ctx, s.be.rebind(q)+" RETURNING id", args...).Scan(&id)
		return id, err
	}
	res, err := s.exec(ctx, tx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// openDSN opens a store in a MySQL-family or PostgreSQL database. Its
// password is masked in every error and in Location.
func openDSN(ctx context.Context, loc string) (*Store, error) {
	masked := maskLoc(loc)
	u, err := url.Parse(loc)
	if err != nil {
		return nil, fmt.Errorf("open results store %s: not a DSN: %w", masked, ErrBadLocation)
	}
	var be backend
	switch strings.ToLower(u.Scheme) {
	case "mysql", "mariadb":
		be = mysqlBackend
	case "postgres", "postgresql":
		be = postgresBackend
	default:
		return nil, fmt.Errorf("open results store %s: unknown scheme %q (want a file path, mysql:// or postgres://): %w",
			masked, u.Scheme, ErrBadLocation)
	}
	if strings.Trim(u.Path, "/") == "" {
		return nil, fmt.Errorf("open results store %s: the DSN names no database (add /DBNAME): %w", masked, ErrBadLocation)
	}
	t, err := target.ParseDSN(loc)
	if err != nil {
		return nil, fmt.Errorf("open results store %s: %s: %w", masked, maskErr(t, err), ErrBadLocation)
	}
	d, err := dialect.For(t.Family())
	if err != nil {
		return nil, fmt.Errorf("open results store %s: %s", masked, maskErr(t, err))
	}
	db, err := d.Open(t, dialect.OpenOptions{MaxConns: 4})
	if err != nil {
		return nil, fmt.Errorf("open results store %s: %s", masked, maskErr(t, err))
	}
	s := &Store{db: db, be: be, loc: masked, self: currentOwner()}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open results store %s: connect: %s: %w", masked, maskErr(t, err), ErrUnreachable)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open results store %s: %s", masked, maskErr(t, err))
	}
	return s, nil
}

// ErrUnreachable is returned (wrapped) by Open when a database store's
// server cannot be reached.
var ErrUnreachable = errors.New("results database unreachable")

// maskErr renders err with t's password masked, however the driver quoted
// it.
func maskErr(t target.Target, err error) string {
	msg := maskLoc(err.Error())
	if t.Password != "" {
		msg = strings.ReplaceAll(msg, t.Password, "***")
		msg = strings.ReplaceAll(msg, url.QueryEscape(t.Password), "***")
		msg = strings.ReplaceAll(msg, url.PathEscape(t.Password), "***")
	}
	return msg
}
