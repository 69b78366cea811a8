package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

func TestOpenNoDirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		filepath.Join(dir, "typo", "results.db"),
		filepath.Join(dir, "a", "b", "results.db"),
		filepath.Join(file, "results.db"),
	} {
		s, err := Open(context.Background(), path)
		if err == nil {
			s.Close()
			t.Fatalf("Open(%s) succeeded", path)
		}
		if !errors.Is(err, ErrNoDir) || !strings.Contains(err.Error(), path) {
			t.Errorf("Open(%s) = %v; want ErrNoDir naming the path", path, err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Errorf("Open created something: %v %v", entries, err)
	}

	// The default store's directories are created.
	def := filepath.Join(dir, "home", "dbarena", FileName)
	s := openDefaultTest(t, def)
	if s.Location() != def {
		t.Errorf("Location() = %q, want %q", s.Location(), def)
	}
}

func TestOpenBadDSN(t *testing.T) {
	const pw = "Sup3r-secret"
	tests := []struct {
		name, loc string
	}{
		{"unknown scheme", "sqlite://u:" + pw + "@h/db"},
		{"no database", "mysql://u:" + pw + "@127.0.0.1:1/"},
		{"bad port", "postgres://u:" + pw + "@127.0.0.1:99999/db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(context.Background(), tt.loc)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, ErrBadLocation) || strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Open = %q; want one ErrBadLocation line without the password", err)
			}
		})
	}
}

// TestDSNStoreSecrets: the password of a results DSN is in no error, not
// in Location, and not in any stored row.
func TestDSNStoreSecrets(t *testing.T) {
	for _, flavor := range []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres} {
		t.Run(string(flavor), func(t *testing.T) {
			name := "mariadb"
			if flavor == target.FlavorPostgres {
				name = "postgres"
			}
			s, loc := openBackend(t, name)
			tgt := sandboxtest.Start(t, flavor)
			if tgt.Password == "" || !strings.Contains(loc, tgt.Password) {
				t.Fatalf("test DSN carries no password")
			}
			if l := s.Location(); strings.Contains(l, tgt.Password) || !strings.Contains(l, "***") {
				t.Errorf("Location() = %q, want the password masked", l)
			}

			// Connection failures: a wrong password, a missing database.
			bad := []string{strings.Replace(loc, tgt.Password, tgt.Password+"x", 1)}
			missing := tgt
			missing.Database = "no_such_db"
			bad = append(bad, missing.DSN())
			for _, b := range bad {
				s2, err := Open(context.Background(), b)
				if err == nil {
					s2.Close()
					t.Fatalf("Open(%s) succeeded", maskLoc(b))
				}
				if strings.Contains(err.Error(), tgt.Password) {
					t.Errorf("error shows the password: %v", err)
				}
				t.Logf("Open(bad) = %v", err)
			}

			r := testRun(0, 2)
			r.Target.DSN = loc
			r.Error = "lost " + loc
			r.Dbarena.Command = []string{"dbarena", "run", "--results", loc}
			id := save(t, s, r)
			var doc, dsn, errText, cmd string
			if err := s.db.QueryRow(s.be.rebind("SELECT summary, dsn, error, command FROM runs WHERE id = ?"), id).
				Scan(&doc, &dsn, &errText, &cmd); err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{doc, dsn, errText, cmd} {
				if strings.Contains(v, tgt.Password) {
					t.Errorf("stored row holds the password: %.80s", v)
				}
			}
		})
	}
}

// TestMigrationsAllBackends: concurrent first opens migrate once, the
// version is recorded, reopening is a no-op and a newer schema is refused.
func TestMigrationsAllBackends(t *testing.T) {
	for _, name := range backendNames {
		t.Run(name, func(t *testing.T) {
			loc := backendLocation(t, name)
			errs := make(chan error, 3)
			for range 3 {
				go func() {
					s, err := Open(context.Background(), loc)
					if err == nil {
						err = s.Close()
					}
					errs <- err
				}()
			}
			for range 3 {
				if err := <-errs; err != nil {
					t.Fatalf("concurrent Open: %v", err)
				}
			}
			s, err := Open(context.Background(), loc)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			q := "SELECT MAX(version) FROM dbarena_schema"
			if name == "sqlite" {
				q = "PRAGMA user_version"
			}
			var v int
			if err := s.db.QueryRow(q).Scan(&v); err != nil || v != len(migrations()) {
				t.Fatalf("schema version %d (%v), want %d", v, err, len(migrations()))
			}
			set := "UPDATE dbarena_schema SET version = 99"
			if name == "sqlite" {
				set = "PRAGMA user_version = 99"
			}
			if _, err := s.db.Exec(set); err != nil {
				t.Fatal(err)
			}
			if s2, err := Open(context.Background(), loc); err == nil || !strings.Contains(err.Error(), "newer") {
				if s2 != nil {
					s2.Close()
				}
				t.Errorf("Open of a newer schema = %v, want a 'newer' error", err)
			}
		})
	}
}

// TestMigrateV1File: a store written by the previous dbarena (schema 1)
// is upgraded in place; its runs read back unchanged and are found by plan.
func TestMigrateV1File(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "results.db")
	db, err := sql.Open("sqlite", sqliteDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(schemaV1 + "PRAGMA user_version = 1;"); err != nil {
		t.Fatal(err)
	}
	old := testRun(0, 3)
	old.Plan = &summary.PlanRef{Name: "sweep", Cell: "c", Round: 1}
	old.ID = 1
	doc, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	// The row as schema 1 stored it (headline columns trimmed to the
	// required ones) and its intervals.
	if _, err := db.Exec(`INSERT INTO runs (id, schema, started_at, ended_at, status, workload, summary)
		VALUES (1, ?, ?, ?, ?, ?, ?)`, old.Schema, formatTime(old.StartedAt), formatTime(old.EndedAt), old.Status, old.Workload, string(doc)); err != nil {
		t.Fatal(err)
	}
	for k, iv := range old.Intervals {
		if _, err := db.Exec(`INSERT INTO intervals (run_id, seq, t_s) VALUES (1, ?, ?)`, k, iv.TS); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s := openTest(t, path)
	sameRun(t, "schema-1 run", mustRun(t, s, 1), old)
	rows, err := s.List(ctx, Filter{Plan: "sweep"})
	if err != nil || len(rows) != 1 || rows[0].ID != 1 {
		t.Errorf("List(plan) after the upgrade = %v, %v", rows, err)
	}
}
