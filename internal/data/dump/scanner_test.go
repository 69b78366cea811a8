package dump

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// scanAll splits src and returns the statements (COPY chunks joined per
// block) with their lines.
func scanAll(t testing.TB, src string, syn Syntax, oneByte bool) ([]Raw, error) {
	var r io.Reader = strings.NewReader(src)
	if oneByte {
		r = iotest.OneByteReader(r)
	}
	sc := NewScanner(r, "dump.sql", syn)
	var out []Raw
	for {
		raw, err := sc.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if raw.Copy != nil && len(out) > 0 && out[len(out)-1].Copy != nil && out[len(out)-1].SQL == raw.SQL {
			out[len(out)-1].Copy = append(out[len(out)-1].Copy, raw.Copy...)
			continue
		}
		out = append(out, raw)
	}
}

func TestMySQLSplit(t *testing.T) {
	src := "-- MySQL dump\n/*!40101 SET NAMES utf8mb4 */;\n" +
		"# hash comment ' with quote\n" +
		"CREATE TABLE `t` (\n  `a` text COMMENT 'x;y'\n) ENGINE=MyISAM COMMENT='ENGINE=MyISAM; ok';\n" +
		"INSERT INTO `t` VALUES ('it''s; \\' \\\\'),(\"dq;\"),('multi\nline -- not comment'),('/* no */');\n" +
		"DELIMITER ;;\n/*!50003 CREATE*/ /*!50003 TRIGGER tr BEFORE INSERT ON t FOR EACH ROW BEGIN SET NEW.a = 'x;'; END */;;\nDELIMITER ;\n" +
		"SELECT 1 /* c ; */ -- c2 ;\n;\n" +
		"SELECT 'emoji 😀';"
	for _, oneByte := range []bool{false, true} {
		got, err := scanAll(t, src, MySQL, oneByte)
		if err != nil {
			t.Fatal(err)
		}
		want := []struct {
			line   int
			prefix string
			suffix string
		}{
			{2, "/*!40101 SET NAMES", "*/"},
			{4, "CREATE TABLE", "ok'"},
			{7, "INSERT INTO", "('/* no */')"},
			{10, "/*!50003 CREATE*/", "END */"},
			{12, "SELECT 1", "-- c2 ;"},
			{14, "SELECT 'emoji", "😀'"},
		}
		if len(got) != len(want) {
			t.Fatalf("oneByte=%v: got %d statements, want %d: %+v", oneByte, len(got), len(want), got)
		}
		for i, w := range want {
			if got[i].Line != w.line || !strings.HasPrefix(got[i].SQL, w.prefix) || !strings.HasSuffix(got[i].SQL, w.suffix) {
				t.Errorf("oneByte=%v statement %d: line %d %q, want line %d %q...%q", oneByte, i, got[i].Line, got[i].SQL, w.line, w.prefix, w.suffix)
			}
		}
	}
}

func TestPostgresSplit(t *testing.T) {
	src := "--\n-- PostgreSQL database dump\n--\nSET standard_conforming_strings = on;\n" +
		"CREATE FUNCTION f() RETURNS trigger AS $fn$ BEGIN RAISE NOTICE 'a;b'; RETURN NEW; END $fn$ LANGUAGE plpgsql;\n" +
		"SELECT E'it\\'s;', 'back\\slash;', $$x;$$;\n" +
		"COPY public.t (a, b) FROM stdin;\n1\ttab\\there\\nnewline\n2\t\\N\n\\.\n" +
		"COPY public.empty (a) FROM stdin;\n\\.\n" +
		"\\restrict abc\n" +
		"CREATE INDEX i ON public.t (a);\n"
	for _, oneByte := range []bool{false, true} {
		got, err := scanAll(t, src, Postgres, oneByte)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 6 {
			t.Fatalf("got %d statements: %+v", len(got), got)
		}
		if got[1].Line != 5 || !strings.HasSuffix(got[1].SQL, "plpgsql") {
			t.Errorf("function: %d %q", got[1].Line, got[1].SQL)
		}
		if !strings.HasSuffix(got[2].SQL, "$$x;$$") {
			t.Errorf("strings: %q", got[2].SQL)
		}
		if got[3].SQL != "COPY public.t (a, b) FROM stdin" || string(got[3].Copy) != "1\ttab\\there\\nnewline\n2\t\\N\n" || got[3].Line != 8 {
			t.Errorf("copy: %d %q %q", got[3].Line, got[3].SQL, got[3].Copy)
		}
		if !got[4].Meta || got[4].SQL != "restrict abc" {
			t.Errorf("meta: %+v", got[4])
		}
		if got[5].Line != 14 {
			t.Errorf("index line %d", got[5].Line)
		}
	}
}

func TestUnterminated(t *testing.T) {
	_, err := scanAll(t, "SELECT 1;\nINSERT INTO t VALUES ('abc);\n", MySQL, false)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 2 {
		t.Fatalf("err = %v, want a syntax error on line 2", err)
	}
	_, err = scanAll(t, "COPY t (a) FROM stdin;\n1\n2\n", Postgres, false)
	if !errors.As(err, &se) || se.Line != 1 {
		t.Fatalf("err = %v, want a COPY error on line 1", err)
	}
}
