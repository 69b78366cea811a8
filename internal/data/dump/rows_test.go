package dump

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSentRows(t *testing.T) {
	for _, c := range []struct {
		sql  string
		syn  Syntax
		want int64
	}{
		{"INSERT INTO t VALUES (1,'a'),(2,'b),(')", MySQL, 2},
		{"INSERT INTO `t` (`a`,`b`) VALUES (1,'x\\'),(y'), (2, ')')", MySQL, 2},
		{"INSERT INTO t VALUES(1)", MySQL, 1},
		{"REPLACE INTO t VALUES (1),(2),(3)", MySQL, 3},
		{"INSERT INTO t VALUES (1, (SELECT 2)), (3, 4)", MySQL, 2},
		{"INSERT INTO t SET a = 1", MySQL, 1},
		{"INSERT INTO t SET a = 1 ON DUPLICATE KEY UPDATE a = 2", MySQL, -1},
		{"INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a = VALUES(a)", MySQL, -1},
		{"INSERT IGNORE INTO t VALUES (1)", MySQL, -1},
		{"INSERT INTO t SELECT * FROM u", MySQL, -1},
		{"INSERT INTO t (a) SELECT 1", MySQL, -1},
		{"INSERT INTO public.t VALUES (1, $$a),(b$$), (2, 'it''s')", Postgres, 2},
		{"INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING", Postgres, -1},
		{"INSERT INTO t VALUES (1) RETURNING id", Postgres, 1},
		{"INSERT INTO t DEFAULT VALUES", Postgres, 1},
		{"INSERT INTO t VALUES (1), -- (2),\n (3)", MySQL, 2},
		{"INSERT INTO t VALUES (1", MySQL, -1},
	} {
		st := Statement{Kind: Data, SQL: c.sql}
		if got := SentRows(&st, c.syn); got != c.want {
			t.Errorf("%q: %d rows, want %d", c.sql, got, c.want)
		}
	}
	st := Statement{Kind: Data, SQL: "COPY t FROM stdin", Copy: []byte("1\ta\n2\tb\n")}
	if got := SentRows(&st, Postgres); got != 2 {
		t.Errorf("COPY: %d rows, want 2", got)
	}
}

func TestSessionValue(t *testing.T) {
	for _, c := range []struct {
		log  []string
		want string
	}{
		{[]string{"SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0"}, "0"},
		{[]string{"/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */"}, "0"},
		{[]string{"SET FOREIGN_KEY_CHECKS=0", "SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS"}, "@OLD_FOREIGN_KEY_CHECKS"},
		{[]string{"SET @foreign_key_checks = 0"}, ""},
		{[]string{"SET @@session.foreign_key_checks = off"}, "OFF"},
		{[]string{"SET NAMES utf8mb4"}, ""},
	} {
		if got := SessionValue(c.log, "FOREIGN_KEY_CHECKS"); got != c.want {
			t.Errorf("%q: %q, want %q", c.log, got, c.want)
		}
	}
	if got := SessionValue([]string{"SET @old_autocommit=@@autocommit", "SET AUTOCOMMIT=0"}, "AUTOCOMMIT"); got != "0" {
		t.Errorf("autocommit: %q", got)
	}
	if got := SessionValue([]string{"SET AUTOCOMMIT=0", "SET autocommit=@old_autocommit"}, "AUTOCOMMIT"); got != "@OLD_AUTOCOMMIT" {
		t.Errorf("autocommit restored: %q", got)
	}
}

func TestSentRowsVersionComment(t *testing.T) {
	st := Statement{Kind: Data, SQL: "INSERT INTO address VALUES (1,'a',/*!50705 0x0101,*/'b'),(2,'c',/*!50705 0x0102,*/'d')"}
	if got := SentRows(&st, MySQL); got != 2 {
		t.Errorf("%d rows, want 2", got)
	}
}

func TestSniffPsqlScript(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]Format{
		"CREATE TABLE k (id int);\n\\i data.sql\n":                       FormatPsqlScript,
		"-- PostgreSQL database dump\nCREATE TABLE k (id int);\n\\i x\n": FormatPostgres,
		"\\set ON_ERROR_STOP on\nCREATE TABLE k (id int);\n":             FormatPsqlScript,
		"CREATE TABLE k (id int);\nsource data.sql\n\\. more.sql\n":      FormatMySQL,
	} {
		p := filepath.Join(dir, "s.sql")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if f, err := sniff(p); err != nil || f != want {
			t.Errorf("%q: %s %v, want %s", body, f, err, want)
		}
	}
}
