package postgres

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbarena/dbarena/internal/flavor"
	"github.com/dbarena/dbarena/internal/server/target"
)

// CurrentDatabase implements flavor.SQL: the schema unqualified names
// resolve to.
func (Dialect) CurrentDatabase() string { return "current_schema()" }

// AutoIncrement implements flavor.SQL: SERIAL (INTEGER), BIGSERIAL (BIGINT).
func (Dialect) AutoIncrement(intType string) string {
	if strings.EqualFold(intType, "BIGINT") {
		return "BIGSERIAL"
	}
	return "SERIAL"
}

// AutoValueOnZero implements flavor.SQL: a SERIAL stores the 0.
func (Dialect) AutoValueOnZero() bool { return false }

// Catalog implements flavor.SQL: tables and partitioned tables of the
// current schema; a column is numbered when its default is nextval().
func (Dialect) Catalog(like string) (tables, columns, indexes string) {
	return "SELECT c.relname, '' FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND c.relname LIKE '" + like + "'",
		"SELECT table_name, column_name, COALESCE(column_default LIKE 'nextval(%', false) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name LIKE '" + like + "'",
		"SELECT c.relname, i.relname, x.indisprimary FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relname LIKE '" + like + "'"
}

// ColumnType implements flavor.SQL: tinyint is a smallint, datetime a
// timestamp (with their precision); other types keep their names.
func (Dialect) ColumnType(typ string) string {
	switch {
	case strings.HasPrefix(typ, "tinyint"):
		return "smallint" + strings.TrimPrefix(typ, "tinyint")
	case strings.HasPrefix(typ, "datetime"):
		return "timestamp" + strings.TrimPrefix(typ, "datetime")
	}
	return typ
}

// TableOptions implements flavor.SQL: PostgreSQL has one table engine.
func (Dialect) TableOptions(string) string { return "" }

// InsertIgnore implements flavor.SQL.
func (Dialect) InsertIgnore() (verb, tail string) { return "INSERT", " ON CONFLICT DO NOTHING" }

// IntDiv implements flavor.SQL: '/' on integers truncates.
func (Dialect) IntDiv() string { return " / " }

// SyncSerial implements flavor.SQL: a SERIAL's sequence ignores explicit
// values, so it is moved past the largest.
func (Dialect) SyncSerial(table, column string) string {
	return "SELECT setval(pg_get_serial_sequence('" + table + "', '" + column + "'), max(" + column + ")) FROM " + table
}

// LoadSession implements flavor.SQL: commits do not wait for the WAL
// flush (a crash loses the last loads, which a new prepare redoes).
func (Dialect) LoadSession() string { return "SET synchronous_commit = off" }

// DropTable implements flavor.SQL: CASCADE drops the foreign keys and
// views that depend on the table.
func (Dialect) DropTable(name string) string { return "DROP TABLE IF EXISTS " + name + " CASCADE" }

// Routine implements flavor.SQL.
func (Dialect) Routine() string { return "FUNCTION" }

// AnalyzeAll implements flavor.SQL: one ANALYZE for the database.
func (Dialect) AnalyzeAll(...string) []string { return []string{"ANALYZE"} }

// IndexExists implements flavor.SQL.
func (Dialect) IndexExists() string {
	return "SELECT COUNT(*) FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1 AND indexname = $2"
}

// UserTables implements flavor.SQL.
func (Dialect) UserTables() string {
	return "SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
}

// CreateDatabase implements flavor.SQL (PostgreSQL has no IF NOT EXISTS here).
func (d Dialect) CreateDatabase(name string) string { return "CREATE DATABASE " + d.QuoteIdent(name) }

// DropDatabase implements flavor.SQL.
func (d Dialect) DropDatabase(name string) string {
	return "DROP DATABASE IF EXISTS " + d.QuoteIdent(name)
}

