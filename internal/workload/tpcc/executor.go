package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
)

// Clients of --client.
const (
	// ClientAuto runs the transactions on dbarena's lean wire clients
	// (packages mysqlwire and pgwire) where the target allows them.
	ClientAuto = "auto"
	// ClientSQL runs them through database/sql and the flavor's driver.
	ClientSQL = "sql"
)

// row is one result row, read column by column (0-based). A row is valid
// only inside the callback it is handed to.
type row interface {
	Len() int
	IsNull(i int) bool
	Int64(i int) (int64, error)
	Float64(i int) (float64, error)
	Bytes(i int) []byte
}

// executor runs a terminal's statements on its one connection: through
// database/sql (sqlExecutor) or a lean wire client (wire.go). The wire
// executors ignore ctx: a run aborts their statements in flight by
// shutting the socket down (workload.Env.Sockets).
type executor interface {
	// prepare prepares text, in the dialect's placeholder style.
	prepare(ctx context.Context, text string) (stmt, error)
	// run runs a statement without arguments or rows (BEGIN, COMMIT,
	// ROLLBACK).
	run(ctx context.Context, text string) error
}

// stmt is a statement prepared on an executor's connection.
type stmt interface {
	exec(ctx context.Context, args []any) error
	// query calls fn for each row until fn fails; it returns fn's error
	// once the reply is read.
	query(ctx context.Context, args []any, fn func(row) error) error
	close() error
}

// batcher is an executor that sends several statements in one round trip
// (--pipeline).
type batcher interface {
	// batch sends sts with their args, in order, reads every reply and
	// returns the first error.
	batch(sts []stmt, args [][]any) error
}

// batchPreparer is an executor that prepares many statements in one round
// trip (pgExecutor; mysqlwire has no such call).
type batchPreparer interface {
	// prepareAll prepares texts, in order. On an error none is kept; a
	// *pgwire.PrepareError names the text the server refused.
	prepareAll(ctx context.Context, texts []string) ([]stmt, error)
}

// errNoRows is what a single-row query without a row returns.
var errNoRows = sql.ErrNoRows

// sqlExecutor runs statements through database/sql on one connection.
type sqlExecutor struct{ conn *sql.Conn }

func (x *sqlExecutor) prepare(ctx context.Context, text string) (stmt, error) {
	st, err := x.conn.PrepareContext(ctx, text)
	if err != nil {
		return nil, err
	}
	return &sqlStmt{st: st}, nil
}

func (x *sqlExecutor) run(ctx context.Context, text string) error {
	_, err := x.conn.ExecContext(ctx, text)
	return err
}

// sqlStmt is a *sql.Stmt; its rows are read as sql.RawBytes, so that a
// value is converted only when asked for.
type sqlStmt struct {
	st *sql.Stmt
	r  sqlRow
}

func (s *sqlStmt) exec(ctx context.Context, args []any) error {
	_, err := s.st.ExecContext(ctx, args...)
	return err
}

func (s *sqlStmt) query(ctx context.Context, args []any, fn func(row) error) error {
	rows, err := s.st.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	if s.r.dest == nil {
		cols, err := rows.Columns()
		if err != nil {
			rows.Close()
			return err
		}
		s.r.vals = make([]sql.RawBytes, len(cols))
		s.r.dest = make([]any, len(cols))
		for i := range cols {
			s.r.dest[i] = &s.r.vals[i]
		}
	}
	var fnErr error
	for rows.Next() {
		if fnErr != nil {
			continue
		}
		if err := rows.Scan(s.r.dest...); err != nil {
			fnErr = err
			continue
		}
		fnErr = fn(&s.r)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return fnErr
}

func (s *sqlStmt) close() error { return s.st.Close() }

// sqlRow is a row scanned into sql.RawBytes: text, as the driver formats
// it.
type sqlRow struct {
	vals []sql.RawBytes
	dest []any
}

func (r *sqlRow) Len() int           { return len(r.vals) }
func (r *sqlRow) IsNull(i int) bool  { return r.vals[i] == nil }
func (r *sqlRow) Bytes(i int) []byte { return r.vals[i] }

func (r *sqlRow) Int64(i int) (int64, error) {
	if r.vals[i] == nil {
		return 0, fmt.Errorf("column %d: %w", i+1, errNull)
	}
	return strconv.ParseInt(string(r.vals[i]), 10, 64)
}

func (r *sqlRow) Float64(i int) (float64, error) {
	if r.vals[i] == nil {
		return 0, fmt.Errorf("column %d: %w", i+1, errNull)
	}
	return strconv.ParseFloat(string(r.vals[i]), 64)
}

// errNull is a NULL read as a number.
var errNull = errors.New("NULL value")
