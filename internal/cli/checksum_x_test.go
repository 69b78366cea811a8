package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/data/checksum"
)

// TestChecksumNoDatabase: a database that does not exist, or that the
// account cannot read, is a one-line error naming it (exit 2), on both
// families; it used to print "(no tables)" and exit 0 on MariaDB.
func TestChecksumNoDatabase(t *testing.T) {
	needServers(t)
	admin := openTarget(t, suite.mariadb.AdminTarget())
	defer admin.Close()
	for _, s := range []string{"DROP DATABASE IF EXISTS ck_hidden", "CREATE DATABASE ck_hidden",
		"CREATE TABLE ck_hidden.t (a INT)", "INSERT INTO ck_hidden.t VALUES (1)"} {
		if _, err := admin.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	defer admin.Exec("DROP DATABASE IF EXISTS ck_hidden")
	pgAdmin := openTarget(t, suite.postgres.AdminTarget())
	defer pgAdmin.Close()
	for _, s := range []string{"DROP DATABASE IF EXISTS ck_locked", "CREATE DATABASE ck_locked",
		"REVOKE CONNECT ON DATABASE ck_locked FROM PUBLIC"} {
		if _, err := pgAdmin.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	defer pgAdmin.Exec("DROP DATABASE IF EXISTS ck_locked")
	cases := []struct{ sandbox, database, reason string }{
		{"", "ck_nosuch", "does not exist"},
		{"", "ck_hidden", "cannot read"},
		{"pg", "ck_nosuch", "does not exist"},
		{"pg", "ck_locked", "cannot read"},
	}
	for _, c := range cases {
		args := []string{"checksum", "--database", c.database}
		if c.sandbox != "" {
			args = append(args, "--sandbox", c.sandbox)
		}
		r := dbarena(t, args...)
		if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, `"`+c.database+`"`) ||
			!strings.Contains(r.stderr, c.reason) || strings.Contains(r.stdout, "(no tables)") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
		assertNoPassword(t, "stderr", r.stderr)
	}
	// An existing database without tables is not an error.
	for _, s := range []string{"DROP DATABASE IF EXISTS ck_empty", "CREATE DATABASE ck_empty"} {
		if _, err := admin.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	defer admin.Exec("DROP DATABASE ck_empty")
	if _, err := admin.Exec("GRANT SELECT ON ck_empty.* TO '" + suite.mariadb.Target().User + "'@'127.0.0.1'"); err != nil {
		t.Fatal(err)
	}
	r := dbarena(t, "checksum", "--database", "ck_empty").mustSucceed(t)
	if !strings.Contains(r.stdout, "(no tables)") {
		t.Errorf("empty database: %q", r.stdout)
	}
}

// checksumTables runs `dbarena checksum` and returns its tables by name.
func checksumTables(t *testing.T, args ...string) map[string]checksum.Table {
	t.Helper()
	js := filepath.Join(t.TempDir(), "ck.json")
	dbarena(t, append([]string{"checksum", "--json", js}, args...)...).mustSucceed(t)
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var c checksum.Document
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	out := map[string]checksum.Table{}
	for _, tb := range c.Tables {
		out[tb.Name] = tb
	}
	return out
}

// TestChecksumRealDumpShapes: what real dumps hold on MariaDB. Views are
// not listed; a table without a primary key counts duplicate rows; a
// spatial column's value changes the sum (it used to be hashed as text,
// which is not valid UTF-8); generated and invisible columns are read; a
// system-versioned table is listed (it used to be left out).
func TestChecksumRealDumpShapes(t *testing.T) {
	needServers(t)
	sqlOn(t, suite.mariadb, "DROP VIEW IF EXISTS ck_v", "DROP TABLE IF EXISTS ck_geo, ck_nopk, ck_gen, ck_sv",
		"CREATE TABLE ck_geo (id INT PRIMARY KEY, g GEOMETRY NOT NULL, b BLOB, SPATIAL INDEX (g))",
		"INSERT INTO ck_geo VALUES (1, ST_GeomFromText('POINT(1 2)'), x'00ff10'), (2, ST_GeomFromText('POINT(3 4)'), NULL)",
		"CREATE TABLE ck_nopk (a INT, b VARCHAR(10))",
		"INSERT INTO ck_nopk VALUES (1,'x'),(1,'x'),(2,NULL)",
		"CREATE TABLE ck_gen (a INT, b INT AS (a*2) VIRTUAL, c INT AS (a+1) STORED, d INT INVISIBLE DEFAULT 7)",
		"INSERT INTO ck_gen (a) VALUES (1),(2)",
		"CREATE TABLE ck_sv (id INT PRIMARY KEY, v INT) WITH SYSTEM VERSIONING",
		"INSERT INTO ck_sv VALUES (1,1),(2,2)", "UPDATE ck_sv SET v = 3 WHERE id = 2",
		"CREATE VIEW ck_v AS SELECT * FROM ck_nopk")
	defer sqlOn(t, suite.mariadb, "DROP VIEW IF EXISTS ck_v", "DROP TABLE IF EXISTS ck_geo, ck_nopk, ck_gen, ck_sv")
	before := checksumTables(t)
	if _, ok := before["ck_v"]; ok {
		t.Error("a view is listed")
	}
	for name, rows := range map[string]int64{"ck_geo": 2, "ck_nopk": 3, "ck_gen": 2, "ck_sv": 2} {
		tb, ok := before[name]
		if !ok || tb.Rows != rows || tb.Sum == "0" {
			t.Errorf("%s: %+v (listed %v), want %d rows", name, tb, ok, rows)
		}
	}
	if c := before["ck_gen"].Columns; c != 4 {
		t.Errorf("ck_gen: %d columns, want 4 (generated and invisible ones too)", c)
	}
	sqlOn(t, suite.mariadb, "UPDATE ck_geo SET g = ST_GeomFromText('POINT(1 5)') WHERE id = 1",
		"DELETE FROM ck_nopk WHERE b IS NULL LIMIT 1", "INSERT INTO ck_nopk VALUES (1,'x')",
		"UPDATE ck_sv SET v = 4 WHERE id = 2")
	after := checksumTables(t, "--tables", "ck_geo,ck_nopk,ck_sv")
	for _, name := range []string{"ck_geo", "ck_nopk", "ck_sv"} {
		if after[name].Sum == before[name].Sum {
			t.Errorf("%s: the same sum %s after a change", name, after[name].Sum)
		}
	}
}

// TestChecksumPostgresShapes: pagila's shapes on PostgreSQL. A
// partitioned table is checked through its partitions (each listed once,
// the parent not, so no row counts twice); a materialised view is listed
// with its rows once refreshed, and as unpopulated before; plain views
// are not listed.
func TestChecksumPostgresShapes(t *testing.T) {
	needServers(t)
	drop := []string{"DROP MATERIALIZED VIEW IF EXISTS ck_mv", "DROP VIEW IF EXISTS ck_pv", "DROP TABLE IF EXISTS ck_part"}
	sqlOn(t, suite.postgres, append(drop,
		"CREATE TABLE ck_part (id int, at date NOT NULL, amount numeric(5,2)) PARTITION BY RANGE (at)",
		"CREATE TABLE ck_part_a PARTITION OF ck_part FOR VALUES FROM ('2022-01-01') TO ('2022-02-01')",
		"CREATE TABLE ck_part_b PARTITION OF ck_part FOR VALUES FROM ('2022-02-01') TO ('2022-03-01')",
		"INSERT INTO ck_part VALUES (1,'2022-01-05',1.50),(2,'2022-02-07',2.00),(3,'2022-02-08',NULL)",
		"CREATE VIEW ck_pv AS SELECT id FROM ck_part",
		"CREATE MATERIALIZED VIEW ck_mv AS SELECT at, sum(amount) AS total FROM ck_part GROUP BY at WITH NO DATA")...)
	defer sqlOn(t, suite.postgres, drop...)
	got := checksumTables(t, "--sandbox", "pg")
	for _, n := range []string{"ck_part", "ck_pv"} {
		if _, ok := got[n]; ok {
			t.Errorf("%s is listed", n)
		}
	}
	if a, b := got["ck_part_a"], got["ck_part_b"]; a.Rows != 1 || b.Rows != 2 {
		t.Errorf("partitions: %+v %+v", a, b)
	}
	if mv := got["ck_mv"]; mv.Kind != checksum.KindMatView || mv.Sum != checksum.Unpopulated {
		t.Errorf("unpopulated materialised view: %+v", mv)
	}
	sqlOn(t, suite.postgres, "REFRESH MATERIALIZED VIEW ck_mv")
	if mv := checksumTables(t, "--sandbox", "pg", "--tables", "ck_mv")["ck_mv"]; mv.Rows != 3 || mv.Sum == checksum.Unpopulated || mv.Sum == "0" {
		t.Errorf("refreshed materialised view: %+v", mv)
	}
}
