// Package flavor is what a server flavor means to dbarena, in one
// interface (Dialect): how to connect, how to write placeholders,
// identifiers and the DDL the workloads share, how to classify server
// errors, how to read the server's own counters and settings, how to load
// rows in bulk (bulk.go: LoadText, RowSink) and what live capture needs.
// Each flavor lives in a folder of its own (internal/flavor/mysql,
// internal/flavor/postgres) and is listed on one line of the registry
// (package dialect, registry.go), which callers ask for a target's
// Dialect. The sandbox recipe of a flavor is in package sandbox, keyed by
// flavor (sandbox imports the flavors to talk to the servers it starts).
package flavor

import (
	"context"
	"database/sql"
	"io"
	"time"

	"github.com/dbarena/dbarena/internal/server/target"
)

// Kind says what the runner should do about an error.
type Kind int

// Error kinds, from harmless to fatal.
const (
	// None: no error.
	None Kind = iota
	// Retry: the transaction lost a conflict (deadlock, lock-wait timeout,
	// serialization failure); roll back and run it again.
	Retry
	// ConnLost: the connection is gone; reconnect and go on.
	ConnLost
	// Fatal: anything else; the run stops unless the code is ignored.
	Fatal
)

func (k Kind) String() string {
	switch k {
	case None:
		return "none"
	case Retry:
		return "retry"
	case ConnLost:
		return "connection-lost"
	}
	return "fatal"
}

// Class is the classification of one error: what to do, and the server's
// error code ("1213", "40P01") or a short name for client-side failures.
type Class struct {
	Kind Kind
	Code string
}

// OpenOptions tune a connection pool.
type OpenOptions struct {
	// MaxConns caps the pool; 0 leaves database/sql's default.
	MaxConns int
	// Sockets, if set, records every connection the pool dials.
	Sockets *Sockets
}

// Counters are the server's own cumulative statement and transaction
// counters, used to cross-check what the client reports.
type Counters struct {
	// Queries counts statements (MySQL Questions); zero where the server has no such counter.
	Queries int64
	// Commits and Rollbacks count transactions (Com_commit/Com_rollback, xact_commit/xact_rollback).
	Commits   int64
	Rollbacks int64
	// Selects, Inserts, Updates, Deletes count statements by kind where the
	// server keeps them (MySQL Com_*); PostgreSQL leaves them zero.
	Selects, Inserts, Updates, Deletes int64
	// RowsInserted counts rows inserted (Innodb_rows_inserted, tup_inserted).
	RowsInserted int64
	// Started is when the server started (now - Uptime on MySQL, to the
	// second; pg_postmaster_start_time() on PostgreSQL): counters read
	// across a restart cannot be compared.
	Started time.Time
}

// restartSlack is how far two readings of a server's start time may differ
// (MySQL's Uptime has one-second resolution) before they mean a restart.
const restartSlack = 3 * time.Second

// RestartedSince reports whether the server restarted between the reading
// before and c.
func (c Counters) RestartedSince(before Counters) bool {
	if c.Started.IsZero() || before.Started.IsZero() {
		return false
	}
	d := c.Started.Sub(before.Started)
	return d > restartSlack || d < -restartSlack
}

// Dialect is one protocol family's SQL and driver behaviour. Implementations
// are stateless and safe for concurrent use.
type Dialect interface {
	// Family is the protocol family.
	Family() target.Family
	// Flavors lists the server flavors the dialect serves.
	Flavors() []target.Flavor
	// Open returns a connection pool for t. It does not connect.
	Open(t target.Target, o OpenOptions) (*sql.DB, error)
	// Classify says whether err is retryable, a lost connection, or fatal.
	Classify(err error) Class
	// Rebind rewrites a query written with '?' placeholders into the
	// family's own placeholder style.
	Rebind(query string) string
	// QuoteIdent quotes a table or column name.
	QuoteIdent(name string) string
	// ServerVersion reports the flavor and version string of the server.
	ServerVersion(ctx context.Context, db *sql.DB) (target.Flavor, string, error)
	// ReadCounters reads the server's cumulative counters.
	ReadCounters(ctx context.Context, db *sql.DB) (Counters, error)
	// Settings reads the server settings that matter for a result
	// (durability, buffer sizes, connection limits).
	Settings(ctx context.Context, db *sql.DB) (map[string]string, error)
	// LoadText loads rows in the bulk text format (see BulkTable) from r
	// into t on conn with the family's bulk statement (LOAD DATA LOCAL
	// INFILE, COPY FROM STDIN) and returns the rows the server reports.
	LoadText(ctx context.Context, conn *sql.Conn, t BulkTable, r io.Reader) (int64, error)
	// RefusesBulk reports whether err is the server's (or the client's)
	// refusal of LoadText's statement, after which rows go as INSERTs
	// (LOAD DATA LOCAL with local_infile off).
	RefusesBulk(err error) bool
	// WireSupported reports whether t can be reached through the
	// flavor's lean wire client (internal/wire); false when it has none.
	WireSupported(t target.Target) bool
}
