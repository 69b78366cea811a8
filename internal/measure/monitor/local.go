package monitor

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/server/target"
)

// IsLocal reports whether t's server runs on this machine, so that host
// and process figures describe it: a unix socket, or a host that is empty,
// "localhost" or a loopback address (127.0.0.0/8, ::1). Any other host
// counts as remote, even if it is one of this machine's own addresses.
func IsLocal(t target.Target) bool {
	if t.Socket != "" {
		return true
	}
	h := strings.Trim(strings.ToLower(t.Host), "[]")
	return h == "" || h == "localhost" || h == "::1" || strings.HasPrefix(h, "127.") || strings.HasPrefix(h, "/")
}

// ServerPID finds the process of a local server that dbarena did not
// start, asking the server itself: MySQL's @@pid_file, PostgreSQL's
// postmaster as the parent of the session's own backend. procRoot is
// normally "/proc".
func ServerPID(ctx context.Context, family target.Family, db *sql.DB, procRoot string) (int, error) {
	switch family {
	case target.MySQL:
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
	case target.Postgres:
		// The backend must stay the same for the question to make sense:
		// one connection, one query.
		var backend int
		if err := db.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
			return 0, err
		}
		b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(backend), "stat"))
		if err != nil {
			return 0, err
		}
		st, err := parseProcStat(b)
		if err != nil {
			return 0, err
		}
		return st.ppid, nil
	}
	return 0, fmt.Errorf("no process lookup for family %q", family)
}

// DataDir asks a server for its data directory (@@datadir; PostgreSQL's
// data_directory, which only superusers and pg_read_all_settings see).
func DataDir(ctx context.Context, family target.Family, db *sql.DB) (string, error) {
	q := "SELECT @@datadir"
	if family == target.Postgres {
		q = "SHOW data_directory"
	}
	var dir string
	err := db.QueryRowContext(ctx, q).Scan(&dir)
	return dir, err
}
