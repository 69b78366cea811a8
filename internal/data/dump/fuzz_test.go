package dump

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// splitAll scans src whole, or one byte per read.
func splitAll(src string, syn Syntax, oneByte bool) ([]Raw, error) {
	var r io.Reader = strings.NewReader(src)
	if oneByte {
		r = iotest.OneByteReader(r)
	}
	sc := NewScanner(r, "f.sql", syn)
	var out []Raw
	for i := 0; ; i++ {
		raw, err := sc.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if i > len(src)+1 {
			return out, errors.New("more statements than bytes")
		}
		out = append(out, raw)
	}
}

// checkSplit: how the input arrives never changes the statements, lines
// only grow, and classification never panics.
func checkSplit(t *testing.T, src string, syn Syntax) {
	a, errA := splitAll(src, syn, false)
	b, errB := splitAll(src, syn, true)
	if (errA == nil) != (errB == nil) || (errA != nil && errA.Error() != errB.Error()) {
		t.Fatalf("errors differ: %v vs %v", errA, errB)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("split depends on read sizes:\n%+v\n%+v", a, b)
	}
	last := 0
	for _, r := range a {
		if r.Line < last {
			t.Fatalf("line went back: %d after %d", r.Line, last)
		}
		last = r.Line
		st, err := Classify(r, syn, "f.sql", Server{MariaDB: true, Version: 101106})
		if err != nil {
			continue
		}
		_ = st.Where()
		if syn == MySQL {
			rw := Rewrite{Engine: "Aria", EngineMap: map[string]string{"MYISAM": "InnoDB"}}
			_ = rw.Apply(&st)
		}
	}
}

func FuzzMySQLSplit(f *testing.F) {
	f.Add("SELECT 1;\nINSERT INTO `t` VALUES ('a;b\\'c'),(\"x\");\n-- c\n/*!40101 SET x=1 */;")
	f.Add("DELIMITER ;;\nCREATE PROCEDURE p() BEGIN SELECT 1; END ;;\nDELIMITER ;\nSELECT 2;")
	f.Fuzz(func(t *testing.T, src string) { checkSplit(t, src, MySQL) })
}

func FuzzPostgresSplit(f *testing.F) {
	f.Add("SET x = 1;\nCOPY public.t (a, b) FROM stdin;\n1\ta\\tb\n2\t\\N\n\\.\nSELECT $$;$$, E'\\';';")
	f.Add("CREATE FUNCTION f() RETURNS int AS $b$ SELECT 1; $b$ LANGUAGE sql;\n\\connect db\n")
	f.Fuzz(func(t *testing.T, src string) { checkSplit(t, src, Postgres) })
}

// FuzzEngineRewrite: the rewrite never changes a string literal, and rewriting its own output changes nothing.
func FuzzEngineRewrite(f *testing.F) {
	f.Add("CREATE TABLE `t` (`a` text DEFAULT 'ENGINE=MyISAM') ENGINE=MyISAM COMMENT='ENGINE=MyISAM'")
	f.Add("CREATE TABLE t (engine int) /*!50100 PARTITION BY HASH (engine) (PARTITION p0 ENGINE = MyISAM) */")
	f.Fuzz(func(t *testing.T, sql string) {
		st := Statement{Kind: Schema, SQL: sql, Creates: true, Table: "t", File: "f.sql", Line: 1}
		rw := Rewrite{Engine: "InnoDB", KeepDefiners: true}
		if err := rw.Apply(&st); err != nil {
			return
		}
		if got, want := quoted(st.SQL), quoted(sql); !reflect.DeepEqual(got, want) {
			t.Fatalf("strings changed:\n%q\n%q", want, got)
		}
		again := st
		if err := rw.Apply(&again); err != nil || again.SQL != st.SQL {
			t.Fatalf("not idempotent: %q -> %q (%v)", st.SQL, again.SQL, err)
		}
	})
}

// quoted lists the string literals of s.
func quoted(s string) []string {
	var out []string
	for _, t := range tokens(s) {
		if t.kind == tQuoted && t.text[0] != '`' {
			out = append(out, t.text)
		}
	}
	return out
}

// FuzzClassify: reading a statement as the server does leaves no comment
// to read again (the words of the effective text are a fixed point), and
// classifying never panics; a refusal always names the file and line.
func FuzzClassify(f *testing.F) {
	f.Add("CREATE /*M!999999 DATABASE sbtest */ DEFINER=root@localhost PROCEDURE sbtest.esc() SQL SECURITY DEFINER GRANT ALL PRIVILEGES ON *.* TO 'dbarena'@'127.0.0.1' WITH GRANT OPTION", false)
	f.Add("CREATE /*! DATABASE x */ ROLE evil SUPERUSER LOGIN PASSWORD 'evilpw'", true)
	f.Add("CREATE DATABASE IF NOT EXISTS mysql", false)
	f.Add("/* /* */ SELECT 1 */ ALTER ROLE dbarena PASSWORD 'x'", true)
	f.Add("SET STATEMENT max_statement_time=1 FOR SET PASSWORD = PASSWORD('x')", false)
	f.Fuzz(func(t *testing.T, sql string, pg bool) {
		syn := MySQL
		if pg {
			syn = Postgres
		}
		for _, srv := range []Server{{MariaDB: true, Version: 101106}, {Version: 80036}, {}} {
			for _, mode := range []reading{readAsServer, readAllCode, readNoCode} {
				once, _ := effectiveText(sql, syn, srv, mode)
				twice, _ := effectiveText(once, syn, srv, mode)
				if a, b := words(once, 64), words(twice, 64); !reflect.DeepEqual(a, b) {
					t.Fatalf("effective text read again changes:\n%q %q\n%q %q", once, a, twice, b)
				}
			}
			if _, err := Classify(Raw{SQL: sql, Line: 3}, syn, "f.sql", srv); err != nil && !strings.HasPrefix(err.Error(), "f.sql:3: ") {
				t.Fatalf("refusal without file:line: %v", err)
			}
		}
	})
}

// FuzzSentRows: counting a data statement's rows never panics, and a
// count is never more than the statement's '(' bytes.
func FuzzSentRows(f *testing.F) {
	f.Add("INSERT INTO t VALUES (1),(2)", false)
	f.Add("INSERT INTO t SELECT 1", true)
	f.Fuzz(func(t *testing.T, sql string, pg bool) {
		syn := MySQL
		if pg {
			syn = Postgres
		}
		st := Statement{Kind: Data, SQL: sql}
		if n := SentRows(&st, syn); n > int64(strings.Count(sql, "(")) || n < -1 {
			t.Fatalf("%q: %d rows", sql, n)
		}
		_ = SessionValue([]string{sql}, "AUTOCOMMIT")
	})
}
