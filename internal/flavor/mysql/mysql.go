// Package mysql is the MySQL family's flavor: MariaDB, MySQL and Percona
// Server (see package flavor).
package mysql

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/wire/mysqlwire"
)

// Dialect serves MariaDB, MySQL and Percona Server.
type Dialect struct{}

var _ flavor.Dialect = Dialect{}

// Family implements flavor.Dialect.
func (Dialect) Family() target.Family { return target.MySQL }

// Flavors implements flavor.Dialect.
func (Dialect) Flavors() []target.Flavor {
	return []target.Flavor{target.FlavorMariaDB, target.FlavorMySQL, target.FlavorPercona}
}

// Config builds the driver configuration for t, without TLS: Open adds it
// from the DSN's tls parameters (TLS).
func (Dialect) Config(t target.Target, o flavor.OpenOptions) *gomysql.Config {
	c := gomysql.NewConfig()
	c.User = t.User
	c.Passwd = t.Password
	c.DBName = t.Database
	if t.Socket != "" {
		c.Net, c.Addr = "unix", t.Socket
	} else {
		c.Net, c.Addr = "tcp", net.JoinHostPort(t.Host, strconv.Itoa(t.Port))
	}
	// Statements a workload prepares explicitly use the binary protocol;
	// ad-hoc statements with arguments are interpolated on the client, one
	// round trip each, as sysbench does with --db-ps-mode=disable.
	c.InterpolateParams = true
	c.AllowNativePasswords = true
	c.Timeout = 10 * time.Second
	if o.Sockets != nil {
		c.DialFunc = o.Sockets.Dial
	}
	c.Params = map[string]string{}
	for k, v := range t.Params {
		if mysqlTLSParam(k) {
			continue // Open applies them (TLS)
		}
		c.Params[k] = v
	}
	return c
}

// Open implements flavor.Dialect.
func (d Dialect) Open(t target.Target, o flavor.OpenOptions) (*sql.DB, error) {
	c := d.Config(t, o)
	tc, preferred, err := TLS(t)
	if err != nil {
		return nil, err
	}
	c.TLS, c.AllowFallbackToPlaintext = tc, preferred
	conn, err := gomysql.NewConnector(c)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	if o.MaxConns > 0 {
		db.SetMaxOpenConns(o.MaxConns)
		db.SetMaxIdleConns(o.MaxConns)
	}
	return db, nil
}

// WireSupported reports whether t can be reached with dbarena's lean wire
// client: TCP or socket connections, with TLS or not, without other DSN
// parameters (session variables and driver options need go-sql-driver).
func (Dialect) WireSupported(t target.Target) bool {
	for k := range t.Params {
		if !mysqlTLSParam(k) {
			return false
		}
	}
	return true
}

