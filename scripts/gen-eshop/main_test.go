package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/data/checksum"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload/script/pgscript"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

func generate(t *testing.T, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := run(append([]string{"--dir", dir}, args...), io.Discard); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDeterministic: the same flags give the same bytes; another seed
// other content; the product table is about 200 columns wide.
func TestDeterministic(t *testing.T) {
	a, b, c := generate(t, "--products", "50"), generate(t, "--products", "50"), generate(t, "--products", "50", "--seed", "2")
	for _, f := range []string{"eshop-mysql.sql", "eshop-postgres.sql", "shop.sql", "product_page.sql"} {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s: two runs differ (or empty)", f)
		}
	}
	x, _ := os.ReadFile(filepath.Join(a, "eshop-mysql.sql"))
	z, _ := os.ReadFile(filepath.Join(c, "eshop-mysql.sql"))
	if bytes.Equal(x, z) {
		t.Error("--seed 2 gives the same dump")
	}
	for _, tb := range shop(10, 1) {
		if tb.name == "product" && (len(tb.cols) < 190 || len(tb.cols) > 210) {
			t.Errorf("product has %d columns, want about 200", len(tb.cols))
		}
		for i := int64(1); i <= tb.rows; i++ {
			if n := len(tb.row(i)); n != len(tb.cols) {
				t.Fatalf("%s row %d: %d values for %d columns", tb.name, i, n, len(tb.cols))
			}
		}
	}
	if !bytes.Contains(x, []byte("ENGINE=MyISAM DEFAULT CHARSET")) {
		t.Error("the MySQL dump's tables are not MyISAM by default")
	}
	for _, bad := range [][]string{{"--products", "0"}, {"--engine", "x;y"}, {"--only", "oracle"}, {"extra"}} {
		if err := run(append([]string{"--dir", t.TempDir()}, bad...), io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return c
}

// client loads a dump with the server's own client.
func client(t *testing.T, tgt target.Target, file string) {
	t.Helper()
	var cmd *exec.Cmd
	if tgt.Family() == target.Postgres {
		cmd = exec.CommandContext(ctx(t), "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", tgt.Host, "-p", strconv.Itoa(tgt.Port),
			"-U", tgt.User, "-d", tgt.Database, "-f", file)
		cmd.Env = append(os.Environ(), "PGPASSWORD="+tgt.Password)
	} else {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd = exec.CommandContext(ctx(t), "mariadb", "--no-defaults", "-h", tgt.Host, "-P", strconv.Itoa(tgt.Port), "-u", tgt.User, tgt.Database)
		cmd.Stdin = f
		cmd.Env = append(os.Environ(), "MYSQL_PWD="+tgt.Password)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd.Args[0], err, out)
	}
}

func sums(t *testing.T, db *sql.DB, flavor string) map[string]checksum.Table {
	t.Helper()
	list, err := checksum.Tables(ctx(t), db, flavor, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]checksum.Table{}
	for _, tb := range list {
		out[tb.Name] = tb
	}
	return out
}

// TestLoadsEverywhereWithEqualChecksums: the MySQL dump loads with the
// mariadb client as MyISAM, InnoDB and Aria, the PostgreSQL dump with
// psql, and every table has the same rows and checksum on all four; the
// scripts parse and their statements run on both servers.
func TestLoadsEverywhereWithEqualChecksums(t *testing.T) {
	const products = 120
	my := sandboxtest.Env(t, target.FlavorMariaDB)
	pg := sandboxtest.Env(t, target.FlavorPostgres)
	pgDir := generate(t, "--products", fmt.Sprint(products), "--only", "postgres")
	client(t, pg.Target, filepath.Join(pgDir, "eshop-postgres.sql"))
	want := sums(t, pg.DB, "postgres")
	if len(want) != 14 || want["product"].Rows != products || want["stock"].Rows != products*5 || !want["product"].Portable {
		t.Fatalf("PostgreSQL tables: %+v", want)
	}
	for _, engine := range []string{"MyISAM", "InnoDB", "Aria"} {
		dir := generate(t, "--products", fmt.Sprint(products), "--only", "mysql", "--engine", engine)
		client(t, my.Target, filepath.Join(dir, "eshop-mysql.sql"))
		got := sums(t, my.DB, "mariadb")
		for name, w := range want {
			g := got[name]
			if g.Engine != engine {
				t.Errorf("%s %s: engine %q", engine, name, g.Engine)
			}
			if g.Rows != w.Rows || g.Sum != w.Sum {
				t.Errorf("%s %s: %d rows sum %s, PostgreSQL %d rows sum %s", engine, name, g.Rows, g.Sum, w.Rows, w.Sum)
			}
		}
	}
	// The text that document 000's sed rewrote is loaded unchanged.
	var n int
	if err := my.DB.QueryRow("SELECT COUNT(*) FROM product WHERE description LIKE '%ENGINE=MyISAM%'").Scan(&n); err != nil || n == 0 {
		t.Errorf("products whose description says ENGINE=MyISAM: %d (%v)", n, err)
	}

	sdir := generate(t, "--products", fmt.Sprint(products), "--only", "scripts")
	vars := regexp.MustCompile(`:(pid|cid)\b`)
	for _, f := range []string{"shop.sql", "product_page.sql"} {
		src, err := os.ReadFile(filepath.Join(sdir, f))
		if err != nil {
			t.Fatal(err)
		}
		s, err := pgscript.Parse(f, string(src))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range s.Cmds {
			if c.Kind != pgscript.SQL {
				continue
			}
			q := vars.ReplaceAllString(strings.TrimSuffix(strings.TrimSpace(c.Text), ";"), "1")
			for _, db := range []*sql.DB{my.DB, pg.DB} {
				rows, err := db.QueryContext(ctx(t), q)
				if err != nil {
					t.Fatalf("%s:%d: %v\n%s", f, c.Line, err, q)
				}
				rows.Close()
			}
		}
	}
}

// TestShippedScriptsCurrent: plans/eshop holds the generator's scripts.
func TestShippedScriptsCurrent(t *testing.T) {
	for name, text := range map[string]string{"shop.sql": shopScript(), "product_page.sql": productPageScript()} {
		b, err := os.ReadFile(filepath.Join("..", "..", "plans", "eshop", name))
		if err != nil || string(b) != text {
			t.Errorf("plans/eshop/%s differs from gen-eshop's (%v): go run ./scripts/gen-eshop --only scripts --dir plans/eshop", name, err)
		}
	}
}
