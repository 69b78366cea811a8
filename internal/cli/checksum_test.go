package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/data/checksum"
	"github.com/dbarena/dbarena/internal/server/sandbox"
)

// sqlOn runs statements on a sandbox as its workload account.
func sqlOn(t *testing.T, sb *sandbox.Sandbox, stmts ...string) {
	t.Helper()
	tgt := sb.Target()
	db := openTarget(t, tgt)
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestChecksumCommand: the same simple-typed rows on MariaDB and
// PostgreSQL give the same sums in the --json files; a table named in
// --tables that does not exist is a usage error.
func TestChecksumCommand(t *testing.T) {
	needServers(t)
	sqlOn(t, suite.mariadb, "DROP TABLE IF EXISTS ck_items",
		"CREATE TABLE ck_items (id INT PRIMARY KEY, name VARCHAR(40), added DATE) ENGINE=MyISAM",
		"INSERT INTO ck_items VALUES (1,'one','2020-01-01'),(2,NULL,NULL),(3,'three, with MyISAM','2021-12-31')")
	sqlOn(t, suite.postgres, "DROP TABLE IF EXISTS ck_items",
		"CREATE TABLE ck_items (id int PRIMARY KEY, name varchar(40), added date)",
		"INSERT INTO ck_items VALUES (3,'three, with MyISAM','2021-12-31'),(1,'one','2020-01-01'),(2,NULL,NULL)")
	dir := t.TempDir()
	read := func(path string) checksum.Document {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var c checksum.Document
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		if c.Format != checksum.Format || len(c.Tables) != 1 {
			t.Fatalf("%s: %+v", path, c)
		}
		return c
	}
	my := filepath.Join(dir, "my.json")
	r := dbarena(t, "checksum", "--tables", "ck_items", "--json", my).mustSucceed(t)
	if !strings.Contains(r.stdout, "ck_items") || !strings.Contains(r.stdout, "MyISAM") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	pg := filepath.Join(dir, "pg.json")
	dbarena(t, "checksum", "--sandbox", "pg", "--tables", "ck_items", "--json", pg).mustSucceed(t)
	a, b := read(my).Tables[0], read(pg).Tables[0]
	if a.Rows != 3 || a.Sum != b.Sum || !a.Portable {
		t.Errorf("MariaDB %+v vs PostgreSQL %+v", a, b)
	}
	if strings.Contains(r.stdout, suite.mariadb.Target().Password) {
		t.Error("password in output")
	}

	bad := dbarena(t, "checksum", "--tables", "ck_items,nope")
	if bad.code != 2 || !strings.Contains(bad.stderr, `"nope"`) || strings.Count(bad.stderr, "\n") != 1 {
		t.Errorf("unknown table: exit %d, stderr %q", bad.code, bad.stderr)
	}
	if both := dbarena(t, "checksum", "--sandbox", "pg", "--target", "sandbox:pg"); both.code != 2 {
		t.Errorf("--sandbox with --target: exit %d", both.code)
	}
}
