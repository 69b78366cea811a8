package mysql

import (
	"context"
	"errors"

	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/server/target"
)

// CurrentDatabase implements flavor.SQL.
func (Dialect) CurrentDatabase() string { return "DATABASE()" }

// AutoIncrement implements flavor.SQL.
func (Dialect) AutoIncrement(intType string) string { return intType + " NOT NULL AUTO_INCREMENT" }

// AutoValueOnZero implements flavor.SQL (unless sql_mode has
// NO_AUTO_VALUE_ON_ZERO).
func (Dialect) AutoValueOnZero() bool { return true }

// Catalog implements flavor.SQL.
func (Dialect) Catalog(like string) (tables, columns, indexes string) {
	return "SELECT TABLE_NAME, COALESCE(ENGINE, '') FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE '" + like + "'",
		"SELECT TABLE_NAME, COLUMN_NAME, EXTRA LIKE '%auto_increment%' FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE '" + like + "'",
		"SELECT TABLE_NAME, INDEX_NAME, INDEX_NAME = 'PRIMARY' FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE '" + like + "'"
}

// ColumnType implements flavor.SQL: the MySQL family's own words.
func (Dialect) ColumnType(typ string) string { return typ }

// TableOptions implements flavor.SQL, as sysbench writes it (a comment
// that only the MySQL family executes).
func (Dialect) TableOptions(engine string) string {
	if engine == "" {
		return ""
	}
	return "/*! ENGINE = " + engine + " */"
}

// InsertIgnore implements flavor.SQL.
func (Dialect) InsertIgnore() (verb, tail string) { return "INSERT IGNORE", "" }

// IntDiv implements flavor.SQL.
func (Dialect) IntDiv() string { return " DIV " }

// SyncSerial implements flavor.SQL: AUTO_INCREMENT follows explicit values.
func (Dialect) SyncSerial(table, column string) string { return "" }

// LoadSession implements flavor.SQL: no foreign key checks.
// unique_checks stays on: with both checks off, MariaDB 10.6+ turns the
// first load into an empty table into a bulk insert that locks the table
// until it commits, and the other loaders of that table wait (three of
// four threads idle for TPC-C's first order_line, about 2 s of 13 at 4
// warehouses; loads were 10% slower over seven alternating loads each).
func (Dialect) LoadSession() string { return "SET foreign_key_checks = 0" }

// DropTable implements flavor.SQL.
func (Dialect) DropTable(name string) string { return "DROP TABLE IF EXISTS " + name }

// Routine implements flavor.SQL.
func (Dialect) Routine() string { return "PROCEDURE" }

// AnalyzeAll implements flavor.SQL: one ANALYZE TABLE per table.
func (Dialect) AnalyzeAll(tables ...string) []string {
	out := make([]string, len(tables))
	for i, t := range tables {
		out[i] = "ANALYZE TABLE " + t
	}
	return out
}

// IndexExists implements flavor.SQL.
func (Dialect) IndexExists() string {
	return "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? AND index_name = ?"
}

// UserTables implements flavor.SQL.
func (Dialect) UserTables() string {
	return "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE'"
}

// CreateDatabase implements flavor.SQL.
func (d Dialect) CreateDatabase(name string) string {
	return "CREATE DATABASE IF NOT EXISTS " + d.QuoteIdent(name)
}

// DropDatabase implements flavor.SQL.
func (d Dialect) DropDatabase(name string) string {
	return "DROP DATABASE IF EXISTS " + d.QuoteIdent(name)
}

// SystemDatabases implements flavor.SQL.
func (Dialect) SystemDatabases() []string {
	return []string{"mysql", "information_schema", "performance_schema", "sys"}
}

// MaxNameLen implements flavor.SQL.
func (Dialect) MaxNameLen() int { return 64 }

// SchemaPrefix implements flavor.SQL: a database is the only namespace.
func (Dialect) SchemaPrefix() string { return "" }

