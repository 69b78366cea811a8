package dumpload

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dbarena/dbarena/internal/data/checksum"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

var pgTrickySQL = []string{
	"DROP VIEW IF EXISTS v_docs",
	"DROP TABLE IF EXISTS docs, kinds CASCADE",
	"CREATE TABLE kinds (id int PRIMARY KEY, name text)",
	"CREATE TABLE docs (id serial PRIMARY KEY, kind int REFERENCES kinds, body text, raw bytea, n numeric(10,2), at timestamptz, touched int DEFAULT 0)",
	"CREATE INDEX docs_kind ON docs (kind)",
	"INSERT INTO kinds VALUES (1, 'ENGINE=MyISAM'), (2, E'tab\\there')",
	`INSERT INTO docs (kind, body, raw, n, at) VALUES
	 (1, E'tab\there\nnew line\\backslash \\. not an end', '\x00ff5c0a2e'::bytea, 12.50, '2024-01-02 03:04:05+00'),
	 (2, NULL, NULL, NULL, NULL),
	 (1, E'\\.', ''::bytea, -1, now()),
	 (2, 'emoji 😀 and $$dollar$$ ; semicolon', decode(repeat('ab', 5000), 'hex'), 0, now())`,
	`CREATE OR REPLACE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $fn$
	 BEGIN NEW.touched := NEW.touched + 1; RETURN NEW; END $fn$`,
	"CREATE TRIGGER docs_touch BEFORE INSERT ON docs FOR EACH ROW EXECUTE FUNCTION touch()",
	"CREATE VIEW v_docs AS SELECT id, body FROM docs WHERE body IS NOT NULL",
}

func TestPostgresDump(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorPostgres)
	ctx := context.Background()
	for _, q := range pgTrickySQL {
		if _, err := env.DB.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	srcSums, err := checksum.Tables(ctx, env.DB, "postgres", env.Target.Database)
	if err != nil {
		t.Fatal(err)
	}
	tool := dumpTool(t, "pg_dump")
	dir := t.TempDir()
	tg := env.Target
	for _, c := range []struct{ name, format string }{{"plain.sql", "p"}, {"custom.dump", "c"}, {"dirdump", "d"}} {
		out := filepath.Join(dir, c.name)
		cmd := exec.Command(tool, "-h", tg.Host, "-p", strconv.Itoa(tg.Port), "-U", tg.User, "-F", c.format, "-f", out, tg.Database)
		cmd.Env = append(os.Environ(), "PGPASSWORD="+tg.Password)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("pg_dump: %v: %s", err, stderr.String())
		}
		t.Run(c.name, func(t *testing.T) {
			db := "l_" + c.format
			res, err := Load(ctx, env, Options{Files: []string{out}, Database: db, Threads: 2, Admin: adminTarget(t, env.Target)})
			if err != nil {
				t.Fatal(err)
			}
			sameChecksums(t, res, srcSums)
			got := openDB(t, env.Target, db)
			// The trigger exists but did not fire during the load; the
			// view and the serial's sequence came along.
			equalRows(t, "touched", rowsOf(t, got, "SELECT sum(touched) FROM docs"), []string{`"0"|`})
			equalRows(t, "view", rowsOf(t, got, "SELECT count(*) FROM v_docs"), []string{`"3"|`})
			equalRows(t, "index", rowsOf(t, got, "SELECT count(*) FROM pg_indexes WHERE indexname = 'docs_kind'"), []string{`"1"|`})
			if _, err := got.Exec("INSERT INTO docs (kind, body) VALUES (1, 'new')"); err != nil {
				t.Errorf("insert after load (sequence, trigger): %v", err)
			}
			equalRows(t, "trigger", rowsOf(t, got, "SELECT touched FROM docs WHERE body = 'new'"), []string{`"1"|`})
			if res.Rows != 6 {
				t.Errorf("rows %d, want 6", res.Rows)
			}
		})
	}
}

// TestClosedConnIsLost: a statement on a PostgreSQL connection the server
// closed fails with pgx's "conn closed", which is a lost connection (the
// load then says how to resume), not a statement error.
func TestClosedConnIsLost(t *testing.T) {
	env := sandboxtest.Env(t, target.FlavorPostgres)
	ctx := context.Background()
	d, err := newDialer(env.Target)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	c, err := d.dial(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	c.(*pgConn).c.Close(ctx)
	_, err = c.exec(ctx, "SELECT 1")
	if err == nil || !isConnLost(err) {
		t.Fatalf("statement on a closed connection: %v, want a lost connection", err)
	}
}
