package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// backendNames are the store backends every cross-backend test runs on.
var backendNames = []string{"sqlite", "mariadb", "postgres"}

// dbCounter names each test's own database (MariaDB) or schema (PostgreSQL).
var dbCounter atomic.Int64

// openBackend returns an empty store of the named backend, closed when the
// test ends, and its location as given to Open (password included).
func openBackend(t *testing.T, name string) (*Store, string) {
	t.Helper()
	loc := backendLocation(t, name)
	s, err := Open(context.Background(), loc)
	if err != nil {
		t.Fatalf("Open(%s): %v", maskLoc(loc), err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, loc
}

// backendLocation makes an empty place for a store: a file path in a new
// directory, a new MariaDB database, or a new PostgreSQL schema in the
// sandbox's database (the workload account may not create databases there).
// The database or schema is dropped when the test ends.
func backendLocation(t *testing.T, name string) string {
	t.Helper()
	if name == "sqlite" {
		return filepath.Join(t.TempDir(), "results.db")
	}
	if testing.Short() {
		t.Skip("needs a database sandbox")
	}
	flavor := target.FlavorMariaDB
	if name == "postgres" {
		flavor = target.FlavorPostgres
	}
	tgt := sandboxtest.Start(t, flavor)
	d, err := dialect.For(tgt.Family())
	if err != nil {
		t.Fatal(err)
	}
	// The workload account may not create databases: on the MySQL family
	// the sandbox's superuser makes the namespace and grants it.
	owner := tgt
	if name != "postgres" {
		if owner, err = sandboxtest.Manager(t).Admin(tgt.Sandbox); err != nil {
			t.Fatal(err)
		}
	}
	db, err := d.Open(owner, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ns := fmt.Sprintf("store_t%d_%d", os.Getpid(), dbCounter.Add(1))
	create, drop := "CREATE DATABASE "+ns, "DROP DATABASE "+ns
	if name == "postgres" {
		create, drop = "CREATE SCHEMA "+ns, "DROP SCHEMA "+ns+" CASCADE"
	}
	if _, err := db.ExecContext(context.Background(), create); err != nil {
		t.Fatalf("%s: %v", create, err)
	}
	if name != "postgres" {
		if _, err := db.ExecContext(context.Background(), "GRANT ALL ON "+ns+".* TO ?@'127.0.0.1'", tgt.User); err != nil {
			t.Fatalf("grant %s: %v", ns, err)
		}
	}
	t.Cleanup(func() {
		db, err := d.Open(tgt, dialect.OpenOptions{MaxConns: 1})
		if err != nil {
			t.Error(err)
			return
		}
		defer db.Close()
		if _, err := db.ExecContext(context.Background(), drop); err != nil {
			t.Errorf("%s: %v", drop, err)
		}
	})
	if name == "postgres" {
		dsn := tgt.DSN()
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + "search_path=" + ns
	}
	tgt.Database = ns
	return tgt.DSN()
}

// forEachBackend runs f as a subtest on every backend.
func forEachBackend(t *testing.T, f func(t *testing.T, s *Store, loc string)) {
	for _, name := range backendNames {
		t.Run(name, func(t *testing.T) {
			s, loc := openBackend(t, name)
			f(t, s, loc)
		})
	}
}
