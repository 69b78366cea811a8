package dumpload

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/dbarena/dbarena/internal/data/checksum"
	"github.com/dbarena/dbarena/internal/data/dump"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// trickySQL makes the MariaDB source database: MyISAM tables whose text
// holds "MyISAM" and "ENGINE=", binary data, multi-line strings, NULLs,
// emoji, a trigger, a view and a procedure.
var trickySQL = []string{
	"CREATE TABLE items (id INT PRIMARY KEY, note TEXT, bin BLOB, big MEDIUMTEXT, emoji VARCHAR(40) CHARACTER SET utf8mb4, KEY k_note (note(12))) ENGINE=MyISAM COMMENT='ENGINE=MyISAM stays'",
	"CREATE TABLE log (id INT AUTO_INCREMENT PRIMARY KEY, msg VARCHAR(100)) ENGINE=MyISAM",
	`INSERT INTO items VALUES
	 (1, 'converted with sed s/myisam/InnoDB/: ENGINE=MyISAM and MyISAM', 0x00FF27225C0A0D1A2D2D3B, 'line one\nline two; -- not a comment\n/* nor this */', 'smile 😀 ✓'),
	 (2, NULL, NULL, NULL, NULL),
	 (3, 'quote '' backslash \\ semicolon ;', '', '', ''),
	 (4, 'DELIMITER ;;', REPEAT(0xAB, 3000), REPEAT('x', 70000), '𝄞')`,
	"INSERT INTO log (msg) VALUES ('seeded'), ('ENGINE=MyISAM')",
	"CREATE TRIGGER items_ai AFTER INSERT ON items FOR EACH ROW BEGIN INSERT INTO log (msg) VALUES (CONCAT('added ', NEW.id)); END",
	"CREATE VIEW v_items AS SELECT id, note FROM items WHERE note IS NOT NULL",
	"CREATE PROCEDURE count_items(OUT n INT) BEGIN DECLARE x INT; SELECT COUNT(*) INTO x FROM items; SET n = x; END",
}

