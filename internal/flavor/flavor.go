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
	"github.com/dbarena/dbarena/internal/wire/mysqlwire"
	"github.com/dbarena/dbarena/internal/wire/pgwire"
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

	SQL
	Server
}

// SQL is the DDL and catalogue SQL the workloads and tools share, written
// for the flavor.
type SQL interface {
	// CurrentDatabase is the SQL expression of the schema that unqualified
	// table names resolve to (DATABASE(), current_schema()).
	CurrentDatabase() string
	// AutoIncrement is the column definition of an integer key that the
	// server numbers itself, for intType INTEGER or BIGINT.
	AutoIncrement(intType string) string
	// ColumnType is the flavor's type for a column type written in the
	// MySQL family's words (tinyint, datetime, ...).
	ColumnType(typ string) string
	// AutoValueOnZero reports whether inserting 0 into an AutoIncrement
	// column numbers the row as leaving the column out does.
	AutoValueOnZero() bool
	// Catalog lists, for the tables of the current database whose names
	// are LIKE like: the tables (name, storage engine or ""), their
	// columns (table, column, numbered by the server) and their indexes
	// (table, index, primary key).
	Catalog(like string) (tables, columns, indexes string)
	// TableOptions is the clause after a CREATE TABLE's columns that picks
	// the storage engine; "" where the flavor has none.
	TableOptions(engine string) string
	// InsertIgnore is the verb and tail of an INSERT that skips rows whose
	// key is there already.
	InsertIgnore() (verb, tail string)
	// IntDiv is the integer division operator, with spaces.
	IntDiv() string
	// SyncSerial is the statement that moves table's serial column's
	// sequence past rows inserted with explicit values; "" where the
	// server does that itself.
	SyncSerial(table, column string) string
	// LoadSession is the session setting of a connection that loads
	// generated rows into fresh tables (checks or durability relaxed).
	LoadSession() string
	// DropTable drops a table if it exists, and what depends on it.
	DropTable(name string) string
	// Routine is the kind of a stored routine the workloads create
	// (PROCEDURE, FUNCTION).
	Routine() string
	// AnalyzeAll refreshes the statistics of every table the workload
	// loaded in the current database: one statement per table, or one.
	AnalyzeAll(tables ...string) []string
	// IndexExists counts the indexes of the current database on the
	// table and with the name of its two placeholders (in the flavor's
	// style, as Rebind writes them).
	IndexExists() string
	// UserTables counts the user's tables in the current database.
	UserTables() string
	// CreateDatabase creates a database (if it does not exist, where the
	// server can say so).
	CreateDatabase(name string) string
	// DropDatabase drops a database if it exists.
	DropDatabase(name string) string
	// SystemDatabases are the server's own databases.
	SystemDatabases() []string
	// MaxNameLen is the longest database or table name, in bytes.
	MaxNameLen() int
	// SchemaPrefix is the prefix of a table name qualified by the
	// default schema ("public."), "" where there is none.
	SchemaPrefix() string
}

