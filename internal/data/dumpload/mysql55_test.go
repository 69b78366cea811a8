package dumpload

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/data/checksum"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// TestMySQL55Dumps loads dumps into the catalogued MySQL 5.5.9. Each
// testdata/mysql55 file but loads.sql uses one feature 5.5 lacks (its
// first line says which): the load stops with one line naming the file,
// the line of the statement, the feature and the release that added it.
// loads.sql (utf8mb4, a TIMESTAMP default, MyISAM FULLTEXT, newer parts
// in version comments, a trigger, a view, a procedure) loads whole, and
// its checksums equal those of the same dump loaded into MariaDB.
func TestMySQL55Dumps(t *testing.T) {
	env := sandboxtest.EnvCatalogued(t, "mysql-5.5.9")
	admin := adminTarget(t, env.Target)
	ctx := context.Background()
	files, err := filepath.Glob("testdata/mysql55/*.sql")
	if err != nil || len(files) < 10 {
		t.Fatalf("testdata/mysql55: %d files, %v", len(files), err)
	}
	for _, f := range files {
		base := filepath.Base(f)
		if base == "loads.sql" {
			continue
		}
		t.Run(strings.TrimSuffix(base, ".sql"), func(t *testing.T) {
			expect := expectLine(t, f)
			_, err := Load(ctx, env, Options{Files: []string{f}, Database: "l55_feature", DropExisting: true, Threads: 2, Admin: admin})
			var le *Error
			want := "the dump uses " + expect + ": MySQL 5.5.9 cannot load it"
			if !errors.As(err, &le) || le.Line != 12 || !strings.Contains(err.Error(), base+":12: ") ||
				!strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v\nwant %s:12: ... (%s ...)", err, base, want)
			}
		})
	}
	t.Run("continue-on-error", func(t *testing.T) {
		// Every refused statement is listed; the INSERT into the table
		// whose CREATE TABLE was refused says so.
		res, _ := Load(ctx, env, Options{Files: []string{"testdata/mysql55/fulltext-innodb.sql"}, Database: "l55_feature", DropExisting: true, ContinueOnError: true, Admin: admin})
		if res == nil || len(res.Errors) != 2 {
			t.Fatalf("result %+v", res)
		}
		if e := res.Errors[0]; e.Line != 12 || !strings.Contains(e.Error, "FULLTEXT indexes on InnoDB tables, which MySQL 5.6.4 added") {
			t.Errorf("first error %+v", e)
		}
		if e := res.Errors[1]; e.Line != 20 || e.Code != "1146" || !strings.HasSuffix(e.Error, "(its CREATE TABLE at testdata/mysql55/fulltext-innodb.sql:12 was refused)") {
			t.Errorf("second error %+v", e)
		}
	})
	t.Run("loads", func(t *testing.T) {
		maria := sandboxtest.Env(t, target.FlavorMariaDB)
		sums := map[string][]checksum.Table{}
		for name, e := range map[string]workload.Env{"mysql": env, "mariadb": maria} {
			res, err := Load(ctx, e, Options{Files: []string{"testdata/mysql55/loads.sql"}, DropExisting: true, Threads: 2, Admin: adminTarget(t, e.Target)})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if res.Rows != 10 || res.ErrorCount != 0 {
				t.Fatalf("%s: rows %d (want 10), errors %+v", name, res.Rows, res.Errors)
			}
			h := openDB(t, e.Target, "l55_ok")
			s, err := checksum.Tables(ctx, h, string(e.Target.Flavor), "l55_ok")
			if err != nil {
				t.Fatalf("%s checksum: %v", name, err)
			}
			sums[name] = s
			// the trigger came after the data: it fired for none of it
			if n := count(t, e.Target, "l55_ok", "audit"); n != "2" {
				t.Errorf("%s: audit %s rows", name, n)
			}
			equalRows(t, name+" view", rowsOf(t, h, "SELECT id FROM rich ORDER BY id"), []string{`"1"|`, `"4"|`})
			var n int
			if _, err := h.Exec("CALL count_customers(@n)"); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := h.QueryRow("SELECT @n").Scan(&n); err != nil || n != 4 {
				t.Errorf("%s: count_customers %d, %v", name, n, err)
			}
		}
		my, ma := sums["mysql"], sums["mariadb"]
		if len(my) != 4 || len(my) != len(ma) {
			t.Fatalf("tables: mysql %d, mariadb %d", len(my), len(ma))
		}
		for i := range my {
			if my[i].Name != ma[i].Name || my[i].Rows != ma[i].Rows || my[i].Sum != ma[i].Sum {
				t.Errorf("table %s: MySQL 5.5.9 %d rows %s, MariaDB %d rows %s", my[i].Name, my[i].Rows, my[i].Sum, ma[i].Rows, ma[i].Sum)
			}
		}
	})
}

// expectLine reads a test dump's "-- expect: WHAT" first line.
func expectLine(t *testing.T, f string) string {
	t.Helper()
	fh, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "-- expect: ") {
		t.Fatalf("%s: no -- expect: line", f)
	}
	return strings.TrimPrefix(sc.Text(), "-- expect: ")
}