// Probe implements flavor.Server.
func (d Dialect) Probe(ctx context.Context, t target.Target) bool {
	conn, err := gomysql.NewConnector(d.Config(t, flavor.OpenOptions{}))
	if err != nil {
		return true // cannot tell: do not abandon anything
	}
	c, err := conn.Connect(ctx)
	if err == nil {
		c.Close()
		return true
	}
	var me *gomysql.MySQLError
	return errors.As(err, &me)
}

// CrossDatabase implements flavor.Server: a database is a schema of the server.
func (Dialect) CrossDatabase() bool { return true }

// MaintenanceDatabase implements flavor.Server: a connection needs no database.
func (Dialect) MaintenanceDatabase() string { return "" }

// ShowSettings implements flavor.Server.
func (Dialect) ShowSettings() string { return "SHOW GLOBAL VARIABLES" }

// DataDir implements flavor.Server.
func (Dialect) DataDir(ctx context.Context, db *sql.DB) (string, error) {
	var dir string
	err := db.QueryRowContext(ctx, "SELECT @@datadir").Scan(&dir)
	return dir, err
}

// ServerPID implements flavor.Server: the server's pid file, relative to
// its data directory unless absolute.
func (Dialect) ServerPID(ctx context.Context, db *sql.DB, procRoot string) (int, error) {
	var file string
	if err := db.QueryRowContext(ctx, "SELECT @@pid_file").Scan(&file); err != nil {
		return 0, err
	}
	if !filepath.IsAbs(file) {
		var dir string
		if err := db.QueryRowContext(ctx, "SELECT @@datadir").Scan(&dir); err != nil {
			return 0, err
		}
		file = filepath.Join(dir, file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// ProcessPerConnection implements flavor.Server: one process, a thread per connection.
func (Dialect) ProcessPerConnection() bool { return false }

// SessionTLS implements flavor.Server.
func (Dialect) SessionTLS(ctx context.Context, db *sql.DB) (enabled bool, version, cipher string, err error) {
	rows, err := db.QueryContext(ctx, "SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')")
	if err != nil {
		return false, "", "", err
	}
	defer rows.Close()
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return false, "", "", err
		}
		switch strings.ToLower(name) {
		case "ssl_version":
			version = value
		case "ssl_cipher":
			cipher = value
		}
	}
	if err := rows.Err(); err != nil {
		return false, "", "", err
	}
	return version != "" || cipher != "", version, cipher, nil
}

// TLSMode implements flavor.Server.
func (Dialect) TLSMode(t target.Target) string {
	mode, ok := t.Params[ParamTLS]
	if !ok {
		mode = "false"
		if t.Params[ParamTLSCA] != "" || t.Params[ParamTLSCert] != "" {
			mode = "true"
		}
	}
	return "tls=" + strings.ToLower(mode)
}

// VerifyTLS implements flavor.Server.
func (Dialect) VerifyTLS(params map[string]string, ca string) map[string]string {
	params[ParamTLS], params[ParamTLSCA] = "true", ca
	return params
}

// PasswordEnv implements flavor.Server.
func (Dialect) PasswordEnv() string { return "MYSQL_PWD" }

// PasswordFile implements flavor.Server.
func (Dialect) PasswordFile() flavor.PasswordFile { return flavor.OptionFile }

// RaiseLimit implements flavor.Server.
func (Dialect) RaiseLimit(setting string, need int64) string {
	return fmt.Sprintf("set %s = %d in the server's config (and its RLIMIT_NOFILE) and restart it", setting, need)
}

// StorageEngines implements flavor.Server.
func (Dialect) StorageEngines() bool { return true }

// StatusSource implements flavor.Server.
func (Dialect) StatusSource() flavor.StatusSource { return flavor.GlobalStatus }

// LiveCapture implements flavor.Server.
func (Dialect) LiveCapture() flavor.Capture { return flavor.CaptureGeneralLog }