// Server is what the flavor knows of the server beyond SQL: its
// processes, settings and client conventions.
type Server interface {
	// Probe reports whether the server behind t answers a new connection
	// (a server error counts as an answer: too many connections is not
	// a freeze).
	Probe(ctx context.Context, t target.Target) bool
	// CrossDatabase reports whether one connection reads every database
	// of the server (db.table names); otherwise a database is chosen by
	// connecting to it.
	CrossDatabase() bool
	// MaintenanceDatabase is a database every server has, to connect to
	// outside the workload's ("" when the connection needs none).
	MaintenanceDatabase() string
	// ShowSettings lists every setting as name/value rows (a
	// Snapshot's source).
	ShowSettings() string
	// DataDir asks the server for its data directory.
	DataDir(ctx context.Context, db *sql.DB) (string, error)
	// ServerPID is the process id of the server the session on db talks
	// to, as this host's procfs at procRoot sees it.
	ServerPID(ctx context.Context, db *sql.DB, procRoot string) (int, error)
	// ProcessPerConnection reports whether the server serves each
	// connection from a child process (to be counted with it).
	ProcessPerConnection() bool
	// SessionTLS reports whether the session on db is encrypted, with
	// which protocol version and cipher.
	SessionTLS(ctx context.Context, db *sql.DB) (enabled bool, version, cipher string, err error)
	// TLSMode is the TLS setting of t's DSN as Open applies it, with
	// dbarena's default when unset ("tls=false", "sslmode=disable").
	TLSMode(t target.Target) string
	// VerifyTLS returns t's DSN parameters set to verify the server
	// against the CA certificate file ca.
	VerifyTLS(params map[string]string, ca string) map[string]string
	// PasswordEnv is the environment variable the flavor's own clients
	// read a password from (MYSQL_PWD, PGPASSWORD).
	PasswordEnv() string
	// PasswordFile is the file format the flavor's own clients read
	// passwords from.
	PasswordFile() PasswordFile
	// Limits reads the server's limits that a run asking for need could
	// hit (connections, prepared statements, open files) and what is in
	// use; others counts the connections of other clients among
	// connected ones.
	Limits(ctx context.Context, conn *sql.Conn, need Demand, others func(connected int64) int64) ([]Limit, error)
	// RaiseLimit tells how to raise setting to need when it cannot be
	// set on the running server.
	RaiseLimit(setting string, need int64) string
	// StorageEngines reports whether tables have a storage engine to
	// choose (--mysql-storage-engine).
	StorageEngines() bool
	// StatusSource is where the server keeps the cumulative counters
	// that the monitor samples as rates.
	StatusSource() StatusSource
	// LiveCapture is how dbarena captures the statements of a running
	// server.
	LiveCapture() Capture
}

// PasswordFile is a client password file format.
type PasswordFile int

// Password file formats.
const (
	// OptionFile: the MySQL family's ~/.my.cnf ([client] password=).
	OptionFile PasswordFile = iota
	// PgPass: libpq's ~/.pgpass (host:port:db:user:password).
	PgPass
)

// StatusSource is where a server keeps its cumulative counters.
type StatusSource int

// Status sources.
const (
	// GlobalStatus: SHOW GLOBAL STATUS (Com_*, Handler_*, Innodb_*).
	GlobalStatus StatusSource = iota
	// StatDatabase: the pg_stat_database row of the workload's database
	// (and the server's pg_stat_* views).
	StatDatabase
)

// Capture is a way to capture a running server's statements.
type Capture int

// Live capture methods.
const (
	// CaptureGeneralLog reads the general query log as a table (or, when
	// asked, performance_schema's statement history).
	CaptureGeneralLog Capture = iota
	// CaptureServerLog reads the statement log the server writes (in a
	// sandbox, whose log dbarena can read).
	CaptureServerLog
)

// Demand is what a run will ask of the server's limits.
type Demand struct {
	// Connections, PreparedPerConn and Tables are the workload's.
	Connections, PreparedPerConn, Tables int
	// Extra are the connections the caller opens besides the workers'.
	Extra int
}

// Limit is one server setting compared with what a run needs.
type Limit struct {
	Setting    string
	Have, Need int64
	// Live: SET GLOBAL raises it.
	Live bool
	// Soft: missing it slows the run down but does not fail it.
	Soft bool
	// Ceiling is the most it may be raised to, 0 for no ceiling.
	Ceiling int64
}

// MySQLWire is a flavor whose servers the lean MySQL-protocol client
// (package mysqlwire) reaches, where WireSupported says so.
type MySQLWire interface {
	DialWire(ctx context.Context, t target.Target, o OpenOptions) (*mysqlwire.Conn, error)
}

// PostgresWire is a flavor whose servers the lean PostgreSQL-protocol
// client (package pgwire) reaches, where WireSupported says so.
type PostgresWire interface {
	DialWire(ctx context.Context, t target.Target, o OpenOptions) (*pgwire.Conn, error)
}
