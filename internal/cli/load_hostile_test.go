package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
)

// openAs opens t (one connection) for a test's own checks.
func openAs(t testing.TB, tg target.Target) *sql.DB {
	t.Helper()
	var db *sql.DB
	var err error
	if tg.Family() == target.Postgres {
		db, err = dialect.PostgresDialect{}.Open(tg, dialect.OpenOptions{MaxConns: 1})
	} else {
		db, err = dialect.MySQLDialect{}.Open(tg, dialect.OpenOptions{MaxConns: 1})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.PingContext(context.Background()); err != nil {
		t.Fatalf("connect as %s: %v", tg.User, err)
	}
	return db
}

// privileges is what the workload account of sb may do: SHOW GRANTS for
// MariaDB; for PostgreSQL its role attributes, the roles it belongs to and
// every role that can log in or is a superuser.
func privileges(t testing.TB, sb *sandbox.Sandbox) string {
	t.Helper()
	ctx := context.Background()
	var out []string
	if sb.Flavor == target.FlavorPostgres {
		db := openAs(t, sb.AdminTarget())
		rows, err := db.QueryContext(ctx, `SELECT rolname || ' super=' || rolsuper || ' createrole=' || rolcreaterole ||
			' createdb=' || rolcreatedb || ' login=' || rolcanlogin FROM pg_roles
			WHERE rolsuper OR rolcanlogin OR rolcreaterole OR rolname = $1 ORDER BY 1`, sb.Target().User)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			rows.Scan(&s)
			out = append(out, s)
		}
		return strings.Join(out, "\n")
	}
	db := openAs(t, sb.Target())
	rows, err := db.QueryContext(ctx, "SHOW GRANTS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		rows.Scan(&s)
		out = append(out, s)
	}
	return strings.Join(out, "\n")
}