// SystemDatabases implements flavor.SQL.
func (Dialect) SystemDatabases() []string { return []string{"postgres", "template0", "template1"} }

// MaxNameLen implements flavor.SQL: NAMEDATALEN - 1.
func (Dialect) MaxNameLen() int { return 63 }

// SchemaPrefix implements flavor.SQL.
func (Dialect) SchemaPrefix() string { return "public." }

// Probe implements flavor.Server.
func (d Dialect) Probe(ctx context.Context, t target.Target) bool {
	cfg, err := d.Config(t, flavor.OpenOptions{})
	if err != nil {
		return true // cannot tell: do not abandon anything
	}
	pc, err := pgconn.ConnectConfig(ctx, &cfg.Config)
	if err == nil {
		pc.Close(context.Background())
		return true
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe)
}

// CrossDatabase implements flavor.Server: a connection sees its own database only.
func (Dialect) CrossDatabase() bool { return false }

// MaintenanceDatabase implements flavor.Server.
func (Dialect) MaintenanceDatabase() string { return "postgres" }

// ShowSettings implements flavor.Server.
func (Dialect) ShowSettings() string { return "SHOW ALL" }

// DataDir implements flavor.Server (only superusers and
// pg_read_all_settings see data_directory).
func (Dialect) DataDir(ctx context.Context, db *sql.DB) (string, error) {
	var dir string
	err := db.QueryRowContext(ctx, "SHOW data_directory").Scan(&dir)
	return dir, err
}

// ServerPID implements flavor.Server: the postmaster, parent of the
// session's own backend. The backend must stay the same for the question
// to make sense: one connection, one query.
func (Dialect) ServerPID(ctx context.Context, db *sql.DB, procRoot string) (int, error) {
	var backend int
	if err := db.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return 0, err
	}
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(backend), "stat"))
	if err != nil {
		return 0, err
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed %s/%d/stat", procRoot, backend)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, fmt.Errorf("malformed %s/%d/stat", procRoot, backend)
	}
	return strconv.Atoi(f[1])
}

// ProcessPerConnection implements flavor.Server: a backend process per
// connection, children of the postmaster.
func (Dialect) ProcessPerConnection() bool { return true }

// SessionTLS implements flavor.Server.
func (Dialect) SessionTLS(ctx context.Context, db *sql.DB) (enabled bool, version, cipher string, err error) {
	err = db.QueryRowContext(ctx, `SELECT ssl, COALESCE(version, ''), COALESCE(cipher, '')
		FROM pg_stat_ssl WHERE pid = pg_backend_pid()`).Scan(&enabled, &version, &cipher)
	return enabled, version, cipher, err
}

// TLSMode implements flavor.Server.
func (Dialect) TLSMode(t target.Target) string {
	mode := t.Params["sslmode"]
	if mode == "" {
		mode = "disable"
	}
	return "sslmode=" + mode
}

// VerifyTLS implements flavor.Server.
func (Dialect) VerifyTLS(params map[string]string, ca string) map[string]string {
	params["sslmode"], params["sslrootcert"] = "verify-full", ca
	return params
}

// PasswordEnv implements flavor.Server.
func (Dialect) PasswordEnv() string { return "PGPASSWORD" }

// PasswordFile implements flavor.Server.
func (Dialect) PasswordFile() flavor.PasswordFile { return flavor.PgPass }

// RaiseLimit implements flavor.Server.
func (Dialect) RaiseLimit(setting string, need int64) string {
	return fmt.Sprintf("ALTER SYSTEM SET %s = %d and restart the server", setting, need)
}

// StorageEngines implements flavor.Server.
func (Dialect) StorageEngines() bool { return false }

// StatusSource implements flavor.Server.
func (Dialect) StatusSource() flavor.StatusSource { return flavor.StatDatabase }

// LiveCapture implements flavor.Server.
func (Dialect) LiveCapture() flavor.Capture { return flavor.CaptureServerLog }