// DialWire connects to t with the lean wire client (package mysqlwire) and
// records the connection in o.Sockets so that a run can abort it; ending
// ctx gives up the connect.
// mysqlwire.ErrUnsupportedAuth means the server wants an authentication
// method only go-sql-driver speaks.
func (Dialect) DialWire(ctx context.Context, t target.Target, o flavor.OpenOptions) (*mysqlwire.Conn, error) {
	cfg := mysqlwire.Config{User: t.User, Password: t.Password, Database: t.Database, Timeout: 10 * time.Second}
	var err error
	if cfg.TLS, cfg.TLSPreferred, err = TLS(t); err != nil {
		return nil, err
	}
	if t.Socket != "" {
		cfg.Socket = t.Socket
	} else {
		cfg.Addr = net.JoinHostPort(t.Host, strconv.Itoa(t.Port))
	}
	c, err := mysqlwire.DialContext(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if o.Sockets != nil {
		o.Sockets.TrackWire(c)
	}
	return c, nil
}

// MySQL error numbers that dbarena treats specially.
const (
	mysqlRecordChanged   = 1020
	mysqlLockWaitTimeout = 1205
	mysqlDeadlock        = 1213
	mysqlServerShutdown  = 1053
	mysqlConnKilled      = 1927
	mysqlGoneAway        = 2006
	mysqlLostConn        = 2013
)

// Classify implements flavor.Dialect.
func (Dialect) Classify(err error) flavor.Class {
	if err == nil {
		return flavor.Class{Kind: flavor.None}
	}
	var number uint16
	var me *gomysql.MySQLError
	var we *mysqlwire.Error
	switch {
	case errors.As(err, &me):
		number = me.Number
	case errors.As(err, &we):
		number = we.Number
	}
	if number != 0 {
		code := strconv.Itoa(int(number))
		switch number {
		// sysbench's default --mysql-ignore-errors: 1213, 1020, 1205.
		case mysqlDeadlock, mysqlLockWaitTimeout, mysqlRecordChanged:
			return flavor.Class{Kind: flavor.Retry, Code: code}
		case mysqlServerShutdown, mysqlConnKilled, mysqlGoneAway, mysqlLostConn:
			return flavor.Class{Kind: flavor.ConnLost, Code: code}
		}
		return flavor.Class{Kind: flavor.Fatal, Code: code}
	}
	if flavor.IsConnError(err) || errors.Is(err, gomysql.ErrInvalidConn) || errors.Is(err, mysqlwire.ErrClosed) {
		return flavor.Class{Kind: flavor.ConnLost, Code: "conn"}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return flavor.Class{Kind: flavor.Fatal, Code: "canceled"}
	}
	return flavor.Class{Kind: flavor.Fatal, Code: "client"}
}

// Rebind implements flavor.Dialect: MySQL uses '?' already.
func (Dialect) Rebind(q string) string { return q }

// QuoteIdent implements flavor.Dialect.
func (Dialect) QuoteIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// ServerVersion implements flavor.Dialect: the flavor is Detect's, from
// VERSION(), @@version_comment and DetectVariables. A server that does not
// answer the variables (a proxy in front of it) is told by the first two.
func (Dialect) ServerVersion(ctx context.Context, db *sql.DB) (target.Flavor, string, error) {
	var version, comment string
	if err := db.QueryRowContext(ctx, "SELECT VERSION(), @@version_comment").Scan(&version, &comment); err != nil {
		return "", "", err
	}
	vars, err := detectVariables(ctx, db)
	if err != nil {
		vars = nil
	}
	return Detect(version, comment, vars), version, nil
}

// ReadCounters implements flavor.Dialect.
func (Dialect) ReadCounters(ctx context.Context, db *sql.DB) (flavor.Counters, error) {
	rows, err := db.QueryContext(ctx, `SHOW GLOBAL STATUS WHERE Variable_name IN
		('Questions','Com_commit','Com_rollback','Com_select','Com_insert','Com_update','Com_delete',
		'Innodb_rows_inserted','Handler_write','Uptime')`)
	if err != nil {
		return flavor.Counters{}, err
	}
	defer rows.Close()
	var c flavor.Counters
	// MariaDB 10.6+ dropped Innodb_rows_*: count rows written by any
	// engine (Handler_write) there instead.
	handlerWrite, innodbRows := int64(0), false
	for rows.Next() {
		var name string
		var value int64
		if err := rows.Scan(&name, &value); err != nil {
			return flavor.Counters{}, err
		}
		switch strings.ToLower(name) {
		case "questions":
			c.Queries = value
		case "com_commit":
			c.Commits = value
		case "com_rollback":
			c.Rollbacks = value
		case "com_select":
			c.Selects = value
		case "com_insert":
			c.Inserts = value
		case "com_update":
			c.Updates = value
		case "com_delete":
			c.Deletes = value
		case "innodb_rows_inserted":
			c.RowsInserted, innodbRows = value, true
		case "handler_write":
			handlerWrite = value
		case "uptime":
			c.Started = time.Now().Add(-time.Duration(value) * time.Second)
		}
	}
	if !innodbRows {
		c.RowsInserted = handlerWrite
	}
	return c, rows.Err()
}

// mysqlSettings are the variables recorded with every run.
var mysqlSettings = []string{
	"version_comment", "default_storage_engine", "innodb_buffer_pool_size",
	"innodb_flush_log_at_trx_commit", "sync_binlog", "log_bin", "innodb_doublewrite",
	"innodb_flush_method", "innodb_log_file_size", "max_connections", "transaction_isolation",
}

// Settings implements flavor.Dialect.
func (Dialect) Settings(ctx context.Context, db *sql.DB) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL VARIABLES")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	want := map[string]bool{}
	for _, n := range mysqlSettings {
		want[n] = true
	}
	out := map[string]string{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, err
		}
		if want[strings.ToLower(name)] {
			out[strings.ToLower(name)] = value
		}
	}
	return out, rows.Err()
}

// readerSeq names go-sql-driver's (process-global) reader handlers.
var readerSeq atomic.Int64

// LoadText implements flavor.Dialect: LOAD DATA LOCAL INFILE from r, which the
// driver reads through a reader handler registered under a name unique
// in the process (the driver's registry is process-global). A server or
// client that does not allow local files fails with an error that
// RefusesBulk reports.
func (Dialect) LoadText(ctx context.Context, conn *sql.Conn, t flavor.BulkTable, r io.Reader) (int64, error) {
	name := "dbarena-bulk-" + strconv.FormatInt(readerSeq.Add(1), 10)
	gomysql.RegisterReaderHandler(name, func() io.Reader { return r })
	defer gomysql.DeregisterReaderHandler(name)
	var q strings.Builder
	q.WriteString("LOAD DATA LOCAL INFILE 'Reader::" + name + "'")
	if t.Modifier != "" {
		q.WriteString(" " + t.Modifier)
	}
	q.WriteString(" INTO TABLE " + t.Table)
	if t.Charset != "" {
		q.WriteString(" CHARACTER SET " + t.Charset)
	}
	q.WriteString(` FIELDS TERMINATED BY '\t' ESCAPED BY '\\' LINES TERMINATED BY '\n'`)
	if t.Columns != "" {
		q.WriteString(" (" + t.Columns + ")")
	}
	res, err := conn.ExecContext(ctx, q.String())
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// RefusesBulk implements flavor.Dialect: the errors of a server (or
// client) that does not allow LOAD DATA LOCAL INFILE: 1148
// ER_NOT_ALLOWED_COMMAND, 3948 (MySQL 8, local_infile off), 4166
// (MariaDB), 2068 (client-side refusal). The rows then go as INSERTs.
func (Dialect) RefusesBulk(err error) bool {
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1148, 3948, 4166, 2068:
			return true
		}
	}
	return false
}