func writeDump(t testing.TB, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// pgHead makes a file a PostgreSQL dump.
const pgHead = "-- PostgreSQL database dump\n"

// TestLoadHostileDumps: the reproducers of issue 33 item 1 and 5. No dump
// text runs as the sandbox's admin, no statement of a dump changes an
// account: the workload account's privileges are the same after each
// load, and it still connects with its password.
func TestLoadHostileDumps(t *testing.T) {
	needServers(t)
	for _, c := range []struct {
		name    string
		pg      bool
		body    string
		code    int
		stderr  []string
		stdout  []string
		changes string // a grant line the load may add (a database it created)
		setup   string // run as the sandbox's admin first
	}{
		{name: "mariadb existing database of another", setup: "CREATE DATABASE IF NOT EXISTS hostile_other",
			body: "CREATE DATABASE IF NOT EXISTS hostile_other;\nUSE hostile_other;\nCREATE TABLE t (a int);\n",
			code: 2, stderr: []string{"d.sql:1", `database "hostile_other" exists and is not open to the loading account`}},
		{name: "postgres existing database of another", pg: true, setup: "CREATE DATABASE hostile_pgother",
			body: pgHead + "CREATE DATABASE hostile_pgother;\n\\connect hostile_pgother\nCREATE TABLE t (a int);\n",
			code: 2, stderr: []string{"d.sql:2", `database "hostile_pgother" exists and is neither owned by nor open to dbarena`}},
		{name: "mariadb system database", body: "CREATE DATABASE IF NOT EXISTS mysql;\nUSE mysql;\nSELECT 1;\n",
			code: 2, stderr: []string{"d.sql:1", `database "mysql" is a system database`}},
		{name: "mariadb definer procedure", body: "CREATE /*M!999999 DATABASE sbtest */ DEFINER=root@localhost PROCEDURE sbtest.esc() SQL SECURITY DEFINER GRANT ALL PRIVILEGES ON *.* TO 'dbarena'@'127.0.0.1' WITH GRANT OPTION;\nCALL sbtest.esc();\n",
			code: 2, stderr: []string{"d.sql:1", "version comments"}},
		{name: "mariadb account statements", body: "CREATE TABLE IF NOT EXISTS hostile_acct (a int);\nSET PASSWORD = PASSWORD('x');\nGRANT ALL PRIVILEGES ON *.* TO 'dbarena'@'127.0.0.1' WITH GRANT OPTION;\n" +
			"CREATE USER 'evil'@'%' IDENTIFIED BY 'evilpw';\nALTER USER dbarena@'127.0.0.1' IDENTIFIED BY 'y';\nINSERT INTO hostile_acct VALUES (1);\n",
			stdout: []string{"4 account statements skipped (", "d.sql:2 the first"}},
		{name: "mariadb new database", body: "CREATE DATABASE /*!32312 IF NOT EXISTS*/ `hostile_db1` /*!40100 DEFAULT CHARACTER SET utf8mb4 */;\nUSE `hostile_db1`;\nCREATE TABLE t (a int);\nINSERT INTO t VALUES (1);\n",
			stdout:  []string{"sandbox admin ran: CREATE DATABASE `hostile_db1` CHARACTER SET utf8mb4\n", "sandbox admin ran: GRANT ALL PRIVILEGES ON `hostile\\_db1`.* TO 'dbarena'@"},
			changes: "hostile\\_db1"},
		{name: "postgres role in a comment", pg: true, body: pgHead + "CREATE /*! DATABASE x */ ROLE evil SUPERUSER LOGIN PASSWORD 'evilpw';\nALTER ROLE dbarena PASSWORD 'x';\nCREATE TABLE hostile_acct (a int);\nINSERT INTO hostile_acct VALUES (1);\n",
			stdout: []string{"2 account statements skipped (", "d.sql:2 the first"}},
		{name: "mariadb dynamic password", body: "EXECUTE IMMEDIATE 'SET PASSWORD = PASSWORD(''changed1'')';\nCREATE TABLE IF NOT EXISTS after_pw (a int);\n",
			code: 1, stderr: []string{"no longer logged in", "the sandbox's admin set it back"},
			stdout: []string{"sandbox admin ran: ALTER USER 'dbarena'@'127.0.0.1' IDENTIFIED BY '***'"}},
		{name: "postgres dynamic password", pg: true, body: pgHead + "DO $$BEGIN EXECUTE 'ALTER ROLE dbarena PASSWORD ''changed1'''; END$$;\nCREATE TABLE IF NOT EXISTS after_pw (a int);\n",
			code: 1, stderr: []string{"no longer logged in", "the sandbox's admin set it back"},
			stdout: []string{`sandbox admin ran: ALTER ROLE "dbarena" PASSWORD '***'`}},
		{name: "postgres template database", pg: true, body: pgHead + "CREATE DATABASE template1;\n", code: 2, stderr: []string{"d.sql:2", `"template1" is a system database`}},
		{name: "postgres new database", pg: true, body: pgHead + "CREATE DATABASE hostile_pg1 WITH TEMPLATE = template0 ENCODING = 'UTF8' LOCALE = 'C';\n\\connect hostile_pg1\nCREATE TABLE t (a int);\nINSERT INTO t VALUES (1);\n",
			stdout: []string{`sandbox admin ran: CREATE DATABASE "hostile_pg1" OWNER "dbarena" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sb, tg := suite.mariadb, ""
			if c.pg {
				sb, tg = suite.postgres, pgTarget
			}
			if c.setup != "" {
				if _, err := openAs(t, sb.AdminTarget()).ExecContext(context.Background(), c.setup); err != nil {
					t.Fatal(err)
				}
			}
			before := privileges(t, sb)
			f := writeDump(t, "d.sql", c.body)
			r := dbarena(t, withTarget(tg, "load", f, "--no-checksum")...)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", r.code, c.code, r.stdout, r.stderr)
			}
			for _, s := range c.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			for _, s := range c.stdout {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
			after := privileges(t, sb)
			if after != before {
				var added []string
				for _, l := range strings.Split(after, "\n") {
					if !strings.Contains("\n"+before+"\n", "\n"+l+"\n") {
						added = append(added, l)
					}
				}
				if c.changes == "" || len(added) != 1 || !strings.Contains(added[0], c.changes) || strings.Count(after, "\n") != strings.Count(before, "\n")+1 {
					t.Fatalf("privileges changed:\nbefore:\n%s\nafter:\n%s", before, after)
				}
			}
			// The workload account still connects with its own password.
			openAs(t, sb.Target())
		})
	}
}

// TestLoadMasksAndEscapes: issue 33 items 12 and 13 for load. A failing
// statement with a password is masked in the output, the stored run, the
// report and the --json file (mode 0600); control characters of a dump are
// escaped; corrupt .gz and .zst files are one line naming the file, exit 2.
func TestLoadMasksAndEscapes(t *testing.T) {
	needServers(t)
	dir := t.TempDir()
	results := filepath.Join(dir, "r.db")
	js := filepath.Join(dir, "load.json")
	os.WriteFile(js, []byte("{}"), 0o644)
	f := writeDump(t, "pw.sql", "SELECT PASSWORD('leakpw123') FROM no_such_table_x;\nINSERT INTO `esc\x1b[31mred` VALUES (1);\n")
	r := dbarena(t, "load", f, "--continue-on-error", "--results", results, "--json", js)
	if r.code != ExitFailed {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	rep := dbarena(t, "report", "1", "--format", "json", "-o", "-", "--results", results).mustSucceed(t)
	b, _ := os.ReadFile(js)
	for where, text := range map[string]string{"stdout": r.stdout, "stderr": r.stderr, "report": rep.stdout, "--json": string(b)} {
		if strings.Contains(text, "leakpw123") {
			t.Errorf("%s holds the password:\n%s", where, text)
		}
		if strings.Contains(text, "\x1b") {
			t.Errorf("%s holds a raw ESC:\n%q", where, text)
		}
	}
	if !strings.Contains(string(b), `esc\\x1b[31mred`) {
		t.Errorf("--json lacks the escaped statement:\n%s", b)
	}
	if fi, err := os.Stat(js); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("--json mode: %v %v", fi.Mode(), err)
	}
	var doc struct {
		Result struct {
			Errors []struct{ Statement string } `json:"errors"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Result.Errors) != 2 || !strings.Contains(doc.Result.Errors[0].Statement, "'***'") {
		t.Errorf("--json errors: %v %s", err, b)
	}
	// A failing statement that stops the load: the stored error is masked.
	stop := writeDump(t, "stop.sql", "SELECT PASSWORD('leakpw456') FROM no_such_table_y;\n")
	res2 := filepath.Join(dir, "r2.db")
	r = dbarena(t, "load", stop, "--results", res2)
	if r.code != ExitFailed || strings.Contains(r.stderr, "leakpw456") || !strings.Contains(r.stderr, "stop.sql:1") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if run := storedRun(t, res2); strings.Contains(run.Error, "leakpw456") || run.Status != "failed" {
		t.Errorf("stored: %s %q", run.Status, run.Error)
	}

	// Corrupt compressed dumps, past the part read to tell the format.
	var plain bytes.Buffer
	rnd := rand.New(rand.NewSource(1))
	plain.WriteString("CREATE TABLE IF NOT EXISTS corrupt_z (a bigint, b varchar(40));\n")
	for plain.Len() < 2<<20 {
		plain.WriteString("INSERT INTO corrupt_z VALUES ")
		for i := 0; i < 500; i++ {
			fmt.Fprintf(&plain, "(%d,'%x'),", rnd.Int63(), rnd.Int63())
		}
		plain.WriteString("(0,'');\n")
	}
	var gz, zs bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain.Bytes())
	zw.Close()
	ze, _ := zstd.NewWriter(&zs)
	ze.Write(plain.Bytes())
	ze.Close()
	// The .gz is cut off (its data decodes until it ends early), the
	// .zst has bytes changed (a checksum fails).
	cut := gz.Bytes()[:gz.Len()*2/3]
	for name, data := range map[string][]byte{"c.sql.gz": cut, "c.sql.zst": zs.Bytes()} {
		data = append([]byte(nil), data...)
		if name == "c.sql.zst" {
			for i := len(data) * 2 / 3; i < len(data)*2/3+64; i++ {
				data[i] ^= 0x5a
			}
		}
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o644)
		r := dbarena(t, "load", p, "--results", filepath.Join(dir, name+".db"))
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		last := lines[len(lines)-1]
		if r.code != ExitUsage || !strings.Contains(last, p) || !strings.Contains(last, "corrupt") {
			t.Errorf("%s: exit %d, stderr %q", name, r.code, r.stderr)
		}
	}
}