// dumpTool finds a client tool next to the server or in PATH.
func dumpTool(t *testing.T, names ...string) string {
	t.Helper()
	bins, _ := sandboxtest.Manager(t).Discover()
	for _, b := range bins {
		for _, n := range names {
			for _, dir := range []string{filepath.Dir(b.Server), filepath.Join(b.Basedir, "bin")} {
				if p := filepath.Join(dir, n); isExec(p) {
					return p
				}
			}
		}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("none of %v installed", names)
	}
	t.Skipf("none of %v installed", names)
	return ""
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// adminTarget is the shared sandbox's superuser connection.
func adminTarget(t *testing.T, tgt target.Target) *target.Target {
	a, err := sandboxtest.Manager(t).Admin(tgt.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	return &a
}

func openDB(t *testing.T, tgt target.Target, db string) *sql.DB {
	t.Helper()
	tgt.Database = db
	d, _ := dialect.For(tgt.Family())
	h, err := d.Open(tgt, dialect.OpenOptions{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// rowsOf reads a query's rows as strings (NULL as "<nil>").
func rowsOf(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, v := range vals {
			if v.Valid {
				fmt.Fprintf(&b, "%q|", v.String)
			} else {
				b.WriteString("<nil>|")
			}
		}
		out = append(out, b.String())
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func equalRows(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s differ:\n got %q\nwant %q", what, got, want)
	}
}

// mariadbSource fills the shared sandbox's database with trickySQL and
// dumps it with mariadb-dump (escaped binary and --hex-blob).
func mariadbSource(t *testing.T) (workload.Env, string, string) {
	env := sandboxtest.Env(t, target.FlavorMariaDB)
	ctx := context.Background()
	for _, q := range []string{"DROP VIEW IF EXISTS v_items", "DROP TABLE IF EXISTS items, log", "DROP PROCEDURE IF EXISTS count_items"} {
		if _, err := env.DB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range trickySQL {
		if _, err := env.DB.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tool := dumpTool(t, "mariadb-dump", "mysqldump")
	dir := t.TempDir()
	var files []string
	for i, extra := range [][]string{nil, {"--hex-blob"}} {
		tg := env.Target
		args := append([]string{"-h", tg.Host, "-P", strconv.Itoa(tg.Port), "-u", tg.User, "--routines", "--triggers", "--databases", tg.Database}, extra...)
		cmd := exec.Command(tool, args...)
		cmd.Env = append(os.Environ(), "MYSQL_PWD="+tg.Password)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v: %s", tool, err, stderr.String())
		}
		f := filepath.Join(dir, fmt.Sprintf("dump%d.sql", i))
		if err := os.WriteFile(f, out, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return env, files[0], files[1]
}

// sourceChecksums opens env's own database (mariadbSource's source) and
// reads its per-table checksums.
func sourceChecksums(t *testing.T, env workload.Env) (*sql.DB, []checksum.Table) {
	t.Helper()
	src := openDB(t, env.Target, env.Target.Database)
	sums, err := checksum.Tables(context.Background(), src, "mariadb", env.Target.Database)
	if err != nil {
		t.Fatal(err)
	}
	return src, sums
}

const itemsQuery = "SELECT id, note, HEX(bin), big, emoji FROM items ORDER BY id"

func TestMariaDBDumpEngines(t *testing.T) {
	env, plain, hex := mariadbSource(t)
	src, srcSums := sourceChecksums(t, env)
	want := rowsOf(t, src, itemsQuery)
	wantLog := rowsOf(t, src, "SELECT * FROM log ORDER BY id")
	ctx := context.Background()
	for _, c := range []struct {
		file, db, engine, opts string
		defer_                 bool
	}{
		{plain, "l_innodb", "InnoDB", "", true},
		{hex, "l_aria", "Aria", "TRANSACTIONAL=1", false},
	} {
		t.Run(c.engine, func(t *testing.T) {
			var progress []Progress
			res, err := Load(ctx, env, Options{
				Files: []string{c.file}, Database: c.db, Threads: 3, Admin: adminTarget(t, env.Target),
				Rewrite: dump.Rewrite{Engine: c.engine, TableOptions: c.opts}, DeferIndexes: c.defer_,
				Progress: func(p Progress) { progress = append(progress, p) },
			})
			if err != nil {
				t.Fatal(err)
			}
			got := openDB(t, env.Target, c.db)
			equalRows(t, "items", rowsOf(t, got, itemsQuery), want)
			equalRows(t, "log", rowsOf(t, got, "SELECT * FROM log ORDER BY id"), wantLog)
			engines := rowsOf(t, got, "SELECT TABLE_NAME, ENGINE, TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE' ORDER BY 1")
			equalRows(t, "engines", engines, []string{
				fmt.Sprintf("%q|%q|%q|", "items", c.engine, "ENGINE=MyISAM stays"),
				fmt.Sprintf("%q|%q|%q|", "log", c.engine, ""),
			})
			if c.engine == "Aria" {
				opts := rowsOf(t, got, "SELECT CREATE_OPTIONS FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'items'")
				if len(opts) != 1 || !strings.Contains(opts[0], "transactional=1") {
					t.Errorf("Aria table options = %q, want transactional=1", opts)
				}
			}
			equalRows(t, "secondary index", rowsOf(t, got, "SELECT INDEX_NAME, SUB_PART FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'items' AND INDEX_NAME = 'k_note'"),
				[]string{`"k_note"|"12"|`})
			// The trigger, view and procedure came along (and the trigger
			// did not fire during the load: log is equal above).
			equalRows(t, "view", rowsOf(t, got, "SELECT COUNT(*) FROM v_items"), []string{`"3"|`})
			equalRows(t, "trigger", rowsOf(t, got, "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()"), []string{`"items_ai"|`})
			if _, err := got.Exec("CALL count_items(@n)"); err != nil {
				t.Errorf("procedure: %v", err)
			}
			if res.Rows != 6 || len(res.Tables) != 2 || res.Tables[0].Name != "items" || res.Tables[0].Rows != 4 || res.Tables[0].DataBytes <= 0 {
				t.Errorf("result: rows %d, tables %+v", res.Rows, res.Tables)
			}
			if len(progress) == 0 || !progress[len(progress)-1].Done || progress[len(progress)-1].Bytes != res.Bytes {
				t.Errorf("progress: %+v", progress)
			}
			sameChecksums(t, res, srcSums)
			run := res.Summary(env.Target, nil)
			if run.Workload != "load" || run.Tags["engine"] != c.engine || run.PerType["items"].Count != 4 || run.Figures["load.rows"] != 6 {
				t.Errorf("summary: %+v", run)
			}
		})
	}
}

func TestMariaDBCompressedAndErrors(t *testing.T) {
	env, plain, _ := mariadbSource(t)
	src := openDB(t, env.Target, env.Target.Database)
	want := rowsOf(t, src, itemsQuery)
	raw, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	zs, _ := zstd.NewWriter(nil)
	files := map[string][]byte{"dump.sql.gz": gz.Bytes(), "dump.sql.zst": zs.EncodeAll(raw, nil)}
	ctx := context.Background()
	for name, b := range files {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		db := "l_" + strings.ReplaceAll(filepath.Ext(name), ".", "")
		res, err := Load(ctx, env, Options{Files: []string{f}, Database: db, Threads: 2, Admin: adminTarget(t, env.Target)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		equalRows(t, name, rowsOf(t, openDB(t, env.Target, db), itemsQuery), want)
		if res.Bytes != int64(len(b)) {
			t.Errorf("%s: %d bytes read, file has %d", name, res.Bytes, len(b))
		}
	}

	// A broken statement stops the load with its file and line.
	broken := filepath.Join(dir, "broken.sql")
	body := "CREATE TABLE ok1 (a INT);\nINSERT INTO ok1 VALUES (1);\n\nINSERT INTO ok1 VALUES (2),\n  (3 oops);\nINSERT INTO ok1 VALUES (4);\n"
	if err := os.WriteFile(broken, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(ctx, env, Options{Files: []string{broken}, Database: "l_broken", Admin: adminTarget(t, env.Target)})
	var le *Error
	if !errors.As(err, &le) || le.Line != 4 || le.File != broken || le.Code != "1064" || IsBadInput(err) {
		t.Fatalf("err = %v, want a server error at %s:4", err, broken)
	}
	// --continue-on-error counts it and loads the rest; the rows lost
	// make the load fail all the same (issue 34).
	res, err := Load(ctx, env, Options{Files: []string{broken}, Database: "l_broken2", ContinueOnError: true, Admin: adminTarget(t, env.Target)})
	var lost *RowsLostError
	if !errors.As(err, &lost) || !strings.Contains(err.Error(), "ok1: 4 rows sent, 2 loaded") || res.ErrorCount != 1 || res.Errors[0].Line != 4 || res.Rows != 2 {
		t.Fatalf("continue: err %v, result %+v", err, res)
	}
	// An unterminated string is bad input.
	bad := filepath.Join(dir, "bad.sql")
	os.WriteFile(bad, []byte("CREATE TABLE b (a TEXT);\nINSERT INTO b VALUES ('never closed);\n"), 0o644)
	_, err = Load(ctx, env, Options{Files: []string{bad}, Database: "l_bad", Admin: adminTarget(t, env.Target)})
	if !IsBadInput(err) || !strings.Contains(err.Error(), "bad.sql:2") {
		t.Fatalf("err = %v, want bad input at bad.sql:2", err)
	}
	// An interrupted load says so.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	res, err = Load(cctx, env, Options{Files: []string{plain}, Database: "l_cancel", Admin: adminTarget(t, env.Target), ProgressEvery: time.Millisecond})
	if !errors.Is(err, context.Canceled) || res == nil || !res.Interrupted {
		t.Fatalf("cancelled load: err %v, result %+v", err, res)
	}
	if s := res.Summary(env.Target, err); s.Status != "interrupted" {
		t.Errorf("summary status %q", s.Status)
	}
}

// sameChecksums compares a load's per-table checksums with the source's.
func sameChecksums(t *testing.T, res *Result, src []checksum.Table) {
	t.Helper()
	var got []checksum.Table
	for _, tb := range res.Tables {
		if tb.Checksum == "" {
			t.Errorf("table %s has no checksum", tb.Name)
		}
		got = append(got, checksum.Table{Name: checksumName(tb.Name), Rows: tb.Rows, Sum: tb.Checksum})
	}
	if d := checksum.Diff(got, src); d != nil {
		t.Errorf("checksums differ from the source: %v", d)
	}
}

// TestMydumperDirectory: a mydumper directory (schema, data chunks,
// triggers, routines) of the tricky database loads with equal checksums.
func TestMydumperDirectory(t *testing.T) {
	tool, err := exec.LookPath("mydumper")
	if err != nil {
		t.Skip("mydumper is not installed")
	}
	env, _, _ := mariadbSource(t)
	src, srcSums := sourceChecksums(t, env)
	ctx := context.Background()
	// As the sandbox's superuser: mydumper wants RELOAD for its snapshot.
	adm := adminTarget(t, env.Target)
	dir := filepath.Join(t.TempDir(), "md")
	cmd := exec.CommandContext(ctx, tool, "-S", adm.Socket, "-u", adm.User, "-p", adm.Password,
		"-B", env.Target.Database, "-o", dir, "-t", "2", "-r", "2", "-G", "-R", "-E")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mydumper: %v: %s", err, out)
	}
	res, err := Load(ctx, env, Options{Files: []string{dir}, Database: "l_mydumper", Threads: 3, Admin: adminTarget(t, env.Target),
		Rewrite: dump.Rewrite{Engine: "InnoDB"}})
	if err != nil {
		t.Fatal(err)
	}
	sameChecksums(t, res, srcSums)
	got := openDB(t, env.Target, "l_mydumper")
	equalRows(t, "items", rowsOf(t, got, itemsQuery), rowsOf(t, src, itemsQuery))
	equalRows(t, "trigger", rowsOf(t, got, "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()"), []string{`"items_ai"|`})
	equalRows(t, "engine", rowsOf(t, got, "SELECT DISTINCT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE'"), []string{`"InnoDB"|`})
}
