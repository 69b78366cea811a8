package dumpload

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

func TestPGFeatureHint(t *testing.T) {
	for _, c := range []struct{ stmt, version, want string }{
		{"CREATE TABLE t (a int, b int GENERATED ALWAYS AS ((a * 2)) STORED)", "10.23", "generated columns, which PostgreSQL 12 added: PostgreSQL 10.23 cannot load it"},
		{"CREATE TABLE t (a int, b int GENERATED ALWAYS AS ((a * 2)) STORED)", "12.22", ""},
		{"CREATE TABLE t (a int, b int GENERATED ALWAYS AS (a * 2) VIRTUAL)", "17.10", "virtual generated columns, which PostgreSQL 18 added"},
		{"CREATE PROCEDURE p() LANGUAGE sql AS $$ SELECT 1 $$", "10.23", "procedures (CREATE PROCEDURE), which PostgreSQL 11 added"},
		{"CREATE UNIQUE INDEX i ON t USING btree (a) INCLUDE (b)", "10.23", "covering indexes (INCLUDE), which PostgreSQL 11 added"},
		{"ALTER TABLE t ADD CONSTRAINT u UNIQUE NULLS NOT DISTINCT (a)", "14.23", "UNIQUE NULLS NOT DISTINCT, which PostgreSQL 15 added"},
		{"SET default_table_access_method = columnar", "11.22", "table access methods, which PostgreSQL 12 added"},
		{"CREATE TABLE t (a int)", "10.23", ""},
		{"CREATE PROCEDURE p() LANGUAGE sql AS $$ SELECT 1 $$", "9.6.24", "PostgreSQL 9.6.24 cannot load it"},
	} {
		got := pgFeatureHint(c.stmt, c.version)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("pgFeatureHint(%q, %s) = %q, want %q", c.stmt, c.version, got, c.want)
		}
	}
	for _, c := range []struct {
		v, since string
		want     bool
	}{{"10.23", "9.6", true}, {"9.6.24", "9.6", true}, {"9.5.1", "9.6", false}, {"11.22", "12", false}, {"18.4", "18", true}} {
		if got := pgMajorAtLeast(c.v, c.since); got != c.want {
			t.Errorf("pgMajorAtLeast(%s, %s) = %v", c.v, c.since, got)
		}
	}
	for _, s := range []string{"SET transaction_timeout = 0;", "set  SESSION Transaction_Timeout TO '0'", "SET \"transaction_timeout\" = 0"} {
		if m := pgSetRE.FindStringSubmatch(s); m == nil || strings.ToLower(m[1]) != "transaction_timeout" {
			t.Errorf("pgSetRE(%q) = %q", s, m)
		}
	}
}

// TestPgDump18IntoOlder loads a pg_dump 18 file (testdata/pgdump18.sql,
// from a PostgreSQL 18.4 sandbox) into the oldest catalogued PostgreSQL
// and into the system's: the session settings the server lacks
// (transaction_timeout, 17; default_table_access_method, 12) are skipped
// with a note, and the rows load. A dump with a generated column (12)
// fails on PostgreSQL 10 with an error naming the feature.
func TestPgDump18IntoOlder(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, env workload.Env, wantNotes []string, noNotes []string) {
		res, err := Load(ctx, env, Options{Files: []string{"testdata/pgdump18.sql"}, Database: "l_pg18", DropExisting: true, Threads: 2, Admin: adminTarget(t, env.Target)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Rows != 11 || res.ErrorCount != 0 {
			t.Fatalf("rows %d (want 11), errors %d %+v", res.Rows, res.ErrorCount, res.Errors)
		}
		notes := strings.Join(res.Notes, "\n")
		for _, w := range wantNotes {
			if !strings.Contains(notes, w) {
				t.Errorf("notes lack %q:\n%s", w, notes)
			}
		}
		for _, w := range noNotes {
			if strings.Contains(notes, w) {
				t.Errorf("notes have %q:\n%s", w, notes)
			}
		}
		equalRows(t, "tellers", rowsOf(t, openDB(t, env.Target, "l_pg18"), "SELECT count(*), sum(bid) FROM pgbench_tellers"), []string{`"10"|"10"|`})
	}
	t.Run("postgres-10", func(t *testing.T) {
		env := sandboxtest.EnvCatalogued(t, "postgres-10")
		check(t, env, []string{
			"pgdump18.sql:13: SET transaction_timeout skipped: PostgreSQL 10.23 has no setting transaction_timeout (PostgreSQL 17 added it",
			"pgdump18.sql:24: SET default_table_access_method skipped: PostgreSQL 10.23 has no setting default_table_access_method (PostgreSQL 12 added it",
		}, nil)

		_, err := Load(ctx, env, Options{Files: []string{"testdata/pgdump18-generated.sql"}, Database: "l_pg18gen", DropExisting: true, Admin: adminTarget(t, env.Target)})
		var le *Error
		if !errors.As(err, &le) || !strings.Contains(err.Error(), "pgdump18-generated.sql:30") ||
			!strings.Contains(err.Error(), "the dump uses generated columns, which PostgreSQL 12 added: PostgreSQL 10.23 cannot load it") {
			t.Fatalf("generated column into 10: %v", err)
		}
	})
	t.Run("system", func(t *testing.T) {
		env := sandboxtest.Env(t, target.FlavorPostgres)
		if strings.HasPrefix(env.Target.Version, "17.") || strings.HasPrefix(env.Target.Version, "18.") {
			t.Skipf("the system PostgreSQL %s has transaction_timeout", env.Target.Version)
		}
		check(t, env, []string{"SET transaction_timeout skipped"}, []string{"default_table_access_method"})
		res, err := Load(ctx, env, Options{Files: []string{"testdata/pgdump18-generated.sql"}, Database: "l_pg18gen", DropExisting: true, Admin: adminTarget(t, env.Target)})
		if err != nil || res.Rows != 2 {
			t.Fatalf("generated column into %s: rows %d, %v", env.Target.Version, res.Rows, err)
		}
	})
}
