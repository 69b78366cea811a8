package dumpload

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/data/dump"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

// TestMariaDBLoadData loads the tricky dumps (plain and --hex-blob) with
// the LOAD DATA fast path: the same checksums as the source, and the data
// went through LOAD DATA. With local_infile off, the load falls back to
// the INSERTs with a note.
func TestMariaDBLoadData(t *testing.T) {
	env, plain, hex := mariadbSource(t)
	src, srcSums := sourceChecksums(t, env)
	ctx := context.Background()
	want := rowsOf(t, src, itemsQuery)
	for _, c := range []struct{ file, db, engine string }{
		{plain, "ld_plain", "InnoDB"},
		{hex, "ld_hex", "Aria"},
	} {
		t.Run(c.db, func(t *testing.T) {
			res, err := Load(ctx, env, Options{Files: []string{c.file}, Database: c.db, Threads: 2,
				Admin: adminTarget(t, env.Target), Rewrite: dump.Rewrite{Engine: c.engine}, LoadData: "on"})
			if err != nil {
				t.Fatal(err)
			}
			if res.LoadDataStatements < 2 || res.Rows != 6 {
				t.Errorf("LOAD DATA statements %d, rows %d (notes %q)", res.LoadDataStatements, res.Rows, res.Notes)
			}
			equalRows(t, "items", rowsOf(t, openDB(t, env.Target, c.db), itemsQuery), want)
			sameChecksums(t, res, srcSums)
		})
	}
	t.Run("local_infile off", func(t *testing.T) {
		adm := *adminTarget(t, env.Target)
		d, _ := dialect.For(adm.Family())
		a, err := d.Open(adm, dialect.OpenOptions{MaxConns: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		setLocalInfile(t, a, "OFF")
		defer setLocalInfile(t, a, "ON")
		res, err := Load(ctx, env, Options{Files: []string{plain}, Database: "ld_off", Threads: 2,
			Admin: adminTarget(t, env.Target), LoadData: "auto"})
		if err != nil {
			t.Fatal(err)
		}
		if res.LoadDataStatements != 0 || len(res.Notes) == 0 || !strings.Contains(strings.Join(res.Notes, " "), "LOAD DATA LOCAL not used") {
			t.Errorf("LOAD DATA statements %d, notes %q", res.LoadDataStatements, res.Notes)
		}
		sameChecksums(t, res, srcSums)
	})
	// A duplicate key fails as the INSERT would have, with file and line
	// (LOAD DATA LOCAL makes it a warning).
	dup := filepath.Join(t.TempDir(), "dup.sql")
	if err := os.WriteFile(dup, []byte("CREATE TABLE d (id INT PRIMARY KEY, s TEXT);\nINSERT INTO d VALUES (1,'a'),(1,'b');\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(ctx, env, Options{Files: []string{dup}, Database: "ld_dup", Admin: adminTarget(t, env.Target), LoadData: "on", NoStats: true})
	var le *Error
	if !errors.As(err, &le) || le.Line != 2 || le.Code != "1062" {
		t.Errorf("duplicate key: %v", err)
	}
	// In a strict sql_mode, a value out of range fails as the INSERT would.
	strict := filepath.Join(t.TempDir(), "strict.sql")
	if err := os.WriteFile(strict, []byte("SET sql_mode='STRICT_ALL_TABLES';\nCREATE TABLE s (n TINYINT);\nINSERT INTO s VALUES (1),(1000);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(ctx, env, Options{Files: []string{strict}, Database: "ld_strict", Admin: adminTarget(t, env.Target), LoadData: "on", NoStats: true})
	if !errors.As(err, &le) || le.Line != 3 || le.Code != "1264" {
		t.Errorf("strict mode: %v", err)
	}
	if _, err := Load(ctx, env, Options{Files: []string{plain}, Database: "ld_bad", LoadData: "maybe"}); err == nil || !IsBadInput(err) {
		t.Errorf("LoadData maybe: %v", err)
	}
}

// TestMariaDBLoadDataColumnTypes: values LOAD DATA would store otherwise
// than the INSERT (a number into BIT or ENUM, hex into INT, 1e3 or 007
// into VARCHAR) keep their INSERTs; the tables hold the same either way.
func TestMariaDBLoadDataColumnTypes(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorMariaDB)
	ctx := context.Background()
	f := filepath.Join(t.TempDir(), "types.sql")
	body := "CREATE TABLE ty (b BIT(8), e ENUM('x','y'), i INT, v VARCHAR(20));\n" +
		"INSERT INTO ty VALUES (5,NULL,NULL,NULL),(NULL,NULL,NULL,NULL);\n" +
		"INSERT INTO ty (e, i) VALUES (2,1),(1,2);\n" +
		"INSERT INTO ty (i) VALUES (0x41),(1);\n" +
		"INSERT INTO ty (v) VALUES (1e3),(007);\n" +
		"INSERT INTO ty (v, e, i) VALUES ('s','y',-3),(12.50,'x',0);\n"
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	const q = "SELECT HEX(b), e, i, v FROM ty ORDER BY 1, 2, 3, 4"
	var want []string
	for _, mode := range []string{"off", "on"} {
		db := "ty_" + mode
		res, err := Load(ctx, env, Options{Files: []string{f}, Database: db, Admin: adminTarget(t, env.Target), LoadData: mode, NoStats: true})
		if err != nil {
			t.Fatal(err)
		}
		got := rowsOf(t, openDB(t, env.Target, db), q)
		if mode == "off" {
			want = got
			continue
		}
		equalRows(t, "ty", got, want)
		if res.LoadDataStatements != 1 {
			t.Errorf("LOAD DATA statements %d, want 1 (the last)", res.LoadDataStatements)
		}
	}
}

// TestMariaDBLoadDataTypesAfterAlter: the column types LOAD DATA is
// checked against are read again after a schema change (they are cached
// per connection): 007 into a column turned from INT into VARCHAR stays
// an INSERT, which stores '7'.
func TestMariaDBLoadDataTypesAfterAlter(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorMariaDB)
	f := filepath.Join(t.TempDir(), "alter.sql")
	body := "CREATE TABLE al (a INT, b INT);\nINSERT INTO al VALUES (1,007),(3,8);\n" +
		"ALTER TABLE al MODIFY b VARCHAR(10);\nINSERT INTO al VALUES (2,007),(4,8);\n"
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Load(context.Background(), env, Options{Files: []string{f}, Database: "al_on", Threads: 1,
		Admin: adminTarget(t, env.Target), LoadData: "on", NoStats: true})
	if err != nil {
		t.Fatal(err)
	}
	equalRows(t, "al", rowsOf(t, openDB(t, env.Target, "al_on"), "SELECT a, b FROM al ORDER BY a"), []string{`"1"|"7"|`, `"2"|"7"|`, `"3"|"8"|`, `"4"|"8"|`})
	if res.LoadDataStatements != 1 {
		t.Errorf("LOAD DATA statements %d, want 1 (the first)", res.LoadDataStatements)
	}
}

func setLocalInfile(t *testing.T, db *sql.DB, v string) {
	t.Helper()
	if _, err := db.Exec("SET GLOBAL local_infile = " + v); err != nil {
		t.Fatal(err)
	}
}
